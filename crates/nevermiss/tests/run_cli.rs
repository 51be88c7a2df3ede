//! `nevermiss run` and `nevermiss stf` through the binary: exit codes, messages, pcap ports,
//! the generator, and clear errors for bad entries and STF files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ex(name: &str) -> PathBuf {
    root().join("examples").join(name)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run nevermiss")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn stf_mismatch_exits_1_with_the_difference() {
    let stf = tmp("bad.stf");
    std::fs::write(
        &stf,
        "packet 0 020000000002 020000000001 0800 45000021 00000000 40110000 0a000001 0a000101 040012b7 000d0000 00000000 00\n\
         expect 0 020000000002 020000000001 0800 45000021 00000000 40110000 0a000001 0a000101 040012b7 000d0000 00000000 07 $\n",
    )
    .unwrap();
    let o = run(&["stf", p(&ex("pna-add-on-miss.p4")), p(&stf)]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    assert!(t.contains("first difference"), "{t}");
    assert!(t.contains("expected:") && t.contains("got:"), "{t}");
}

#[test]
fn stf_unknown_names_are_named() {
    let cases = [
        (
            "add NoSuchTable hdr.ipv4.dst_addr:1 forward(port:1, next_hop_mac:2)",
            "unknown table `NoSuchTable`",
        ),
        (
            "add ipv4_lpm hdr.ipv4.dst_addr:1/32 teleport(port:1)",
            "has no action `teleport`",
        ),
        (
            "add ipv4_lpm hdr.ipv4.nope:1/32 forward(port:1, next_hop_mac:2)",
            "has no key field `hdr.ipv4.nope`",
        ),
        (
            "add ipv4_lpm hdr.ipv4.dst_addr:1/32 forward(port:1, next_hop_mac:2, speed:9)",
            "has no parameter `speed`",
        ),
        (
            "add ipv4_lpm hdr.ipv4.dst_addr:1/32 forward(port:1)",
            "missing parameter `next_hop_mac`",
        ),
        (
            "setdefault ipv4_lpm forward(port:0x1ffffffff, next_hop_mac:2)",
            "does not fit parameter `port`",
        ),
    ];
    for (i, (line, want)) in cases.iter().enumerate() {
        let stf = tmp(&format!("names{i}.stf"));
        std::fs::write(&stf, format!("{line}\n")).unwrap();
        let o = run(&["stf", p(&ex("pna-forwarder.p4")), p(&stf)]);
        assert_eq!(o.status.code(), Some(1), "{line}");
        let t = text(&o);
        assert!(t.contains(want) && t.contains("line 1"), "{line}: {t}");
    }
}

