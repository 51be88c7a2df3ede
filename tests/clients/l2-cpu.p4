// The client tests' program for the stream channel: an L2 switch with a CPU port (510).
// - A PacketOut carries a `packet_out` header: a non-zero egress_port sends the frame there
//   untouched; zero runs it through the tables.
// - An unknown source address is reported with a digest (address, ingress port); `smac`
//   entries have idle timeouts (support_timeout), so entries the controller adds and the
//   traffic stops using are notified.
// - A frame to an unknown destination goes to the CPU with a `packet_in` header (its ingress
//   port), which the server turns into a PacketIn.

#include <core.p4>
#include <v1model.p4>

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   eth;
}

struct learn_t {
    bit<48> src_addr;
    bit<9>  port;
}

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            510: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action learn() {
        digest<learn_t>(1, { hdr.eth.src_addr, sm.ingress_port });
    }
    action known() { }
    table smac {
        key = { hdr.eth.src_addr : exact; }
        actions = { learn; known; }
        default_action = learn();
        support_timeout = true;
        size = 1024;
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action to_cpu() {
        sm.egress_spec = 510;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
        hdr.packet_in.pad = 0;
    }
    table dmac {
        key = { hdr.eth.dst_addr : exact; }
        actions = { forward; to_cpu; }
        default_action = to_cpu();
        size = 1024;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            bit<9> port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            if (port != 0) {
                sm.egress_spec = port;
                return;
            }
        }
        smac.apply();
        dmac.apply();
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
