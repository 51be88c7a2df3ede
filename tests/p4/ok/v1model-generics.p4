// Generics: a generic function, a generic struct instantiated with two
// types, a generic user extern, a generic control type used as a
// constructor parameter, and generic extern functions from v1model.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct pair_t<T> {
    T first;
    T second;
}

struct headers_t {
    ethernet_t eth;
}

struct meta_t {
    pair_t<bit<16>> ports;
    pair_t<bool>    flags;
    bit<16>         digest16;
}

// Chooses between two values of any type.
T pick<T>(in bool take_first, in T a, in T b) {
    return take_first ? a : b;
}

// Swaps two values of any type.
void swap<T>(inout T a, inout T b) {
    T tmp = a;
    a = b;
    b = tmp;
}

extern Accumulator<T> {
    Accumulator(T initial);
    void add(in T value);
    T get();
}

control Step<H>(inout H hdr, inout meta_t meta);

control SwapPorts(inout headers_t hdr, inout meta_t meta) {
    apply {
        swap(meta.ports.first, meta.ports.second);
    }
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
                    inout standard_metadata_t std)(Step<headers_t> step) {
    Accumulator<bit<32>>(0) total;
    apply {
        meta.ports = { 16w1, 16w2 };
        meta.flags = { first = true, second = false };
        step.apply(hdr, meta);
        meta.ports.first = pick(meta.flags.second, meta.ports.first, meta.ports.second);
        meta.ports.second = pick<bit<16>>(true, meta.ports.second, 16w7);
        hash(meta.digest16, HashAlgorithm.crc16, 16w0, { hdr.eth.dst, hdr.eth.src }, 16w1024);
        total.add(32w1);
        if (meta.flags.first && total.get() > 10) {
            std.egress_spec = (bit<9>) meta.ports.first;
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

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(SwapPorts()), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
