// reason: `y` is used but never declared
// expect: 10:13: declaration not found
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = y + 1;
    }
}

Top(MyCtl()) main;
