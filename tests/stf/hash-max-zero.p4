// v1model's hash with max = 0 writes base (v1model.p4: "If max=0, the value written to result
// will always be base"); flowlet_switching-bmv2 relies on it. The result goes into the
// frame's first byte and decides the output port.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  result;
    bit<32> data;
}

struct headers_t { h_t h; }
struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.h.result, HashAlgorithm.crc16, 8w7, { hdr.h.data }, 8w0);
        sm.egress_spec = (bit<9>)hdr.h.result;
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
