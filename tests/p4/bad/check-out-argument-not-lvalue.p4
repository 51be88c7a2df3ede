// reason: an argument for an `out` parameter must be an l-value, not a literal
// expect: 14:14: left-value
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

void fill(out bit<8> v) {
    v = 7;
}

control MyCtl(inout bit<8> x) {
    apply {
        fill(8w1);
    }
}

Top(MyCtl()) main;
