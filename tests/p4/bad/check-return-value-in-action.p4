// reason: an action cannot return a value
// expect: 11:9: return with a value
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
        return 2;
    }
    apply {
        set();
    }
}

Top(MyCtl()) main;
