// v1model stateful externs: indexed and direct counters, indexed and direct
// meters, registers read and written in actions, random, and an
// action_selector implementation with selector keys.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t {
    bit<32> color;
    bit<32> seen;
    bit<8>  coin;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    counter(512, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets) flow_counter;
    meter(512, MeterType.bytes) port_meter;
    direct_meter<bit<32>>(MeterType.packets) flow_meter;
    register<bit<32>>(1024) last_seen;
    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) ecmp_selector;

    action count_flow() {
        flow_counter.count();
        flow_meter.read(meta.color);
    }
    table flows {
        key = {
            hdr.eth.src : exact;
        }
        actions = {
            count_flow;
        }
        default_action = count_flow();
        counters = flow_counter;
        meters = flow_meter;
    }

    action set_port(bit<9> port) {
        std.egress_spec = port;
    }
    table ecmp {
        key = {
            hdr.eth.dst        : exact;
            hdr.eth.src        : selector;
            hdr.eth.ether_type : selector;
        }
        actions = {
            set_port;
            NoAction;
        }
        implementation = ecmp_selector;
        default_action = NoAction();
    }

    apply {
        bit<32> index = (bit<32>) std.ingress_port;
        port_counter.count(index);
        port_meter.execute_meter(index, meta.color);
        last_seen.read(meta.seen, index);
        last_seen.write(index, meta.seen + 1);
        random(meta.coin, 8w0, 8w255);
        flows.apply();
        if (meta.color == V1MODEL_METER_COLOR_RED) {
            mark_to_drop(std);
        } else {
            ecmp.apply();
        }
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
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
