// Action parameters of every packed position: one that ends before byte 8 of the parameter
// block, ones that end past it, and a block of 40 bytes (held on the heap by the table). The
// actions copy their parameters into the packet, so the output shows what each engine read
// (tests/params.rs).
#include <core.p4>
#include <v1model.p4>

header k_t {
    bit<32> key;
    bit<16> a;
    bit<32> b;
    bit<8>  c;
    bit<64> p0;
    bit<64> p1;
    bit<64> p2;
    bit<64> p3;
    bit<64> p4;
}

struct headers_t {
    k_t k;
}

struct meta_t {}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.k);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action small(bit<16> a, bit<32> b, bit<8> c) {
        hdr.k.a = a;
        hdr.k.b = b;
        hdr.k.c = c;
        sm.egress_spec = 1;
    }
    action wide(bit<64> p0, bit<64> p1, bit<64> p2, bit<64> p3, bit<64> p4) {
        hdr.k.p0 = p0;
        hdr.k.p1 = p1;
        hdr.k.p2 = p2;
        hdr.k.p3 = p3;
        hdr.k.p4 = p4;
        sm.egress_spec = 2;
    }
    action miss() { sm.egress_spec = 3; }
    table t {
        key = { hdr.k.key: exact; }
        actions = { small; wide; miss; }
        default_action = miss();
        size = 64;
    }
    apply { t.apply(); }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.k); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
