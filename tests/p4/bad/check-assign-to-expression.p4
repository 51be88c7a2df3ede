// reason: the left side of an assignment must be an l-value; `x + 1` is an expression (the P4_16 grammar already rejects it; nevermiss's parser accepts any expression there and the checker rejects it)
// expect: 10:9: left-value
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x + 1 = 2;
    }
}

Top(MyCtl()) main;
