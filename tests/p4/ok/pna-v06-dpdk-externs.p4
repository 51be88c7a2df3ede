// PNA for P4-DPDK (dpdk/pna.p4, older dialect): DirectCounter.count(pkt_len)
// and DirectMeter.dpdk_execute on an add_on_miss table, Counter with an
// explicit byte count, a TOEPLITZ Hash, Register, the ipsec_accelerator
// extern shared by parser and control, mirror_packet, recirculate() with
// istd.pass and istd.loopedback, and a list expression as add_entry params.
#include <core.p4>
#include <dpdk/pna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ipv4_t {
    bit<16> version_len;
    bit<16> total_len;
    bit<40> middle;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

struct headers_t {
    ethernet_t eth;
    ipv4_t     ipv4;
}

struct meta_t {
    bool             from_ipsec;
    ipsec_status     status;
    PNA_MeterColor_t color;
    bit<32>          rss;
    bit<32>          hits;
    ExpireTimeProfileId_t timeout;
}

ipsec_accelerator() ipsec;

control PreControlImpl(in headers_t hdr, inout meta_t meta,
                       in pna_pre_input_metadata_t istd,
                       inout pna_pre_output_metadata_t ostd) {
    apply {
        ostd.decrypt = false;
    }
}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        meta.from_ipsec = ipsec.from_ipsec(meta.status);
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
    DirectCounter<bit<64>>(PNA_CounterType_t.PACKETS_AND_BYTES) flow_bytes;
    DirectMeter(PNA_MeterType_t.BYTES) flow_meter;
    Counter<bit<32>, bit<8>>(256, PNA_CounterType_t.BYTES) per_proto;
    Hash<bit<32>>(PNA_HashAlgorithm_t.TOEPLITZ) rss_hash;
    Register<bit<32>, bit<1>>(1) hit_count;

    action flow_hit(bit<32> tag, bit<32> port) {
        flow_bytes.count((bit<32>) hdr.ipv4.total_len);
        meta.color = flow_meter.dpdk_execute(PNA_MeterColor_t.GREEN,
                                             (bit<32>) hdr.ipv4.total_len);
        send_to_port((PortId_t) port);
    }
    action flow_miss() {
        flow_bytes.count(32w64);
        add_entry("flow_hit", { 32w0, 32w1 }, meta.timeout);
    }
    table flows {
        key = {
            hdr.ipv4.src : exact;
            hdr.ipv4.dst : exact;
        }
        actions = {
            @tableonly flow_hit;
            @defaultonly flow_miss;
        }
        add_on_miss = true;
        pna_direct_counter = flow_bytes;
        pna_direct_meter = flow_meter;
        pna_idle_timeout = PNA_IdleTimeout_t.NOTIFY_CONTROL;
        const default_action = flow_miss;
    }
    action encrypt(bit<32> sa) {
        ipsec.set_sa_index<bit<32>>(sa);
        ipsec.set_ip_header_offset<bit<16>>(14);
        ipsec.enable();
    }
    action bypass() {
        ipsec.disable();
    }
    table sa_table {
        key = {
            hdr.ipv4.dst : lpm;
        }
        actions = {
            encrypt;
            bypass;
        }
        default_action = bypass();
    }
    apply {
        meta.timeout = (ExpireTimeProfileId_t) 8w3;
        meta.rss = rss_hash.get_hash({ hdr.ipv4.src, hdr.ipv4.dst });
        if (!hdr.ipv4.isValid()) {
            drop_packet();
            return;
        }
        per_proto.count(hdr.ipv4.protocol, (bit<32>) hdr.ipv4.total_len);
        meta.hits = hit_count.read(0) + 1;
        hit_count.write(0, meta.hits);
        if (istd.pass == (PassNumber_t) 3w0 && !istd.loopedback) {
            flows.apply();
            mirror_packet((MirrorSlotId_t) 8w0, (MirrorSessionId_t) 16w5);
            recirculate();
        } else if (meta.from_ipsec && meta.status == ipsec_status.IPSEC_SUCCESS) {
            sa_table.apply();
        }
        if (meta.color == PNA_MeterColor_t.RED) {
            drop_packet();
        }
    }
}

control MainDeparserImpl(packet_out pkt, in headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply {
        pkt.emit(hdr);
    }
}

PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(),
        MainDeparserImpl()) main;
