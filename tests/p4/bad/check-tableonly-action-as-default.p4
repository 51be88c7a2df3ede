// reason: an action annotated @tableonly cannot be the default action
// expect: 20:26: tableonly
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
    table t {
        key = {
            x : exact;
        }
        actions = {
            @tableonly set;
            NoAction;
        }
        default_action = set();
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
