// reason: the transition names a parser state that does not exist
// expect: 25:23: no such parser state
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
    bit<8> tag;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x0800  : parse_ipv4;
            default : accept;
        }
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    apply {}
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
