// A table whose key is wider than 64 bits (a 96-bit field and a 128-bit one): the compiled
// engine looks it up through the runtime's general apply (the interpreter builds the key), which
// then runs the chosen action's generated code — a call into generated code from inside a call
// of generated code — and the control goes on calling the runtime (a counter) after it. The
// action writes a header and a 72-bit parameter.
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<96>  k;
    bit<128> l;
    bit<8>   result;
    bit<72>  wide_out;
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
    counter(4, CounterType.packets) applied;
    action set(bit<8> v, bit<72> w) {
        hdr.p.result = v;
        hdr.p.wide_out = w;
    }
    action unknown() {
        hdr.p.result = 0xee;
    }
    table wide {
        key = {
            hdr.p.k : exact;
            hdr.p.l : ternary;
        }
        actions = { set; unknown; }
        default_action = unknown();
    }
    apply {
        sm.egress_spec = 1;
        wide.apply();
        applied.count(0);
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
