// Header stacks: parsing an MPLS label stack with `.next` and `.last`,
// a loop in the parser, pop_front/push_front, indexing, size and lastIndex.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers_t {
    ethernet_t eth;
    mpls_t[4]  mpls;
}

struct meta_t {
    bit<32> depth;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x8847  : parse_mpls;
            default : accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        meta.depth = hdr.mpls.lastIndex + 1;
        transition select(hdr.mpls.last.bos) {
            1w0 : parse_mpls;
            1w1 : accept;
        }
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    action pop_label(bit<9> port) {
        hdr.mpls.pop_front(1);
        std.egress_spec = port;
    }
    action swap_label(bit<20> label, bit<9> port) {
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
        std.egress_spec = port;
    }
    action push_label(bit<20> label, bit<9> port) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].tc = 0;
        hdr.mpls[0].bos = 0;
        hdr.mpls[0].ttl = 64;
        std.egress_spec = port;
    }
    table lfib {
        key = {
            hdr.mpls[0].label : exact;
        }
        actions = {
            pop_label;
            swap_label;
            push_label;
            NoAction;
        }
        default_action = NoAction();
    }
    apply {
        if (hdr.mpls[0].isValid() && meta.depth < hdr.mpls.size) {
            lfib.apply();
        }
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std) {
    apply {}
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.mpls);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
