// Structured annotations (P4_16 §18.2) on every element P4Info describes:
// expression lists (empty, mixed, folded constants) and key-value lists on a
// table, its keys and action references, actions and their parameters, a
// counter, a new type, a controller header and `main`; the same name used
// structured on one element and unstructured on another.
#include <core.p4>
#include <v1model.p4>

#define SAI_API "dash_acl"
const int PRIO_BASE = 10;

@SaiType[kind = "ip", width = 32]
type bit<32> ip_addr_t;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

@controller_header("packet_in")
@Wire[format = "pi"]
header packet_in_t {
    @SaiVal[type = "sai_uint16_t"] bit<16> ingress_port;
    bit<16> reason;
}

struct headers_t {
    packet_in_t packet_in;
    ethernet_t eth;
}

struct meta_t {
    ip_addr_t dip;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t m) { apply {} }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    @SaiCounter[name = "acl_hits", attr_type = "stats"]
    counter(64, CounterType.packets) hits;

    @SaiAction[]
    @Trace("unstructured here")
    action permit(@SaiVal[type = "sai_uint32_t", initial = 0] bit<32> rule_id,
                  @SaiVal[isresourcetype = true] bit<9> port) {
        hits.count(rule_id);
        sm.egress_spec = port;
    }
    @Trace[1, "two", true, 1 == 2, PRIO_BASE + 1]
    action deny() {
        mark_to_drop(sm);
    }

    @SaiTable[name = "acl_rule", api = SAI_API, order = PRIO_BASE * 2, isobject = false]
    @brief("the ACL")
    table acl {
        key = {
            hdr.eth.dst: exact @SaiVal[type = "sai_mac_t"] @name("dmac");
            m.dip: ternary @SaiVal[type = "sai_ip_address_t"];
        }
        actions = {
            @Choice["permit"] permit;
            @Choice["deny"] deny;
        }
        default_action = deny;
        size = 128;
    }
    apply {
        acl.apply();
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t m) { apply {} }

control Dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
    }
}

@Pipeline[name = "structured", version = 1]
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
