// reason: a conditional group has a second #else
// expect: 16:1: #else after #else
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#if 1
control MyCtl(inout bit<8> x) {
    apply {}
}
#else
control MyCtl(inout bit<8> x) {
    apply { x = 1; }
}
#else
#endif

Top(MyCtl()) main;
