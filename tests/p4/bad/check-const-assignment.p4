// reason: a constant cannot be assigned
// expect: 12:9: cannot write to a constant
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

const bit<8> LIMIT = 10;

control MyCtl(inout bit<8> x) {
    apply {
        LIMIT = x;
    }
}

Top(MyCtl()) main;
