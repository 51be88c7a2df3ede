// A PSA (Portable Switch Architecture) host router: an exact-match table on the IPv4
// destination picks the output port and the next hop's MAC address, the TTL is decremented,
// and a direct counter counts the packets of every route. Packets to an unknown host, with a
// TTL of 0 or 1, or that are not IPv4 are dropped; a per-port counter counts what arrives.
//
// nevermiss runs it on the PSA packet path of BMv2's psa_switch: ingress parser → ingress →
// ingress deparser → (unicast) → egress parser → egress → egress deparser.

#include <core.p4>
#include <psa.p4>

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

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
}

struct meta_t {
}

struct empty_t {
}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    DirectCounter<bit<32>>(PSA_CounterType_t.PACKETS) route_hits;
    Counter<bit<32>, bit<32>>(512, PSA_CounterType_t.PACKETS_AND_BYTES) port_in;

    action forward(PortId_t port, bit<48> next_hop_mac) {
        route_hits.count();
        send_to_port(ostd, port);
        hdr.eth.src_addr = hdr.eth.dst_addr;
        hdr.eth.dst_addr = next_hop_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action unknown() {
        route_hits.count();
        ingress_drop(ostd);
    }

    table hosts {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            forward;
            unknown;
        }
        default_action = unknown();
        psa_direct_counter = route_hits;
        size = 4096;
    }

    apply {
        port_in.count((bit<32>) (PortIdUint_t) istd.ingress_port);
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            hosts.apply();
        } else {
            ingress_drop(ostd);
        }
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normal_meta,
                            inout headers_t hdr, in meta_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in empty_t normal_meta, in empty_t clone_i2e_meta,
                        in empty_t clone_e2e_meta) {
    state start {
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply {
    }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta,
                           out empty_t recirculate_meta, inout headers_t hdr,
                           in meta_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply {
    }
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;

EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;

PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
