// reason: the default action must supply the action's directionless parameter
// expect: 19:26: no argument supplied
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set(bit<8> value) {
        x = value;
    }
    table t {
        key = {
            x : exact;
        }
        actions = {
            set;
        }
        default_action = set();
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
