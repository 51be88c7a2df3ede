// PNA, older dialect, with nothing but the four-block package and the
// pre-control metadata types to tell the dialect; SelectByDirection on
// istd.direction in an lpm key, PassNumber_t, and the pre control asking
// for inline decryption.
#include <core.p4>
#include <pna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<96> prefix;
    bit<32> src;
    bit<32> dst;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
}

struct meta_t {
    PassNumber_t pass_seen;
}

control PreControlImpl(in headers_t hdr, inout meta_t meta,
                       in pna_pre_input_metadata_t istd,
                       inout pna_pre_output_metadata_t ostd) {
    apply {
        if (istd.direction == PNA_Direction_t.NET_TO_HOST && hdr.ipv4.isValid()) {
            ostd.decrypt = true;
            ostd.said = (SecurityAssocId_t) 32w10;
            ostd.decrypt_start_offset = 34;
        }
    }
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        meta.pass_seen = istd.pass;
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800  : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
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
    table routes {
        key = {
            SelectByDirection(istd.direction, hdr.ipv4.dst, hdr.ipv4.src) : lpm @name("remote");
        }
        actions = {
            forward;
            drop;
        }
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            routes.apply();
        }
    }
}

control MainDeparserImpl(packet_out pkt, in headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr);
    }
}

PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(),
        MainDeparserImpl()) main;
