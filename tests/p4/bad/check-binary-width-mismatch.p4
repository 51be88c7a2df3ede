// reason: the operands of + have different widths (bit<8> and bit<16>)
// expect: 11:23: different widths
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        bit<16> y = 16w1;
        x = (bit<8>) (x + y);
    }
}

Top(MyCtl()) main;
