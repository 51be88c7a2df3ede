// `for` loops in actions, which p4c's BMv2 back end writes as `_jump_if_zero` / `_jump`
// primitives with a jump back: nested loops, `break`, `continue`, a `return` inside a loop and
// a loop inside an if/else. `tests/bmv2-json/for-loop-in-action.json` is this program compiled
// by p4c-bm2-ss; the tests run both forms and compare them.
#include <v1model.p4>

header req_t { bit<8> op; bit<8> n; }
header res_t { bit<16> acc; bit<8> steps; }

struct headers_t { req_t req; res_t res; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.req);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t m) { apply { } }

control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    // acc = 1 + 2 + ... + n
    action sum() {
        hdr.res.acc = 0;
        for (bit<8> i = 1; i <= hdr.req.n; i = i + 1) {
            hdr.res.acc = hdr.res.acc + (bit<16>)i;
        }
    }
    // acc = n * (n + 1), steps = n
    action nested() {
        hdr.res.acc = 0;
        for (bit<8> i = 0; i < hdr.req.n; i = i + 1) {
            for (bit<8> j = 0; j <= hdr.req.n; j = j + 1) {
                hdr.res.acc = hdr.res.acc + 1;
            }
            hdr.res.steps = hdr.res.steps + 1;
        }
    }
    // acc = the first i in 1.. with i * i > n; steps = how many were tried
    action first_square_above() {
        hdr.res.steps = 0;
        for (bit<16> i = 1; i < 256; i = i + 1) {
            hdr.res.steps = hdr.res.steps + 1;
            if (i * i > (bit<16>)hdr.req.n) {
                hdr.res.acc = i;
                break;
            }
        }
    }
    // acc = the sum of the odd numbers below n; steps counts the even ones
    action odd_sum() {
        hdr.res.acc = 0;
        hdr.res.steps = 0;
        for (bit<8> i = 0; i < hdr.req.n; i = i + 1) {
            if ((i & 1) == 0) {
                hdr.res.steps = hdr.res.steps + 1;
                continue;
            }
            hdr.res.acc = hdr.res.acc + (bit<16>)i;
        }
    }
    // counts down from n, returning from the action at 3 (acc keeps the count so far)
    action count_down_to_three() {
        hdr.res.acc = 0;
        for (bit<8> i = hdr.req.n; i > 0; i = i - 1) {
            if (i == 3) {
                hdr.res.steps = 0xee;
                return;
            }
            hdr.res.acc = hdr.res.acc + 1;
        }
        hdr.res.steps = 0xdd;
    }
    // a loop in each branch of an if/else
    action branches() {
        hdr.res.acc = 0;
        if (hdr.req.n > 4) {
            for (bit<8> i = 0; i < 4; i = i + 1) {
                hdr.res.acc = hdr.res.acc + 0x100;
            }
        } else {
            for (bit<8> i = 0; i < hdr.req.n; i = i + 1) {
                hdr.res.acc = hdr.res.acc + 1;
            }
        }
        hdr.res.steps = 0x77;
    }
    table ops {
        key = { hdr.req.op : exact; }
        actions = { sum; nested; first_square_above; odd_sum; count_down_to_three; branches; }
        const entries = {
            1 : sum();
            2 : nested();
            3 : first_square_above();
            4 : odd_sum();
            5 : count_down_to_three();
            6 : branches();
        }
        default_action = sum();
    }
    apply {
        sm.egress_spec = 1;
        ops.apply();
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.req);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), D()) main;
