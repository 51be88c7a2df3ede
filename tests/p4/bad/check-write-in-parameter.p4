// reason: a parameter with direction `in` is read-only
// expect: 11:9: cannot write to an in parameter
#include <core.p4>

control Ctl(in bit<8> x, out bit<8> y);
package Top(Ctl c);

control MyCtl(in bit<8> x, out bit<8> y) {
    apply {
        y = x;
        x = 0;
    }
}

Top(MyCtl()) main;
