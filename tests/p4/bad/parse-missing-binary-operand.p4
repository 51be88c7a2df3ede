// reason: the right operand of `+` is missing
// expect: 10:17: found `;`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = x + ;
    }
}

Top(MyCtl()) main;
