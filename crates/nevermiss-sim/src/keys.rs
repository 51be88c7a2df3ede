//! Flow keys and their digests.
//!
//! A flow key selects which packets share state. The named keys build exactly the byte strings
//! that opp-sim's `hashkeys.py` feeds to its hash (reference A.3): opp-sim slices them out of its
//! 32-byte trace record, whose bytes 18..32 are `ipsrc[4] ipdst[4] proto-char pad sport-LE dport-LE`.
//! The digest is CRC-16/ARC of those bytes (reference A.3: PyCRC `CRC16()`, check value 0xBB3D).

use crate::error::{ParseError, RangeFault};
use crate::packet::PacketInfo;
use std::collections::HashMap;
use std::fmt;

/// CRC-16/ARC (poly 0x8005 reflected, init 0, no final xor), the hash opp-sim uses (reference A.3).
pub const CRC16_ARC: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);

/// CRC-16/ARC of `bytes`.
pub fn crc16_arc(bytes: &[u8]) -> u16 {
    CRC16_ARC.checksum(bytes)
}

/// The most key bytes a user byte-range key may select.
pub const MAX_KEY_BYTES: usize = 64;

/// Where a user byte range starts counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Base {
    /// Offset from the first byte of the IPv4 header.
    Ip,
    /// Offset from the first byte of the TCP/UDP header (after IPv4 options).
    L4,
}

/// A half-open byte range `[start, end)` of a packet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ByteRange {
    /// The header the offsets count from.
    pub base: Base,
    /// First byte, inclusive.
    pub start: u16,
    /// Last byte, exclusive.
    pub end: u16,
}

/// A flow-key definition; serialised as its name (e.g. `5tuple`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// One state for all packets: opp-sim's `key_const`, the constant string `"1"`.
    Global,
    /// `key_5tuple`: the 14 record bytes ipsrc, ipdst, proto char (`T`/`U`), a zero pad byte,
    /// sport and dport little-endian.
    FiveTuple,
    /// `key_ipdst`: the 4 destination-address bytes.
    IpDst,
    /// `key_ipdst16`: the first 2 destination-address bytes (the /16 prefix).
    IpDst16,
    /// `key_ipsrc_ipdst`: source then destination address, 8 bytes.
    IpSrcIpDst,
    /// A user list of header byte ranges, concatenated; bytes past the captured header read as 0.
    Bytes(Vec<ByteRange>),
}

/// The five keys of the paper's evaluation (reference A.3 `keys_ccr`), in its order.
pub fn paper_keys() -> Vec<KeySpec> {
    vec![
        KeySpec::Global,
        KeySpec::FiveTuple,
        KeySpec::IpDst,
        KeySpec::IpDst16,
        KeySpec::IpSrcIpDst,
    ]
}

impl serde::Serialize for KeySpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySpec::Global => f.write_str("global"),
            KeySpec::FiveTuple => f.write_str("5tuple"),
            KeySpec::IpDst => f.write_str("ipdst"),
            KeySpec::IpDst16 => f.write_str("ipdst16"),
            KeySpec::IpSrcIpDst => f.write_str("ipsrc+ipdst"),
            KeySpec::Bytes(ranges) => {
                f.write_str("bytes:")?;
                for (i, r) in ranges.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    let base = match r.base {
                        Base::Ip => "ip",
                        Base::L4 => "l4",
                    };
                    write!(f, "{base}[{}..{}]", r.start, r.end)?;
                }
                Ok(())
            }
        }
    }
}

impl std::str::FromStr for KeySpec {
    type Err = ParseError;

