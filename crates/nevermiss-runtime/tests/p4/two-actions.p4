// A table with two forwarding actions and a default that sends elsewhere: the atomicity tests
// (tests/atomicity.rs) count packets out of port 3, which only a miss or the default produces.
#include <core.p4>
#include <v1model.p4>

header key_t {
    bit<32> key;
    bit<32> seq;
}

struct headers_t {
    key_t k;
}

struct meta_t {}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.k);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to_one() { sm.egress_spec = 1; }
    action to_two() { sm.egress_spec = 2; }
    action miss() { sm.egress_spec = 3; }
    table t {
        key = { hdr.k.key: exact; }
        actions = { to_one; to_two; miss; }
        default_action = miss();
        size = 4096;
    }
    apply { t.apply(); }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.k); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
