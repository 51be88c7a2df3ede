#!/usr/bin/env python3
"""Writes a valid v1model program of about N lines (default 5000) to stdout, for timing `nevermiss check`.

Usage: scripts/gen-large-p4.py [N] > big.p4 && time nevermiss check big.p4
The program has N/31 header types, each with its own action and table, all applied in ingress.
"""
import sys

n_lines = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
blocks = max(1, n_lines // 31)
out = ["#include <core.p4>", "#include <v1model.p4>", ""]
for i in range(blocks):
    out += [
        f"header h{i}_t {{",
        "    bit<8>  a;",
        "    bit<16> b;",
        "    bit<32> c;",
        "    bit<48> d;",
        "}",
    ]
out += ["struct headers_t {"] + [f"    h{i}_t h{i};" for i in range(blocks)] + ["}", "struct meta_t { bit<32> x; }", ""]
out += [
    "parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {",
    "    state start {",
]
out += [f"        pkt.extract(hdr.h{i});" for i in range(blocks)]
out += ["        transition accept;", "    }", "}", ""]
out += ["control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {"]
for i in range(blocks):
    out += [
        f"    action set{i}(bit<32> v, bit<9> port) {{",
        f"        hdr.h{i}.c = v + (bit<32>)hdr.h{i}.a;",
        f"        hdr.h{i}.b = hdr.h{i}.b |+| 16w1;",
        f"        m.x = m.x ^ hdr.h{i}.c;",
        "        sm.egress_spec = port;",
        "    }",
        f"    table t{i} {{",
        "        key = {",
        f"            hdr.h{i}.a: exact;",
        f"            hdr.h{i}.c: lpm;",
        f"            hdr.h{i}.d: ternary;",
        "        }",
        f"        actions = {{ set{i}; NoAction; }}",
        "        default_action = NoAction();",
        "        size = 1024;",
        "    }",
    ]
out += ["    apply {"]
for i in range(blocks):
    out += [
        f"        if (hdr.h{i}.isValid()) {{",
        f"            switch (t{i}.apply().action_run) {{",
        f"                set{i}: {{ m.x = m.x + 32w{i}; }}",
        "                default: { }",
        "            }",
        "        }",
    ]
out += ["    }", "}", ""]
out += [
    "control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }",
    "control VC(inout headers_t hdr, inout meta_t m) { apply { } }",
    "control CC(inout headers_t hdr, inout meta_t m) { apply { } }",
    "control D(packet_out pkt, in headers_t hdr) {",
    "    apply {",
]
out += [f"        pkt.emit(hdr.h{i});" for i in range(blocks)]
out += ["    }", "}", "", "V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;"]
print("\n".join(out))
