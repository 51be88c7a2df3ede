// Headers edited in every way a program can between its parser and its deparser, then emitted:
// an assignment from a table action's parameter, a slice assignment, a copy through a local
// header, an extern's `out` argument (hash), setInvalid/setValid, an assignment in a function,
// a checksum update in the deparser's checksum control. The compiled engine emits an extracted
// header by copying the packet's bytes when nothing wrote it (docs/jit.md, "clean headers");
// every edit here must make it pack the fields instead.
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

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    udp_t      udp;
}

struct meta_t {
    bit<1> recompute;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4;
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
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

bit<8> marked(in bit<8> d) {
    return d | 8w0xa0;
}

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action rewrite_dst(bit<48> mac) {
        hdr.eth.dst_addr = mac;
    }
    action keep() {
    }
    table dmac {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            rewrite_dst;
            keep;
        }
        default_action = keep();
    }

    apply {
        sm.egress_spec = 1;
        if (!hdr.udp.isValid()) {
            return;
        }
        dmac.apply();
        if (hdr.udp.dst_port == 1) {
            hdr.ipv4.ttl[3:0] = 4w0xf;
        } else if (hdr.udp.dst_port == 2) {
            hash(hdr.udp.src_port, HashAlgorithm.crc16, 16w0, { hdr.ipv4.src_addr }, 32w65536);
        } else if (hdr.udp.dst_port == 3) {
            ethernet_t e = hdr.eth;
            e.src_addr = 48w0x0000000000ee;
            hdr.eth = e;
        } else if (hdr.udp.dst_port == 4) {
            hdr.udp.setInvalid();
        } else if (hdr.udp.dst_port == 5) {
            hdr.ipv4.diffserv = marked(hdr.ipv4.diffserv);
        } else if (hdr.udp.dst_port == 6) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            m.recompute = 1;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control Ck(inout headers_t hdr, inout meta_t m) {
    apply {
        if (m.recompute == 1) {
            update_checksum(true,
                { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
                  hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                  hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
                hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        }
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), Ck(), D()) main;
