// reason: the function returns a bool where its declared return type is bit<8>
// expect: 9:12: type mismatch
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

bit<8> half(in bit<8> v) {
    return v == 0;
}

control MyCtl(inout bit<8> x) {
    apply {
        x = half(x);
    }
}

Top(MyCtl()) main;
