// reason: an extra `}` at the top level closes nothing
// expect: 13:1: found `}`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = 1;
    }
}
}

Top(MyCtl()) main;
