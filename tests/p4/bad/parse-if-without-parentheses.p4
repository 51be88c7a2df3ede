// reason: the condition of an `if` statement must be in parentheses
// expect: 10:12: expected `(`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        if x == 1 {
            x = 2;
        }
    }
}

Top(MyCtl()) main;
