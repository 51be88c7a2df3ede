// reason: an instantiation must name the instance
// expect: 12:14: found `;`
#include <core.p4>

control Ctl(inout bit<8> x);
package Top(Ctl c);

control MyCtl(inout bit<8> x) {
    apply {}
}

Top(MyCtl()) ;
