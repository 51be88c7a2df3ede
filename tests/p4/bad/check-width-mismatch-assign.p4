// reason: a bit<16> value is assigned to a bit<8> variable without a cast
// expect: 11:13: type mismatch
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        bit<16> wide = 16w300;
        x = wide;
    }
}

Top(MyCtl()) main;
