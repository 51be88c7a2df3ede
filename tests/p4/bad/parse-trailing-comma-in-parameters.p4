// reason: a parameter list cannot end with a comma
// expect: 8:30: found `)`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x,) {
    apply {}
}

Top(MyCtl()) main;
