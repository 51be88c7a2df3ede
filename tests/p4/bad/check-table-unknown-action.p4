// reason: the table lists an action that is not declared
// expect: 18:13: declaration not found
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
            set;
            reset;
        }
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
