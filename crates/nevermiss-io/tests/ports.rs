//! Ports: spec parsing, pcap file ports, queue ports, generator ports, null ports.

use std::path::PathBuf;

use nevermiss_io::gen::{KeyKind, TwoPhaseKeys};
use nevermiss_io::parse_port_specs;
use nevermiss_io::pcap::{read_file, write_file};
use nevermiss_io::{
    Batch, Packet, Port, PortError, PortKind, PortSpec, QueuePort, StatsTable, TwoPhaseConfig,
};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-io-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn spec_syntax() {
    assert_eq!(
        PortSpec::parse("0=pcap:in.pcap,out.pcap").unwrap(),
        PortSpec {
            id: 0,
            kind: PortKind::Pcap {
                input: Some("in.pcap".into()),
                output: Some("out.pcap".into())
            }
        }
    );
    assert_eq!(
        PortSpec::parse("3=pcap:dir/in.pcapng").unwrap().kind,
        PortKind::Pcap {
            input: Some("dir/in.pcapng".into()),
            output: None
        }
    );
    assert_eq!(
        PortSpec::parse("4=pcap:,o.pcap").unwrap().kind,
        PortKind::Pcap {
            input: None,
            output: Some("o.pcap".into())
        }
    );
    assert_eq!(PortSpec::parse("7=null").unwrap().kind, PortKind::Null);
    assert_eq!(
        PortSpec::parse("2=if:veth0").unwrap().kind,
        PortKind::Interface {
            name: "veth0".into(),
            backend: nevermiss_io::Backend::Auto,
            qdisc: false,
        }
    );
    assert_eq!(
        PortSpec::parse("2=if:eth1,backend=af_packet").unwrap().kind,
        PortKind::Interface {
            name: "eth1".into(),
            backend: nevermiss_io::Backend::AfPacket,
            qdisc: false,
        }
    );
    assert_eq!(
        PortSpec::parse("2=if:eth1,qdisc").unwrap().kind,
        PortKind::Interface {
            name: "eth1".into(),
            backend: nevermiss_io::Backend::Auto,
            qdisc: true,
        }
    );
    let e = PortSpec::parse("2=if:eth1,backend=af_xdp,qdisc").unwrap_err();
    assert!(e.message.contains("AF_XDP bypasses"), "{e}");
    assert!(PortSpec::parse("2=if:veth0").unwrap().is_live());
    assert!(!PortSpec::parse("2=null").unwrap().is_live());
    let g: PortSpec = "1=gen:two-phase,m=65536,r=100,count=1000000,field=ipv4.dst"
        .parse()
        .unwrap();
    match g.kind {
        PortKind::Gen(c) => {
            assert_eq!((c.m, c.r, c.count, c.port), (65536, 100, 1_000_000, 1));
            assert_eq!((c.field.offset, c.field.width), (30, 4));
        }
        other => panic!("{other:?}"),
    }
    for (s, col, msg) in [
        ("pcap:x", 1, "expected N=pcap"),
        ("x=null", 1, "not a number"),
        ("0=tap:eth0", 3, "unknown port kind"),
        ("0=pcap", 7, "expected `:`"),
        ("0=pcap:", 8, "needs an input or an output"),
        ("0=pcap:a,b,c", 8, "cannot contain `,`"),
        ("0=pcap:a,", 10, "empty output"),
        ("0=null:x", 7, "no arguments"),
        ("12=gen:two-phase,m=0", 8, "m=0"),
        ("12=gen:bogus", 8, "unknown generator"),
        ("0=if:", 6, "interface name"),
        ("0=if", 5, "expected `:`"),
        ("0=if:eth0,mtu=9000", 6, "backend=af_packet"),
    ] {
        let e = PortSpec::parse(s).unwrap_err();
        assert_eq!(e.col, col, "{s}: {e}");
        assert!(e.message.contains(msg), "{s}: {e}");
    }
    let e = parse_port_specs(&["0=null", "1=null", "0=pcap:a"]).unwrap_err();
    assert!(e.message.contains("port 0 is given twice"));
    assert_eq!(parse_port_specs(&["0=null", "1=null"]).unwrap().len(), 2);
}

