// reason: an action annotated @defaultonly cannot be the action of a table entry
// expect: 25:17: defaultonly
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set(bit<8> v) {
        x = v;
    }
    action miss() {
        x = 0;
    }
    table t {
        key = {
            x : exact;
        }
        actions = {
            set;
            @defaultonly miss;
        }
        const entries = {
            1 : set(2);
            2 : miss();
        }
        default_action = miss();
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
