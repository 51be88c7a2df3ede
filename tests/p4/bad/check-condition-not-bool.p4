// reason: the condition of an if statement is a bit<8>, not a bool
// expect: 10:13: type mismatch
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        if (x) {
            x = 0;
        }
    }
}

Top(MyCtl()) main;
