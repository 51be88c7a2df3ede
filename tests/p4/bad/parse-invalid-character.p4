// reason: `$` is not a character of the P4 language
// expect: 10:13: unexpected character
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = $1;
    }
}

Top(MyCtl()) main;
