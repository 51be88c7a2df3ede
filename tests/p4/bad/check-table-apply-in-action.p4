// reason: a table cannot be applied from inside an action
// expect: 21:9: cannot be called from actions
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
        }
    }
    action run_table() {
        t.apply();
    }
    apply {
        run_table();
    }
}

Top(MyCtl()) main;
