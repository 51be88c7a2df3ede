// PSA on BMv2: the six blocks and three packages, send_to_port and
// ingress_drop, indexed Counter and Register, a DirectCounter on a table,
// clone metadata guarded by psa_clone_i2e, and psa_idle_timeout.
#include <core.p4>
#include <bmv2/psa.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t {
    bit<32> seen;
}

struct empty_t {}

struct clone_meta_t {
    bit<8> reason;
}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Counter<bit<32>, bit<12>>(4096, PSA_CounterType_t.PACKETS_AND_BYTES) per_port;
    DirectCounter<bit<32>>(PSA_CounterType_t.PACKETS) per_entry;
    Register<bit<32>, bit<12>>(4096, 0) last_seen;

    action forward(PortId_t port) {
        per_entry.count();
        send_to_port(ostd, port);
    }
    action flood() {
        per_entry.count();
        multicast(ostd, (MulticastGroup_t) 32w1);
    }
    table l2 {
        key = {
            hdr.eth.dst : exact;
        }
        actions = {
            forward;
            flood;
        }
        default_action = flood();
        psa_direct_counter = per_entry;
        psa_idle_timeout = PSA_IdleTimeout_t.NOTIFY_CONTROL;
    }
    apply {
        bit<12> idx = (bit<12>) ((PortIdUint_t) istd.ingress_port);
        per_port.count(idx);
        meta.seen = last_seen.read(idx) + 1;
        last_seen.write(idx, meta.seen);
        if (hdr.eth.src == 0) {
            ingress_drop(ostd);
            return;
        }
        l2.apply();
        if (hdr.eth.ether_type == 0x88cc) {
            ostd.clone = true;
            ostd.clone_session_id = (CloneSessionId_t) 16w3;
        }
    }
}

control IngressDeparserImpl(packet_out pkt, out clone_meta_t clone_i2e_meta,
                            out empty_t resubmit_meta, out empty_t normal_meta,
                            inout headers_t hdr, in meta_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply {
        if (psa_clone_i2e(istd)) {
            clone_i2e_meta.reason = 1;
        }
        pkt.emit(hdr.eth);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in empty_t normal_meta, in clone_meta_t clone_i2e_meta,
                        in empty_t clone_e2e_meta) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply {
        if (istd.packet_path == PSA_PacketPath_t.CLONE_I2E) {
            hdr.eth.ether_type = 0x88b5;
        }
        if (istd.egress_port == PSA_PORT_CPU) {
            egress_drop(ostd);
        }
    }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta,
                           out empty_t recirculate_meta, inout headers_t hdr,
                           in meta_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply {
        pkt.emit(hdr.eth);
    }
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
