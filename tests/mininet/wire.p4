// The simplest switch between two hosts (mininet/ping.py): what comes in on port 1 leaves on
// port 2 and the other way round; nothing else passes.

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.ingress_port == 1) {
            sm.egress_spec = 2;
        } else if (sm.ingress_port == 2) {
            sm.egress_spec = 1;
        } else {
            mark_to_drop(sm);
        }
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
