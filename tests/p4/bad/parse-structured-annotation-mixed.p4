// reason: a structured annotation's body is an expression list or a key-value list, never both (P4_16 §18.2)
// expect: 8:21: either expressions or key-value pairs
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

@Label[short = "s", "long"]
control MyCtl(inout bit<8> x) {
    apply { x = 1; }
}

Top(MyCtl()) main;
