// reason: the left side of an assignment must be an l-value; `x + 1` is an expression
// expect: 10:11: found `+`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x + 1 = 2;
    }
}

Top(MyCtl()) main;
