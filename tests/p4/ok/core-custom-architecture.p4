// A program that declares its own architecture with nothing but core.p4:
// parser, control and package type declarations, a user extern with a
// constructor, and a package instantiated with block instances.
#include <core.p4>

extern Checker {
    Checker(bit<8> seed);
    bool check(in bit<32> value);
}

parser Parse<H>(packet_in pkt, out H hdr);
control Process<H>(inout H hdr, out bit<4> out_port);
control Emit<H>(packet_out pkt, in H hdr);
package Pipeline<H>(Parse<H> p, Process<H> c, Emit<H> d);

header word_t {
    bit<32> value;
}

struct headers_t {
    word_t w;
}

parser MyParse(packet_in pkt, out headers_t hdr) {
    state start {
        pkt.extract(hdr.w);
        transition select(hdr.w.value) {
            0       : reject;
            default : accept;
        }
    }
}

control MyProcess(inout headers_t hdr, out bit<4> out_port) {
    Checker(8w42) checker;
    apply {
        out_port = 0;
        if (checker.check(hdr.w.value)) {
            out_port = 4w15;
            hdr.w.value = hdr.w.value + 1;
        }
    }
}

control MyEmit(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.w);
    }
}

Pipeline(MyParse(), MyProcess(), MyEmit()) main;
