// A sub-parser that rejects (the packet is too short for its second header) keeps what it
// extracted, and what its caller extracted, valid: the deparser emits them and the unparsed
// rest follows as payload (BMv2's behaviour; p4c's issue1470-bmv2 and issue2314).
#include <v1model.p4>

header outer_t { bit<16> tag; bit<8> kind; }
header first_t { bit<8> a; bit<8> next; }
header second_t { bit<32> b; }

struct headers_t {
    outer_t outer;
    first_t first;
    second_t second;
}
struct meta_t { bit<8> unused; }

// `out` headers: the sub-parser's writes reach the caller even when it rejects.
parser Inner(packet_in pkt, out headers_t hdr) {
    state start {
        pkt.extract(hdr.outer);
        transition select(hdr.outer.kind) {
            1: take_first;
            default: accept;
        }
    }
    state take_first {
        pkt.extract(hdr.first);
        transition select(hdr.first.next) {
            2: take_second;
            default: accept;
        }
    }
    state take_second {
        pkt.extract(hdr.second);
        transition accept;
    }
}

// `inout` headers, called after the caller extracted `outer` itself.
parser InnerInout(packet_in pkt, inout headers_t hdr) {
    state start {
        pkt.extract(hdr.first);
        transition select(hdr.first.next) {
            2: take_second;
            default: accept;
        }
    }
    state take_second {
        pkt.extract(hdr.second);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Inner() inner;
    InnerInout() inner_inout;
    state start {
        transition select(pkt.lookahead<bit<16>>()) {
            0xaaaa: by_out;
            default: by_inout;
        }
    }
    state by_out {
        inner.apply(pkt, hdr);
        transition accept;
    }
    state by_inout {
        pkt.extract(hdr.outer);
        inner_inout.apply(pkt, hdr);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        // The parser error is visible to ingress; mark it in the packet.
        if (sm.parser_error == error.PacketTooShort && hdr.outer.isValid()) {
            hdr.outer.kind = 0xee;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.outer);
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
