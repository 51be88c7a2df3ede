// Counters and `mark_to_drop` run by generated code, not the interpreter: an indexed counter
// (`Helpers::count`) counted at an index from the packet (in range and out of range: nothing
// counted) and at a constant index, each with the packet's length; a v1model direct counter,
// which its table counts on every hit, so that the actions' `count()` adds nothing (v1model.p4;
// BMv2 counts each hit once); `mark_to_drop` (lowered to its two stores) followed by a new
// `egress_spec` on one path and not on another. (PSA's `DirectCounter`, counted by
// `Helpers::direct_count`, is examples/psa-host-routes.p4's.)
#include <v1model.p4>

header h_t { bit<8> idx; bit<8> key; bit<8> drop; bit<8> res; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) by_idx;
    counter(4, CounterType.bytes) fixed;
    direct_counter(CounterType.packets_and_bytes) per_entry;
    action mark(bit<8> v) {
        per_entry.count();
        hdr.h.res = v;
    }
    action miss() {
        per_entry.count();
        hdr.h.res = 0xee;
    }
    table keyed {
        key = { hdr.h.key : exact; }
        actions = { mark; miss; }
        default_action = miss();
        counters = per_entry;
    }
    apply {
        sm.egress_spec = 1;
        by_idx.count((bit<32>) hdr.h.idx);
        fixed.count(2);
        keyed.apply();
        if (hdr.h.drop == 1) {
            mark_to_drop(sm);
        } else if (hdr.h.drop == 2) {
            mark_to_drop(sm);
            sm.egress_spec = 2;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), D()) main;
