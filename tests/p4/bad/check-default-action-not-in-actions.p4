// reason: the default action is not listed in the table's `actions`
// expect: 22:26: not in the table's actions
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
    action clear() {
        x = 0;
    }
    table t {
        key = {
            x : exact;
        }
        actions = {
            set;
        }
        default_action = clear();
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
