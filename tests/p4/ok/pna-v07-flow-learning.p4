// PNA, specification dialect v0.7+ (three blocks, AddEntryErrorStatus_t):
// a flow table with add_on_miss and pna_idle_timeout = AUTO_DELETE whose
// miss action learns a NAT-style entry with add_entry_if and a struct of
// action parameters, named arguments, allocate_flow_id, the status compared
// with ADD_ENTRY_SUCCESS, and hit actions using update_expire_info and
// set_entry_expire_time_if.  Direction comes from is_net_port().
#include <core.p4>
#include <pna.p4>

const ExpireTimeProfileId_t PROFILE_NEW         = (ExpireTimeProfileId_t) 8w1;
const ExpireTimeProfileId_t PROFILE_ESTABLISHED = (ExpireTimeProfileId_t) 8w2;
const ExpireTimeProfileId_t PROFILE_CLOSING     = (ExpireTimeProfileId_t) 8w3;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<72> prefix;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

header udp_t {
    bit<16> sport;
    bit<16> dport;
    bit<16> len;
    bit<16> checksum;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    udp_t      udp;
}

struct meta_t {
    bool                  from_net;
    bool                  learn;
    AddEntryErrorStatus_t status;
    bit<32>               learn_failures;
    FlowId_t              flow;
}

// One member per parameter of `translate`, same names, types and order.
struct translate_params_t {
    bit<32> new_addr;
    bit<16> new_port;
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        meta.from_net = is_net_port(istd.input_port);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800  : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17      : parse_udp;
            default : accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    action translate(bit<32> new_addr, bit<16> new_port) {
        hdr.ipv4.src = new_addr;
        hdr.udp.sport = new_port;
        update_expire_info(true, hdr.udp.len > 512, PROFILE_ESTABLISHED);
        set_entry_expire_time_if(hdr.udp.dport == 53, PROFILE_CLOSING);
    }
    action learn_translation() {
        meta.flow = allocate_flow_id();
        meta.status = add_entry_if(
            do_add_entry = meta.learn,
            action_name = "translate",
            action_params = (translate_params_t) {
                new_addr = 32w0xc0a80001,
                new_port = ((bit<32>) meta.flow)[15:0]
            },
            expire_time_profile_id = PROFILE_NEW);
        if (meta.learn && meta.status != ADD_ENTRY_SUCCESS) {
            meta.learn_failures = meta.learn_failures + 1;
            drop_packet();
        }
    }
    table nat {
        key = {
            SelectByDirection(meta.from_net, hdr.ipv4.dst, hdr.ipv4.src) : exact @name("inside_addr");
            SelectByDirection(meta.from_net, hdr.udp.dport, hdr.udp.sport) : exact @name("inside_port");
            hdr.ipv4.protocol : exact;
        }
        actions = {
            @tableonly translate;
            @defaultonly learn_translation;
        }
        add_on_miss = true;
        pna_idle_timeout = PNA_IdleTimeout_t.AUTO_DELETE;
        const default_action = learn_translation;
        size = 1 << 20;
    }
    apply {
        meta.learn = !meta.from_net && !istd.recirculated;
        meta.learn_failures = 0;
        if (hdr.udp.isValid()) {
            nat.apply();
        }
        if (is_host_port(istd.input_port)) {
            send_to_port((PortId_t) 32w0);
        } else {
            send_to_port((PortId_t) 32w1);
        }
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
