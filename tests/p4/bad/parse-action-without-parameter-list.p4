// reason: an action declaration needs a parameter list, even an empty one
// expect: 9:16: expected `(`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set {
        x = 1;
    }
    apply {
        set();
    }
}

Top(MyCtl()) main;
