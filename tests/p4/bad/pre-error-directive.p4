// reason: an #error directive in an active group stops compilation with its message
// expect: 9:1: this program needs the nevermiss target
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#ifndef NEVERMISS_TARGET
#error "this program needs the nevermiss target"
#endif

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
