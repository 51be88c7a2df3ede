// reason: the included file does not exist on the include path
// expect: 4:10: not found
#include <core.p4>
#include <no_such_architecture.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) main;
