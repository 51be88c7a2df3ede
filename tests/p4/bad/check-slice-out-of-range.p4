// reason: bit 8 does not exist in a bit<8> value (valid bits are 7..0)
// expect: 10:25: greater than width
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        bit<4> high = x[8:5];
        x[3:0] = high;
    }
}

Top(MyCtl()) main;
