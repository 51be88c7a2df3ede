// reason: the file includes itself without an include guard; the preprocessor must stop instead of recursing forever (nevermiss stops at 64 nested includes, on the first #include of the innermost copy: line 3)
// expect: 3:10: nested more than
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#include "pre-recursive-include.p4"

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
