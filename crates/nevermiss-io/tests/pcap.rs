//! pcap/pcapng reading and writing: round trips, hand-built pcapng files, malformed input.

use std::io::Cursor;

use nevermiss_io::pcap::{
    read_file, write_file, Frame, PacketInfo, PcapFormat, PcapReader, PcapWriter, TsResolution,
    LINKTYPE_ETHERNET, MAX_PACKET_LEN,
};
use nevermiss_io::Packet;
use proptest::prelude::*;

fn read_all(bytes: &[u8]) -> Result<Vec<Packet>, nevermiss_io::PcapError> {
    PcapReader::new(Cursor::new(bytes))?.collect()
}

fn sample() -> Vec<Packet> {
    vec![
        Packet::from_bytes(&[1, 2, 3, 4, 5, 6], 0, 1_700_000_000_123_456_789),
        Packet::from_bytes(&[], 0, 5),
        Packet::from_bytes(&[0xaa; 1514], 0, 1_700_000_001_000_000_001),
    ]
}

#[test]
fn round_trip_nano_and_micro() {
    let pk = sample();
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for p in &pk {
        w.write_packet(p.data(), p.ts_ns).unwrap();
    }
    let bytes = w.into_inner().unwrap();
    assert_eq!(&bytes[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
    assert_eq!(
        u32::from_le_bytes(bytes[20..24].try_into().unwrap()),
        LINKTYPE_ETHERNET
    );
    let r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    assert_eq!(
        r.format(),
        PcapFormat::Pcap {
            nanos: true,
            big_endian: false
        }
    );
    assert_eq!(read_all(&bytes).unwrap(), pk);

    let mut w = PcapWriter::with_options(Vec::new(), TsResolution::Micro, 100).unwrap();
    for p in &pk {
        w.write_packet(p.data(), p.ts_ns).unwrap();
    }
    let bytes = w.into_inner().unwrap();
    let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    let mut p = Packet::new();
    let info = r.next_packet(&mut p).unwrap().unwrap();
    assert_eq!(info.ts_ns, 1_700_000_000_123_456_000);
    assert_eq!(info.orig_len, 6);
    r.next_packet(&mut p).unwrap().unwrap();
    let info = r.next_packet(&mut p).unwrap().unwrap();
    // Snap length 100: cut, original length kept.
    assert_eq!(p.len(), 100);
    assert_eq!(info.orig_len, 1514);
    assert_eq!(info.offset, 24 + 16 + 6 + 16);
    assert!(r.next_packet(&mut p).unwrap().is_none());
}

#[test]
fn big_endian_pcap() {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_be_bytes());
    f.extend_from_slice(&2u16.to_be_bytes());
    f.extend_from_slice(&4u16.to_be_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_be_bytes());
    f.extend_from_slice(&1u32.to_be_bytes());
    f.extend_from_slice(&3u32.to_be_bytes()); // sec
    f.extend_from_slice(&7u32.to_be_bytes()); // usec
    f.extend_from_slice(&2u32.to_be_bytes());
    f.extend_from_slice(&2u32.to_be_bytes());
    f.extend_from_slice(&[0xde, 0xad]);
    let p = read_all(&f).unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].data(), &[0xde, 0xad]);
    assert_eq!(p[0].ts_ns, 3_000_007_000);
}

