//! A small streaming pcap/pcapng reader and a pcap writer.
//!
//! Written here rather than taken from a crate so that every malformed or truncated file yields
//! an error naming the byte offset where the problem lies, allocation stays bounded by the bytes
//! actually present, and no input can panic (see the property test on random bytes).
//!
//! pcap: both byte orders, microsecond (0xa1b2c3d4) and nanosecond (0xa1b23c4d) magic.
//! pcapng: section header, interface description (if_tsresol, if_tsoffset), enhanced, simple
//! and obsolete packet blocks; other blocks are skipped; several sections and interfaces with
//! different link types are allowed.

use std::fmt;
use std::io::{self, Read, Write};

/// Largest captured frame accepted (pcap records and pcapng blocks); larger ones are reported as
/// malformed rather than allocated.
pub const MAX_FRAME: u32 = 16 << 20;

/// A malformed capture file or an I/O error, with the byte offset where it was found.
#[derive(Debug)]
pub struct CaptureError {
    /// Byte offset from the start of the file.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for CaptureError {}

fn err<T>(offset: u64, message: impl Into<String>) -> Result<T, CaptureError> {
    Err(CaptureError {
        offset,
        message: message.into(),
    })
}

/// One captured frame.
#[derive(Debug)]
pub struct Frame<'a> {
    /// Timestamp in nanoseconds since the epoch (0 for pcapng simple packet blocks).
    pub ts_ns: u64,
    /// The frame's link type.
    pub linktype: u32,
    /// The captured bytes.
    pub data: &'a [u8],
    /// Byte offset of the record or block in the file.
    pub offset: u64,
}

#[derive(Clone, Copy)]
struct Interface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp units per second.
    units: u64,
    /// Seconds added to every timestamp.
    offset_s: i64,
}

enum Format {
    Pcap {
        big: bool,
        nanos: bool,
        linktype: u32,
    },
    PcapNg {
        big: bool,
        interfaces: Vec<Interface>,
    },
}

/// Streaming reader of pcap and pcapng files.
pub struct CaptureReader<R: Read> {
    r: R,
    pos: u64,
    format: Format,
    buf: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize, big: bool) -> u16 {
    let x = [b[at], b[at + 1]];
    if big {
        u16::from_be_bytes(x)
    } else {
        u16::from_le_bytes(x)
    }
}

fn u32_at(b: &[u8], at: usize, big: bool) -> u32 {
    let x = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if big {
        u32::from_be_bytes(x)
    } else {
        u32::from_le_bytes(x)
    }
}

fn ts_to_ns(ts: u64, units: u64, offset_s: i64) -> u64 {
    let ns = (u128::from(ts) * 1_000_000_000 / u128::from(units.max(1))) as i128
        + i128::from(offset_s) * 1_000_000_000;
    ns.clamp(0, i128::from(u64::MAX)) as u64
}

const SHB: u32 = 0x0A0D_0D0A;
const BOM: u32 = 0x1A2B_3C4D;

impl<R: Read> CaptureReader<R> {
    /// Reads the file header and detects the format.
    pub fn new(mut r: R) -> Result<Self, CaptureError> {
        let mut head = [0u8; 4];
        let got = read_full(&mut r, &mut head).map_err(|e| io_err(0, e))?;
        if got < 4 {
            return err(
                0,
                format!("file too short for a capture header ({got} bytes)"),
            );
        }
        let le = u32::from_le_bytes(head);
        let mut me = CaptureReader {
            r,
            pos: 4,
            format: Format::Pcap {
                big: false,
                nanos: false,
                linktype: 0,
            },
            buf: Vec::new(),
        };
        match le {
            0xa1b2_c3d4 | 0xa1b2_3c4d | 0xd4c3_b2a1 | 0x4d3c_b2a1 => {
                let big = matches!(le, 0xd4c3_b2a1 | 0x4d3c_b2a1);
                let nanos = matches!(le, 0xa1b2_3c4d | 0x4d3c_b2a1);
                let mut rest = [0u8; 20];
                me.read_exact_at(&mut rest, "pcap file header")?;
                let major = u16_at(&rest, 0, big);
                if major != 2 {
                    return err(4, format!("unsupported pcap version {major}"));
                }
                // The low 16 bits are the link type; the high bits may carry FCS information.
                let linktype = u32_at(&rest, 16, big) & 0xffff;
                me.format = Format::Pcap {
                    big,
                    nanos,
                    linktype,
                };
            }
            SHB => {
                me.format = Format::PcapNg {
                    big: false,
                    interfaces: Vec::new(),
                };
                me.read_section_header(0)?;
            }
            _ => {
                return err(0, format!("not a pcap or pcapng file (magic 0x{le:08x})"));
            }
        }
        Ok(me)
    }

