// Variable-length headers and parser operations: IPv4 options in a varbit
// field extracted with the two-argument extract, lookahead of a bit string
// and of a header, advance, verify with a user error, parser-local
// variables, and an `if` statement inside a parser state.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<16> id;
    bit<16> frag;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

header ipv4_options_t {
    varbit<320> options;
}

header udp_t {
    bit<16> sport;
    bit<16> dport;
    bit<16> len;
    bit<16> checksum;
}

error { IPv4HeaderTooShort }

struct headers_t {
    ethernet_t     eth;
    ipv4_t         ipv4;
    ipv4_options_t opts;
    udp_t          udp;
}

struct meta_t {
    bit<16> peeked_port;
    bool    short_udp;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(pkt.lookahead<bit<4>>()) {
            4       : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.IPv4HeaderTooShort);
        bit<32> opt_bits = ((bit<32>) hdr.ipv4.ihl - 5) * 32;
        pkt.extract(hdr.opts, opt_bits);
        transition select(hdr.ipv4.protocol) {
            17      : parse_udp;
            default : accept;
        }
    }
    state parse_udp {
        udp_t peek = pkt.lookahead<udp_t>();
        meta.peeked_port = peek.dport;
        if (peek.len < 8) {
            meta.short_udp = true;
        } else {
            meta.short_udp = false;
        }
        pkt.extract(hdr.udp);
        pkt.advance(32);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    apply {
        if (std.parser_error == error.IPv4HeaderTooShort || meta.short_udp) {
            mark_to_drop(std);
        } else if (meta.peeked_port == 4789) {
            std.egress_spec = 4;
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
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.opts);
        pkt.emit(hdr.udp);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
