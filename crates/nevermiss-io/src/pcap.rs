//! pcap and pcapng files.
//!
//! [`PcapReader`] reads classic pcap (microsecond or nanosecond timestamps, either byte order) and
//! pcapng (Section Header, Interface Description, Enhanced/Simple/obsolete Packet blocks; other
//! blocks are skipped; several sections, each with its own byte order; interfaces with their own
//! link type, `if_tsresol` and `if_tsoffset`), detecting the format from the first four bytes.
//! It streams: [`PcapReader::next_frame`] lends each frame from one reused buffer (no allocation
//! per frame once that buffer has grown to the largest record), [`PcapReader::next_packet`] fills
//! a caller's [`Packet`]. Both report the original (wire) length next to the captured bytes.
//! [`PcapWriter`] writes classic pcap with any link type and an explicit original length per record.
//!
//! Guarantees: a malformed or truncated file gives a [`PcapError`] naming a byte offset inside
//! the file, never a panic. The offset is where the fault lies: the offending field for a bad
//! value (a length, an interface id, an option), the start of the record or block that the file
//! cuts short, the trailing length of a pcapng block whose two lengths differ. A packet is at most
//! [`MAX_PACKET_LEN`] bytes and a pcapng block at most [`MAX_BLOCK_LEN`], and the reader's buffer
//! grows only as bytes actually arrive, so a lying length field in a short file cannot make it
//! allocate more than twice the bytes present (plus 64 KiB).
//! Formats: the tcpdump.org pcap file format and the pcapng draft (IETF opsawg, draft-ietf-opsawg-pcapng).

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use crate::packet::Packet;

/// Link type of Ethernet frames (LINKTYPE_ETHERNET).
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Largest captured packet the reader accepts (libpcap's largest snapshot length, MAXIMUM_SNAPLEN).
pub const MAX_PACKET_LEN: usize = 262_144;
/// Largest pcapng block the reader accepts.
pub const MAX_BLOCK_LEN: usize = 16 << 20;

const MAGIC_MICRO: u32 = 0xa1b2_c3d4;
const MAGIC_NANO: u32 = 0xa1b2_3c4d;
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;
const PCAPNG_BOM: u32 = 0x1a2b_3c4d;
const PCAPNG_IDB: u32 = 1;
const PCAPNG_PB: u32 = 2;
const PCAPNG_SPB: u32 = 3;
const PCAPNG_EPB: u32 = 6;
/// The reader's buffer grows by at least this much, and otherwise doubles.
const SCRATCH_STEP: usize = 64 << 10;

/// An error reading or writing a capture file: what went wrong and at which byte offset of the file.
#[derive(Debug)]
pub struct PcapError {
    /// Byte offset in the file where the fault lies (see the module documentation).
    pub offset: u64,
    /// What went wrong (lowercase, no trailing period).
    pub message: String,
    /// The underlying I/O error, if any.
    pub source: Option<io::Error>,
    /// The error concerns the file as a whole (it cannot be opened), not a byte of it: its
    /// message names no offset.
    pub whole_file: bool,
}

impl PcapError {
    fn new(offset: u64, message: impl Into<String>) -> PcapError {
        PcapError {
            offset,
            message: message.into(),
            source: None,
            whole_file: false,
        }
    }

    fn io(offset: u64, e: io::Error) -> PcapError {
        PcapError {
            offset,
            message: format!("i/o error: {e}"),
            source: Some(e),
            whole_file: false,
        }
    }

    /// `what`, `want` bytes long from byte `start`, ended after `got` of them.
    fn truncated(at: u64, what: &str, want: usize, start: u64, got: usize) -> PcapError {
        let end = if got == 0 {
            "file ends there".to_string()
        } else {
            format!("file ends after {got}")
        };
        PcapError::new(
            at,
            format!("truncated {what}: expected {want} bytes from byte offset {start}, {end}"),
        )
    }
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.whole_file {
            f.write_str(&self.message)
        } else {
            write!(f, "{} at byte offset {}", self.message, self.offset)
        }
    }
}

impl std::error::Error for PcapError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Which kind of capture file a reader found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcapFormat {
    /// Classic pcap.
    Pcap {
        /// Timestamps in nanoseconds (magic 0xa1b23c4d) rather than microseconds.
        nanos: bool,
        /// The file is big-endian.
        big_endian: bool,
    },
    /// pcapng.
    PcapNg,
}

