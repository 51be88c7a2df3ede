// reason: `if` is a reserved keyword and cannot name a struct field
// expect: 9:12: found `if`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

struct s_t {
    bit<8> if;
}

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