#[test]
fn pcap_port_reads_and_writes() {
    let d = tmpdir("pcapport");
    let input: Vec<Packet> = (0..600u32)
        .map(|i| Packet::from_bytes(&i.to_be_bytes().repeat(16), 0, u64::from(i) * 1000))
        .collect();
    write_file(d.join("in.pcap"), &input).unwrap();
    let spec = PortSpec::parse(&format!(
        "5=pcap:{},{}",
        d.join("in.pcap").display(),
        d.join("out.pcap").display()
    ))
    .unwrap();
    let mut port = spec.open().unwrap();
    assert_eq!(port.id(), 5);
    assert!(port.describe().starts_with("5=pcap:"));
    let mut batch = Batch::new();
    let mut seen = 0;
    let mut bursts = 0;
    while !port.rx_done() {
        batch.clear();
        let n = port.rx_burst(&mut batch).unwrap();
        assert_eq!(n, batch.len());
        assert!(batch.iter().all(|p| p.port == 5));
        for (k, p) in batch.iter().enumerate() {
            assert_eq!(p.data(), input[seen + k].data());
            assert_eq!(p.ts_ns, input[seen + k].ts_ns);
        }
        seen += n;
        bursts += 1;
        port.tx(batch.as_slice()).unwrap();
    }
    assert_eq!(seen, 600);
    assert_eq!(bursts, 3); // 256 + 256 + 88 (the end is found within the third burst)
    batch.clear();
    assert_eq!(port.rx_burst(&mut batch).unwrap(), 0);
    port.flush().unwrap();
    let s = port.stats().snapshot();
    assert_eq!(
        (s.rx_packets, s.tx_packets, s.rx_bytes),
        (600, 600, 600 * 64)
    );
    drop(port);
    assert_eq!(read_file(d.join("out.pcap")).unwrap(), input);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn pcap_port_errors() {
    let d = tmpdir("pcaperr");
    let e = PortSpec::parse(&format!("0=pcap:{}", d.join("none.pcap").display()))
        .unwrap()
        .open()
        .err()
        .unwrap();
    assert!(matches!(e, PortError::Pcap { .. }));
    assert!(e.to_string().contains("cannot open"), "{e}");
    // A truncated file: the packets before the damage arrive, then the error names the offset.
    write_file(
        d.join("t.pcap"),
        &[
            Packet::from_bytes(&[1; 10], 0, 0),
            Packet::from_bytes(&[2; 10], 0, 0),
        ],
    )
    .unwrap();
    let bytes = std::fs::read(d.join("t.pcap")).unwrap();
    std::fs::write(d.join("t.pcap"), &bytes[..bytes.len() - 3]).unwrap();
    let mut p = PortSpec::parse(&format!("0=pcap:{}", d.join("t.pcap").display()))
        .unwrap()
        .open()
        .unwrap();
    let mut b = Batch::new();
    assert_eq!(
        p.rx_burst(&mut b).unwrap(),
        1,
        "the complete packet comes first"
    );
    assert_eq!(b.len(), 1);
    assert!(!p.rx_done(), "the error is still to come");
    let e = p.rx_burst(&mut b).unwrap_err();
    assert_eq!(b.len(), 1);
    assert!(e.to_string().contains("at byte offset 50"), "{e}");
    assert!(p.rx_done());
    assert_eq!(p.rx_burst(&mut b).unwrap(), 0);
    // No output file: transmitted packets are dropped and counted.
    assert_eq!(p.tx(b.as_slice()).unwrap(), 0);
    assert_eq!(p.stats().snapshot().dropped, 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn queue_port() {
    let (mut port, h) = QueuePort::new(2);
    let mut b = Batch::with_capacity(4);
    assert_eq!(port.rx_burst(&mut b).unwrap(), 0);
    assert!(!port.rx_done());
    for i in 0..6u8 {
        h.push_bytes(&[i; 3]);
    }
    assert_eq!(port.rx_burst(&mut b).unwrap(), 4);
    assert_eq!(h.rx_len(), 2);
    assert!(b.iter().all(|p| p.port == 2));
    port.tx(b.as_slice()).unwrap();
    b.clear();
    assert_eq!(port.rx_burst(&mut b).unwrap(), 2);
    h.close_rx();
    assert!(port.rx_done());
    port.tx(b.as_slice()).unwrap();
    let out = h.take_tx();
    assert_eq!(out.len(), 6);
    for (i, p) in out.iter().enumerate() {
        assert_eq!(p.data(), &[i as u8; 3]);
    }
    // Transmit limit: extra packets are dropped and counted.
    h.set_tx_limit(Some(1));
    assert_eq!(port.tx(b.as_slice()).unwrap(), 1);
    let mut into = Batch::new();
    assert_eq!(h.take_tx_into(&mut into), 1);
    assert_eq!(h.tx_len(), 0);
    let s = h.stats().snapshot();
    assert_eq!((s.rx_packets, s.tx_packets, s.dropped), (6, 7, 1));
    let table = StatsTable::collect([&**h.stats()]).to_string();
    assert!(table.contains("total"));

    let (mut p2, _h2) = QueuePort::with_input(9, vec![Packet::from_bytes(&[7], 0, 33)]);
    let mut b = Batch::new();
    assert_eq!(p2.rx_burst(&mut b).unwrap(), 1);
    assert_eq!((b[0].port, b[0].ts_ns), (9, 33));
    assert!(p2.rx_done());
    assert_eq!(p2.describe(), "9=queue");
}

#[test]
fn queue_port_across_threads() {
    let (mut port, h) = QueuePort::new(0);
    let producer = {
        let h = h.clone();
        std::thread::spawn(move || {
            for i in 0..10_000u32 {
                h.push_bytes(&i.to_be_bytes());
            }
            h.close_rx();
        })
    };
    let mut b = Batch::new();
    let mut next = 0u32;
    while !port.rx_done() {
        b.clear();
        port.rx_burst(&mut b).unwrap();
        for p in &b {
            assert_eq!(p.data(), &next.to_be_bytes());
            next += 1;
        }
    }
    producer.join().unwrap();
    assert_eq!(next, 10_000);
}

#[test]
fn gen_port_and_null_port() {
    let mut p = PortSpec::parse("3=gen:two-phase,m=1000,r=10,count=5000,field=udp.dport,seed=7")
        .unwrap()
        .open()
        .unwrap();
    assert!(p
        .describe()
        .starts_with("3=gen:two-phase,m=1000,r=10,count=5000,field=36:2,seed=7"));
    let cfg = TwoPhaseConfig {
        m: 1000,
        r: 10,
        count: 5000,
        field: nevermiss_io::KeyField::parse("udp.dport").unwrap(),
        seed: 7,
        port: 3,
        ..TwoPhaseConfig::default()
    };
    let keys: Vec<_> = TwoPhaseKeys::new(&cfg).unwrap().collect();
    assert_eq!(
        keys.iter().filter(|k| k.kind == KeyKind::NewKey).count(),
        400
    );
    let mut b = Batch::new();
    let mut i = 0;
    while !p.rx_done() {
        b.clear();
        p.rx_burst(&mut b).unwrap();
        for pk in &b {
            assert_eq!(pk.port, 3);
            assert_eq!(pk.len(), 84);
            assert_eq!(
                u64::from(u16::from_be_bytes([pk.data()[36], pk.data()[37]])),
                keys[i].key
            );
            i += 1;
        }
    }
    assert_eq!(i, 5000);
    assert_eq!(p.stats().snapshot().rx_bytes, 5000 * 84);

    let mut n = PortSpec::parse("1=null").unwrap().open().unwrap();
    assert!(n.rx_done());
    assert_eq!(n.rx_burst(&mut b).unwrap(), 0);
    let before = b.len();
    assert_eq!(n.tx(b.as_slice()).unwrap(), before);
    assert_eq!(n.stats().snapshot().tx_packets, before as u64);
    assert_eq!(n.describe(), "1=null");
}

/// A veth pair made for one test, deleted on drop (also when the test fails).
struct Veth(String);

impl Veth {
    fn ip(args: &str) -> bool {
        std::process::Command::new("ip")
            .args(args.split(' '))
            .output()
            .is_ok_and(|o| o.status.success())
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        Veth::ip(&format!("link del {}", self.0));
    }
}

#[test]
fn an_interface_ports_link_state_follows_the_interface() {
    // Needs root and iproute2 (as the interface tests of crates/nevermiss/tests/ifports.rs).
    let (a, b) = (
        format!("nmlk{}a", std::process::id() % 10000),
        format!("nmlk{}b", std::process::id() % 10000),
    );
    if !Veth::ip(&format!("link add {a} type veth peer name {b}")) {
        eprintln!("skipped: making a veth pair needs root and iproute2");
        return;
    }
    let _veth = Veth(a.clone());
    assert!(Veth::ip(&format!("link set {a} up")) && Veth::ip(&format!("link set {b} up")));
    let port = nevermiss_io::afpacket::AfPacketPort::open(3, &a).unwrap();
    let settle = |want: bool| {
        // Carrier follows the peer asynchronously: wait up to 2 s.
        for _ in 0..200 {
            if port.link_up() == want {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    };
    assert!(settle(true), "up with its peer up");
    assert!(Veth::ip(&format!("link set {b} down")));
    assert!(settle(false), "no carrier once the peer is down");
    assert!(Veth::ip(&format!("link set {b} up")));
    assert!(settle(true), "up again");
    assert!(Veth::ip(&format!("link set {a} down")));
    assert!(settle(false), "down itself");
    // Ports that are not interfaces are always up.
    assert!(QueuePort::new(1).0.link_up());
}

/// The mappings of this process that are AF_XDP rings, one line each: `/proc/self/maps` names
/// them after their socket (`socket:[INODE]`), at the page offsets only AF_XDP uses (transmit
/// 0x80000000, fill 0x100000000, completion 0x180000000; its receive ring's 0 is also an
/// AF_PACKET ring's, which a test running beside this one may map).
fn xdp_ring_mappings() -> Vec<String> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(5).is_some_and(|p| p.starts_with("socket:["))
                && f.get(2)
                    .is_some_and(|o| ["80000000", "100000000", "180000000"].contains(o))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn af_xdp_ports_unmap_every_ring_they_mapped() {
    // libxdp keeps pointers to the ring structures it fills in and reads them again when a
    // socket is deleted (to unmap the rings): the structures must not move while the socket
    // lives, however often the port that owns them is moved. Two workers' ports, opened in a
    // helper and moved around, then dropped: none of their rings may stay mapped.
    let (a, b) = (
        format!("nmxq{}a", std::process::id() % 10000),
        format!("nmxq{}b", std::process::id() % 10000),
    );
    if !Veth::ip(&format!(
        "link add {a} numrxqueues 2 numtxqueues 2 type veth peer name {b} numrxqueues 2 numtxqueues 2"
    )) {
        eprintln!("skipped: making a veth pair needs root and iproute2");
        return;
    }
    let _veth = Veth(a.clone());
    assert!(Veth::ip(&format!("link set {a} up")) && Veth::ip(&format!("link set {b} up")));
    let before = xdp_ring_mappings();
    let open = |w| nevermiss_io::afxdp::AfXdpPort::open_worker(0, &a, w, 2);
    let ports = match (open(0), open(1)) {
        (Ok(p0), Ok(p1)) => vec![p0, p1],
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("skipped: AF_XDP is not available here: {e}");
            return;
        }
    };
    let during = xdp_ring_mappings();
    assert!(
        during.len() > before.len(),
        "the rings are mapped: {during:?}"
    );
    let mut moved: Vec<Box<nevermiss_io::afxdp::AfXdpPort>> =
        ports.into_iter().map(Box::new).collect();
    moved.reverse();
    drop(moved);
    assert_eq!(xdp_ring_mappings(), before, "every ring unmapped");
}
