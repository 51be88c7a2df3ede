// reason: a key of a structured annotation is a name; `default` is a keyword (P4_16 §18.2, kvPair)
// expect: 8:20: expected a name
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

@Val[type = "u32", default = 0]
control MyCtl(inout bit<8> x) {
    apply { x = 1; }
}

Top(MyCtl()) main;
