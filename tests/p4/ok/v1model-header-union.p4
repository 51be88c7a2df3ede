// Header unions: an IPv4-or-IPv6 union, extracting into a member, testing
// which member is valid, and a serializable enum as the select key type.
#include <core.p4>
#include <v1model.p4>

enum bit<16> ether_type_t {
    IPV4 = 0x0800,
    IPV6 = 0x86dd
}

header ethernet_t {
    bit<48>      dst;
    bit<48>      src;
    ether_type_t ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> len;
    bit<32> unused;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

header ipv6_t {
    bit<4>   version;
    bit<8>   traffic_class;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<128> src;
    bit<128> dst;
}

header_union ip_t {
    ipv4_t v4;
    ipv6_t v6;
}

struct headers_t {
    ethernet_t eth;
    ip_t       ip;
}

struct meta_t {
    bit<8> hops;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            ether_type_t.IPV4 : parse_v4;
            ether_type_t.IPV6 : parse_v6;
            default           : accept;
        }
    }
    state parse_v4 {
        pkt.extract(hdr.ip.v4);
        transition accept;
    }
    state parse_v6 {
        pkt.extract(hdr.ip.v6);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    apply {
        if (hdr.ip.v4.isValid()) {
            meta.hops = hdr.ip.v4.ttl;
            hdr.ip.v4.ttl = hdr.ip.v4.ttl - 1;
        } else if (hdr.ip.v6.isValid()) {
            meta.hops = hdr.ip.v6.hop_limit;
            hdr.ip.v6.hop_limit = hdr.ip.v6.hop_limit - 1;
        }
        if (meta.hops <= 1 || !hdr.ip.isValid()) {
            mark_to_drop(std);
        } else {
            std.egress_spec = 1;
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
        pkt.emit(hdr.ip);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
