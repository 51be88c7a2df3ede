// An action profile, an action selector and a parser value set for the server's tests
// (tests/server.rs). Every packet goes back to the CPU port (510) so a PacketOut's result
// arrives as a PacketIn: `result` is what the tables set, its top bit says whether `kind` was in
// the value set.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> kind;
    bit<8> key;
    bit<8> result;
}

struct headers_t { h_t h; }
struct meta_t { bit<1> in_set; }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    value_set<bit<8>>(4) kinds;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            kinds: marked;
            default: accept;
        }
    }
    state marked {
        meta.in_set = 1;
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_out(bit<8> v) { hdr.h.result = v; }
    action add_out(bit<8> v) { hdr.h.result = hdr.h.result + v; }
    table direct_members {
        key = { hdr.h.key : exact; }
        actions = { set_out; NoAction; }
        implementation = action_profile(8);
    }
    table grouped {
        key = {
            hdr.h.key : exact;
            hdr.h.kind : selector;
        }
        actions = { add_out; NoAction; }
        implementation = action_selector(HashAlgorithm.crc16, 16, 14);
    }
    apply {
        direct_members.apply();
        grouped.apply();
        if (meta.in_set == 1) {
            hdr.h.result = hdr.h.result | 0x80;
        }
        sm.egress_spec = 510;
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
