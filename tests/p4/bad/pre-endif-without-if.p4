// reason: an #endif has no matching #if/#ifdef/#ifndef
// expect: 11:1: #endif without #if
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {}
}
#endif

Top(MyCtl()) main;