    /// The current byte offset.
    pub fn position(&self) -> u64 {
        self.pos
    }

    fn read_exact_at(&mut self, out: &mut [u8], what: &str) -> Result<(), CaptureError> {
        let start = self.pos;
        let got = read_full(&mut self.r, out).map_err(|e| io_err(start, e))?;
        self.pos += got as u64;
        if got < out.len() {
            return err(
                start,
                format!(
                    "truncated {what}: expected {} bytes, file ends after {got}",
                    out.len()
                ),
            );
        }
        Ok(())
    }

    /// Reads `n` bytes into `self.buf`, growing it only as data arrives.
    fn read_body(&mut self, n: u32, start: u64, what: &str) -> Result<(), CaptureError> {
        self.buf.clear();
        let got = (&mut self.r)
            .take(u64::from(n))
            .read_to_end(&mut self.buf)
            .map_err(|e| io_err(self.pos, e))?;
        self.pos += got as u64;
        if got < n as usize {
            return err(
                start,
                format!("truncated {what}: declares {n} bytes, file ends after {got}"),
            );
        }
        Ok(())
    }

    /// The body of a section header block whose type was already read at `start`.
    fn read_section_header(&mut self, start: u64) -> Result<(), CaptureError> {
        let mut h = [0u8; 8];
        self.read_exact_at(&mut h, "pcapng section header")?;
        let bom_le = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        let big = match bom_le {
            BOM => false,
            0x4d3c_2b1a => true,
            _ => {
                return err(
                    start + 8,
                    format!("bad pcapng byte-order magic 0x{bom_le:08x}"),
                )
            }
        };
        let total = u32_at(&h, 0, big);
        if total < 28 || total % 4 != 0 || total > MAX_FRAME {
            return err(
                start + 4,
                format!("bad pcapng section header length {total}"),
            );
        }
        self.read_body(total - 12, start, "pcapng section header")?;
        let trailer = u32_at(&self.buf, self.buf.len() - 4, big);
        if trailer != total {
            return err(
                start + u64::from(total) - 4,
                format!("pcapng block trailer length {trailer} differs from header length {total}"),
            );
        }
        self.format = Format::PcapNg {
            big,
            interfaces: Vec::new(),
        };
        Ok(())
    }

