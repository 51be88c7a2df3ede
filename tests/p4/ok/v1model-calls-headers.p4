// Calls and header operations: named arguments, default parameter values,
// an @optional parameter of a user extern, actions with directional
// parameters called from apply, a switch inside an action, local header
// variables, setValid/setInvalid, header and struct assignment and
// equality, and a parser that rejects with verify.
#include <core.p4>
#include <v1model.p4>

extern Mirror {
    Mirror();
    void send(in bit<16> session, @optional in bit<16> length);
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header probe_t {
    bit<8>  kind;
    bit<8>  hops;
    bit<16> id;
}

struct headers_t {
    ethernet_t eth;
    probe_t    probe;
    probe_t    copy;
}

struct meta_t {
    bit<16> score;
    bool    same;
}

bit<16> weigh(in bit<16> x, in bit<16> factor = 3) {
    return x * factor;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        verify(hdr.eth.ether_type != 0, error.NoMatch);
        transition select(hdr.eth.ether_type) {
            0x9000 .. 0x90ff : parse_probe;
            default          : accept;
        }
    }
    state parse_probe {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    Mirror() mirror;

    action bump(inout probe_t p, in bit<8> by) {
        p.hops = p.hops + by;
    }
    action classify(bit<8> kind) {
        switch (kind) {
            1: { meta.score = weigh(16w10); }
            2: { meta.score = weigh(factor = 5, x = 16w10); }
            default: { meta.score = 0; }
        }
    }
    table kinds {
        key = {
            hdr.probe.kind : exact;
        }
        actions = {
            classify;
        }
        default_action = classify(0);
    }
    apply {
        if (!hdr.probe.isValid()) {
            return;
        }
        kinds.apply();
        bump(hdr.probe, 1);
        bump(by = 2, p = hdr.probe);
        probe_t local;
        local.setValid();
        local = hdr.probe;
        local.id = 16w0xffff;
        hdr.copy = local;
        meta.same = hdr.copy == hdr.probe;
        if (!meta.same) {
            hdr.copy.setInvalid();
        }
        mirror.send(7);
        mirror.send(session = 8, length = 64);
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std) {
    apply {}
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
