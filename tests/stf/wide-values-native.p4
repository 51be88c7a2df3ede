// Values wider than 64 bits as generated code computes them (crates/nevermiss-jit/src/codegen/wide.rs):
// 128-bit loads and stores, `&` `|` `^`, `?:`, `==`/`!=`, zero- and sign-extending casts,
// truncations to 32 and 72 bits, slices inside a word and across two, and a table keyed on a
// 128-bit metadata field the control computed. Both engines must give the same bytes.
#include <core.p4>
#include <v1model.p4>

header w_t {
    bit<128> a;
    bit<128> b;
    bit<8>   sel;
    int<8>   s;
}

header out_t {
    bit<128> and_;
    bit<128> or_;
    bit<128> xor_;
    bit<128> mux;
    bit<128> ext;
    bit<128> sext;
    bit<32>  trunc;
    bit<32>  mid;
    bit<64>  hi;
    bit<8>   eq;
    bit<72>  w72;
    bit<8>   found;
}

struct headers_t {
    w_t   w;
    out_t o;
}

struct meta_t {
    bit<128> k;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.w);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action hit(bit<8> v) { hdr.o.found = v; }
    action miss() { hdr.o.found = 0xee; }
    table by_k {
        key = { m.k : exact; }
        actions = { hit; miss; }
        default_action = miss();
    }
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.and_ = hdr.w.a & hdr.w.b;
        hdr.o.or_ = hdr.w.a | hdr.w.b;
        hdr.o.xor_ = hdr.w.a ^ hdr.w.b;
        hdr.o.mux = (hdr.w.sel == 1) ? hdr.w.a : hdr.w.b;
        hdr.o.ext = (bit<128>) hdr.w.sel;
        hdr.o.sext = (bit<128>) ((int<128>) hdr.w.s);
        hdr.o.trunc = (bit<32>) hdr.w.a;
        hdr.o.mid = hdr.w.a[71:40];
        hdr.o.hi = hdr.w.a[127:64];
        hdr.o.eq = (hdr.w.a == hdr.w.b) ? 8w1 : ((hdr.w.a != hdr.w.b) ? 8w2 : 8w3);
        hdr.o.w72 = (bit<72>) hdr.w.a;
        m.k = hdr.w.a ^ 128w0xff;
        by_k.apply();
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control Ck(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.w);
        pkt.emit(hdr.o);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), Ck(), D()) main;