    /// The next frame, `None` at a clean end of file.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        match self.format {
            Format::Pcap {
                big,
                nanos,
                linktype,
            } => self.next_pcap(big, nanos, linktype),
            Format::PcapNg { .. } => self.next_pcapng(),
        }
    }

    fn next_pcap(
        &mut self,
        big: bool,
        nanos: bool,
        linktype: u32,
    ) -> Result<Option<Frame<'_>>, CaptureError> {
        let start = self.pos;
        let mut h = [0u8; 16];
        let got = read_full(&mut self.r, &mut h).map_err(|e| io_err(start, e))?;
        self.pos += got as u64;
        if got == 0 {
            return Ok(None);
        }
        if got < 16 {
            return err(
                start,
                format!("truncated pcap record header: expected 16 bytes, file ends after {got}"),
            );
        }
        let sec = u64::from(u32_at(&h, 0, big));
        let frac = u64::from(u32_at(&h, 4, big));
        let incl = u32_at(&h, 8, big);
        if incl > MAX_FRAME {
            return err(
                start + 8,
                format!("pcap record length {incl} exceeds the {MAX_FRAME}-byte limit"),
            );
        }
        self.read_body(incl, start, "pcap record")?;
        let ts_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        Ok(Some(Frame {
            ts_ns,
            linktype,
            data: &self.buf,
            offset: start,
        }))
    }

    fn next_pcapng(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        loop {
            let start = self.pos;
            let mut h = [0u8; 8];
            let got = read_full(&mut self.r, &mut h[..4]).map_err(|e| io_err(start, e))?;
            self.pos += got as u64;
            if got == 0 {
                return Ok(None);
            }
            if got < 4 {
                return err(
                    start,
                    format!("truncated pcapng block header: file ends after {got} bytes"),
                );
            }
            let big = match &self.format {
                Format::PcapNg { big, .. } => *big,
                Format::Pcap { .. } => false,
            };
            let btype = u32_at(&h, 0, big);
            if btype == SHB {
                self.read_section_header(start)?;
                continue;
            }
            let mut l = [0u8; 4];
            self.read_exact_at(&mut l, "pcapng block header")?;
            let total = u32_at(&l, 0, big);
            if total < 12 || total % 4 != 0 || total > MAX_FRAME {
                return err(
                    start + 4,
                    format!("bad pcapng block length {total} (block type 0x{btype:x})"),
                );
            }
            self.read_body(total - 8, start, "pcapng block")?;
            let n = self.buf.len();
            let trailer = u32_at(&self.buf, n - 4, big);
            if trailer != total {
                return err(
                    start + u64::from(total) - 4,
                    format!(
                        "pcapng block trailer length {trailer} differs from header length {total}"
                    ),
                );
            }
            let body_len = n - 4;
            let Format::PcapNg { interfaces, .. } = &mut self.format else {
                unreachable!("pcapng reader in pcap mode")
            };
            match btype {
                1 => {
                    if body_len < 8 {
                        return err(start, "pcapng interface description block too short");
                    }
                    let linktype = u32::from(u16_at(&self.buf, 0, big));
                    let snaplen = u32_at(&self.buf, 4, big);
                    let mut ifc = Interface {
                        linktype,
                        snaplen,
                        units: 1_000_000,
                        offset_s: 0,
                    };
                    parse_if_options(&self.buf[8..body_len], big, start + 16, &mut ifc)?;
                    interfaces.push(ifc);
                }
                6 | 2 => {
                    // Enhanced (6) or obsolete (2) packet block.
                    if body_len < 20 {
                        return err(start, "pcapng packet block too short");
                    }
                    let ifid = if btype == 6 {
                        u32_at(&self.buf, 0, big)
                    } else {
                        u32::from(u16_at(&self.buf, 0, big))
                    };
                    let ts = (u64::from(u32_at(&self.buf, 4, big)) << 32)
                        | u64::from(u32_at(&self.buf, 8, big));
                    let cap = u32_at(&self.buf, 12, big) as usize;
                    let Some(ifc) = interfaces.get(ifid as usize).copied() else {
                        return err(
                            start + 8,
                            format!(
                                "packet block names interface {ifid}, but only {} are described",
                                interfaces.len()
                            ),
                        );
                    };
                    if cap > body_len - 20 {
                        return err(
                            start + 20,
                            format!(
                                "packet block captured length {cap} exceeds the block ({} bytes of data)",
                                body_len - 20
                            ),
                        );
                    }
                    let ts_ns = ts_to_ns(ts, ifc.units, ifc.offset_s);
                    return Ok(Some(Frame {
                        ts_ns,
                        linktype: ifc.linktype,
                        data: &self.buf[20..20 + cap],
                        offset: start,
                    }));
                }
                3 => {
                    if body_len < 4 {
                        return err(start, "pcapng simple packet block too short");
                    }
                    let Some(ifc) = interfaces.first().copied() else {
                        return err(
                            start,
                            "simple packet block before any interface description",
                        );
                    };
                    let orig = u32_at(&self.buf, 0, big) as usize;
                    let mut cap = orig.min(body_len - 4);
                    if ifc.snaplen > 0 {
                        cap = cap.min(ifc.snaplen as usize);
                    }
                    return Ok(Some(Frame {
                        ts_ns: 0,
                        linktype: ifc.linktype,
                        data: &self.buf[4..4 + cap],
                        offset: start,
                    }));
                }
                _ => continue,
            }
        }
    }
}

fn parse_if_options(
    mut b: &[u8],
    big: bool,
    mut at: u64,
    ifc: &mut Interface,
) -> Result<(), CaptureError> {
    while b.len() >= 4 {
        let code = u16_at(b, 0, big);
        let len = usize::from(u16_at(b, 2, big));
        if code == 0 {
            break;
        }
        let padded = (len + 3) & !3;
        if 4 + padded > b.len() {
            return err(at, format!("pcapng option {code} overruns its block"));
        }
        let v = &b[4..4 + len];
        match (code, len) {
            (9, 1) => {
                let r = v[0];
                let exp = u32::from(r & 0x7f);
                let units = if r & 0x80 == 0 {
                    10u64.checked_pow(exp)
                } else {
                    2u64.checked_pow(exp)
                };
                match units {
                    Some(u) if u > 0 => ifc.units = u,
                    _ => {
                        return err(
                            at,
                            format!("unsupported pcapng timestamp resolution 0x{r:02x}"),
                        )
                    }
                }
            }
            (14, 8) => {
                let x = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
                ifc.offset_s = if big {
                    i64::from_be_bytes(x)
                } else {
                    i64::from_le_bytes(x)
                };
            }
            _ => {}
        }
        b = &b[4 + padded..];
        at += 4 + padded as u64;
    }
    Ok(())
}

fn io_err(offset: u64, e: io::Error) -> CaptureError {
    CaptureError {
        offset,
        message: format!("read error: {e}"),
    }
}

