// PNA, specification dialect v0.7+: Counter, DirectCounter, Meter,
// DirectMeter, Register with an initial value, Random, Digest and
// InternetChecksum in the deparser (whose header parameter is inout in this
// dialect), mirror_packet, PNA_Source_t, and a plain table with
// pna_idle_timeout = NOTIFY_CONTROL.
#include <core.p4>
#include <pna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<8>  version_ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<32> id_frag;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
}

struct learn_digest_t {
    bit<48>  src;
    PortId_t port;
}

struct meta_t {
    PNA_Source_t     source;
    PNA_MeterColor_t color;
    bit<16>          visits;
    bool             send_digest;
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
        transition accept;
    }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
    Counter<bit<64>, bit<16>>(1024, PNA_CounterType_t.PACKETS) per_vlan;
    DirectCounter<bit<64>>(PNA_CounterType_t.BYTES) per_route;
    Meter<bit<8>>(256, PNA_MeterType_t.PACKETS) per_tos;
    DirectMeter(PNA_MeterType_t.BYTES) route_meter;
    Register<bit<16>, bit<10>>(1024, 16w0) visits;
    Random<bit<16>>(0, 1023) coin;

    action route_to(PortId_t port) {
        per_route.count();
        meta.color = route_meter.execute(meta.color);
        send_to_port(port);
    }
    action drop() {
        per_route.count();
        drop_packet();
    }
    table routes {
        key = {
            hdr.ipv4.dst : lpm;
        }
        actions = {
            route_to;
            drop;
        }
        pna_direct_counter = per_route;
        pna_direct_meter = route_meter;
        pna_idle_timeout = PNA_IdleTimeout_t.NOTIFY_CONTROL;
        default_action = drop();
    }
    apply {
        meta.source = is_net_port(istd.input_port) ? PNA_Source_t.FROM_NET
                                                    : PNA_Source_t.FROM_HOST;
        per_vlan.count(hdr.eth.ether_type);
        meta.color = per_tos.execute(hdr.ipv4.tos);
        bit<10> slot = hdr.ipv4.src[9:0];
        meta.visits = visits.read(slot) + 1;
        visits.write(slot, meta.visits);
        meta.send_digest = meta.visits == 1 && coin.read() < 16;
        if (hdr.ipv4.isValid() && meta.color != PNA_MeterColor_t.RED) {
            routes.apply();
        } else {
            drop_packet();
        }
        if (meta.source == PNA_Source_t.FROM_NET && hdr.ipv4.ttl == 1) {
            mirror_packet((MirrorSlotId_t) 8w1, (MirrorSessionId_t) 16w7);
        }
    }
}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    Digest<learn_digest_t>() learned;
    InternetChecksum() ck;
    apply {
        if (meta.send_digest) {
            learned.pack({ hdr.eth.src, (PortId_t) 32w0 });
        }
        if (hdr.ipv4.isValid()) {
            ck.clear();
            ck.add({ hdr.ipv4.version_ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
                     hdr.ipv4.id_frag, hdr.ipv4.ttl, hdr.ipv4.protocol,
                     hdr.ipv4.src, hdr.ipv4.dst });
            hdr.ipv4.checksum = ck.get();
        }
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
    }
}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
