// Expressions and functions: user functions with early return, signed and
// unsigned arithmetic, saturating operators, shifts, slices (as values and
// as assignment targets), concatenation, casts, the conditional operator,
// bool logic, integer constants with widths, exit, and compound assignment.
#include <core.p4>
#include <v1model.p4>

const int<16> MIN_DELTA = -100;
const bit<8> MAX_TTL = 8w255;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header data_t {
    bit<32> a;
    bit<32> b;
    int<16> s;
    bit<8>  small;
    bit<8>  flags;
}

struct headers_t {
    ethernet_t eth;
    data_t     data;
}

struct meta_t {
    bit<64> wide;
    int<16> delta;
    bool    big;
}

bit<32> clamp(in bit<32> value, in bit<32> limit) {
    if (value > limit) {
        return limit;
    }
    return value;
}

int<16> signed_diff(in bit<16> x, in bit<16> y) {
    return (int<16>) x - (int<16>) y;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x1234  : parse_data;
            default : accept;
        }
    }
    state parse_data {
        pkt.extract(hdr.data);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) {
    apply {}
}

control IngressImpl(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std) {
    action compute() {
        hdr.data.a = clamp(hdr.data.a + hdr.data.b, 32w1000000);
        hdr.data.b = (hdr.data.b << 3) | (hdr.data.a >> 29);
        hdr.data.small = hdr.data.small |+| 8w200;
        hdr.data.flags[7:4] = hdr.data.small[3:0];
        hdr.data.flags[0:0] = (bit<1>) (hdr.data.a != 0);
        meta.wide = hdr.data.a ++ hdr.data.b;
        meta.delta = signed_diff(hdr.eth.ether_type, 16w0x1000);
        hdr.data.s = meta.delta |-| MIN_DELTA;
        meta.big = (meta.wide & 64w0xffff_0000_0000_0000) != 0;
        hdr.data.b = meta.big ? ~hdr.data.b : -hdr.data.b;
        hdr.data.a = hdr.data.a * 3 + (bit<32>) hdr.data.small % 7;
        hdr.data.small = MAX_TTL - (hdr.data.small ^ 8w0x0f);
        hdr.data.b += 1;
        hdr.data.a >>= 2;
    }
    apply {
        if (!hdr.data.isValid()) {
            exit;
        }
        compute();
        if (meta.big && !(meta.delta < 0) || hdr.data.s >= 16s5) {
            std.egress_spec = 9w1;
        } else {
            std.egress_spec = 9w2;
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
        pkt.emit(hdr);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(),
         ComputeImpl(), DeparserImpl()) main;
