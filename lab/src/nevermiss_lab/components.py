"""Component micro-benchmarks (paper 004 §3, modeling.md §B.1): PNA programs scaled in one
parameter at a time, with the entries and traffic that exercise them.

Every program is the same skeleton as `examples/bench/forward.p4` (Ethernet/IPv4/UDP and a
5-byte result header, back out of the input port) plus the component; the baseline is the
skeleton with every parameter at zero, so Eq. 3/Eq. 4 differences are the component's cost.
Packets come from nevermiss's two-phase generator: keys in the IPv4 destination cycle through
`[0, m)` (m = the number of table entries, so every packet hits), frames of 300 bytes (room for
the parsed-header component).

Two components change the key or the traffic: `key-width` keys its table on a `bit<W>` field of
a header parsed right after the result header (the generator writes the key into its low-order
bytes), and `insertion-rate` makes the table add-on-miss (PNA `add_entry` in its default action),
preloads the m keys and lets every r-th phase-2 packet carry a new key, r = 10 000 / x for x
insertions per 10 000 phase-2 packets (x = 0: none).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

FRAME = 300
#: Extra headers that fit a 300-byte frame after Ethernet/IPv4/UDP and the result header.
MAX_HEADERS = (FRAME - 42 - 5) // 4
#: Byte offset of the key-width component's key header (Ethernet 14 + IPv4 20 + UDP 8 + result 5).
KEY_OFFSET = 47
#: Entries of the key-width component's table (keys 0..63 fit every width from 8 bits).
KEY_WIDTH_ENTRIES = 64
#: Keys preloaded into the insertion-rate component's add-on-miss table (phase 1: all hits).
INSERT_RATE_ENTRIES = 1024
#: The insertion-rate component counts insertions per this many phase-2 packets.
INSERT_RATE_PER = 10_000
HEADER_FIELDS = [
    "hdr.ipv4.identification", "hdr.ipv4.ttl", "hdr.ipv4.diffserv", "hdr.udp.checksum",
    "hdr.eth.src_addr", "hdr.result.value", "hdr.udp.src_port", "hdr.ipv4.hdr_checksum",
]


@dataclass(frozen=True)
class Params:
    """One program's parameters (all zero: the baseline)."""

    tables: int = 0  # tables applied one after another, each keyed on ipv4.dst
    entries: int = 1  # entries per table (keys 0..entries-1)
    match: str = "exact"  # exact | lpm | ternary
    applies: int = 1  # applies of each table
    action_data: int = 0  # 32-bit parameters of the hit action (written to metadata)
    headers: int = 0  # extra 4-byte headers parsed (and emitted) after the result header
    header_writes: int = 0  # assignments to header fields
    meta_writes: int = 0  # assignments to metadata fields
    key_width: int = 0  # > 0: the tables key on a bit<key_width> header field (else ipv4.dst)
    add_on_miss: bool = False  # the tables insert missed keys (PNA add_entry)
    inserts_per_10k: int = 0  # add-on-miss: new keys per 10 000 phase-2 packets


#: The components paper 004 scales (modeling.md §B.1), as (name, parameter, values of the full
#: sweep, values of the quick sweep, log axis).
COMPONENTS: dict[str, tuple[str, list[int], list[int], bool]] = {
    "exact-entries": ("entries", [1, 10, 100, 1000, 10_000, 100_000, 1_000_000], [1, 10, 100, 1000, 10_000], True),
    "lpm-entries": ("entries", [1, 10, 100, 1000, 10_000], [1, 10, 100, 1000], True),
    "ternary-entries": ("entries", [1, 4, 16, 64, 256, 1024], [1, 4, 16, 64], True),
    "tables": ("tables", [1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16], False),
    "applies": ("applies", [1, 2, 4, 8, 16, 32], [1, 2, 4, 8], False),
    "action-data": ("action_data", [0, 1, 2, 4, 8, 16, 32], [0, 1, 4, 16], False),
    "parsed-headers": ("headers", [0, 1, 2, 4, 8, 16, 32, 63], [0, 2, 8, 32], False),
    "header-writes": ("header_writes", [0, 1, 2, 4, 8, 16, 32, 64], [0, 4, 16, 64], False),
    "meta-writes": ("meta_writes", [0, 1, 2, 4, 8, 16, 32, 64], [0, 4, 16, 64], False),
    "key-width": ("key_width", [8, 16, 24, 32, 48, 64, 96, 128, 192, 256], [8, 32, 64, 96, 128, 256], False),
    "insertion-rate": (
        "inserts_per_10k",
        [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000],
        [0, 1, 10, 100, 1000, 10_000],
        False,
    ),
}