/// What the reader knows about one packet besides its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketInfo {
    /// Timestamp in nanoseconds since the Unix epoch (as recorded in the file; 0 for a pcapng
    /// simple packet block, which has none).
    pub ts_ns: u64,
    /// Length of the packet on the wire; may exceed the captured length of a snapped trace.
    pub orig_len: u32,
    /// Link type of the packet (see [`LINKTYPE_ETHERNET`]).
    pub link_type: u32,
    /// Byte offset of the packet's record or block.
    pub offset: u64,
}

/// One packet lent by [`PcapReader::next_frame`]: its bytes stay valid until the next read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Timestamp, original length, link type and offset.
    pub info: PacketInfo,
    /// The captured bytes.
    pub data: &'a [u8],
}

#[derive(Clone, Copy)]
struct Interface {
    link_type: u32,
    snaplen: u32,
    /// Timestamp units per second.
    units_per_sec: u128,
    /// Nanoseconds per unit when that is a whole number (µs, ns, ...), else 0.
    ns_per_unit: u64,
    /// Seconds added to every timestamp.
    ts_offset: i64,
}

enum State {
    Pcap {
        nanos: bool,
        big_endian: bool,
        link_type: u32,
    },
    PcapNg {
        big_endian: bool,
        interfaces: Vec<Interface>,
    },
}

/// Reads packets from a pcap or pcapng stream. See the module documentation for guarantees.
pub struct PcapReader<R> {
    r: R,
    offset: u64,
    state: State,
    /// Reused record/block buffer; its length is what has been allocated and initialised so far,
    /// not the length of the current record.
    scratch: Vec<u8>,
}

enum Fill {
    Full,
    Eof,
}

impl PcapReader<BufReader<File>> {
    /// Opens a capture file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PcapError> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| PcapError {
            offset: 0,
            message: format!("cannot open: {e}"),
            source: Some(e),
            whole_file: true,
        })?;
        // Linux opens a directory for reading; its first read fails with EISDIR.
        if f.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(PcapError {
                offset: 0,
                message: "is a directory, not a capture file".into(),
                source: None,
                whole_file: true,
            });
        }
        PcapReader::new(BufReader::with_capacity(1 << 16, f))
    }
}

