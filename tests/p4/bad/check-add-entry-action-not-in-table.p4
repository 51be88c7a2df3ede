// reason: the action named in add_entry is not one of the table's actions (PNA, older dialect)
// expect: 49:9: not any action in table
#include <core.p4>
#include <pna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t {
    ExpireTimeProfileId_t timeout;
}

// action_params of add_entry for the hit action `learned(bit<32> port)`
struct learned_params_t {
    bit<32> port;
}

control PreControlImpl(in headers_t hdr, inout meta_t meta,
                       in pna_pre_input_metadata_t istd,
                       inout pna_pre_output_metadata_t ostd) {
    apply {}
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    action learned(bit<32> port) {
        send_to_port((PortId_t) port);
    }
    action other(bit<32> port) {
        send_to_port((PortId_t) port);
    }
    action miss() {
        add_entry("other", (learned_params_t) { port = 32w1 }, meta.timeout);
    }
    table flows {
        key = {
            hdr.eth.dst : exact;
        }
        actions = {
            @tableonly learned;
            @defaultonly miss;
        }
        add_on_miss = true;
        const default_action = miss;
    }
    apply {
        flows.apply();
        other(32w2);
    }
}

control MainDeparserImpl(packet_out pkt, in headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
    }
}

PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(),
        MainDeparserImpl()) main;
