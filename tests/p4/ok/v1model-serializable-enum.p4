// Serializable enums: explicit underlying type and values, casts in both
// directions, enum values as table-key and action-parameter types,
// comparisons, const entries keyed by enum members, and a plain
// (non-serializable) enum in metadata.
#include <core.p4>
#include <v1model.p4>

enum bit<8> ip_proto_t {
    ICMP = 1,
    TCP  = 6,
    UDP  = 17
}

enum color_t { RED, GREEN, BLUE }

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<64>    prefix;
    bit<8>     ttl;
    ip_proto_t protocol;
    bit<16>    checksum;
    bit<32>    src;
    bit<32>    dst;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
}

struct meta_t {
    color_t    color;
    ip_proto_t proto;
    bit<8>     raw_proto;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800  : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            ip_proto_t.TCP : accept;
            ip_proto_t.UDP : accept;
            default        : accept;
        }
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    action set_green() {
        meta.color = color_t.GREEN;
    }
    action set_red() {
        meta.color = color_t.RED;
    }
    action rewrite_proto(ip_proto_t p) {
        hdr.ipv4.protocol = p;
    }
    table classify {
        key = {
            hdr.ipv4.protocol : exact;
        }
        actions = {
            set_green;
            set_red;
            rewrite_proto;
        }
        const entries = {
            ip_proto_t.TCP  : set_green();
            ip_proto_t.ICMP : rewrite_proto(ip_proto_t.UDP);
        }
        default_action = set_red();
    }
    apply {
        meta.color = color_t.BLUE;
        if (hdr.ipv4.isValid()) {
            classify.apply();
            meta.proto = hdr.ipv4.protocol;
            meta.raw_proto = (bit<8>) hdr.ipv4.protocol;
            if (meta.raw_proto == 8w17) {
                hdr.ipv4.protocol = (ip_proto_t) 8w6;
            }
        }
        if (meta.color == color_t.RED) {
            mark_to_drop(std);
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
        pkt.emit(hdr);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
