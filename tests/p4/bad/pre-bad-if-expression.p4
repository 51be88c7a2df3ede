// reason: the #if expression is incomplete
// expect: 8:7: no right operand
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#if 1 +
control MyCtl(inout bit<8> x) {
    apply {}
}
#endif

Top(MyCtl()) main;
