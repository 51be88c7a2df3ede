// PSA on P4-DPDK: the dpdk/psa.p4 variants Counter.count(index, pkt_len)
// and Meter.dpdk_execute, plus Hash, InternetChecksum in the deparser,
// Digest, Random, an ActionSelector, and resubmit metadata.
#include <core.p4>
#include <dpdk/psa.p4>

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

struct meta_t {
    bit<16>          flow_hash;
    PSA_MeterColor_t color;
    bit<8>           sample;
}

struct learn_t {
    bit<48>  src;
    PortId_t port;
}

struct resubmit_t {
    bit<8> pass;
}

struct empty_t {}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in resubmit_t resubmit_meta, in empty_t recirculate_meta) {
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

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    in psa_ingress_input_metadata_t istd,
                    inout psa_ingress_output_metadata_t ostd) {
    Counter<bit<64>, bit<16>>(1024, PSA_CounterType_t.BYTES) bytes;
    Meter<bit<16>>(1024, PSA_MeterType_t.BYTES) policer;
    Hash<bit<16>>(PSA_HashAlgorithm_t.CRC16) flow_hasher;
    Random<bit<8>>(0, 127) sampler;
    ActionSelector(PSA_HashAlgorithm_t.CRC32, 1024, 16) paths;

    action set_port(PortId_t port) {
        send_to_port(ostd, port);
    }
    table ecmp {
        key = {
            hdr.ipv4.dst      : exact;
            hdr.ipv4.src      : selector;
            hdr.ipv4.protocol : selector;
        }
        actions = {
            set_port;
            NoAction;
        }
        psa_implementation = paths;
        default_action = NoAction();
    }
    apply {
        if (!hdr.ipv4.isValid()) {
            ingress_drop(ostd);
            exit;
        }
        meta.flow_hash = flow_hasher.get_hash({ hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4.protocol });
        bytes.count(meta.flow_hash[9:0] ++ 6w0, (bit<32>) hdr.ipv4.total_len);
        meta.color = policer.dpdk_execute(meta.flow_hash, PSA_MeterColor_t.GREEN,
                                          (bit<32>) hdr.ipv4.total_len);
        meta.sample = sampler.read();
        if (meta.color == PSA_MeterColor_t.RED) {
            ingress_drop(ostd);
        } else {
            ecmp.apply();
        }
    }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta,
                            out resubmit_t resubmit_meta, out empty_t normal_meta,
                            inout headers_t hdr, in meta_t meta,
                            in psa_ingress_output_metadata_t istd) {
    Digest<learn_t>() learn;
    InternetChecksum() ck;
    apply {
        if (psa_resubmit(istd)) {
            resubmit_meta.pass = 1;
        }
        if (meta.sample == 0) {
            learn.pack({ hdr.eth.src, (PortId_t) 32w0 });
        }
        ck.clear();
        ck.add({ hdr.ipv4.version_ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
                 hdr.ipv4.id_frag, hdr.ipv4.ttl, hdr.ipv4.protocol,
                 hdr.ipv4.src, hdr.ipv4.dst });
        hdr.ipv4.checksum = ck.get();
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                        in psa_egress_parser_input_metadata_t istd,
                        in empty_t normal_meta, in empty_t clone_i2e_meta,
                        in empty_t clone_e2e_meta) {
    state start {
        transition accept;
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta,
                   in psa_egress_input_metadata_t istd,
                   inout psa_egress_output_metadata_t ostd) {
    apply {}
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta,
                           out empty_t recirculate_meta, inout headers_t hdr,
                           in meta_t meta, in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply {}
}

IngressPipeline(IngressParserImpl(), IngressImpl(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), EgressImpl(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
