// Type and constant declarations: typedef and `type`, nested structs,
// tuples and tuple element access, struct-valued expressions, the invalid
// header expression, header stack expressions, arbitrary-precision
// constants, static_assert, bool/int casts, minSizeInBits/minSizeInBytes,
// operator precedence of & over ==, and the @name / @hidden annotations.
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> flow_id_t;
// An `int` converts to a `type` over a fixed-width integer (as p4c does).
const flow_id_t FIRST_FLOW = 1;

const int WIDTH = 16;
const bit<(WIDTH)> MASK = 0xfff0;
const bool CHECKED = static_assert(WIDTH == 16, "WIDTH must be 16");

header ethernet_t {
    mac_t   dst;
    mac_t   src;
    bit<16> ether_type;
}

header label_t {
    bit<16> value;
}

struct inner_t {
    bit<8> a;
    bool   b;
}

struct outer_t {
    inner_t   inner;
    flow_id_t flow;
}

struct headers_t {
    ethernet_t eth;
    label_t[2] labels;
}

struct meta_t {
    outer_t                  outer;
    tuple<bit<8>, bit<16>>   pair;
    bit<32>                  bits;
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
    @name("ingress.set_flow")
    action set_flow(flow_id_t id) {
        meta.outer.flow = id;
    }
    @hidden
    table flow_table {
        key = {
            hdr.eth.src : exact @name("source");
        }
        actions = {
            set_flow;
            @defaultonly NoAction;
        }
        default_action = NoAction();
    }
    apply {
        meta.outer = { inner = { a = 1, b = true }, flow = (flow_id_t) 32w7 };
        meta.pair = { 8w3, 16w4 };
        meta.outer.inner.a = meta.pair[0] + 1;
        meta.bits = (bit<32>) meta.outer.flow;
        hdr.labels = (label_t[2]) { {16w1}, {16w2} };
        // In P4, & binds tighter than ==: this is (ether_type & MASK) == 0x0800.
        if (hdr.eth.ether_type & MASK == 0x0800 && CHECKED) {
            hdr.labels[1] = (label_t) {#};
        }
        meta.outer.inner.b = (bool) 1;
        meta.bits = meta.bits + (bit<32>) hdr.eth.minSizeInBits()
                    + (bit<32>) meta.outer.inner.minSizeInBytes();
        flow_table.apply();
        const bit<64> BIG = 1 << 40;
        if ((bit<64>) meta.bits < BIG) {
            std.egress_spec = 1;
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
        pkt.emit(hdr);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
