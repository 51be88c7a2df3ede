// reason: #pragmatic is not a preprocessor directive
// expect: 8:2: invalid preprocessing directive
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

#pragmatic once

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
