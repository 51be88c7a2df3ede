// reason: the function's return type `counter_value_t` is not declared
// expect: 8:1: declaration not found
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

counter_value_t zero() {
    return 0;
}

control MyCtl(inout bit<8> x) {
    apply {
        x = (bit<8>) zero();
    }
}

Top(MyCtl()) main;