/// Reads until `out` is full or end of file; returns the number of bytes read.
fn read_full<R: Read>(r: &mut R, out: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match r.read(&mut out[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Writes a little-endian nanosecond pcap file.
pub struct PcapWriter<W: Write> {
    w: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(mut w: W, linktype: u32, snaplen: u32) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w })
    }

    /// Writes one record.
    pub fn write(&mut self, ts_ns: u64, data: &[u8], orig_len: u32) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig_len.max(data.len() as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(data)
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Result<Vec<(u64, u32, Vec<u8>)>, CaptureError> {
        let mut r = CaptureReader::new(bytes)?;
        let mut v = Vec::new();
        while let Some(f) = r.next_frame()? {
            v.push((f.ts_ns, f.linktype, f.data.to_vec()));
        }
        Ok(v)
    }

    fn pcap_us_be() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0xa1b2c3d4u32.to_be_bytes());
        b.extend_from_slice(&2u16.to_be_bytes());
        b.extend_from_slice(&4u16.to_be_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&65535u32.to_be_bytes());
        b.extend_from_slice(&1u32.to_be_bytes());
        b.extend_from_slice(&3u32.to_be_bytes());
        b.extend_from_slice(&5u32.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        b.extend_from_slice(&[0xaa, 0xbb]);
        b
    }

    #[test]
    fn pcap_big_endian_microseconds() {
        let v = all(&pcap_us_be()).unwrap();
        assert_eq!(v, vec![(3_000_005_000, 1, vec![0xaa, 0xbb])]);
    }

    #[test]
    fn pcap_truncations_name_offsets() {
        let b = pcap_us_be();
        let e = all(&b[..b.len() - 1]).unwrap_err();
        assert_eq!(e.offset, 24);
        assert!(e.message.contains("truncated pcap record"), "{e}");
        let e = all(&b[..30]).unwrap_err();
        assert_eq!(e.offset, 24);
        let e = all(&b[..10]).unwrap_err();
        assert_eq!(e.offset, 4);
        let e = all(b"abcdefgh").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("not a pcap"));
    }

    #[test]
    fn writer_round_trip() {
        let mut w = PcapWriter::new(Vec::new(), 101, 65535).unwrap();
        w.write(1_500_000_123, &[1, 2, 3], 100).unwrap();
        w.write(2, &[4], 1).unwrap();
        let b = w.finish().unwrap();
        let v = all(&b).unwrap();
        assert_eq!(
            v,
            vec![(1_500_000_123, 101, vec![1, 2, 3]), (2, 101, vec![4])]
        );
    }

    fn block(t: u32, body: &[u8]) -> Vec<u8> {
        let total = (12 + body.len() as u32 + 3) & !3;
        let mut b = Vec::new();
        b.extend_from_slice(&t.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(body);
        while b.len() < total as usize - 4 {
            b.push(0);
        }
        b.extend_from_slice(&total.to_le_bytes());
        b
    }

    fn pcapng() -> Vec<u8> {
        let mut shb = Vec::new();
        shb.extend_from_slice(&BOM.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        let mut idb = Vec::new();
        idb.extend_from_slice(&101u16.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        // if_tsresol = 9 (nanoseconds)
        idb.extend_from_slice(&9u16.to_le_bytes());
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&[9, 0, 0, 0]);
        idb.extend_from_slice(&[0, 0, 0, 0]);
        let mut epb = Vec::new();
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&1u32.to_le_bytes());
        epb.extend_from_slice(&5u32.to_le_bytes());
        epb.extend_from_slice(&3u32.to_le_bytes());
        epb.extend_from_slice(&3u32.to_le_bytes());
        epb.extend_from_slice(&[7, 8, 9]);
        let mut spb = Vec::new();
        spb.extend_from_slice(&2u32.to_le_bytes());
        spb.extend_from_slice(&[5, 6]);
        let mut b = block(SHB, &shb);
        b.extend(block(1, &idb));
        b.extend(block(5, &[0; 8])); // interface statistics: skipped
        b.extend(block(6, &epb));
        b.extend(block(3, &spb));
        b
    }

    #[test]
    fn pcapng_blocks() {
        let v = all(&pcapng()).unwrap();
        assert_eq!(
            v,
            vec![((1u64 << 32) + 5, 101, vec![7, 8, 9]), (0, 101, vec![5, 6])]
        );
    }

    #[test]
    fn pcapng_errors_name_offsets() {
        let b = pcapng();
        let e = all(&b[..b.len() - 2]).unwrap_err();
        assert!(e.message.contains("truncated pcapng block"), "{e}");
        let mut bad = b.clone();
        // corrupt the trailer of the interface block
        let shb_len = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
        let idb_len = u32::from_le_bytes([
            b[shb_len + 4],
            b[shb_len + 5],
            b[shb_len + 6],
            b[shb_len + 7],
        ]) as usize;
        bad[shb_len + idb_len - 1] = 0x7f;
        let e = all(&bad).unwrap_err();
        assert_eq!(e.offset, (shb_len + idb_len - 4) as u64);
    }
}
