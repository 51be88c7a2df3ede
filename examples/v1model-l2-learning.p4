// A v1model L2 learning switch. Unknown source addresses are reported to the control plane
// with a digest (source MAC and ingress port); the control plane answers by adding entries to
// both tables. Frames to known destinations go to their port; the others are flooded to
// multicast group 1 (every port but the one they came in on).

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct learn_digest_t {
    bit<48> src_addr;
    bit<9>  port;
}

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action learn() {
        digest<learn_digest_t>(1, { hdr.eth.src_addr, sm.ingress_port });
    }

    action known() { }

    table smac {
        key = {
            hdr.eth.src_addr : exact;
        }
        actions = {
            learn;
            known;
        }
        default_action = learn();
        size = 4096;
    }

    action forward(bit<9> port) {
        sm.egress_spec = port;
    }

    action flood() {
        sm.mcast_grp = 1;
    }

    table dmac {
        key = {
            hdr.eth.dst_addr : exact;
        }
        actions = {
            forward;
            flood;
        }
        default_action = flood();
        size = 4096;
    }

    apply {
        if (!hdr.eth.isValid()) {
            mark_to_drop(sm);
            return;
        }
        smac.apply();
        dmac.apply();
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // A flooded copy never goes back where the frame came from.
        if (sm.mcast_grp != 0 && sm.egress_port == sm.ingress_port) {
            mark_to_drop(sm);
        }
    }
}

control ComputeChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