def params_for(component: str, x: int) -> Params:
    """The program of `component` at parameter value `x` (tables default to 1 table of 1 entry);
    `ValueError` for a value the component cannot take."""
    if component not in COMPONENTS:
        raise ValueError(f"unknown component `{component}`: expected one of {', '.join(COMPONENTS)}")
    name, _, _, _ = COMPONENTS[component]
    if component == "key-width":
        if x < 8 or x % 8:
            raise ValueError(f"key-width {x}: a key width is a multiple of 8 bits, at least 8")
        return Params(tables=1, entries=KEY_WIDTH_ENTRIES, key_width=x)
    if component == "insertion-rate":
        if not 0 <= x <= INSERT_RATE_PER or (x and INSERT_RATE_PER % x):
            raise ValueError(
                f"insertion-rate {x}: insertions per {INSERT_RATE_PER} packets must divide {INSERT_RATE_PER} "
                "(every r-th packet a new key, r a whole number) or be 0"
            )
        return Params(tables=1, entries=INSERT_RATE_ENTRIES, add_on_miss=True, inserts_per_10k=x)
    base = Params(tables=1) if component not in ("parsed-headers", "header-writes", "meta-writes") else Params()
    if component.endswith("-entries"):
        base = replace(base, match=component.split("-")[0])
    if component == "action-data":
        base = replace(base, tables=1)
    return replace(base, **{name: x})


def insert_every(p: Params) -> int:
    """The generator's r for `p`: every r-th phase-2 packet a new key (0: none)."""
    if not p.add_on_miss or p.inserts_per_10k <= 0:
        return 0
    return INSERT_RATE_PER // p.inserts_per_10k


def new_keys(p: Params, count: int) -> int:
    """Keys `p`'s tables insert among `count` phase-2 packets."""
    r = insert_every(p)
    return count // r if r else 0


def program(p: Params, count: int = 0) -> str:
    """The P4_16 source (PNA) of `p`; an add-on-miss table is sized for the keys `count`
    phase-2 packets insert."""
    extra_hdrs = ("    key_t key;\n" if p.key_width else "") + "".join(f"    extra_t x{i};\n" for i in range(p.headers))
    meta_fields = "".join(f"    bit<32> m{i};\n" for i in range(max(p.meta_writes, p.action_data)))
    if p.add_on_miss:
        meta_fields += "    AddEntryErrorStatus_t status;\n"
    key_field = "hdr.key.k" if p.key_width else "hdr.ipv4.dst_addr"
    decls = (f"header key_t {{ bit<{p.key_width}> k; }}\n" if p.key_width else "") + (
        "struct hit_params_t { bit<32> v; }\n" if p.add_on_miss else ""
    )
    extract_key = "        pkt.extract(hdr.key);\n" if p.key_width else ""
    parse_extra = ""
    if p.headers:
        parse_extra = "        transition parse_x0;\n    }\n" + "".join(
            f"    state parse_x{i} {{\n        pkt.extract(hdr.x{i});\n        transition "
            + (f"parse_x{i + 1};\n" if i + 1 < p.headers else "accept;\n")
            + ("    }\n" if i + 1 < p.headers else "")
            for i in range(p.headers)
        )
    else:
        parse_extra = "        transition accept;\n"
    params = ", ".join(f"bit<32> d{i}" for i in range(p.action_data))
    body = "".join(f"        meta.m{i} = d{i};\n" for i in range(p.action_data))
    if p.add_on_miss:
        # The hit action keeps the value stored with the entry; a miss inserts the key with
        # the packet's IPv4 source as that value.
        actions = (
            "    action hit(bit<32> v) {\n        hdr.result.value = v;\n        hdr.result.outcome = 1;\n    }\n"
            "    action miss() {\n        meta.status = add_entry(action_name = \"hit\",\n"
            "            action_params = (hit_params_t) { v = hdr.ipv4.src_addr },\n"
            "            expire_time_profile_id = (ExpireTimeProfileId_t) 8w0);\n"
            "        hdr.result.outcome = (meta.status == ADD_ENTRY_SUCCESS) ? 8w2 : 8w3;\n    }\n"
        )
        table_actions = "@tableonly hit; @defaultonly miss;"
        default = "        add_on_miss = true;\n        const default_action = miss;\n"
    else:
        actions = f"    action hit({params}) {{\n{body}        hdr.result.outcome = 1;\n    }}\n    action miss() {{ hdr.result.outcome = 2; }}\n"
        table_actions = "hit; miss;"
        default = "        default_action = miss();\n"
    tables = ""
    n = max(p.entries, 1) + new_keys(p, count)
    size = n + n // 4 + 64
    for t in range(p.tables):
        tables += (
            f"    table t{t} {{\n        key = {{ {key_field} : {p.match}; }}\n"
            f"        actions = {{ {table_actions} }}\n{default}        size = {size};\n    }}\n"
        )
    applies = "".join(f"        t{t}.apply();\n" for t in range(p.tables) for _ in range(p.applies))
    hw = "".join(
        f"        {HEADER_FIELDS[i % len(HEADER_FIELDS)]} = {HEADER_FIELDS[i % len(HEADER_FIELDS)]} + {i + 1};\n"
        for i in range(p.header_writes)
    )
    mw = "".join(f"        meta.m{i} = hdr.ipv4.dst_addr + {i};\n" for i in range(p.meta_writes))
    return f"""// Generated by nevermiss-lab (paper 004 component micro-benchmark): {p}
#include <core.p4>
#include <pna.p4>

header ethernet_t {{ bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }}
header ipv4_t {{
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}}
header udp_t {{ bit<16> src_port; bit<16> dst_port; bit<16> length; bit<16> checksum; }}
header result_t {{ bit<32> value; bit<8> outcome; }}
header extra_t {{ bit<32> v; }}
{decls}
struct headers_t {{
    ethernet_t eth;
    ipv4_t ipv4;
    udp_t udp;
    result_t result;
{extra_hdrs}}}

struct meta_t {{
    bit<8> unused;
{meta_fields}}}

parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                      in pna_main_parser_input_metadata_t istd) {{
    state start {{
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {{ 0x0800: parse_ipv4; default: accept; }}
    }}
    state parse_ipv4 {{
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {{ 17: parse_udp; default: accept; }}
    }}
    state parse_udp {{
        pkt.extract(hdr.udp);
        pkt.extract(hdr.result);
{extract_key}{parse_extra}    }}
}}

control MainControlImpl(inout headers_t hdr, inout meta_t meta,
                        in pna_main_input_metadata_t istd,
                        inout pna_main_output_metadata_t ostd) {{
{actions}{tables}    apply {{
{applies}{hw}{mw}        send_to_port(istd.input_port);
    }}
}}

control MainDeparserImpl(packet_out pkt, inout headers_t hdr, in meta_t meta,
                         in pna_main_output_metadata_t ostd) {{
    apply {{ pkt.emit(hdr); }}
}}

PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;
"""


