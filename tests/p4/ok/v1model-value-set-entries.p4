// Parser value sets and table entries in the program: a value_set in a
// select, const entries on ternary/range/lpm/exact keys with masks, ranges,
// don't-care `_` and `default`, and mutable `entries` with explicit
// priorities, largest_priority_wins and priority_delta.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<72> prefix;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

header l4_t {
    bit<16> sport;
    bit<16> dport;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    l4_t       l4;
}

struct meta_t {
    bit<8> class_id;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    value_set<bit<16>>(4) tunnel_types;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800       : parse_ipv4;
            tunnel_types : accept;
            default      : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol, hdr.ipv4.dst[31:24]) {
            (6, _)      : parse_l4;
            (17, 0xe0 &&& 0xf0) : accept;
            (17, _)     : parse_l4;
            default     : accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    action set_class(bit<8> id) {
        meta.class_id = id;
    }
    action drop() {
        mark_to_drop(std);
    }
    table acl {
        key = {
            hdr.ipv4.src      : ternary;
            hdr.ipv4.protocol : exact;
            hdr.l4.dport      : range;
        }
        actions = {
            set_class;
            drop;
        }
        const entries = {
            (0x0a000000 &&& 0xff000000, 6, 0 .. 1023)      : set_class(1);
            (_, 17, 53 .. 53)                              : set_class(2);
            (0xc0a80000 &&& 0xffff0000, 6, _)              : drop();
        }
        default_action = set_class(0);
    }
    table route {
        key = {
            hdr.ipv4.dst : lpm;
        }
        actions = {
            set_class;
            NoAction;
        }
        entries = {
            0x0a000000 &&& 0xff000000 : set_class(10);
            0x0a010000 &&& 0xffff0000 : set_class(11);
        }
        default_action = NoAction();
    }
    table qos {
        key = {
            hdr.ipv4.protocol : ternary;
        }
        actions = {
            set_class;
            NoAction;
        }
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            priority = 5 : 6 &&& 0xff : set_class(20);
            const 17 &&& 0xff         : set_class(21);
            _                         : set_class(22);
        }
        default_action = NoAction();
    }
    table ports {
        key = {
            std.ingress_port : exact;
            meta.class_id    : optional;
        }
        actions = {
            set_class;
            NoAction;
        }
        const entries = {
            (1, 10) : set_class(100);
            (2, _)  : set_class(101);
        }
        const default_action = NoAction();
        size = 64;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            acl.apply();
            route.apply();
            qos.apply();
        }
        ports.apply();
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
