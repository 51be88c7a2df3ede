// `nevermiss bench learn`, variant digest (papers/001: "Digest - Current P4 Way"). The same
// flow table as learn-add-on-miss.p4, without add_on_miss: a packet that misses asks the
// controller to learn its flow with a digest (the key and the value to store), and the
// controller inserts the entry with a P4Runtime Write. Packets of the flow keep missing (and
// sending digests, which the server filters while a list of them is unacknowledged) until the
// entry exists.
//
// Outcomes in the header after UDP: 1 hit (value = the stored value), 4 miss, digest sent.
// PNA allows Digest.pack only in the main deparser, so the miss action sets a flag the
// deparser reads. Every packet goes back out of the port it came in on.

#include <core.p4>
#include <pna.p4>

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

// The first bytes of the UDP payload.
header result_t {
    bit<32> value;
    bit<8>  outcome;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    udp_t      udp;
    result_t   result;
}

#ifndef FLOW_TABLE_SIZE
#define FLOW_TABLE_SIZE 65536
#endif

struct meta_t {
    bit<1> learn;
}

// What the controller needs to add the entry: the key and the hit action's parameter.
struct learn_digest_t {
    bit<32> key;
    bit<32> value;
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
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
        pkt.extract(hdr.result);
        transition accept;
    }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    action flow_hit(bit<32> value) {
        hdr.result.value = value;
        hdr.result.outcome = 1;
    }

    // The learning step, deferred to the controller.
    action flow_miss() {
        meta.learn = 1;
        hdr.result.value = 0;
        hdr.result.outcome = 4;
    }

    table flows {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            @tableonly flow_hit;
            @defaultonly flow_miss;
        }
        const default_action = flow_miss;
        size = FLOW_TABLE_SIZE;
    }

    apply {
        meta.learn = 0;
        if (hdr.result.isValid()) {
            flows.apply();
        }
        send_to_port(istd.input_port);
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    Digest<learn_digest_t>() learn_digest;
    apply {
        if (meta.learn == 1) {
            learn_digest.pack({ hdr.ipv4.dst_addr, hdr.ipv4.src_addr });
        }
        pkt.emit(hdr);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