fn u16_at(b: &[u8], i: usize, be: bool) -> u16 {
    let a = [b[i], b[i + 1]];
    if be {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

fn u32_at(b: &[u8], i: usize, be: bool) -> u32 {
    let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
    if be {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

fn i64_at(b: &[u8], i: usize, be: bool) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    if be {
        i64::from_be_bytes(a)
    } else {
        i64::from_le_bytes(a)
    }
}

/// A packet found in a pcapng block: its info and where its bytes lie in the block body.
type NgPacket = (PacketInfo, usize, usize);

impl<R: Read> PcapReader<R> {
    /// Reads the file header (pcap) or first section header (pcapng).
    pub fn new(r: R) -> Result<Self, PcapError> {
        let mut rd = PcapReader {
            r,
            offset: 0,
            state: State::Pcap {
                nanos: false,
                big_endian: false,
                link_type: 0,
            },
            scratch: Vec::new(),
        };
        let mut magic = [0u8; 4];
        if let Fill::Eof = rd.fill(&mut magic, 0, "file header")? {
            return Err(PcapError::new(0, "empty file: no pcap or pcapng header"));
        }
        let le = u32::from_le_bytes(magic);
        let be = u32::from_be_bytes(magic);
        if le == PCAPNG_SHB {
            rd.state = State::PcapNg {
                big_endian: false,
                interfaces: Vec::new(),
            };
            let mut len = [0u8; 4];
            rd.fill_required(&mut len, 0, "section header block")?;
            rd.read_shb_rest(0, len)?;
            return Ok(rd);
        }
        let (nanos, big_endian) = match (le, be) {
            (MAGIC_MICRO, _) => (false, false),
            (MAGIC_NANO, _) => (true, false),
            (_, MAGIC_MICRO) => (false, true),
            (_, MAGIC_NANO) => (true, true),
            _ => {
                return Err(PcapError::new(
                    0,
                    format!(
                        "not a pcap or pcapng file (magic {:02x}{:02x}{:02x}{:02x})",
                        magic[0], magic[1], magic[2], magic[3]
                    ),
                ))
            }
        };
        let mut rest = [0u8; 20];
        rd.fill_required(&mut rest, 0, "pcap file header")?;
        let major = u16_at(&rest, 0, big_endian);
        if major != 2 {
            return Err(PcapError::new(
                4,
                format!("unsupported pcap version {major} (expected 2)"),
            ));
        }
        // The low 16 bits are the link type; the high bits may carry FCS information.
        let link_type = u32_at(&rest, 16, big_endian) & 0xffff;
        rd.state = State::Pcap {
            nanos,
            big_endian,
            link_type,
        };
        Ok(rd)
    }

    /// The format found in the file (for pcapng, the byte order of the current section is not reported).
    pub fn format(&self) -> PcapFormat {
        match self.state {
            State::Pcap {
                nanos, big_endian, ..
            } => PcapFormat::Pcap { nanos, big_endian },
            State::PcapNg { .. } => PcapFormat::PcapNg,
        }
    }

    /// Number of bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads exactly `buf.len()` bytes; `Eof` if the stream ended before the first byte.
    /// Errors are reported at `at`, the start of the enclosing structure.
    #[inline]
    fn fill(&mut self, buf: &mut [u8], at: u64, what: &str) -> Result<Fill, PcapError> {
        let start = self.offset;
        let mut got = 0;
        while got < buf.len() {
            match self.r.read(&mut buf[got..]) {
                Ok(0) => {
                    if got == 0 {
                        return Ok(Fill::Eof);
                    }
                    return Err(PcapError::truncated(at, what, buf.len(), start, got));
                }
                Ok(n) => {
                    got += n;
                    self.offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(PcapError::io(self.offset, e)),
            }
        }
        Ok(Fill::Full)
    }

    /// Like `fill`, but the end of the file is an error too.
    fn fill_required(&mut self, buf: &mut [u8], at: u64, what: &str) -> Result<(), PcapError> {
        let here = self.offset;
        match self.fill(buf, at, what)? {
            Fill::Full => Ok(()),
            Fill::Eof if buf.is_empty() => Ok(()),
            Fill::Eof => Err(PcapError::truncated(at, what, buf.len(), here, 0)),
        }
    }

    /// Reads the next `n` bytes into `scratch[..n]`, growing the buffer only as bytes arrive
    /// (doubling, at least [`SCRATCH_STEP`]); the end of the file is an error reported at `at`.
    #[inline]
    fn fill_scratch(&mut self, n: usize, at: u64, what: &str) -> Result<(), PcapError> {
        let start = self.offset;
        let mut got = 0;
        while got < n {
            if got == self.scratch.len() {
                let grown = self.scratch.len().saturating_mul(2).max(SCRATCH_STEP);
                self.scratch.resize(n.min(grown), 0);
            }
            let end = n.min(self.scratch.len());
            match self.r.read(&mut self.scratch[got..end]) {
                Ok(0) => return Err(PcapError::truncated(at, what, n, start, got)),
                Ok(k) => {
                    got += k;
                    self.offset += k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(PcapError::io(self.offset, e)),
            }
        }
        Ok(())
    }

    /// Reads the next packet and lends its bytes until the next call; `Ok(None)` at the clean end
    /// of the file. Allocates nothing once the reader's buffer holds the largest record so far.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, PcapError> {
        match self.state {
            State::Pcap {
                nanos,
                big_endian,
                link_type,
            } => {
                let Some((info, incl)) = self.pcap_record_header(nanos, big_endian, link_type)?
                else {
                    return Ok(None);
                };
                self.fill_scratch(incl, info.offset, "packet record data")?;
                Ok(Some(Frame {
                    info,
                    data: &self.scratch[..incl],
                }))
            }
            State::PcapNg { .. } => {
                let Some((info, from, to)) = self.next_pcapng()? else {
                    return Ok(None);
                };
                Ok(Some(Frame {
                    info,
                    data: &self.scratch[from..to],
                }))
            }
        }
    }

    /// Reads the next packet into `pkt` (its data and `ts_ns`; `port` is left alone).
    /// Returns `Ok(None)` at the clean end of the file.
    pub fn next_packet(&mut self, pkt: &mut Packet) -> Result<Option<PacketInfo>, PcapError> {
        let info = match self.state {
            State::Pcap {
                nanos,
                big_endian,
                link_type,
            } => {
                let Some((info, incl)) = self.pcap_record_header(nanos, big_endian, link_type)?
                else {
                    return Ok(None);
                };
                // Straight into the packet: one copy from the stream.
                let data = pkt.reset_len(incl);
                self.fill_required(data, info.offset, "packet record data")?;
                info
            }
            State::PcapNg { .. } => {
                let Some((info, from, to)) = self.next_pcapng()? else {
                    return Ok(None);
                };
                pkt.set_data(&self.scratch[from..to]);
                info
            }
        };
        pkt.ts_ns = info.ts_ns;
        Ok(Some(info))
    }

    /// Reads one pcap record header; returns the packet's info and captured length.
    fn pcap_record_header(
        &mut self,
        nanos: bool,
        be: bool,
        link_type: u32,
    ) -> Result<Option<(PacketInfo, usize)>, PcapError> {
        let at = self.offset;
        let mut hdr = [0u8; 16];
        if let Fill::Eof = self.fill(&mut hdr, at, "packet record header")? {
            return Ok(None);
        }
        let sec = u64::from(u32_at(&hdr, 0, be));
        let frac = u64::from(u32_at(&hdr, 4, be));
        let incl = u32_at(&hdr, 8, be);
        let orig = u32_at(&hdr, 12, be);
        if incl as usize > MAX_PACKET_LEN {
            return Err(PcapError::new(
                at + 8,
                format!("packet record length {incl} exceeds the maximum {MAX_PACKET_LEN}"),
            ));
        }
        // At most (2^32 - 1) * 10^9 + (2^32 - 1) * 1000: no overflow.
        let ts_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        Ok(Some((
            PacketInfo {
                ts_ns,
                orig_len: orig,
                link_type,
                offset: at,
            },
            incl as usize,
        )))
    }

    /// After the block type and the (still undecoded) length `len` of a section header block at
    /// `at`: reads the rest of it.
    fn read_shb_rest(&mut self, at: u64, len: [u8; 4]) -> Result<(), PcapError> {
        let mut lenbom = [0u8; 8];
        lenbom[..4].copy_from_slice(&len);
        self.fill_required(&mut lenbom[4..], at, "section header block")?;
        let big_endian = match (
            u32::from_le_bytes([lenbom[4], lenbom[5], lenbom[6], lenbom[7]]),
            u32::from_be_bytes([lenbom[4], lenbom[5], lenbom[6], lenbom[7]]),
        ) {
            (PCAPNG_BOM, _) => false,
            (_, PCAPNG_BOM) => true,
            _ => {
                return Err(PcapError::new(
                    at + 8,
                    "bad pcapng byte-order magic in section header block",
                ))
            }
        };
        let total = u32_at(&lenbom, 0, big_endian) as usize;
        check_block_len(at, total, 28)?;
        // Body after the byte-order magic, plus the trailing length.
        let n = total - 12;
        self.fill_scratch(n, at, "section header block")?;
        let body = &self.scratch[..n];
        let major = u16_at(body, 0, big_endian);
        if major != 1 {
            return Err(PcapError::new(
                at + 12,
                format!("unsupported pcapng version {major} (expected 1)"),
            ));
        }
        check_trailer(at, total, u32_at(body, n - 4, big_endian))?;
        self.state = State::PcapNg {
            big_endian,
            interfaces: Vec::new(),
        };
        Ok(())
    }

    /// Reads pcapng blocks up to the next packet; its bytes are `scratch[from..to]`.
    fn next_pcapng(&mut self) -> Result<Option<NgPacket>, PcapError> {
        loop {
            let at = self.offset;
            // Block type and length in one read.
            let mut h = [0u8; 8];
            if let Fill::Eof = self.fill(&mut h, at, "block header")? {
                return Ok(None);
            }
            let ty = [h[0], h[1], h[2], h[3]];
            let lb = [h[4], h[5], h[6], h[7]];
            // The section header's type reads the same in both byte orders.
            if u32::from_le_bytes(ty) == PCAPNG_SHB {
                self.read_shb_rest(at, lb)?;
                continue;
            }
            let be = match &self.state {
                State::PcapNg { big_endian, .. } => *big_endian,
                State::Pcap { .. } => {
                    return Err(PcapError::new(at, "pcapng block in a pcap file"))
                }
            };
            let btype = u32_at(&ty, 0, be);
            let total = u32_at(&lb, 0, be) as usize;
            check_block_len(at, total, 12)?;
            // Everything after the length, including the trailing length.
            let n = total - 8;
            self.fill_scratch(n, at, "block")?;
            let State::PcapNg { interfaces, .. } = &mut self.state else {
                return Err(PcapError::new(at, "pcapng block in a pcap file"));
            };
            let res = ng_block(interfaces, at, btype, &self.scratch[..n], be);
            if let Some(pkt) = res? {
                return Ok(Some(pkt));
            }
        }
    }
}

fn check_block_len(at: u64, total: usize, min: usize) -> Result<(), PcapError> {
    let problem = if total < min {
        format!("block length {total} is shorter than the minimum {min}")
    } else if !total.is_multiple_of(4) {
        format!("block length {total} is not a multiple of 4")
    } else if total > MAX_BLOCK_LEN {
        format!("block length {total} exceeds the maximum {MAX_BLOCK_LEN}")
    } else {
        return Ok(());
    };
    Err(PcapError::new(at + 4, problem))
}

/// The trailing length of the block at `at` (found at its last four bytes) must equal `total`.
fn check_trailer(at: u64, total: usize, trail: u32) -> Result<(), PcapError> {
    if trail as usize != total {
        return Err(PcapError::new(
            at + total as u64 - 4,
            format!("block length {total} does not match trailing length {trail}"),
        ));
    }
    Ok(())
}

/// Interprets one pcapng block at `at` (`body` = everything after its length field, including
/// the trailing length). Returns the packet it holds, if any, as a range of `body`.
#[inline]
fn ng_block(
    interfaces: &mut Vec<Interface>,
    at: u64,
    btype: u32,
    body: &[u8],
    be: bool,
) -> Result<Option<NgPacket>, PcapError> {
    let total = body.len() + 8;
    check_trailer(at, total, u32_at(body, body.len() - 4, be))?;
    let body = &body[..body.len() - 4];
    // Offset in the file of byte `i` of `body`.
    let pos = |i: usize| at + 8 + i as u64;
    let need = |n: usize, what: &str| -> Result<(), PcapError> {
        if body.len() < n {
            Err(PcapError::new(
                at,
                format!("{what} too short: body has {} bytes, needs {n}", body.len()),
            ))
        } else {
            Ok(())
        }
    };
    match btype {
        PCAPNG_IDB => {
            interfaces.push(parse_idb(at, body, be)?);
            Ok(None)
        }
        PCAPNG_EPB | PCAPNG_PB => {
            need(20, "packet block")?;
            let ifid = if btype == PCAPNG_EPB {
                u32_at(body, 0, be) as usize
            } else {
                usize::from(u16_at(body, 0, be))
            };
            let ts = (u64::from(u32_at(body, 4, be)) << 32) | u64::from(u32_at(body, 8, be));
            let cap = u32_at(body, 12, be) as usize;
            let orig = u32_at(body, 16, be);
            let Some(ifc) = interfaces.get(ifid).copied() else {
                return Err(PcapError::new(
                    pos(0),
                    format!(
                        "packet block refers to interface {ifid}, but the section describes {}",
                        interfaces.len()
                    ),
                ));
            };
            if cap > MAX_PACKET_LEN {
                return Err(PcapError::new(
                    pos(12),
                    format!("captured length {cap} exceeds the maximum {MAX_PACKET_LEN}"),
                ));
            }
            if 20 + cap > body.len() {
                return Err(PcapError::new(
                    pos(12),
                    format!(
                        "captured length {cap} runs past the end of its block ({} bytes of data)",
                        body.len() - 20
                    ),
                ));
            }
            let info = PacketInfo {
                ts_ns: ifc.ts_to_ns(ts),
                orig_len: orig,
                link_type: ifc.link_type,
                offset: at,
            };
            Ok(Some((info, 20, 20 + cap)))
        }
        PCAPNG_SPB => {
            need(4, "simple packet block")?;
            let orig = u32_at(body, 0, be);
            let Some(ifc) = interfaces.first().copied() else {
                return Err(PcapError::new(
                    at,
                    "simple packet block before any interface description block",
                ));
            };
            // The captured length is implied: the original length cut to the snapshot length.
            let mut cap = (orig as usize).min(body.len() - 4);
            if ifc.snaplen > 0 {
                cap = cap.min(ifc.snaplen as usize);
            }
            if cap > MAX_PACKET_LEN {
                return Err(PcapError::new(
                    pos(0),
                    format!("captured length {cap} exceeds the maximum {MAX_PACKET_LEN}"),
                ));
            }
            let info = PacketInfo {
                ts_ns: 0,
                orig_len: orig,
                link_type: ifc.link_type,
                offset: at,
            };
            Ok(Some((info, 4, 4 + cap)))
        }
        _ => Ok(None),
    }
}

/// Parses an interface description block's body (without the trailing length) at `at`.
#[inline(never)]
fn parse_idb(at: u64, body: &[u8], be: bool) -> Result<Interface, PcapError> {
    let pos = |i: usize| at + 8 + i as u64;
    if body.len() < 8 {
        return Err(PcapError::new(
            at,
            format!(
                "interface description block too short: body has {} bytes, needs 8",
                body.len()
            ),
        ));
    }
    let mut ifc = Interface {
        link_type: u32::from(u16_at(body, 0, be)),
        snaplen: u32_at(body, 4, be),
        units_per_sec: 1_000_000,
        ns_per_unit: 0,
        ts_offset: 0,
    };
    let mut i = 8;
    while i + 4 <= body.len() {
        let code = u16_at(body, i, be);
        let len = usize::from(u16_at(body, i + 2, be));
        if code == 0 {
            break;
        }
        let vstart = i + 4;
        if vstart + len > body.len() {
            return Err(PcapError::new(
                pos(i),
                format!("interface option {code} of length {len} runs past the end of its block"),
            ));
        }
        let v = &body[vstart..vstart + len];
        match code {
            9 if len >= 1 => {
                let r = v[0];
                let units = if r & 0x80 == 0 {
                    10u128.checked_pow(u32::from(r))
                } else {
                    1u128.checked_shl(u32::from(r & 0x7f))
                };
                ifc.units_per_sec = match units {
                    Some(u) if u > 0 => u,
                    _ => {
                        return Err(PcapError::new(
                            pos(i),
                            format!("unsupported timestamp resolution {r:#04x}"),
                        ))
                    }
                };
            }
            14 if len >= 8 => ifc.ts_offset = i64_at(v, 0, be),
            _ => {}
        }
        i = vstart + len.div_ceil(4) * 4;
    }
    if 1_000_000_000 % ifc.units_per_sec == 0 {
        ifc.ns_per_unit = (1_000_000_000 / ifc.units_per_sec) as u64;
    }
    Ok(ifc)
}

impl Interface {
    fn ts_to_ns(&self, ts: u64) -> u64 {
        // A multiplication for the usual resolutions, a 128-bit division for the others.
        let ns = if self.ns_per_unit != 0 {
            u128::from(ts) * u128::from(self.ns_per_unit)
        } else {
            u128::from(ts) * 1_000_000_000 / self.units_per_sec
        };
        let off = i128::from(self.ts_offset) * 1_000_000_000;
        let total = ns as i128 + off;
        total.clamp(0, i128::from(u64::MAX)) as u64
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<Packet, PcapError>;
    /// Yields each packet as a fresh [`Packet`] (port 0); stops after the first error.
    fn next(&mut self) -> Option<Self::Item> {
        let mut p = Packet::new();
        match self.next_packet(&mut p) {
            Ok(Some(_)) => Some(Ok(p)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Timestamp resolution of a written pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TsResolution {
    /// Microseconds (magic 0xa1b2c3d4), the most widely read.
    Micro,
    /// Nanoseconds (magic 0xa1b23c4d).
    #[default]
    Nano,
}

/// Writes classic pcap files (little-endian; Ethernet link type unless
/// [`PcapWriter::with_link_type`] names another).
pub struct PcapWriter<W: Write> {
    w: W,
    res: TsResolution,
    snaplen: u32,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (or truncates) a pcap file with nanosecond timestamps.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        let f = File::create(path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        PcapWriter::new(BufWriter::with_capacity(1 << 16, f))
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header: nanosecond timestamps, snapshot length [`MAX_PACKET_LEN`].
    pub fn new(w: W) -> io::Result<Self> {
        PcapWriter::with_options(w, TsResolution::Nano, MAX_PACKET_LEN as u32)
    }

    /// Writes the file header with the given timestamp resolution and snapshot length
    /// (longer packets are cut to it, keeping their original length in the record).
    pub fn with_options(w: W, res: TsResolution, snaplen: u32) -> io::Result<Self> {
        PcapWriter::with_link_type(w, LINKTYPE_ETHERNET, res, snaplen)
    }

    /// Writes the file header with the given link type (e.g. 101 for raw IP), timestamp
    /// resolution and snapshot length.
    pub fn with_link_type(
        mut w: W,
        link_type: u32,
        res: TsResolution,
        snaplen: u32,
    ) -> io::Result<Self> {
        let magic = match res {
            TsResolution::Micro => MAGIC_MICRO,
            TsResolution::Nano => MAGIC_NANO,
        };
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&magic.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&link_type.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, res, snaplen })
    }

    /// Appends one packet record whose original length is its length.
    /// Timestamps past the year 2106 are clamped.
    pub fn write_packet(&mut self, data: &[u8], ts_ns: u64) -> io::Result<()> {
        self.write_record(data, ts_ns, u32::try_from(data.len()).unwrap_or(u32::MAX))
    }

    /// Appends one packet record of a snapped trace: `data` are the captured bytes (cut to the
    /// snapshot length) and `orig_len` the length on the wire (raised to `data.len()` if smaller).
    /// Timestamps past the year 2106 are clamped.
    pub fn write_record(&mut self, data: &[u8], ts_ns: u64, orig_len: u32) -> io::Result<()> {
        let sec = (ts_ns / 1_000_000_000).min(u64::from(u32::MAX)) as u32;
        let ns = (ts_ns % 1_000_000_000) as u32;
        let frac = match self.res {
            TsResolution::Micro => ns / 1000,
            TsResolution::Nano => ns,
        };
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let orig = orig_len.max(len);
        let incl = len.min(self.snaplen);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&incl.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&data[..incl as usize])
    }

    /// Flushes buffered records.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Reads every packet of a capture file (each with port 0).
pub fn read_file(path: impl AsRef<Path>) -> Result<Vec<Packet>, PcapError> {
    PcapReader::open(path)?.collect()
}

/// Writes packets to a new pcap file (nanosecond timestamps).
pub fn write_file(path: impl AsRef<Path>, packets: &[Packet]) -> io::Result<()> {
    let mut w = PcapWriter::create(path)?;
    for p in packets {
        w.write_packet(p.data(), p.ts_ns)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block or record whose length field promises far more than the file holds grows the
    /// reader's buffer only by what actually arrives.
    #[test]
    fn lying_lengths_allocate_only_what_arrives() {
        // pcapng: SHB, then a block claiming 16 MiB followed by 100 bytes.
        let mut b = Vec::new();
        for w in [PCAPNG_SHB, 28, PCAPNG_BOM, 1, u32::MAX, u32::MAX, 28] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        let block_at = b.len() as u64;
        b.extend_from_slice(&PCAPNG_EPB.to_le_bytes());
        b.extend_from_slice(&(MAX_BLOCK_LEN as u32).to_le_bytes());
        b.extend_from_slice(&[0; 100]);
        let mut r = PcapReader::new(&b[..]).unwrap();
        let e = r.next_frame().unwrap_err();
        assert_eq!(e.offset, block_at);
        assert!(e.message.starts_with("truncated block"), "{e}");
        assert!(
            r.scratch.capacity() <= SCRATCH_STEP,
            "{}",
            r.scratch.capacity()
        );

        // pcap: a record of the maximum length with 10 bytes present.
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_packet(&[7; 10], 1).unwrap();
        let mut b = w.into_inner().unwrap();
        b[24 + 8..24 + 12].copy_from_slice(&(MAX_PACKET_LEN as u32).to_le_bytes());
        let mut r = PcapReader::new(&b[..]).unwrap();
        let e = r.next_frame().unwrap_err();
        assert_eq!(e.offset, 24);
        assert_eq!(
            e.to_string(),
            "truncated packet record data: expected 262144 bytes from byte offset 40, \
             file ends after 10 at byte offset 24"
        );
        assert!(r.scratch.capacity() <= SCRATCH_STEP);
    }

    /// Past the first step the buffer doubles, so a large frame costs a few reads, not one per KiB.
    #[test]
    fn scratch_grows_to_large_frames() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let big: Vec<u8> = (0..MAX_PACKET_LEN).map(|i| i as u8).collect();
        w.write_packet(&big, 3).unwrap();
        w.write_packet(&big[..5], 4).unwrap();
        let b = w.into_inner().unwrap();
        let mut r = PcapReader::new(&b[..]).unwrap();
        assert_eq!(r.next_frame().unwrap().unwrap().data, &big[..]);
        assert_eq!(r.scratch.len(), MAX_PACKET_LEN);
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!((f.data, f.info.ts_ns), (&big[..5], 4));
        assert!(r.next_frame().unwrap().is_none());
    }
}