#[test]
fn file_helpers() {
    let dir = std::env::temp_dir().join(format!("nevermiss-io-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.pcap");
    write_file(&path, &sample()).unwrap();
    assert_eq!(read_file(&path).unwrap(), sample());
    let e = read_file(dir.join("missing.pcap")).unwrap_err();
    assert!(e.to_string().starts_with("cannot open"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Builders for pcapng blocks (little-endian unless `be`).
struct Ng {
    be: bool,
    out: Vec<u8>,
}

impl Ng {
    fn new(be: bool) -> Ng {
        Ng {
            be,
            out: Vec::new(),
        }
    }
    fn u16(&self, v: u16) -> [u8; 2] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn block(&mut self, ty: u32, body: &[u8]) {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let total = (12 + body.len()) as u32;
        let t = self.u32(ty);
        let l = self.u32(total);
        self.out.extend_from_slice(&t);
        self.out.extend_from_slice(&l);
        self.out.extend_from_slice(&body);
        self.out.extend_from_slice(&l);
    }
    fn shb(&mut self) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u32(0x1a2b_3c4d));
        b.extend_from_slice(&self.u16(1));
        b.extend_from_slice(&self.u16(0));
        b.extend_from_slice(&[0xff; 8]); // section length -1
        self.block(0x0a0d_0d0a, &b);
    }
    fn idb(&mut self, link: u16, snap: u32, opts: &[(u16, Vec<u8>)]) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u16(link));
        b.extend_from_slice(&self.u16(0));
        b.extend_from_slice(&self.u32(snap));
        for (code, v) in opts {
            b.extend_from_slice(&self.u16(*code));
            b.extend_from_slice(&self.u16(v.len() as u16));
            b.extend_from_slice(v);
            while b.len() % 4 != 0 {
                b.push(0);
            }
        }
        if !opts.is_empty() {
            b.extend_from_slice(&[0; 4]);
        }
        self.block(1, &b);
    }
    fn epb(&mut self, ifid: u32, ts: u64, data: &[u8], orig: u32) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u32(ifid));
        b.extend_from_slice(&self.u32((ts >> 32) as u32));
        b.extend_from_slice(&self.u32(ts as u32));
        b.extend_from_slice(&self.u32(data.len() as u32));
        b.extend_from_slice(&self.u32(orig));
        b.extend_from_slice(data);
        self.block(6, &b);
    }
    fn spb(&mut self, data: &[u8]) {
        let mut b = Vec::new();
        b.extend_from_slice(&self.u32(data.len() as u32));
        b.extend_from_slice(data);
        self.block(3, &b);
    }
}

#[test]
fn pcapng_blocks_and_resolutions() {
    for be in [false, true] {
        let mut ng = Ng::new(be);
        ng.shb();
        ng.idb(1, 0, &[]); // default: microseconds
        ng.idb(1, 0, &[(9, vec![9])]); // nanoseconds
        let off = if be {
            100i64.to_be_bytes()
        } else {
            100i64.to_le_bytes()
        };
        ng.idb(1, 0, &[(9, vec![0x80 | 10]), (14, off.to_vec())]); // 2^-10 s, +100 s
        ng.block(0xbad, &[1, 2, 3, 4]); // unknown block: skipped
        ng.epb(0, 1_500_000, &[1, 2, 3], 3);
        ng.epb(1, 42, &[4, 5, 6, 7, 8], 60);
        ng.spb(&[9, 9]);
        ng.epb(2, 1024 * 3, &[1], 1);
        let bytes = ng.out;
        let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
        assert_eq!(r.format(), PcapFormat::PcapNg);
        let mut p = Packet::new();
        let i = r.next_packet(&mut p).unwrap().unwrap();
        assert_eq!((p.data(), i.ts_ns), (&[1u8, 2, 3][..], 1_500_000_000));
        let i = r.next_packet(&mut p).unwrap().unwrap();
        assert_eq!(
            (p.data(), i.ts_ns, i.orig_len),
            (&[4u8, 5, 6, 7, 8][..], 42, 60)
        );
        let i = r.next_packet(&mut p).unwrap().unwrap();
        assert_eq!((p.data(), i.ts_ns), (&[9u8, 9][..], 0));
        let i = r.next_packet(&mut p).unwrap().unwrap();
        assert_eq!(i.ts_ns, 3_000_000_000 + 100_000_000_000);
        assert_eq!(i.link_type, 1);
        assert!(r.next_packet(&mut p).unwrap().is_none());
    }
}

#[test]
fn pcapng_second_section_resets_interfaces() {
    let mut ng = Ng::new(false);
    ng.shb();
    ng.idb(1, 0, &[]);
    ng.epb(0, 1, &[1], 1);
    let mut ng2 = Ng::new(true);
    ng2.shb();
    ng2.idb(101, 0, &[]);
    ng2.epb(0, 2, &[2], 1);
    let mut bytes = ng.out;
    bytes.extend_from_slice(&ng2.out);
    let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    let mut p = Packet::new();
    assert_eq!(r.next_packet(&mut p).unwrap().unwrap().link_type, 1);
    let i = r.next_packet(&mut p).unwrap().unwrap();
    assert_eq!((i.link_type, p.data()), (101, &[2u8][..]));
}

