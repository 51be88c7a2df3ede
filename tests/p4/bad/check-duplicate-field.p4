// reason: a struct declares the field `a` twice
// expect: 10:12: duplicate
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

struct pair_t {
    bit<8> a;
    bit<8> a;
}

control MyCtl(inout bit<8> x) {
    apply {
        pair_t p = { 1, 2 };
        x = p.a;
    }
}

Top(MyCtl()) main;
