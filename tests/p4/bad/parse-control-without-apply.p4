// reason: a control declaration must end with an `apply` block
// expect: 12:1: `apply`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
}

Top(MyCtl()) main;
