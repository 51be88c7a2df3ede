// reason: table properties are written `key = { ... }`
// expect: 13:13: expected `=`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    action set() {
        x = 1;
    }
    table t {
        key {
            x : exact;
        }
        actions = { set; }
    }
    apply {
        t.apply();
    }
}

Top(MyCtl()) main;
