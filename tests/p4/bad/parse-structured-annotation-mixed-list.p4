// reason: an expression list followed by a key-value pair mixes the two bodies (P4_16 §18.2)
// expect: 8:12: either expressions or key-value pairs
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

@Ids[1, 2, k = 3]
control MyCtl(inout bit<8> x) {
    apply { x = 1; }
}

Top(MyCtl()) main;
