// reason: an `else` branch must follow an `if` statement
// expect: 11:9: found `else`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = 1;
        else {
            x = 2;
        }
    }
}

Top(MyCtl()) main;
