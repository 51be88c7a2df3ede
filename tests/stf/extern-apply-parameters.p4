// Extern instances passed to a control as apply parameters (P4_16 §7.2.12, p4c's issue1958):
// the callee's method calls reach the caller's instance. Two instances of one control type get
// different registers; a control applied twice with the same register shares it.
#include <v1model.p4>

header pkt_t {
    bit<8> idx;
    bit<8> which;
    bit<8> r_old;
    bit<8> s_old;
}
struct headers_t { pkt_t p; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.p);
        transition accept;
    }
}

// Adds `step` to cell `hdr.p.idx` of the register it is given and reports the old value in `old`.
control Bump(inout headers_t hdr, register<bit<8>> cells, in bit<8> step, out bit<8> old) {
    action bump() {
        bit<8> v;
        cells.read(v, (bit<32>) hdr.p.idx);
        old = v;
        cells.write((bit<32>) hdr.p.idx, v + step);
    }
    apply { bump(); }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    register<bit<8>>(4) s;
    Bump() on_r;
    Bump() on_s;
    apply {
        sm.egress_spec = 1;
        if (hdr.p.which == 0) {
            on_r.apply(hdr, r, 1, hdr.p.r_old);
        } else if (hdr.p.which == 1) {
            on_s.apply(hdr, s, 10, hdr.p.s_old);
        } else {
            // The same instance applied again with the same register.
            on_r.apply(hdr, r, 1, hdr.p.r_old);
            on_r.apply(hdr, r, 1, hdr.p.r_old);
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
