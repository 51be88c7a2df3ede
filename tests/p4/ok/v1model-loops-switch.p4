// Loops and switch statements: three-clause for loops with break and
// continue, for-in over a range and over a header stack, a switch on the
// action a table ran, and a switch on a bit-string value.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header tag_t {
    bit<8> kind;
    bit<8> value;
}

struct headers_t {
    ethernet_t eth;
    tag_t[3]   tags;
}

struct meta_t {
    bit<16> sum;
    bit<8>  count;
    bit<8>  mode;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x88b5  : parse_tags;
            default : accept;
        }
    }
    state parse_tags {
        pkt.extract(hdr.tags[0]);
        pkt.extract(hdr.tags[1]);
        pkt.extract(hdr.tags[2]);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    action sum_tags() {
        meta.sum = 0;
        for (tag_t t in hdr.tags) {
            if (!t.isValid()) {
                continue;
            }
            meta.sum = meta.sum + (bit<16>) t.value;
        }
    }
    action count_kinds() {
        meta.count = 0;
        for (bit<8> i = 0; i < 3; i = i + 1) {
            if (hdr.tags[i].kind == 0) {
                break;
            }
            meta.count = meta.count + 1;
        }
    }
    action clear() {
        for (bit<8> k in 0 .. 2) {
            hdr.tags[k].value = k;
        }
    }
    table pick {
        key = {
            hdr.eth.dst : exact;
        }
        actions = {
            sum_tags;
            count_kinds;
            clear;
        }
        default_action = clear();
    }
    apply {
        meta.mode = 0;
        switch (pick.apply().action_run) {
            sum_tags: {
                meta.mode = 1;
            }
            count_kinds:
            clear: {
                meta.mode = 2;
            }
        }
        switch (meta.mode) {
            0: { mark_to_drop(std); }
            1: { std.egress_spec = 1; }
            default: { std.egress_spec = 2; }
        }
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std) {
    apply {}
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.tags);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
