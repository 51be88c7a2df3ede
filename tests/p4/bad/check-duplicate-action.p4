// reason: two actions with the same name are declared in one control
// expect: 12:12: duplicate
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
    action set() {
        x = 2;
    }
    apply {
        set();
    }
}

Top(MyCtl()) main;