fn err_of(bytes: &[u8]) -> nevermiss_io::PcapError {
    match PcapReader::new(Cursor::new(bytes)) {
        Err(e) => e,
        Ok(r) => {
            let mut last = None;
            for x in r {
                if let Err(e) = x {
                    last = Some(e);
                    break;
                }
            }
            last.expect("expected an error")
        }
    }
}

#[test]
fn malformed_files_report_offsets() {
    assert_eq!(
        err_of(&[]).to_string(),
        "empty file: no pcap or pcapng header at byte offset 0"
    );
    let e = err_of(b"GIF89a..");
    assert!(
        e.to_string().starts_with("not a pcap or pcapng file"),
        "{e}"
    );
    assert_eq!(e.offset, 0);

    let mut good = Vec::new();
    write_file_to(&mut good);
    // Truncated header.
    let e = err_of(&good[..10]);
    assert_eq!(e.offset, 0);
    assert!(e.message.contains("truncated pcap file header"), "{e}");
    // Truncated inside the second record's data (records at 24 and 24+16+6=46).
    let e = err_of(&good[..46 + 16 + 3]);
    assert_eq!(e.offset, 46);
    assert!(e.message.contains("truncated packet record data"), "{e}");
    // Truncated record header.
    let e = err_of(&good[..46 + 5]);
    assert_eq!(e.offset, 46);
    assert!(e.message.contains("truncated packet record header"), "{e}");
    // Absurd length: the offset is that of the length field.
    let mut bad = good.clone();
    bad[46 + 8..46 + 12].copy_from_slice(&(MAX_PACKET_LEN as u32 + 1).to_le_bytes());
    let e = err_of(&bad);
    assert_eq!(e.offset, 46 + 8);
    assert!(e.message.contains("exceeds the maximum"), "{e}");
    // Wrong version.
    let mut bad = good.clone();
    bad[4] = 9;
    assert!(err_of(&bad).message.contains("unsupported pcap version 9"));

    // pcapng: bad trailing length, packet before interface, length not a multiple of 4.
    let mut ng = Ng::new(false);
    ng.shb();
    ng.idb(1, 0, &[]);
    ng.epb(0, 0, &[1, 2, 3, 4], 4);
    let base = ng.out.clone();
    let epb_at = base.len() - 36;
    // Trailing length differs: the offset is that of the trailing length.
    let mut bad = base.clone();
    let n = bad.len();
    bad[n - 4] ^= 4;
    let e = err_of(&bad);
    assert_eq!(e.offset, (n - 4) as u64);
    assert!(e.message.contains("does not match trailing length"), "{e}");
    // The same in the interface description block (SHB 28 bytes, IDB 20).
    let mut bad = base.clone();
    bad[28 + 20 - 1] = 0x7f;
    assert_eq!(err_of(&bad).offset, 28 + 20 - 4);
    let mut bad = base.clone();
    bad[epb_at + 8] = 1; // interface 1
    let e = err_of(&bad);
    assert!(e.message.contains("interface 1"), "{e}");
    assert_eq!(e.offset, epb_at as u64 + 8);
    let mut bad = base.clone();
    bad[epb_at + 4] = 35;
    let e = err_of(&bad);
    assert!(e.message.contains("not a multiple of 4"), "{e}");
    assert_eq!(e.offset, epb_at as u64 + 4);
    let mut bad = base.clone();
    bad[epb_at + 20] = 200; // captured length past the block
    let e = err_of(&bad);
    assert!(e.message.contains("runs past the end"), "{e}");
    assert_eq!(e.offset, epb_at as u64 + 20);
    let e = err_of(&base[..base.len() - 2]);
    assert_eq!(e.offset, epb_at as u64);
    assert!(e.message.contains("truncated block"), "{e}");
    let mut bad = base.clone();
    bad[8] = 0; // byte-order magic
    let e = err_of(&bad);
    assert!(e.message.contains("byte-order magic"), "{e}");
    assert_eq!(e.offset, 8);
    // A bad option: if_tsresol 2^-127 is fine, 10^-60 is not representable.
    let mut ng = Ng::new(false);
    ng.shb();
    ng.idb(1, 0, &[(9, vec![60])]);
    let e = err_of(&ng.out);
    assert!(e.message.contains("timestamp resolution 0x3c"), "{e}");
    assert_eq!(e.offset, 28 + 16);
    // An option longer than its block.
    let mut ng = Ng::new(true);
    ng.shb();
    ng.idb(1, 0, &[(2, vec![b'x'; 4])]);
    let mut bytes = ng.out;
    bytes[28 + 16 + 3] = 200; // option length (big-endian low byte)
    let e = err_of(&bytes);
    assert!(e.message.contains("runs past the end of its block"), "{e}");
    assert_eq!(e.offset, 28 + 16);
}

