// reason: the left side of an assignment must be an l-value; `x + 1` is an expression, which the P4_16 grammar already rejects (the parser reports the first token that cannot continue a statement, as p4c does)
// expect: 10:11: expected an assignment or a method call
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x + 1 = 2;
    }
}

Top(MyCtl()) main;
