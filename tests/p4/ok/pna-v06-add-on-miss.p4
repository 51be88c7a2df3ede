// PNA, older dialect (PreControl, istd.direction, bool add_entry): a
// connection table with add_on_miss, a miss action that adds an entry with
// a struct of action parameters and checks the bool result, hit actions
// that restart or change the entry's expiry, SelectByDirection in the key,
// and the P4-DPDK table properties idle_timeout_with_auto_delete /
// default_idle_timeout_for_data_plane_added_entries.
#include <core.p4>
#include <pna.p4>

const ExpireTimeProfileId_t EXPIRE_SHORT = (ExpireTimeProfileId_t) 8w1;
const ExpireTimeProfileId_t EXPIRE_LONG  = (ExpireTimeProfileId_t) 8w2;

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

header tcp_t {
    bit<16> sport;
    bit<16> dport;
    bit<64> seq_ack;
    bit<8>  offset;
    bit<8>  flags;
    bit<32> rest;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    tcp_t      tcp;
}

struct meta_t {
    bool    added;
    bit<32> adds_failed;
}

struct conn_params_t {
    bit<8> conn_state;
}

control PreControlImpl(in headers_t hdr, inout meta_t meta,
                       in pna_pre_input_metadata_t istd,
                       inout pna_pre_output_metadata_t ostd) {
    apply {}
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800  : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            6       : parse_tcp;
            default : accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    action conn_hit(bit<8> conn_state) {
        if (conn_state == 1 && hdr.tcp.flags == 0x10) {
            set_entry_expire_time(EXPIRE_LONG);
        } else {
            restart_expire_timer();
        }
    }
    action conn_miss() {
        meta.added = add_entry(action_name = "conn_hit",
                               action_params = (conn_params_t) { conn_state = 0 },
                               expire_time_profile_id = EXPIRE_SHORT);
        if (!meta.added) {
            meta.adds_failed = meta.adds_failed + 1;
        }
    }
    table conn {
        key = {
            SelectByDirection(istd.direction, hdr.ipv4.src, hdr.ipv4.dst) : exact @name("ip_a");
            SelectByDirection(istd.direction, hdr.ipv4.dst, hdr.ipv4.src) : exact @name("ip_b");
            hdr.ipv4.protocol : exact;
        }
        actions = {
            @tableonly conn_hit;
            @defaultonly conn_miss;
        }
        add_on_miss = true;
        idle_timeout_with_auto_delete = true;
        default_idle_timeout_for_data_plane_added_entries = 1;
        const default_action = conn_miss;
        size = 65536;
    }
    action to_port(PortId_t port) {
        send_to_port(port);
    }
    action drop() {
        drop_packet();
    }
    table route {
        key = {
            hdr.ipv4.dst : lpm;
        }
        actions = {
            to_port;
            drop;
        }
        const default_action = drop();
    }
    apply {
        meta.adds_failed = 0;
        if (hdr.tcp.isValid()) {
            conn.apply();
        }
        if (istd.direction == PNA_Direction_t.NET_TO_HOST) {
            route.apply();
        } else {
            send_to_port((PortId_t) 32w0);
        }
    }
}

control MainDeparserImpl(packet_out pkt, in headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
    }
}

PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(),
        MainDeparserImpl()) main;
