// Macros that paste tokens into no single token: `set_ ## id ## (` and
// `hdr. ## id ## _eth`. ISO C leaves such a paste undefined; GNU cpp (as
// p4c runs it, `-x assembler-with-cpp`) keeps both tokens and goes on, and so
// does nevermiss, with a warning. A failed paste ends its chain, so
// `hdr. ## outer ## _eth` is `hdr.outer_eth`. One macro defines an action per
// tunnel layer, as generated pipelines do.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t outer_eth;
    ethernet_t inner_eth;
}

struct meta_t {}

#define SET_ETH_DEF(id) \
action set_ ## id ## (inout headers_t hdr, in bit<48> dmac) { \
    hdr. ## id ## _eth.setValid(); \
    hdr. ## id ## _eth.dst = dmac; \
    hdr. ## id ## _eth.ether_type = 0x0800; \
}

SET_ETH_DEF(outer)
SET_ETH_DEF(inner)

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.outer_eth);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t m) { apply {} }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action encap(bit<48> dmac) {
        set_inner(hdr, hdr.outer_eth.dst);
        set_outer(hdr, dmac);
    }
    table t {
        key = { hdr.outer_eth.src: exact; }
        actions = { encap; NoAction; }
        default_action = NoAction;
    }
    apply {
        t.apply();
        sm.egress_spec = 1;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t m) { apply {} }

control Dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.outer_eth);
        pkt.emit(hdr.inner_eth);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
