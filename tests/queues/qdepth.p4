// Egress queues' metadata made visible (crates/nevermiss/tests/queues.rs): every frame goes
// to port 1 (its priority the low three bits of its EtherType); egress writes what the queue
// says about it into the Ethernet addresses:
//   dst_addr = 16 bits of zero ++ deq_timedelta (µs)
//   src_addr = 10 bits of zero ++ enq_qdepth ++ deq_qdepth
// and, when enq_qdepth is 5 or more, sets the top bit of the EtherType (a marking threshold,
// as the tutorials' ecn exercise marks CE).

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        sm.priority = hdr.eth.ether_type[2:0];
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.eth.dst_addr = 16w0 ++ sm.deq_timedelta;
        hdr.eth.src_addr = 10w0 ++ sm.enq_qdepth ++ sm.deq_qdepth;
        if (sm.enq_qdepth >= 5) {
            hdr.eth.ether_type = hdr.eth.ether_type | 0x8000;
        }
    }
}

control ComputeChecksumImpl(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
