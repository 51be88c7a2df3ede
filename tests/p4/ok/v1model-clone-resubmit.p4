// Packet replication in v1model: clone with preserved metadata fields
// (@field_list), resubmit and recirculate, instance_type checks, digest,
// truncate, multicast group, log_msg and assert.
#include <core.p4>
#include <v1model.p4>

const bit<32> CLONE_SESSION = 5;

enum bit<8> field_list_t {
    MIRROR = 1,
    AGAIN  = 2
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct meta_t {
    @field_list(field_list_t.MIRROR)
    bit<9> orig_port;
    @field_list(field_list_t.AGAIN)
    bit<8> passes;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    apply {
        if (std.instance_type == 0) {
            meta.orig_port = std.ingress_port;
            digest<learn_t>(1, { hdr.eth.src, std.ingress_port });
            clone_preserving_field_list(CloneType.I2E, CLONE_SESSION,
                                        (bit<8>) field_list_t.MIRROR);
        }
        if (meta.passes < 2) {
            meta.passes = meta.passes + 1;
            resubmit_preserving_field_list((bit<8>) field_list_t.AGAIN);
        }
        if (hdr.eth.dst == 0xffffffffffff) {
            std.mcast_grp = 1;
        } else {
            std.egress_spec = 2;
        }
        log_msg("ingress port {} pass {}", { std.ingress_port, meta.passes });
        assert(meta.passes <= 2);
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std) {
    apply {
        if (std.instance_type == 1) {
            truncate(64);
        } else if (std.egress_port == 3) {
            recirculate_preserving_field_list((bit<8>) field_list_t.AGAIN);
        }
    }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
