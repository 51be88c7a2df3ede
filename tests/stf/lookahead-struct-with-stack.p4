// `lookahead<T>()` of a struct holding a header stack reads every element of the stack (and
// makes it valid) without moving the cursor (p4c's issue2465-bmv2).
#include <v1model.p4>

header byte_t { bit<8> v; }
header tail_t { bit<8> count; }

struct peek_t {
    byte_t[3] b;
    bit<8> after;
}
struct headers_t {
    byte_t[3] b;
    tail_t tail;
}
struct meta_t { bit<8> count; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        transition select(p.b[0].v, p.b[1].v, p.b[2].v, p.b[2].isValid()) {
            (1, _, _, true): one;
            (0, 1, _, true): two;
            (0, 0, 1, true): three;
            default: none;
        }
    }
    state one {
        pkt.extract(hdr.b.next);
        m.count = 1;
        transition accept;
    }
    state two {
        pkt.extract(hdr.b.next);
        pkt.extract(hdr.b.next);
        m.count = 2;
        transition accept;
    }
    state three {
        pkt.extract(hdr.b.next);
        pkt.extract(hdr.b.next);
        pkt.extract(hdr.b.next);
        m.count = 3;
        transition accept;
    }
    state none {
        m.count = 0xff;
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        hdr.tail.setValid();
        hdr.tail.count = m.count;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }

// Only the tail is emitted: what the parser consumed disappears from the packet.
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.tail); }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
