// Callees reached from several places that pass the same argument words run on them in place
// (p4-ir's copy elision, crates/p4-ir/src/elide.rs): a control applied twice with the same
// arguments, and a top-level action listed by two tables. What a packet sees must be
// copy-in/copy-out's (P4_16 §6.8) in each case, and in the cases that must keep their copies:
// an action declared inside the control, which names the control's parameter directly as well
// as through its own `inout` parameter (in place it would read the new value), and a top-level
// action called with different arguments. A 24-word struct parameter is copied in and out
// (more than the 16 words generated code copies word by word: one `memmove`), and an `out`
// one of 24 words is zeroed (one `memset`).
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct headers_t { h_t h; }
struct big_t {
    bit<8> w0; bit<8> w1; bit<8> w2; bit<8> w3; bit<8> w4; bit<8> w5; bit<8> w6; bit<8> w7;
    bit<8> w8; bit<8> w9; bit<8> w10; bit<8> w11; bit<8> w12; bit<8> w13; bit<8> w14;
    bit<8> w15; bit<8> w16; bit<8> w17; bit<8> w18; bit<8> w19; bit<8> w20; bit<8> w21;
    bit<8> w22; bit<8> w23;
}
struct meta_t { bit<8> x; big_t one; big_t two; big_t zeroed; }

// Top level: reaches the frame only through its parameters.
action bump(inout headers_t hdr, inout meta_t m) {
    hdr.h.a = hdr.h.a + 1;
    m.x = m.x + hdr.h.a;
}

action inc(inout bit<8> v) { v = v + 1; }

control Twice(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.h.b = hdr.h.b + m.x;
        if (hdr.h.b == 0xff) {
            sm.egress_spec = 3;
            exit;
        }
    }
}

control Big(inout big_t s, out big_t z) {
    apply {
        s.w0 = s.w0 + 1;
        s.w23 = s.w23 + s.w0;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Twice() twice;
    Big() big;
    // Declared inside: it also names `hdr` itself, which its parameter aliases.
    action alias(inout bit<8> v) {
        v = v + 1;
        hdr.h.d = hdr.h.c;
    }
    table t1 {
        key = { hdr.h.f : exact; }
        actions = { bump(hdr, m); NoAction; }
        default_action = bump(hdr, m);
    }
    table t2 {
        key = { hdr.h.f : exact; }
        actions = { bump(hdr, m); NoAction; }
        default_action = bump(hdr, m);
    }
    apply {
        sm.egress_spec = 1;
        m.x = 1;
        t1.apply();
        t2.apply();
        twice.apply(hdr, m, sm);
        twice.apply(hdr, m, sm);
        alias(hdr.h.c);
        alias(hdr.h.c);
        inc(hdr.h.e);
        inc(hdr.h.f);
        m.one.w0 = hdr.h.a;
        m.one.w23 = 0x10;
        big.apply(m.one, m.zeroed);
        m.two = m.one;
        big.apply(m.two, m.zeroed);
        hdr.h.e = hdr.h.e + m.two.w0 + m.zeroed.w5;
        hdr.h.f = hdr.h.f + m.two.w23;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), D()) main;
