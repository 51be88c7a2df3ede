// reason: a struct field declaration lacks its terminating `;`
// expect: 10:5: expected `;`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

struct pair_t {
    bit<8> a
    bit<8> b;
}

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
