// reason: `break` is only allowed inside a loop
// expect: 11:13: outside
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        if (x == 0) {
            break;
        }
        x = 1;
    }
}

Top(MyCtl()) main;
