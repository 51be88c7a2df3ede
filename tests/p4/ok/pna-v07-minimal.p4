// PNA, specification dialect v0.7+, with nothing but the three-block
// package to tell the dialect: the driver must pick the dialect from the
// three arguments of PNA_NIC.
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

struct meta_t {}

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
    action forward(PortId_t port) {
        send_to_port(port);
    }
    action drop() {
        drop_packet();
    }
    table l2 {
        key = {
            hdr.eth.dst : exact;
        }
        actions = {
            forward;
            drop;
        }
        default_action = drop();
    }
    apply {
        l2.apply();
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
