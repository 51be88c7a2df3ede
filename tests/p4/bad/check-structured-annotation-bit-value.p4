// reason: structured annotation values must be int, string or bool; 8w5 is a bit<8> (P4_16 §18.2)
// expect: 8:15: illegal type for structured annotation
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

@Width[size = 8w5]
control MyCtl(inout bit<8> x) {
    apply { x = 1; }
}

Top(MyCtl()) main;
