// The newer v1model API revision: V1MODEL_VERSION defined before the
// include, PortId_t, and counter/meter/register with an index type.
#define V1MODEL_VERSION 20200408
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
    bit<64> bytes;
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
    counter<PortId_t>(512, CounterType.packets) rx_packets;
    meter<bit<8>>(256, MeterType.packets) policer;
    register<bit<64>, PortId_t>(512) rx_bytes;

    apply {
        PortId_t port = std.ingress_port;
        rx_packets.count(port);
        policer.execute_meter(hdr.eth.dst[7:0], meta.color);
        rx_bytes.read(meta.bytes, port);
        rx_bytes.write(port, meta.bytes + (bit<64>) std.packet_length);
        if (__v1model_version >= 20200408 && meta.color != V1MODEL_METER_COLOR_RED) {
            std.egress_spec = port ^ 1;
        } else {
            mark_to_drop(std);
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
