// The compiled parser keeps its cursor in a variable from a known start (docs/jit.md, "The
// parser's cursor"), stored at every inline extract and read again after anything that may move
// it. Here inline extracts alternate with statements that call the runtime (`extract` into a
// stack's `next`, a `lookahead`, an `advance`) and with ones that do not (`verify`,
// assignments), in a loop; every packet must come out with the bytes after the parsed headers,
// no more, no fewer.
#include <core.p4>
#include <v1model.p4>

header h1_t {
    bit<8>  kind;
    bit<8>  skip;
    bit<16> data;
    bit<8>  count;
    bit<8>  next;
}

header h2_t {
    bit<8>  kind;
    bit<8>  a;
    bit<8>  b;
    bit<8>  next;
}

header h3_t {
    bit<8>  kind;
    bit<8>  data;
}

struct headers {
    h1_t    h1;
    h2_t[3] h2;
    h3_t    h3;
}

struct metadata {
    bit<8> seen;
    bit<8> peek;
}

error {
    BadKind
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h1);
        verify(hdr.h1.kind == 1, error.BadKind);
        meta.seen = 1;
        transition select(hdr.h1.skip) {
            0: pick;
            default: skip_bytes;
        }
    }
    state skip_bytes {
        pkt.advance((bit<32>) 16);
        transition pick;
    }
    state pick {
        meta.peek = pkt.lookahead<bit<8>>();
        transition select(hdr.h1.next) {
            2: parse_h2;
            3: parse_h3;
            default: accept;
        }
    }
    state parse_h2 {
        pkt.extract(hdr.h2.next);
        verify(hdr.h2.last.kind == 2, error.BadKind);
        meta.seen = meta.seen + 1;
        transition select(hdr.h2.last.next) {
            2: parse_h2;
            3: parse_h3;
            default: accept;
        }
    }
    state parse_h3 {
        pkt.extract(hdr.h3);
        verify(hdr.h3.kind == 3, error.BadKind);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h1.count = meta.seen;
        hdr.h1.data = (bit<16>) meta.peek;
        if (sm.parser_error != error.NoError) {
            hdr.h1.data = 16w0xeeee;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }

control NoCompute(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.h1);
        pkt.emit(hdr.h2);
        pkt.emit(hdr.h3);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
