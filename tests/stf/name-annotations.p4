// Control-plane names as p4c gives them: an instance's `@name` names the tables inside it
// (`IngressImpl.c.t`, not `IngressImpl.c_0.t`), a parameter's `@name` names it in entries
// (`port`, not `p`), and a `#` inside a quoted STF name is part of the name.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> key;
}

struct headers_t { h_t h; }
struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control Inner(inout headers_t hdr, inout standard_metadata_t sm) {
    action fwd(@name("port") bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.key : exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    @name("#odd") table u {
        key = { hdr.h.key : exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        u.apply();
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name("c") Inner() c_0;
    apply { c_0.apply(hdr, sm); }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