#[test]
fn writer_link_type_and_original_length() {
    // A snapped raw-IP trace, as the hazard simulator writes it.
    let mut w = PcapWriter::with_link_type(Vec::new(), 101, TsResolution::Nano, 65535).unwrap();
    w.write_record(&[1, 2, 3], 1_500_000_123, 1500).unwrap();
    w.write_record(&[4], 2, 0).unwrap(); // original length raised to the captured one
    let bytes = w.into_inner().unwrap();
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101);
    let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    let f = r.next_frame().unwrap().unwrap();
    assert_eq!(
        f,
        Frame {
            info: PacketInfo {
                ts_ns: 1_500_000_123,
                orig_len: 1500,
                link_type: 101,
                offset: 24
            },
            data: &[1, 2, 3]
        }
    );
    let f = r.next_frame().unwrap().unwrap();
    assert_eq!((f.data, f.info.orig_len, f.info.ts_ns), (&[4u8][..], 1, 2));
    assert!(r.next_frame().unwrap().is_none());
    assert!(r.next_frame().unwrap().is_none());

    // The snapshot length cuts the bytes, not the original length.
    let mut w = PcapWriter::with_link_type(Vec::new(), 228, TsResolution::Micro, 2).unwrap();
    w.write_record(&[1, 2, 3], 0, 100).unwrap();
    let bytes = w.into_inner().unwrap();
    let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    let f = r.next_frame().unwrap().unwrap();
    assert_eq!(
        (f.data, f.info.orig_len, f.info.link_type),
        (&[1u8, 2][..], 100, 228)
    );
}

#[test]
fn next_frame_reuses_one_buffer() {
    // Largest frame first: every later frame is lent from the same allocation.
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for n in [1500usize, 60, 0, 1499, 9] {
        w.write_packet(&vec![n as u8; n], n as u64).unwrap();
    }
    let pcap = w.into_inner().unwrap();
    let mut ng = Ng::new(true);
    ng.shb();
    ng.idb(1, 0, &[]);
    for n in [1500usize, 60, 0, 1499, 9] {
        ng.epb(0, n as u64, &vec![n as u8; n], n as u32);
    }
    for bytes in [pcap, ng.out] {
        let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
        let first = r.next_frame().unwrap().unwrap().data.as_ptr();
        let mut lens = vec![1500];
        while let Some(f) = r.next_frame().unwrap() {
            assert_eq!(f.data.as_ptr(), first);
            assert!(f.data.iter().all(|&b| usize::from(b) == f.data.len() % 256));
            lens.push(f.data.len());
        }
        assert_eq!(lens, vec![1500, 60, 0, 1499, 9]);
    }
}

/// Every packet read, and the error (offset, message) that stopped the reading, if any.
type Reading = (Vec<(PacketInfo, Vec<u8>)>, Option<(u64, String)>);

/// Every packet and the error, if any, as `next_frame` sees them.
fn frames_of(bytes: &[u8]) -> Reading {
    let mut out = Vec::new();
    let mut r = match PcapReader::new(Cursor::new(bytes)) {
        Ok(r) => r,
        Err(e) => return (out, Some((e.offset, e.message))),
    };
    loop {
        match r.next_frame() {
            Ok(Some(f)) => out.push((f.info, f.data.to_vec())),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some((e.offset, e.message))),
        }
    }
}

