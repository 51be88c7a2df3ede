// reason: the file includes itself without an include guard; the preprocessor must stop instead of recursing forever
// expect: 8:1: recursive
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#include "pre-recursive-include.p4"

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