    /// Parses `global` (also `*`, `const`), `5tuple`, `ipdst`, `ipdst16` (also `ipdst/16`),
    /// `ipsrc+ipdst` (also `ipsrc_ipdst`) or `bytes:ip[12..20]+l4[0..4]`.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "global" | "*" | "const" => KeySpec::Global,
            "5tuple" | "5-tuple" | "five-tuple" => KeySpec::FiveTuple,
            "ipdst" => KeySpec::IpDst,
            "ipdst16" | "ipdst/16" => KeySpec::IpDst16,
            "ipsrc+ipdst" | "ipsrc_ipdst" => KeySpec::IpSrcIpDst,
            _ => {
                if let Some(rest) = t.strip_prefix("bytes:") {
                    KeySpec::Bytes(parse_ranges(rest)?)
                } else {
                    return Err(ParseError::UnknownKey(s.to_string()));
                }
            }
        })
    }
}

fn parse_ranges(s: &str) -> Result<Vec<ByteRange>, ParseError> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for part in s.split('+') {
        let part = part.trim();
        let range = parse_range(part).map_err(|fault| ParseError::ByteRange {
            part: part.to_string(),
            fault,
        })?;
        total += usize::from(range.end - range.start);
        if total > MAX_KEY_BYTES {
            return Err(ParseError::KeyTooLong { max: MAX_KEY_BYTES });
        }
        out.push(range);
    }
    if out.is_empty() {
        return Err(ParseError::EmptyKey);
    }
    Ok(out)
}

/// One range: `ip[start..end]` or `l4[start..end]`.
fn parse_range(part: &str) -> Result<ByteRange, RangeFault> {
    let (base, rest) = if let Some(r) = part.strip_prefix("ip[") {
        (Base::Ip, r)
    } else if let Some(r) = part.strip_prefix("l4[") {
        (Base::L4, r)
    } else {
        return Err(RangeFault::Base);
    };
    let inner = rest.strip_suffix(']').ok_or(RangeFault::NoBracket)?;
    let (a, b) = inner.split_once("..").ok_or(RangeFault::NoDots)?;
    let start: u16 = a.trim().parse().map_err(|_| RangeFault::Start)?;
    let end: u16 = b.trim().parse().map_err(|_| RangeFault::End)?;
    if end <= start {
        return Err(RangeFault::Empty);
    }
    Ok(ByteRange { base, start, end })
}

/// Key bytes assembled in a fixed buffer.
pub struct KeyBytes {
    buf: [u8; MAX_KEY_BYTES],
    len: usize,
}

impl KeyBytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// The 14 record bytes opp-sim stores at offsets 18..32 of its record (reference A.2).
pub fn record_bytes(p: &PacketInfo<'_>) -> [u8; 14] {
    let mut r = [0u8; 14];
    r[0..4].copy_from_slice(&p.src);
    r[4..8].copy_from_slice(&p.dst);
    r[8] = if p.proto == 6 { b'T' } else { b'U' };
    r[9] = 0;
    r[10..12].copy_from_slice(&p.sport.to_le_bytes());
    r[12..14].copy_from_slice(&p.dport.to_le_bytes());
    r
}

impl KeySpec {
    /// True when the key depends only on addresses, protocol and ports (not on length, TTL, ...).
    pub fn is_flow_only(&self) -> bool {
        !matches!(self, KeySpec::Bytes(_))
    }

    /// The key bytes of one packet.
    pub fn bytes(&self, p: &PacketInfo<'_>) -> KeyBytes {
        let mut k = KeyBytes {
            buf: [0; MAX_KEY_BYTES],
            len: 0,
        };
        let rec = record_bytes(p);
        let mut put = |b: &[u8]| {
            k.buf[k.len..k.len + b.len()].copy_from_slice(b);
            k.len += b.len();
        };
        match self {
            KeySpec::Global => put(b"1"),
            KeySpec::FiveTuple => put(&rec),
            KeySpec::IpDst => put(&rec[4..8]),
            KeySpec::IpDst16 => put(&rec[4..6]),
            KeySpec::IpSrcIpDst => put(&rec[0..8]),
            KeySpec::Bytes(ranges) => {
                for r in ranges {
                    let base = match r.base {
                        Base::Ip => 0,
                        Base::L4 => p.l4_offset,
                    };
                    for i in r.start..r.end {
                        let at = base + usize::from(i);
                        put(&[p.header.get(at).copied().unwrap_or(0)]);
                    }
                }
            }
        }
        k
    }

