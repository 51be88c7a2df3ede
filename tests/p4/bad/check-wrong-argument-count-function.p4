// reason: function `twice` takes one argument but is called with two
// expect: 14:13: too many arguments
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

bit<8> twice(in bit<8> v) {
    return v + v;
}

control MyCtl(inout bit<8> x) {
    apply {
        x = twice(x, 8w1);
    }
}

Top(MyCtl()) main;
