// reason: `fuzzy` is not a declared match kind
// expect: 14:17: declaration not found
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
    table t {
        key = {
            x : fuzzy;
        }
        actions = {
            set;
        }
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
