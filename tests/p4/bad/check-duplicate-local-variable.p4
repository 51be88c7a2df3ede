// reason: a local variable is declared twice in the same block
// expect: 11:16: duplicate
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        bit<8> tmp = x;
        bit<8> tmp = 1;
        x = tmp;
    }
}

Top(MyCtl()) main;
