// A PNA TCP connection tracker (specification dialect, v0.7+): a stateful firewall that lets
// packets from the network reach the host only when they belong to a connection the host
// opened. Connections live in an add-on-miss table whose entries expire by themselves
// (pna_idle_timeout = AUTO_DELETE), with an expire-time profile per connection state:
//
//   profile 1 (EXPIRE_NEW):         after the host's SYN, until the connection is established
//   profile 2 (EXPIRE_ESTABLISHED): while data flows
//   profile 3 (EXPIRE_CLOSING):     after a FIN or RST
//
// The durations are configuration, e.g.
//   nevermiss run pna-tcp-conntrack.p4 --host-port 1 --expire-profile 1=5s \
//       --expire-profile 2=300s --expire-profile 3=10s --port 0=pcap:net.pcap --port 1=pcap:host.pcap
//
// Ports: the host ports are given with --host-port; every other port is a network port.
// Packets from a host port leave by network port 0, packets from the network by host port 1.
// Non-TCP traffic passes; TCP packets from the network without a connection are dropped.

#include <core.p4>
#include <pna.p4>

const ExpireTimeProfileId_t EXPIRE_NEW         = (ExpireTimeProfileId_t) 8w1;
const ExpireTimeProfileId_t EXPIRE_ESTABLISHED = (ExpireTimeProfileId_t) 8w2;
const ExpireTimeProfileId_t EXPIRE_CLOSING     = (ExpireTimeProfileId_t) 8w3;

const bit<8> TCP_FIN = 0x01;
const bit<8> TCP_SYN = 0x02;
const bit<8> TCP_RST = 0x04;
const bit<8> TCP_ACK = 0x10;

const PortId_t NET_PORT  = (PortId_t) 32w0;
const PortId_t HOST_PORT = (PortId_t) 32w1;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
    tcp_t      tcp;
}

struct meta_t {
    bool                  from_net;
    bool                  do_add;
    AddEntryErrorStatus_t status;
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            6: parse_tcp;
            default: accept;
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
    action ct_tcp_table_hit() {
        if ((hdr.tcp.flags & (TCP_FIN | TCP_RST)) != 0) {
            set_entry_expire_time(EXPIRE_CLOSING);
        } else {
            // An ACK moves a new connection to the established profile; other packets only
            // restart the entry's timer.
            update_expire_info(true, (hdr.tcp.flags & TCP_ACK) != 0, EXPIRE_ESTABLISHED);
        }
    }

    action ct_tcp_table_miss() {
        meta.status = add_entry_if(meta.do_add, "ct_tcp_table_hit", {}, EXPIRE_NEW);
    }

    table ct_tcp_table {
        key = {
            SelectByDirection(meta.from_net, hdr.ipv4.dst_addr, hdr.ipv4.src_addr) : exact @name("host_addr");
            SelectByDirection(meta.from_net, hdr.ipv4.src_addr, hdr.ipv4.dst_addr) : exact @name("remote_addr");
            hdr.ipv4.protocol : exact;
            SelectByDirection(meta.from_net, hdr.tcp.dst_port, hdr.tcp.src_port) : exact @name("host_port");
            SelectByDirection(meta.from_net, hdr.tcp.src_port, hdr.tcp.dst_port) : exact @name("remote_port");
        }
        actions = {
            @tableonly ct_tcp_table_hit;
            @defaultonly ct_tcp_table_miss;
        }
        add_on_miss = true;
        pna_idle_timeout = PNA_IdleTimeout_t.AUTO_DELETE;
        const default_action = ct_tcp_table_miss;
        size = 65536;
    }

    apply {
        meta.from_net = is_net_port(istd.input_port);
        // Only the host opens connections.
        meta.do_add = !meta.from_net && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_SYN) != 0;
        meta.status = ADD_ENTRY_NOT_DONE;
        if (hdr.tcp.isValid()) {
            if (!ct_tcp_table.apply().hit && meta.status != ADD_ENTRY_SUCCESS) {
                // No connection, and none opened now: from the network, drop. From the host, a
                // packet of a connection we do not know (e.g. it expired) is dropped too.
                drop_packet();
                return;
            }
        }
        if (meta.from_net) {
            send_to_port(HOST_PORT);
        } else {
            send_to_port(NET_PORT);
        }
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