/// The same through `next_packet`.
fn packets_of(bytes: &[u8]) -> Reading {
    let mut out = Vec::new();
    let mut r = match PcapReader::new(Cursor::new(bytes)) {
        Ok(r) => r,
        Err(e) => return (out, Some((e.offset, e.message))),
    };
    let mut p = Packet::new();
    loop {
        match r.next_packet(&mut p) {
            Ok(Some(i)) => {
                assert_eq!(p.ts_ns, i.ts_ns);
                out.push((i, p.data().to_vec()));
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some((e.offset, e.message))),
        }
    }
}

fn write_file_to(out: &mut Vec<u8>) {
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    w.write_packet(&[1; 6], 1).unwrap();
    w.write_packet(&[2; 8], 2).unwrap();
    *out = w.into_inner().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random bytes never panic.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = read_all(&bytes);
    }

    /// Random bytes after a valid header (pcap and pcapng) never panic; errors carry in-file offsets.
    #[test]
    fn random_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..600), ng in any::<bool>()) {
        let mut bytes = if ng {
            let mut n = Ng::new(false);
            n.shb();
            n.idb(1, 0, &[]);
            n.out
        } else {
            let mut v = Vec::new();
            write_file_to(&mut v);
            v.truncate(24);
            v
        };
        bytes.extend_from_slice(&body);
        if let Err(e) = read_all(&bytes) {
            prop_assert!(e.offset <= bytes.len() as u64);
        }
    }

    /// Corrupting one byte of a valid file never panics.
    #[test]
    fn mutations_never_panic(pos in 0usize..200, val in any::<u8>(), ng in any::<bool>()) {
        let mut bytes = if ng {
            let mut n = Ng::new(false);
            n.shb();
            n.idb(1, 0, &[(9, vec![9])]);
            n.epb(0, 5, &[1; 20], 20);
            n.spb(&[2; 10]);
            n.out
        } else {
            let mut v = Vec::new();
            write_file_to(&mut v);
            v
        };
        let pos = pos % bytes.len();
        bytes[pos] = val;
        let _ = read_all(&bytes);
    }

    /// `next_frame` and `next_packet` agree on every packet and on the error, byte offset
    /// included, whatever single byte of a pcap or pcapng file (either byte order) is changed
    /// and wherever it is cut.
    #[test]
    fn frame_and_packet_readers_agree(pos in 0usize..400, val in any::<u8>(), cut in 0usize..400, kind in 0u8..3) {
        let mut bytes = match kind {
            0 => {
                let mut v = Vec::new();
                write_file_to(&mut v);
                v
            }
            k => {
                let mut n = Ng::new(k == 2);
                n.shb();
                n.idb(1, 4, &[(9, vec![9])]);
                n.idb(101, 0, &[(9, vec![0x83])]);
                n.epb(1, 5, &[1; 20], 40);
                n.spb(&[2; 10]);
                n.block(5, &[0; 8]);
                n.epb(0, 7, &[3; 3], 3);
                n.out
            }
        };
        let len = bytes.len();
        bytes[pos % len] = val;
        bytes.truncate(cut.max(len / 2) % (len + 1));
        let (frames, ferr) = frames_of(&bytes);
        let (packets, perr) = packets_of(&bytes);
        prop_assert_eq!(&frames, &packets);
        prop_assert_eq!(&ferr, &perr);
        if let Some((off, _)) = ferr {
            prop_assert!(off <= bytes.len() as u64);
        }
    }

    /// Whatever is written reads back identically.
    #[test]
    fn write_read_round_trip(pkts in proptest::collection::vec(
        (proptest::collection::vec(any::<u8>(), 0..300), any::<u32>(), 0u32..1_000_000_000), 0..20)) {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mut want = Vec::new();
        for (d, s, ns) in &pkts {
            let ts = u64::from(*s) * 1_000_000_000 + u64::from(*ns);
            w.write_packet(d, ts).unwrap();
            want.push(Packet::from_bytes(d, 0, ts));
        }
        let bytes = w.into_inner().unwrap();
        prop_assert_eq!(read_all(&bytes).unwrap(), want);
    }
}
