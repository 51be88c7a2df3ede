// The PTF suite's program (crates/nevermiss/tests/ptf.rs, tests/ptf/serve_tests.py): a v1model
// switch with BMv2's CPU port 255.
// - `fwd`: exact on the destination address, 256 entries; a miss sends the frame to
//   DEFAULT_PORT (-D DEFAULT_PORT=N when the P4Info and device config are written), so two
//   builds of this program tell which one a frame went through.
// - A PacketOut carries a `packet_out` header: egress_port non-zero sends the frame there,
//   mcast_grp non-zero to that multicast group, both zero through `fwd`; clone_session non-zero
//   also clones it (ingress to egress) to that clone session's ports.
// - EtherType 0x9999 goes to the CPU with a `packet_in` header (its ingress port).

#include <core.p4>
#include <v1model.p4>

#ifndef DEFAULT_PORT
#define DEFAULT_PORT 1
#endif

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9>  egress_port;
    bit<7>  pad;
    bit<16> mcast_grp;
    bit<32> clone_session;
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

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            255: parse_packet_out;
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
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action drop() {
        mark_to_drop(sm);
    }
    table fwd {
        key = { hdr.eth.dst_addr : exact; }
        actions = { forward; drop; }
        default_action = forward(DEFAULT_PORT);
        size = 256;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            bit<9> port = hdr.packet_out.egress_port;
            bit<16> group = hdr.packet_out.mcast_grp;
            bit<32> session = hdr.packet_out.clone_session;
            hdr.packet_out.setInvalid();
            if (session != 0) {
                clone(CloneType.I2E, session);
            }
            if (port != 0) {
                sm.egress_spec = port;
                return;
            }
            if (group != 0) {
                sm.mcast_grp = group;
                return;
            }
        }
        if (hdr.eth.ether_type == 0x9999) {
            sm.egress_spec = 255;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in.pad = 0;
            return;
        }
        fwd.apply();
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
