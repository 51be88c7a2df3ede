// Sub-controls applied from one place run on their caller's `inout` arguments in place (p4-ir's
// copy elision, crates/p4-ir/src/elide.rs); what the packet sees must be copy-in/copy-out's
// (P4_16 §6.8): a table keyed on a parameter, an action writing it, `exit` inside the callee
// (the copy-out still happens, §12.4), and overlapping arguments, which stay copies (the second
// copy-out wins).
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }

control Rewrite(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_d(bit<8> v) { hdr.h.d = v; }
    table by_a {
        key = { hdr.h.a : exact; }
        actions = { set_d; NoAction; }
        const entries = { 0x12 : set_d(0x42); }
        default_action = NoAction();
    }
    apply {
        hdr.h.a = hdr.h.a + 1;
        m.x = hdr.h.b;
        by_a.apply();
        if (hdr.h.b == 0xff) {
            sm.egress_spec = 2;
            exit;
        }
    }
}

control Swap(inout bit<8> x, inout bit<8> y) {
    apply { x = x + 1; y = y + 2; }
}

control Inc(inout bit<8> v) {
    apply { v = v + 1; }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Rewrite() rewrite;
    Swap() swap;
    Inc() inc1;
    Inc() inc2;
    apply {
        sm.egress_spec = 1;
        rewrite.apply(hdr, m, sm);
        hdr.h.c = m.x;
        swap.apply(hdr.h.b, hdr.h.b);
        inc1.apply(hdr.h.c);
        inc2.apply(hdr.h.c);
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), D()) main;
