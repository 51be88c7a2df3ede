// reason: a block comment is never closed
// expect: 10:17: unterminated comment
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {
        x = 1;  /* the rest of the file is swallowed
    }
}

Top(MyCtl()) main;
