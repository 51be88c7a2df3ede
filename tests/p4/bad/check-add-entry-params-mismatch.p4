// reason: add_entry's action_params struct has a bool where the action's parameter is bit<32> (PNA v0.7+)
// expect: 39:9: do not match the parameters
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

struct learned_params_t {
    bool port;
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
    action miss() {
        add_entry("learned", (learned_params_t) { port = true }, meta.timeout);
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
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
