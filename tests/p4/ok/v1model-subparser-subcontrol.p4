// Composition: a parser that invokes a sub-parser instance, a control that
// applies an instantiated sub-control twice, direct invocation of a control
// type that has no constructor parameters, constructor parameters with a
// default value, and an action called directly from apply.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
    vlan_t     outer;
    vlan_t     inner;
}

struct meta_t {
    bit<12> vid;
    bit<8>  hits;
}

parser VlanParser(packet_in pkt, out vlan_t tag) {
    state start {
        pkt.extract(tag);
        transition accept;
    }
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    VlanParser() vlan_parser;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x8100  : parse_outer;
            default : accept;
        }
    }
    state parse_outer {
        vlan_parser.apply(pkt, hdr.outer);
        transition select(hdr.outer.ether_type) {
            0x8100  : parse_inner;
            default : accept;
        }
    }
    state parse_inner {
        vlan_parser.apply(pkt, hdr.inner);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control ClearHits(inout meta_t meta) {
    apply {
        meta.hits = 0;
    }
}

control CountHit(inout meta_t meta)(bit<8> step = 1) {
    apply {
        meta.hits = meta.hits + step;
    }
}

control VlanRewrite(inout vlan_t tag, inout meta_t meta)(bit<12> fallback) {
    action set_vid(bit<12> vid) {
        tag.vid = vid;
        meta.vid = vid;
    }
    table vid_map {
        key = {
            tag.vid : exact;
        }
        actions = {
            set_vid;
        }
        default_action = set_vid(fallback);
    }
    apply {
        if (tag.isValid()) {
            vid_map.apply();
        }
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    VlanRewrite(12w1) rewrite;
    CountHit(2) count_twice;
    CountHit() count_once;

    action to_port(bit<9> port) {
        std.egress_spec = port;
    }
    apply {
        ClearHits.apply(meta);
        rewrite.apply(hdr.outer, meta);
        rewrite.apply(hdr.inner, meta);
        count_twice.apply(meta);
        count_once.apply(meta);
        to_port(1);
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
        pkt.emit(hdr.outer);
        pkt.emit(hdr.inner);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