def entries(p: Params) -> str:
    """The STF entries of `p`'s tables: keys 0..entries-1, each to `hit`."""
    args = ", ".join(f"d{i}:{i + 1}" for i in range(p.action_data))
    field = "hdr.key.k" if p.key_width else "hdr.ipv4.dst_addr"
    lines = []
    for t in range(p.tables):
        for k in range(p.entries):
            if p.add_on_miss:
                args = f"v:{k}"
            if p.match == "exact":
                key = f"{field}:{k}"
                prio = ""
            elif p.match == "lpm":
                key = f"hdr.ipv4.dst_addr:{k}/32"
                prio = ""
            else:
                key = f"hdr.ipv4.dst_addr:{k}&&&0xffffffff"
                prio = f" {k + 1}"
            lines.append(f"add MainControlImpl.t{t}{prio} {key} hit({args})")
    return "\n".join(lines) + ("\n" if lines else "")


def gen_spec(p: Params, count: int) -> str:
    """The generator spec: keys cycle over the entries (every packet hits), 300-byte frames.
    An add-on-miss program gets `count` phase-2 packets after the m preloaded keys' phase 1,
    every r-th a new key; a key-width program gets its keys in the key header's low bytes."""
    m = max(p.entries, 1) if p.tables else 1
    spec = f"two-phase,m={m},count={count},size={FRAME}"
    if p.add_on_miss:
        spec = f"two-phase,m={m},r={insert_every(p)},count={m + count},size={FRAME}"
    if p.key_width:
        width = min(p.key_width // 8, 8)
        spec += f",field={KEY_OFFSET + p.key_width // 8 - width}:{width}"
    return spec


@dataclass
class Composed:
    """A program combining several components, and the value of each."""

    name: str
    params: Params
    parts: dict[str, int] = field(default_factory=dict)


def composed_programs() -> list[Composed]:
    """Programs whose cost paper 004's method predicts from the component models."""
    out = []
    for name, parts in [
        ("router-like", {"tables": 4, "header-writes": 4, "meta-writes": 4}),
        ("parser-heavy", {"parsed-headers": 16, "header-writes": 8, "tables": 2}),
        ("big-table", {"exact-entries": 10_000, "action-data": 4, "meta-writes": 8}),
    ]:
        p = Params()
        for comp, x in parts.items():
            pname = COMPONENTS[comp][0]
            p = replace(p, **{pname: x})
            if comp.endswith("-entries") or comp in ("action-data",):
                p = replace(p, tables=max(p.tables, 1))
        out.append(Composed(name, p, parts))
    return out
