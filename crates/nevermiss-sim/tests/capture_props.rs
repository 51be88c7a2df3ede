//! Malformed or truncated capture files, read as the simulator reads them (nevermiss-io's
//! `PcapReader::next_frame`, then `decode`), give an error with a byte offset, never a panic.

use nevermiss_io::pcap::{PcapReader, PcapWriter, TsResolution};
use nevermiss_sim::packet::decode;
use proptest::prelude::*;

/// Reads every frame and decodes it; returns the error offset, if any.
fn read_all(bytes: &[u8]) -> Result<usize, u64> {
    let mut r = PcapReader::new(bytes).map_err(|e| e.offset)?;
    let mut n = 0;
    loop {
        match r.next_frame() {
            Ok(Some(f)) => {
                let _ = decode(f.info.link_type, f.info.ts_ns, f.data);
                n += 1;
            }
            Ok(None) => return Ok(n),
            Err(e) => {
                assert!(e
                    .to_string()
                    .ends_with(&format!(" at byte offset {}", e.offset)));
                return Err(e.offset);
            }
        }
    }
}

fn valid_pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = PcapWriter::with_link_type(Vec::new(), 1, TsResolution::Nano, 65535).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_record(f, i as u64 * 1000, f.len() as u32).unwrap();
    }
    w.into_inner().unwrap()
}

fn pcapng_prefix() -> Vec<u8> {
    // SHB + IDB (Ethernet), little endian
    let mut b = Vec::new();
    b.extend_from_slice(&0x0A0D0D0Au32.to_le_bytes());
    b.extend_from_slice(&28u32.to_le_bytes());
    b.extend_from_slice(&0x1A2B3C4Du32.to_le_bytes());
    b.extend_from_slice(&[1, 0, 0, 0]);
    b.extend_from_slice(&(-1i64).to_le_bytes());
    b.extend_from_slice(&28u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&20u32.to_le_bytes());
    b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&20u32.to_le_bytes());
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Err(off) = read_all(&bytes) {
            prop_assert!(off <= bytes.len() as u64);
        }
    }

    #[test]
    fn random_bytes_after_valid_headers_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..400),
        ng in any::<bool>(),
    ) {
        let mut b = if ng { pcapng_prefix() } else { valid_pcap(&[]) };
        b.extend_from_slice(&tail);
        if let Err(off) = read_all(&b) {
            prop_assert!(off <= b.len() as u64);
        }
    }

    #[test]
    fn corrupted_and_truncated_pcaps_never_panic(
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 1..6),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = valid_pcap(&frames);
        prop_assert_eq!(read_all(&b), Ok(frames.len()));
        for (i, v) in flips {
            let at = i.index(b.len());
            b[at] = v;
        }
        let cut = cut.index(b.len() + 1);
        b.truncate(cut);
        if let Err(off) = read_all(&b) {
            prop_assert!(off <= b.len() as u64);
        }
    }
}

#[test]
fn truncated_record_names_its_offset() {
    let b = valid_pcap(&[vec![1; 10], vec![2; 30]]);
    // second record header at 24 + 16 + 10 = 50; cut its data short
    let e = read_all(&b[..b.len() - 5]).unwrap_err();
    assert_eq!(e, 50);
}
