// reason: a bool is assigned to a bit<1> variable; P4 needs an explicit cast
// expect: 10:23: type mismatch
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        bit<1> flag = true;
        x = (bit<8>) flag;
    }
}

Top(MyCtl()) main;
