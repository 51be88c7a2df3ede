// Registers, counters and meters for the server's tests (tests/server.rs): a register of 8
// cells that counts packets per key, an indexed counter of 4 cells, an indirect packet meter
// and a table with a direct meter.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> key;
}

struct headers_t { h_t h; }
struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) r;
    counter(4, CounterType.packets_and_bytes) c;
    meter(4, MeterType.packets) m;
    direct_meter<bit<2>>(MeterType.bytes) dm;
    bit<2> color = 0;
    action mark() { dm.read(color); }
    table t {
        key = { hdr.h.key : exact; }
        actions = { mark; NoAction; }
        meters = dm;
        default_action = NoAction();
    }
    apply {
        bit<32> v;
        r.read(v, (bit<32>)hdr.h.key);
        r.write((bit<32>)hdr.h.key, v + 1);
        c.count((bit<32>)hdr.h.key);
        m.execute_meter((bit<32>)hdr.h.key, color);
        t.apply();
    }
}

control EgressImpl(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout meta_t meta) { apply { } }

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(), DeparserImpl()) main;
