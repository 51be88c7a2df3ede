// reason: an #ifdef is never closed by #endif
// expect: 8:1: unterminated
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#ifdef EXTRA_CHECKS
control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
