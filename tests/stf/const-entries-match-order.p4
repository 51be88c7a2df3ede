// Tables with `const` entries of every match kind, with overlapping entries: of two matching
// entries of equal priority the first wins, a larger priority wins, a longer prefix wins. The compiled engine matches
// such tables' entries in its own code (docs/jit.md, "const tables"); these packets pin the
// order it must keep, and a miss runs the default action the control plane set.
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<8>  kind;
    bit<16> a;
    bit<32> b;
    bit<8>  c;
    bit<8>  out_exact;
    bit<8>  out_lpm;
    bit<8>  out_ternary;
    bit<8>  out_range;
    bit<8>  out_optional;
}

struct headers_t {
    probe_t p;
}

struct meta_t {
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.p);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_exact(bit<8> v) { hdr.p.out_exact = v; }
    action set_lpm(bit<8> v) { hdr.p.out_lpm = v; }
    action set_ternary(bit<8> v) { hdr.p.out_ternary = v; }
    action set_range(bit<8> v) { hdr.p.out_range = v; }
    action set_optional(bit<8> v) { hdr.p.out_optional = v; }
    action miss_exact(bit<8> v) { hdr.p.out_exact = v; }

    table exact_t {
        key = {
            hdr.p.a : exact;
            hdr.p.c : exact;
        }
        actions = { set_exact; miss_exact; }
        const entries = {
            (16w1, 8w1) : set_exact(8w11);
            (16w2, 8w1) : set_exact(8w12);
            (16w0xffff, 8w0) : set_exact(8w13);
        }
        default_action = miss_exact(8w0xee);
    }

    table lpm_t {
        key = {
            hdr.p.b : lpm;
        }
        actions = { set_lpm; NoAction; }
        const entries = {
            32w0x0a000000 &&& 32w0xff000000 : set_lpm(8w8);
            32w0x0a010000 &&& 32w0xffff0000 : set_lpm(8w16);
            32w0x0a010200 &&& 32w0xffffff00 : set_lpm(8w24);
            32w0x0a010203 : set_lpm(8w32);
        }
        default_action = NoAction();
    }

    table ternary_t {
        key = {
            hdr.p.a : ternary;
            hdr.p.c : exact;
        }
        actions = { set_ternary; NoAction; }
        const entries = {
            // Equal priorities: the first matching entry (in declaration order) wins.
            priority = 10 : (16w0x0100 &&& 16w0xff00, 8w1) : set_ternary(8w1);
            priority = 10 : (16w0x0001 &&& 16w0x00ff, 8w1) : set_ternary(8w2);
            priority = 5 : (_, 8w2) : set_ternary(8w3);
            // A larger priority wins over the order.
            priority = 100 : (16w0x0201 &&& 16w0xffff, 8w1) : set_ternary(8w4);
        }
        default_action = NoAction();
    }

    table range_t {
        key = {
            hdr.p.c : range;
        }
        actions = { set_range; NoAction; }
        const entries = {
            8w10 .. 8w20 : set_range(8w1);
            8w15 .. 8w30 : set_range(8w2);
            8w0 .. 8w5 : set_range(8w3);
        }
        default_action = NoAction();
    }

    table optional_t {
        key = {
            hdr.p.kind : optional;
            hdr.p.c    : optional;
        }
        actions = { set_optional; NoAction; }
        const entries = {
            (8w7, 8w1) : set_optional(8w1);
            (8w7, _) : set_optional(8w2);
            (_, 8w1) : set_optional(8w3);
        }
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        exact_t.apply();
        lpm_t.apply();
        ternary_t.apply();
        range_t.apply();
        optional_t.apply();
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control Ck(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.p);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), Ck(), D()) main;
