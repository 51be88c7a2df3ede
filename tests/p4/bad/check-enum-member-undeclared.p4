// reason: enum `color_t` has no member PURPLE
// expect: 12:29: invalid enum tag
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

enum color_t { RED, GREEN }

control MyCtl(inout bit<8> x) {
    apply {
        color_t c = color_t.PURPLE;
        if (c == color_t.RED) {
            x = 1;
        }
    }
}

Top(MyCtl()) main;
