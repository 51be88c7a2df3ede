// `emit` of headers generated code cannot pack itself (a 128-bit field, a varbit field) runs
// the runtime's `emit` only when the header is valid: valid and invalid ones, in between
// headers the code emits inline, in either order.
#include <v1model.p4>

header tag_t { bit<8> kind; bit<8> len; }
header wide_t { bit<128> addr; bit<8> x; }
header opts_t { varbit<64> data; }
header tail_t { bit<16> v; }
struct headers_t { tag_t tag; wide_t wide; opts_t opts; tail_t tail; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            1: wide;
            2: opts;
            3: both;
            default: tail;
        }
    }
    state wide { pkt.extract(hdr.wide); transition tail; }
    state opts { pkt.extract(hdr.opts, (bit<32>) hdr.tag.len * 8); transition tail; }
    state both { pkt.extract(hdr.wide); transition opts; }
    state tail { pkt.extract(hdr.tail); transition accept; }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.wide.isValid()) {
            hdr.wide.addr = hdr.wide.addr ^ 0xff;
        }
        hdr.tail.v = hdr.tail.v + 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.tag);
        pkt.emit(hdr.wide);
        pkt.emit(hdr.opts);
        pkt.emit(hdr.tail);
    }
}

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), D()) main;
