// A PNA deparser that emits every header it may have parsed. When the headers it emits are the
// parsed ones, unedited, in the packet's order, from its first byte to where the parser
// stopped, the compiled engine sends the packet as it came instead of emitting them (docs/jit.md,
// "The packet as it came"). Every way that condition can fail is here: an edited field, a header
// made invalid, a header added, bytes skipped by `advance`, headers parsed in another order than
// they are emitted, and packets too short for the parser.
#include <core.p4>
#include <pna.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header tag_t {
    bit<16> id;
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
    tag_t      tag;
    ipv4_t     ipv4;
    udp_t      udp;
}

struct meta_t {
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4;
            0x8100: parse_tag;
            // Two bytes skipped, then the tag: the skipped bytes leave the packet.
            0x88b5: skip_then_tag;
            // The tag after the IPv4 header in the packet, before it in the deparsed one.
            0x9100: parse_ipv4_then_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state skip_then_tag {
        pkt.advance(16);
        pkt.extract(hdr.tag);
        transition accept;
    }
    state parse_ipv4_then_tag {
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.tag);
        transition accept;
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

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    apply {
        send_to_port((PortId_t) 1);
        if (!hdr.udp.isValid()) {
            return;
        }
        if (hdr.udp.dst_port == 1) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        } else if (hdr.udp.dst_port == 2) {
            hdr.udp.setInvalid();
        } else if (hdr.udp.dst_port == 3) {
            hdr.tag.setValid();
            hdr.tag.id = 16w0x0007;
            hdr.tag.ether_type = hdr.eth.ether_type;
            hdr.eth.ether_type = 16w0x8100;
        }
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
