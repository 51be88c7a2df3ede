// `setValid()` as BMv2 runs it (simple_switch's `add_header`, which p4c writes for it): a header
// that was invalid has its fields reset to 0, a valid header keeps them; a union member made
// valid is reset and makes the other member invalid (which keeps its fields); `push_front` and
// `pop_front` swap elements, so an element made invalid holds the value shifted out of the
// other end (BMv2's StackP4_16). P4_16 leaves all of these values unspecified; p4c's
// gauntlet_set_invalid-bmv2 and gauntlet_hdr_assign_2-bmv2 read them. `res` reports what the
// program sees; `tests/bmv2-json/set-valid-resets.json` is this program compiled by
// p4c-bm2-ss, and the tests run both forms.
#include <v1model.p4>

header case_t { bit<8> which; }
header data_t { bit<8> x; bit<16> y; }
header out_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
header_union either_t { data_t p; data_t q; }

struct headers_t {
    case_t sel;
    data_t h;
    data_t[3] s;
    out_t res;
    either_t u;
}
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.h);
        pkt.extract(hdr.s[0]);
        pkt.extract(hdr.s[1]);
        pkt.extract(hdr.s[2]);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action invalid_then_valid() {
        hdr.h.x = 0x11;
        hdr.h.setInvalid();
        hdr.h.setValid();
    }
    action valid_stays() {
        hdr.h.x = 0x22;
        hdr.h.setValid();
    }
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        if (hdr.sel.which == 0) {
            // An invalid header made valid: its fields read 0.
            invalid_then_valid();
        } else if (hdr.sel.which == 1) {
            // A valid header made valid: unchanged.
            valid_stays();
        } else if (hdr.sel.which == 2) {
            // Union members: q made valid is reset, p becomes invalid and keeps its value.
            hdr.u.p.setValid();
            hdr.u.p.x = 0x33;
            hdr.u.q.setValid();
            hdr.res.a = hdr.u.p.x;
            hdr.res.b = hdr.u.q.x;
            hdr.res.c = (bit<8>)(bit<1>)hdr.u.p.isValid();
            hdr.res.d = (bit<8>)(bit<1>)hdr.u.q.isValid();
            hdr.u.p.setValid();
            hdr.u.q.x = 0x44;
        } else if (hdr.sel.which == 3) {
            // push_front(1): s[0] is invalid and holds what s[2] held; made valid, it reads 0.
            hdr.s.push_front(1);
            hdr.res.a = hdr.s[0].x;
            hdr.res.b = hdr.s[1].x;
            hdr.res.c = (bit<8>)(bit<1>)hdr.s[0].isValid();
            hdr.s[0].setValid();
            hdr.res.d = hdr.s[0].x;
        } else if (hdr.sel.which == 4) {
            // pop_front(2): s[1] and s[2] are invalid and hold what s[1] and s[0] held.
            hdr.s.pop_front(2);
            hdr.res.a = hdr.s[0].x;
            hdr.res.b = hdr.s[1].x;
            hdr.res.c = hdr.s[2].x;
            hdr.res.d = (bit<8>)(bit<1>)hdr.s[1].isValid();
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.sel);
        pkt.emit(hdr.h);
        pkt.emit(hdr.s);
        pkt.emit(hdr.res);
        pkt.emit(hdr.u);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