#[test]
fn stf_program_errors_exit_2() {
    let o = run(&["stf", "/nonexistent.p4", p(&ex("pna-forwarder.stf"))]);
    assert_eq!(o.status.code(), Some(2));
    let bad = tmp("bad.p4");
    std::fs::write(&bad, "control c() { apply { x = 1; } }").unwrap();
    let o = run(&["stf", p(&bad), p(&ex("pna-forwarder.stf"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("error:"));
}

#[test]
fn run_entries_with_unknown_names_is_a_clear_error() {
    let entries = tmp("bad.entries");
    std::fs::write(
        &entries,
        "# routes\nadd MainControlImpl.ipv4_lpm hdr.ipv4.dst_addr:0/0 fwd(port:0)\n",
    )
    .unwrap();
    let o = run(&[
        "run",
        p(&ex("pna-forwarder.p4")),
        "--entries",
        p(&entries),
        "--port",
        "0=gen:two-phase,m=4,count=8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("bad.entries:2") && t.contains("has no action `fwd`"),
        "{t}"
    );
}

#[test]
fn run_add_on_miss_over_the_generator() {
    let o = run(&[
        "run",
        p(&ex("pna-add-on-miss.p4")),
        "--port",
        "0=gen:two-phase,m=1000,r=10,count=5000",
    ]);
    assert_two_phase_m1000_r10(&o);
}

/// The report of m=1000, r=10, count=5000: 1000 keys in phase 1, 400 new ones in phase 2.
fn assert_two_phase_m1000_r10(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    let t = text(o);
    assert!(t.contains("1400 entries of 65536"), "{t}");
    assert!(
        t.contains("hits 3600, misses 1400, inserts 1400, failed inserts 0"),
        "{t}"
    );
    assert!(
        t.contains("in 5000 pkts") && t.contains("out 5000 pkts"),
        "{t}"
    );
    assert!(t.contains("packets/s"), "{t}");
}

#[test]
fn run_forwarder_pcap_in_and_out() {
    use nevermiss_io::Packet;
    let input = tmp("in.pcap");
    let out1 = tmp("out1.pcap");
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    };
    let pkts = vec![
        Packet::from_bytes(
            &hex("02aaaaaaaaaa0200000000010800450000540000400040116ee90a000001c0a80107"),
            0,
            1000,
        ),
        Packet::from_bytes(&hex("02aaaaaaaaaa02000000000108060001"), 0, 2000),
        Packet::from_bytes(&hex("02aaaaaaaaaa"), 0, 3000),
    ];
    nevermiss_io::pcap::write_file(&input, &pkts).unwrap();
    let entries = tmp("fwd.entries");
    std::fs::write(
        &entries,
        "add MainControlImpl.ipv4_lpm hdr.ipv4.dst_addr:0xc0a80100/24 forward(port:1, next_hop_mac:0x0000000001aa)\n",
    )
    .unwrap();
    let spec0 = format!("0=pcap:{}", p(&input));
    let spec1 = format!("1=pcap:,{}", p(&out1));
    let o = run(&[
        "run",
        p(&ex("pna-forwarder.p4")),
        "--port",
        &spec0,
        "--port",
        &spec1,
        "--entries",
        p(&entries),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("port   0: in 3 pkts") && t.contains("dropped 2"),
        "{t}"
    );
    let got = nevermiss_io::pcap::read_file(&out1).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].data(),
        &hex("0000000001aa02aaaaaaaaaa080045000054000040003f116fe90a000001c0a80107")[..]
    );
}

#[test]
fn run_dump_ir() {
    let o = run(&["run", p(&ex("v1model-router.p4")), "--dump-ir"]);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o);
    assert!(t.contains("table #0 IngressImpl.ipv4_lpm"), "{t}");
    assert!(t.contains("parser #0 ParserImpl"), "{t}");
}

#[test]
fn run_without_ports_is_usage_error() {
    let o = run(&["run", p(&ex("pna-forwarder.p4"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no ports"));
}

#[test]
fn run_on_two_cores() {
    // Same workload as on one core: the same table in the end.
    let o = run(&[
        "run",
        p(&ex("pna-add-on-miss.p4")),
        "--cores",
        "2",
        "--no-pin",
        "--port",
        "0=gen:two-phase,m=1000,r=10,count=5000",
    ]);
    assert_two_phase_m1000_r10(&o);
    // pcap in, pcap out: every packet comes out once, from whichever worker.
    let input = tmp("cores-in.pcap");
    let output = tmp("cores-out.pcap");
    let pkts: Vec<nevermiss_io::Packet> = (0..200u32)
        .map(|i| {
            let mut f = vec![0u8; 60];
            f[12] = 0x08;
            f[14] = 0x45;
            f[23] = 17;
            f[30..34].copy_from_slice(&i.to_be_bytes());
            f[38..40].copy_from_slice(&26u16.to_be_bytes());
            nevermiss_io::Packet::from_bytes(&f, 0, u64::from(i))
        })
        .collect();
    nevermiss_io::pcap::write_file(&input, &pkts).unwrap();
    let spec = format!("0=pcap:{},{}", p(&input), p(&output));
    let o = run(&[
        "run",
        p(&ex("pna-add-on-miss.p4")),
        "--cores",
        "2",
        "--no-pin",
        "--rss",
        "ipv4.dst",
        "--port",
        &spec,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let got = nevermiss_io::pcap::read_file(&output).unwrap();
    assert_eq!(got.len(), 200);
    let mut dsts: Vec<u32> = got
        .iter()
        .map(|p| u32::from_be_bytes(p.data()[30..34].try_into().unwrap()))
        .collect();
    dsts.sort_unstable();
    assert_eq!(dsts, (0..200).collect::<Vec<_>>());
}

#[test]
fn run_bad_cores_and_rss_are_usage_errors() {
    let prog = ex("pna-add-on-miss.p4");
    for (args, msg) in [
        (vec!["--cores", "0"], "must be at least 1"),
        (vec!["--cores", "4096"], "cpus available"),
        (
            vec!["--cores", "1", "--rss", "ipv9.src"],
            "unknown rss field",
        ),
        (vec!["--cores", "1", "--rss", "@3"], "@OFFSET:LEN"),
        (vec!["--rss", "ipv4.src"], "it needs --cores"),
        (vec!["--cores", "two"], "invalid value"),
    ] {
        let mut a = vec!["run", p(&prog), "--port", "0=gen:two-phase,m=10,count=10"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{a:?}: {}", text(&o));
    }
}

#[test]
fn trace_follows_the_first_packets_through_parser_tables_and_outputs() {
    let aom = ex("pna-add-on-miss.p4");
    let o = run(&[
        "run",
        p(&aom),
        "--port",
        "0=gen:two-phase,m=2,r=2,count=6,field=ipv4.dst",
        "--trace",
        "--trace-limit",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("\npacket ").count() + usize::from(err.starts_with("packet ")),
        3,
        "{err}"
    );
    assert!(
        err.contains("parser MainParserImpl: state parse_ipv4"),
        "{err}"
    );
    assert!(
        err.contains("table MainControlImpl.flows: key {")
            && err.contains("}: miss -> MainControlImpl.flow_miss()"),
        "{err}"
    );
    assert!(
        err.contains("add_entry into MainControlImpl.flows: inserted"),
        "{err}"
    );
    assert!(
        err.contains("}: hit -> MainControlImpl.flow_hit(0x"),
        "{err}"
    );
    // The key's values, and a word when the trace stops at --trace-limit.
    assert!(
        err.contains("table MainControlImpl.flows: key {hdr.ipv4.dst_addr=0x00000001}: miss"),
        "{err}"
    );
    assert!(
        err.contains("trace: the first 3 packets were traced (--trace-limit)"),
        "{err}"
    );
    assert!(err.contains("out on port 0, 84 bytes"), "{err}");
    // Header validity after the parser and before the deparser, as simple_switch logs it.
    let all = "headers valid: hdr.eth, hdr.ipv4, hdr.udp, hdr.result; invalid: none";
    assert_eq!(
        err.matches(&format!("  after parser MainParserImpl: {all}\n"))
            .count(),
        3,
        "{err}"
    );
    assert_eq!(
        err.matches(&format!("  before deparser MainDeparserImpl: {all}\n"))
            .count(),
        3,
        "{err}"
    );
    // All 6 packets ran; only 3 were traced.
    assert!(String::from_utf8_lossy(&o.stdout).contains("total: 6 packets in"));
    // A packet without a route is dropped, and the trace says so.
    let fw = ex("pna-forwarder.p4");
    let o = run(&[
        "run",
        p(&fw),
        "--port",
        "0=gen:two-phase,m=2,r=1,count=1,field=ipv4.dst",
        "--trace",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("  dropped\n"),
        "{}",
        text(&o)
    );
    // Validity as the packet has it: a non-IPv4 frame parses only Ethernet; a header the
    // pipeline invalidates is invalid before the deparser (v1model).
    let o = run(&[
        "run",
        p(&aom),
        "--port",
        "0=gen:two-phase,m=2,count=1,field=eth.type",
        "--trace",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "  after parser MainParserImpl: headers valid: hdr.eth; \
             invalid: hdr.ipv4, hdr.udp, hdr.result\n"
        ),
        "{}",
        text(&o)
    );
    let strip = tmp("strip-ipv4.p4");
    std::fs::write(
        &strip,
        r#"#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t { bit<96> a; bit<32> src; bit<32> dst; }
header opt_t { bit<8> x; }
struct h_t { eth_t eth; ipv4_t ipv4; opt_t[2] opts; }
struct m_t { }
parser P(packet_in pkt, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition select(h.eth.type) { 0x0800: ip; default: accept; } }
    state ip { pkt.extract(h.ipv4); transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { h.ipv4.setInvalid(); h.opts[1].setValid(); sm.egress_spec = 1; }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pkt, in h_t h) { apply { pkt.emit(h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#,
    )
    .unwrap();
    let o = run(&[
        "run",
        p(&strip),
        "--port",
        "0=gen:two-phase,m=2,count=1",
        "--port",
        "1=null",
        "--trace",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "  after parser P: headers valid: h.eth, h.ipv4; invalid: h.opts[0], h.opts[1]\n"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "  before deparser D: headers valid: h.eth, h.opts[1]; invalid: h.ipv4, h.opts[0]\n"
        ),
        "{err}"
    );
    // --trace needs one loop; --trace-limit needs --trace.
    for args in [vec!["--trace", "--cores", "1"], vec!["--trace-limit", "5"]] {
        let mut a = vec!["run", p(&fw), "--port", "0=null"];
        a.extend(&args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

/// `--pna-default-port N`: a PNA packet whose main control calls neither `send_to_port` nor
/// `drop_packet` leaves on port N, as on P4-DPDK (SONiC DASH's PNA build relies on it); without
/// the flag it is dropped. `drop_packet()` still drops, `send_to_port` still wins.
#[test]
fn pna_default_port_sends_packets_with_no_forwarding_call() {
    let prog = tmp("no-forwarding-call.p4");
    std::fs::write(
        &prog,
        r#"#include <core.p4>
#include <pna.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ty; }
struct headers_t { ethernet_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, in pna_main_parser_input_metadata_t istd) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control Pre(in headers_t hdr, inout meta_t meta, in pna_pre_input_metadata_t istd, inout pna_pre_output_metadata_t ostd) { apply { } }
control C(inout headers_t hdr, inout meta_t meta, in pna_main_input_metadata_t istd, inout pna_main_output_metadata_t ostd) {
    apply {
        if (hdr.eth.ty == 0x0001) { drop_packet(); }
        else if (hdr.eth.ty == 0x0002) { send_to_port((PortId_t)2); }
        else { hdr.eth.dst = 0x0000000000ee; }
    }
}
control D(packet_out pkt, in headers_t hdr, in meta_t meta, in pna_main_output_metadata_t ostd) { apply { pkt.emit(hdr.eth); } }
PNA_NIC(P(), Pre(), C(), D()) main;
"#,
    )
    .unwrap();
    let frame = |ty: u8| {
        let mut f = vec![0xaa; 6];
        f.extend([0xbb; 6]);
        f.extend([0, ty, 0x77, 0x77]);
        nevermiss_io::Packet::from_bytes(&f, 0, 1000 * u64::from(ty))
    };
    let input = tmp("no-forwarding-call.pcap");
    nevermiss_io::pcap::write_file(&input, &[frame(1), frame(2), frame(3)]).unwrap();
    for engine in ["jit", "interp"] {
        for default in [None, Some("1")] {
            let outs: Vec<PathBuf> = (1..=2)
                .map(|port| tmp(&format!("ndp-{engine}-{default:?}-{port}.pcap")))
                .collect();
            let specs = [
                format!("0=pcap:{}", p(&input)),
                format!("1=pcap:,{}", p(&outs[0])),
                format!("2=pcap:,{}", p(&outs[1])),
            ];
            let mut args = vec!["run", p(&prog), "--engine", engine];
            for s in &specs {
                args.extend(["--port", s]);
            }
            if let Some(d) = default {
                args.extend(["--pna-default-port", d]);
            }
            let o = run(&args);
            assert_eq!(o.status.code(), Some(0), "{}", text(&o));
            let got = |i: usize| -> Vec<Vec<u8>> {
                nevermiss_io::pcap::read_file(&outs[i])
                    .unwrap()
                    .iter()
                    .map(|p| p.data().to_vec())
                    .collect()
            };
            // Type 2 always goes to port 2 (send_to_port), type 1 is always dropped.
            assert_eq!(got(1).len(), 1, "{engine} {default:?}");
            assert_eq!(got(1)[0][13], 2);
            let mut edited = frame(3).data().to_vec();
            edited[..6].copy_from_slice(&[0, 0, 0, 0, 0, 0xee]);
            let want: Vec<Vec<u8>> = default.map(|_| edited).into_iter().collect();
            assert_eq!(got(0), want, "{engine} {default:?}");
        }
    }
    // A PNA-only flag on another architecture's program is a usage error.
    let o = run(&[
        "run",
        p(&ex("v1model-router.p4")),
        "--port",
        "0=null",
        "--pna-default-port",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--pna-default-port applies to PNA programs only"),
        "{}",
        text(&o)
    );
}

/// `--table-size NAME=N` replaces a table's `size` (the run's report shows the capacity); an
/// unknown table or a bad size is a usage error naming it.
#[test]
fn table_size_overrides_a_tables_size() {
    let prog = ex("pna-add-on-miss.p4");
    let o = run(&[
        "run",
        p(&prog),
        "--port",
        "0=gen:two-phase,m=100,count=200,field=ipv4.dst",
        "--table-size",
        "MainControlImpl.flows=2^12",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("MainControlImpl.flows: 100 entries of 4096;"),
        "{t}"
    );
    let o = run(&[
        "run",
        p(&prog),
        "--port",
        "0=null",
        "--table-size",
        "MainControlImpl.no_such=8",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("has no table `MainControlImpl.no_such`"),
        "{}",
        text(&o)
    );
    for bad in ["flows", "flows=0", "flows=2^29", "flows=3^2", "=8"] {
        let o = run(&["run", p(&prog), "--port", "0=null", "--table-size", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("error:"), "{bad}: {}", text(&o));
    }
}

/// `run --fallbacks` lists each interpreter fallback site with its count, the P4 position of an
/// extern call and the construct (docs/jit.md, "Fallbacks").
#[test]
fn run_fallbacks_names_each_site() {
    let prog = tmp("fallbacks.p4");
    std::fs::write(
        &prog,
        "#include <v1model.p4>\n\
         header e_t { bit<48> d; bit<48> s; bit<16> t; }\n\
         struct h_t { e_t e; }\n\
         struct m_t { bit<128> w; bit<32> r; }\n\
         parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) {\n\
             state start { p.extract(h.e); transition accept; } }\n\
         control Ig(inout h_t h, inout m_t m, inout standard_metadata_t sm) {\n\
             apply {\n\
                 sm.egress_spec = 1;\n\
                 random(m.r, 0, 7);\n\
                 m.w = m.w + (bit<128>) h.e.d;\n\
                 h.e.t = (bit<16>) m.w + (bit<16>) m.r;\n\
             }\n\
         }\n\
         control N(inout h_t h, inout m_t m) { apply { } }\n\
         control Eg(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }\n\
         control D(packet_out p, in h_t h) { apply { p.emit(h.e); } }\n\
         V1Switch(P(), N(), Ig(), Eg(), N(), D()) main;\n",
    )
    .unwrap();
    let args = [
        "run",
        p(&prog),
        "--port",
        "0=gen:two-phase,m=10,count=100",
        "--port",
        "1=null",
    ];
    let o = run(&[&args[..], &["--fallbacks"]].concat());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("fallback sites: 2"), "{t}");
    let line = |needle: &str| {
        t.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {t}"))
            .to_string()
    };
    // The extern call: its line and column in the program, 100 packets took it.
    let random = line("extern V1Random");
    assert!(random.contains("fallbacks.p4:10:"), "{random}");
    assert!(random.contains("control Ig"), "{random}");
    assert!(
        random.trim_start().starts_with("100 (1.00 per packet)"),
        "{random}"
    );
    // The 128-bit addition: the interpreter runs its assignment.
    let add = line("assignment of a bit<128> value");
    assert!(
        add.contains("control Ig") && add.contains("Add.u128"),
        "{add}"
    );
    assert!(
        add.trim_start().starts_with("100 (1.00 per packet)"),
        "{add}"
    );
    // Without the flag: the total only.
    let t = text(&run(&args));
    assert!(
        t.contains("interpreter fallbacks: 200 (2.00 per packet)"),
        "{t}"
    );
    assert!(!t.contains("fallback sites"), "{t}");
}
