// A v1model IPv4 router: longest-prefix-match routes pick the next hop and the output port, a
// ternary ACL (with priorities) may drop or let pass, the TTL is decremented and the IPv4
// header checksum is verified on input and recomputed on output.

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

header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

struct meta_t {
    bit<32> next_hop;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
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
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() {
        mark_to_drop(sm);
    }

    action set_next_hop(bit<32> next_hop, bit<9> port) {
        meta.next_hop = next_hop;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            set_next_hop;
            drop;
        }
        default_action = drop();
        size = 1024;
    }

    action set_dmac(bit<48> dmac) {
        hdr.eth.dst_addr = dmac;
    }

    table next_hop_mac {
        key = {
            meta.next_hop : exact;
        }
        actions = {
            set_dmac;
            drop;
        }
        default_action = drop();
        size = 256;
    }

    action permit() { }

    table acl {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            hdr.l4.dst_port   : ternary;
        }
        actions = {
            permit;
            drop;
        }
        default_action = permit();
        size = 256;
    }

    apply {
        if (!hdr.ipv4.isValid() || sm.checksum_error == 1 || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        ipv4_lpm.apply();
        next_hop_mac.apply();
        acl.apply();
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_smac(bit<48> smac) {
        hdr.eth.src_addr = smac;
    }

    table port_mac {
        key = {
            sm.egress_port : exact;
        }
        actions = {
            set_smac;
            NoAction;
        }
        default_action = NoAction();
    }

    apply {
        port_mac.apply();
    }
}

control ComputeChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
