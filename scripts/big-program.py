#!/usr/bin/env python3
"""Writes a PNA program of about N lines (default 5000) to standard output: the compiled engine's
compile-time benchmark (docs/jit.md, "Speed"). The main control holds N/30 blocks, each an
action with arithmetic and header writes, an exact table keyed on two header fields, and an
if/else with a switch on the table's action_run, so parser, tables, actions and expressions all
grow with N.

    python3 scripts/big-program.py 5000 > /tmp/big.p4
    nevermiss run /tmp/big.p4 --port 0=gen:two-phase,m=10,count=10   # "engine: jit (compiled in …)"
"""
import sys

HEAD = """#include <core.p4>
#include <pna.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset; bit<8> ttl;
    bit<8> protocol; bit<16> hdr_checksum; bit<32> src_addr; bit<32> dst_addr;
}
struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { bit<32> acc; bit<16> tag; }

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control PreControlImpl(in headers_t hdr, inout meta_t meta,
                       in pna_pre_input_metadata_t istd,
                       inout pna_pre_output_metadata_t ostd) {
    apply { }
}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {
"""

BLOCK = """    action set{i}(bit<32> v, bit<16> t) {{
        meta.acc = meta.acc + v;
        meta.tag = t ^ (bit<16>){i};
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        hdr.ipv4.identification = hdr.ipv4.identification |+| t;
    }}
    action mark{i}() {{
        hdr.ipv4.diffserv = (bit<8>){j};
        meta.acc = meta.acc << 1;
    }}
    table t{i} {{
        key = {{
            hdr.ipv4.dst_addr : exact;
            hdr.ipv4.protocol : exact;
        }}
        actions = {{ set{i}; mark{i}; NoAction; }}
        default_action = NoAction();
        size = 1024;
    }}
"""

APPLY = """        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 8w{k}) {{
            switch (t{i}.apply().action_run) {{
                set{i}: {{ meta.acc = meta.acc + (bit<32>)hdr.ipv4.total_len; }}
                default: {{ hdr.ipv4.src_addr = hdr.ipv4.src_addr + {i}; }}
            }}
        }} else {{
            meta.tag = meta.tag + (bit<16>)hdr.eth.ether_type[7:0];
        }}
"""

TAIL = """        send_to_port((PortId_t)0);
    }
}

control MainDeparserImpl(packet_out pkt, in headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); }
}

PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(), MainDeparserImpl()) main;
"""


def program(lines: int) -> str:
    per_block = BLOCK.count("\n") + APPLY.count("\n")
    n = max(1, (lines - HEAD.count("\n") - TAIL.count("\n") - 1) // per_block)
    decls = "".join(BLOCK.format(i=i, j=i % 64) for i in range(n))
    applies = "".join(APPLY.format(i=i, k=i % 200) for i in range(n))
    return HEAD + decls + "    apply {\n" + applies + TAIL


if __name__ == "__main__":
    try:
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    except ValueError:
        sys.exit("usage: big-program.py [LINES]")
    sys.stdout.write(program(n))