    /// CRC-16/ARC digest of the packet's key.
    pub fn crc(&self, p: &PacketInfo<'_>) -> u16 {
        crc16_arc(self.bytes(p).as_slice())
    }
}

/// Assigns dense ids to distinct key byte strings (the "exact" comparison, no hash collisions).
#[derive(Default)]
pub struct Interner {
    map: HashMap<Box<[u8]>, u32>,
}

impl Interner {
    /// The id of `key`, allocating the next one for a new key.
    pub fn id(&mut self, key: &[u8]) -> u32 {
        if let Some(&id) = self.map.get(key) {
            return id;
        }
        let id = self.map.len() as u32;
        self.map.insert(key.into(), id);
        id
    }

    /// Number of distinct keys seen.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no key was seen.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_arc_check_value() {
        assert_eq!(crc16_arc(b"123456789"), 0xBB3D);
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "global",
            "5tuple",
            "ipdst",
            "ipdst16",
            "ipsrc+ipdst",
            "bytes:ip[12..20]+l4[0..4]",
        ] {
            let k: KeySpec = s.parse().unwrap();
            assert_eq!(k.to_string(), s);
        }
        assert_eq!("*".parse::<KeySpec>().unwrap(), KeySpec::Global);
        assert!("bytes:ip[4..2]".parse::<KeySpec>().is_err());
        assert!("bytes:xx[0..2]".parse::<KeySpec>().is_err());
        assert!("bytes:ip[0..65]".parse::<KeySpec>().is_err());
        assert!("foo".parse::<KeySpec>().is_err());
    }

    fn pkt(header: &[u8]) -> PacketInfo<'_> {
        PacketInfo {
            ts_ns: 0,
            ip_len: 100,
            src: [10, 0, 0, 1],
            dst: [192, 168, 1, 2],
            proto: 6,
            sport: 0x1234,
            dport: 80,
            header,
            l4_offset: 20,
        }
    }

    #[test]
    fn named_key_bytes_follow_opp_sim_record() {
        let p = pkt(&[]);
        assert_eq!(KeySpec::Global.bytes(&p).as_slice(), b"1");
        assert_eq!(
            KeySpec::FiveTuple.bytes(&p).as_slice(),
            &[10, 0, 0, 1, 192, 168, 1, 2, b'T', 0, 0x34, 0x12, 80, 0]
        );
        assert_eq!(KeySpec::IpDst.bytes(&p).as_slice(), &[192, 168, 1, 2]);
        assert_eq!(KeySpec::IpDst16.bytes(&p).as_slice(), &[192, 168]);
        assert_eq!(
            KeySpec::IpSrcIpDst.bytes(&p).as_slice(),
            &[10, 0, 0, 1, 192, 168, 1, 2]
        );
    }

    #[test]
    fn byte_ranges_read_header_and_pad_with_zero() {
        let mut h = vec![0u8; 24];
        h[12..16].copy_from_slice(&[1, 2, 3, 4]);
        h[20..24].copy_from_slice(&[9, 8, 7, 6]);
        let p = pkt(&h);
        let k: KeySpec = "bytes:ip[12..14]+l4[2..6]".parse().unwrap();
        assert_eq!(k.bytes(&p).as_slice(), &[1, 2, 7, 6, 0, 0]);
    }

    #[test]
    fn interner_is_dense() {
        let mut i = Interner::default();
        assert_eq!(i.id(b"a"), 0);
        assert_eq!(i.id(b"b"), 1);
        assert_eq!(i.id(b"a"), 0);
        assert_eq!(i.len(), 2);
    }
}
