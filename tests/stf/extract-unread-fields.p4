// Fields that only one path reads, each in another way: in a rarely taken branch, through an
// extern (a hash; a checksum's field list), as a table key, in a table's action, through a copy
// of the whole header; a header written on one path (then packed from its fields); a header the
// runtime's extract fills after an inline one, and one whose second extract fails. The compiled
// engine's inline `extract` leaves out the fields nothing reads, and emits untouched headers by
// copying the packet's bytes (docs/jit.md, "clean headers"); every read here must find its field
// stored, every packed header all of them.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header tag_t {
    bit<8> more;
    bit<8> data;
}

header pad_t {
    bit<64> a;
    bit<64> b;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    udp_t      udp;
    tag_t      tag;
    pad_t      pad;
}

struct meta_t {
    bit<16> h;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4;
            0x88b5: parse_tag;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
    // tag, then (more == 1) pad and tag again: near the packet's end, the runtime's extract.
    state parse_tag {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.more) {
            1: parse_pad;
            default: accept;
        }
    }
    state parse_pad {
        pkt.extract(hdr.pad);
        pkt.extract(hdr.tag);
        transition accept;
    }
}

// ipv4.identification and total_len and udp.checksum: read only by the checksum extern.
control Vfy(inout headers_t hdr, inout meta_t m) {
    apply {
        verify_checksum(hdr.udp.isValid() && hdr.udp.dst_port == 8,
            { hdr.ipv4.identification, hdr.ipv4.total_len },
            hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    // ipv4.ttl: read only by this action.
    action by_ttl() {
        sm.egress_spec = (bit<9>) hdr.ipv4.ttl;
    }
    action keep() {
    }
    // ipv4.dst_addr: read only as this key.
    table route {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            by_ttl;
            keep;
        }
        default_action = keep();
    }

    apply {
        sm.egress_spec = 1;
        if (!hdr.udp.isValid()) {
            return;
        }
        route.apply();
        if (hdr.udp.dst_port == 2) {
            // ipv4.src_addr: read only by the hash.
            hash(m.h, HashAlgorithm.identity, 16w0, { hdr.ipv4.src_addr[7:0] }, 32w65536);
            sm.egress_spec = (bit<9>) m.h;
        } else if (hdr.udp.dst_port == 3) {
            // eth.src_addr: read only through a copy of the whole header.
            ethernet_t e = hdr.eth;
            sm.egress_spec = (bit<9>) e.src_addr[7:0];
        } else if (hdr.udp.dst_port == 4) {
            // udp written: emitted from its fields, every one of which must be there.
            hdr.udp.length = 16w0x1234;
        } else if (hdr.udp.dst_port == 7) {
            // eth.dst_addr: read only on this rare path.
            sm.egress_spec = (bit<9>) hdr.eth.dst_addr[7:0];
        } else if (sm.checksum_error == 1) {
            sm.egress_spec = 9;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control Ck(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.pad);
    }
}

V1Switch(P(), Vfy(), Ing(), Eg(), Ck(), D()) main;
