// Control-plane tables small enough for the compiled engine to re-specialise their code to their
// entries whenever the control plane changes them (docs/jit.md, "Re-specialising a table's code
// to its contents"): an exact table, a ternary + lpm table with priorities and an lpm table.
// Entries are added, overridden by better entries, removed and added again with other
// parameters between packets; each packet checks which entry hit (its parameters) or that the
// default action ran.
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<16> a;
    bit<32> b;
    bit<8>  c;
    bit<8>  out_exact;
    bit<16> out_exact2;
    bit<8>  out_tern;
    bit<8>  out_lpm;
    bit<8>  hits;
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
    action set_exact(bit<8> v, bit<16> w) { hdr.p.out_exact = v; hdr.p.out_exact2 = w; }
    action miss_exact(bit<8> v) { hdr.p.out_exact = v; }
    action set_tern(bit<8> v) { hdr.p.out_tern = v; }
    action set_lpm(bit<8> v) { hdr.p.out_lpm = v; }
    action drop_it() { mark_to_drop(sm); }

    table exact_t {
        key = {
            hdr.p.a : exact;
            hdr.p.c : exact;
        }
        actions = { set_exact; miss_exact; drop_it; }
        default_action = miss_exact(8w0xee);
    }

    table tern_t {
        key = {
            hdr.p.a : ternary;
            hdr.p.b : lpm;
        }
        actions = { set_tern; NoAction; }
        default_action = set_tern(8w0xdd);
    }

    table lpm_t {
        key = {
            hdr.p.b : lpm;
        }
        actions = { set_lpm; NoAction; }
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        if (exact_t.apply().hit) {
            hdr.p.hits = hdr.p.hits + 1;
        }
        switch (tern_t.apply().action_run) {
            set_tern: { hdr.p.hits = hdr.p.hits + 16; }
            default: { }
        }
        lpm_t.apply();
    }
}

control NoEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }

control Dep(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.p); }
}

V1Switch(P(), NoVerify(), Ing(), NoEgress(), NoCompute(), Dep()) main;
