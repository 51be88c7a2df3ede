// `nevermiss bench learn`, variant add-on-miss (papers/001: "Add-On-Miss: direct update in the
// data plane"). A flow is a key (the IPv4 destination address); the first packet of a flow
// misses the table `flows` and its default action inserts the key with add_entry, so the next
// packet of the flow hits. Its twin learn-digest.p4 learns the same entries through the
// controller instead; both have the same headers, parser, table and hit action.
//
// The hit action writes the value stored with the entry (the IPv4 source address of the packet
// that caused the insertion) into the header after UDP, with outcome 1; a miss writes outcome
// 2 (inserted) or 3 (insertion failed). Every packet goes back out of the port it came in on.

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
    AddEntryErrorStatus_t status;
}

struct flow_params_t {
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

    // The learning step, in the data plane.
    action flow_miss() {
        meta.status = add_entry(action_name = "flow_hit",
                                action_params = (flow_params_t) { value = hdr.ipv4.src_addr },
                                expire_time_profile_id = (ExpireTimeProfileId_t) 8w0);
        hdr.result.value = 0;
        hdr.result.outcome = (meta.status == ADD_ENTRY_SUCCESS) ? 8w2 : 8w3;
    }

    table flows {
        key = {
            hdr.ipv4.dst_addr : exact;
        }
        actions = {
            @tableonly flow_hit;
            @defaultonly flow_miss;
        }
        add_on_miss = true;
        const default_action = flow_miss;
        size = FLOW_TABLE_SIZE;
    }

    apply {
        if (hdr.result.isValid()) {
            flows.apply();
        }
        send_to_port(istd.input_port);
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
