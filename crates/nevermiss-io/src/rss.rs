//! Receive-side scaling in software: spreads packets over worker queues by a hash of header
//! fields, the way a NIC's RSS does (Microsoft RSS specification: Toeplitz hash over the selected
//! fields, low 7 bits of the hash index a 128-entry indirection table of queue numbers).
//!
//! Guarantees: the queue of a packet is a pure function of the selected fields' bytes, so all
//! packets of a flow (same field values) reach the same worker, in their order of arrival; a
//! packet without any of the selected fields (not IP, truncated, garbage) goes to queue 0. Frames
//! are parsed as Ethernet with at most one 802.1Q/802.1ad tag, then IPv4 (options skipped) or
//! IPv6 (no extension headers), then the TCP/UDP/SCTP ports of an unfragmented packet; raw byte
//! ranges (`@OFFSET:LEN`) hash any header the program defines.

use std::fmt;

use crate::headers::layers;
use crate::packet::Packet;

/// The Toeplitz key most NICs ship as their default (the RSS specification's verification key).
pub const DEFAULT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Entries of the indirection table (as most NICs).
pub const RETA_SIZE: usize = 128;

/// Longest hash input: the key must cover it plus 4 bytes.
pub const MAX_INPUT: usize = DEFAULT_KEY.len() - 4;

/// A header field RSS can hash. A field a frame does not have (wholly) is left out of that
/// frame's hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RssField {
    /// The Ethernet destination address (6 bytes).
    EthDst,
    /// The Ethernet source address (6 bytes).
    EthSrc,
    /// The (innermost) EtherType (2 bytes).
    EthType,
    /// The IPv4 source address (4 bytes); left out of the hash of other packets.
    Ipv4Src,
    /// The IPv4 destination address (4 bytes); left out of the hash of other packets.
    Ipv4Dst,
    /// The IPv4 protocol (1 byte); left out of the hash of other packets.
    Ipv4Proto,
    /// The IPv6 source address (16 bytes); left out of the hash of other packets.
    Ipv6Src,
    /// The IPv6 destination address (16 bytes); left out of the hash of other packets.
    Ipv6Dst,
    /// The TCP/UDP/SCTP source port (2 bytes); left out of the hash of fragments and other protocols.
    L4Src,
    /// The TCP/UDP/SCTP destination port (2 bytes); left out of the hash of fragments and other protocols.
    L4Dst,
    /// `len` bytes at `offset` from the start of the frame.
    Bytes {
        /// Byte offset from the start of the frame.
        offset: usize,
        /// Bytes hashed; a frame that does not hold all of them leaves the field out of its hash.
        len: usize,
    },
}

impl RssField {
    fn parse(s: &str) -> Result<RssField, RssError> {
        Ok(match s {
            "eth.dst" => RssField::EthDst,
            "eth.src" => RssField::EthSrc,
            "eth.type" => RssField::EthType,
            "ipv4.src" => RssField::Ipv4Src,
            "ipv4.dst" => RssField::Ipv4Dst,
            "ipv4.proto" => RssField::Ipv4Proto,
            "ipv6.src" => RssField::Ipv6Src,
            "ipv6.dst" => RssField::Ipv6Dst,
            "l4.src" => RssField::L4Src,
            "l4.dst" => RssField::L4Dst,
            _ => {
                if let Some(r) = s.strip_prefix('@') {
                    let range = |kind| RssError::ByteRange {
                        field: s.to_string(),
                        kind,
                    };
                    let (o, l) = r.split_once(':').ok_or_else(|| range(RangeError::Form))?;
                    let offset: usize = o
                        .parse()
                        .map_err(|_| range(RangeError::Offset(o.to_string())))?;
                    let len: usize = l
                        .parse()
                        .map_err(|_| range(RangeError::Length(l.to_string())))?;
                    if len == 0 || len > MAX_INPUT || offset > 65_535 {
                        return Err(range(RangeError::Bounds));
                    }
                    RssField::Bytes { offset, len }
                } else {
                    return Err(RssError::UnknownField(s.to_string()));
                }
            }
        })
    }

    fn width(self) -> usize {
        match self {
            RssField::EthDst | RssField::EthSrc => 6,
            RssField::EthType | RssField::L4Src | RssField::L4Dst => 2,
            RssField::Ipv4Src | RssField::Ipv4Dst => 4,
            RssField::Ipv4Proto => 1,
            RssField::Ipv6Src | RssField::Ipv6Dst => 16,
            RssField::Bytes { len, .. } => len,
        }
    }
}

/// A bad RSS configuration (`--rss`): one variant per rule it breaks, its message made in
/// [`Display`](fmt::Display).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RssError {
    /// A field name that is none of [`RssField`]'s and not `@OFFSET:LEN`.
    UnknownField(String),
    /// A byte range `field` (`@…`) that is malformed or out of bounds.
    ByteRange {
        /// The range as given, with its `@`.
        field: String,
        /// What is wrong with it.
        kind: RangeError,
    },
    /// An empty field list.
    NoFields,
    /// Fields a packet could carry at once covering `bytes` bytes, more than the hash key
    /// covers ([`MAX_INPUT`]).
    TooLong {
        /// Their length in bytes.
        bytes: usize,
    },
}

/// What is wrong with an `@OFFSET:LEN` byte range ([`RssError::ByteRange`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeError {
    /// Not of the form `@OFFSET:LEN`.
    Form,
    /// The offset (as given) is not a number.
    Offset(String),
    /// The length (as given) is not a number.
    Length(String),
    /// A length outside 1..=[`MAX_INPUT`] or an offset over 65535.
    Bounds,
}

impl fmt::Display for RssError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RssError::UnknownField(s) => write!(
                f,
                "unknown rss field `{s}` (eth.dst, eth.src, eth.type, ipv4.src, ipv4.dst, \
                 ipv4.proto, ipv6.src, ipv6.dst, l4.src, l4.dst, @OFFSET:LEN)"
            ),
            RssError::ByteRange { field, kind } => {
                write!(f, "`{field}`: ")?;
                match kind {
                    RangeError::Form => write!(f, "a byte range is @OFFSET:LEN"),
                    RangeError::Offset(o) => write!(f, "`{o}` is not an offset"),
                    RangeError::Length(l) => write!(f, "`{l}` is not a length"),
                    RangeError::Bounds => {
                        write!(f, "length must be 1..={MAX_INPUT} and offset at most 65535")
                    }
                }
            }
            RssError::NoFields => f.write_str("no rss fields given"),
            RssError::TooLong { bytes } => write!(
                f,
                "rss fields cover {bytes} bytes; the hash key covers at most {MAX_INPUT}"
            ),
        }
    }
}

impl std::error::Error for RssError {}

/// Software RSS: which of `n` workers a packet goes to.
#[derive(Clone, Debug)]
pub struct Rss {
    fields: Vec<RssField>,
    /// `table[i][b]`: the Toeplitz contribution of byte value `b` at input position `i`.
    table: Vec<[u32; 256]>,
}

impl Default for Rss {
    /// The usual NIC default for IP traffic: source and destination addresses and L4 ports.
    fn default() -> Rss {
        Rss::new(vec![
            RssField::Ipv4Src,
            RssField::Ipv4Dst,
            RssField::Ipv6Src,
            RssField::Ipv6Dst,
            RssField::L4Src,
            RssField::L4Dst,
        ])
        .expect("the default fields fit the key")
    }
}

impl Rss {
    /// RSS over `fields` (in this order) with [`DEFAULT_KEY`]. Fails when the fields a packet
    /// could carry at once are longer than the key covers ([`MAX_INPUT`] bytes).
    pub fn new(fields: Vec<RssField>) -> Result<Rss, RssError> {
        if fields.is_empty() {
            return Err(RssError::NoFields);
        }
        // IPv4 and IPv6 fields never occur together: count the larger family.
        let (mut v4, mut v6, mut other) = (0, 0, 0);
        for f in &fields {
            match f {
                RssField::Ipv4Src | RssField::Ipv4Dst | RssField::Ipv4Proto => v4 += f.width(),
                RssField::Ipv6Src | RssField::Ipv6Dst => v6 += f.width(),
                _ => other += f.width(),
            }
        }
        let max = other + v4.max(v6);
        if max > MAX_INPUT {
            return Err(RssError::TooLong { bytes: max });
        }
        let key = DEFAULT_KEY;
        let mut table = vec![[0u32; 256]; max];
        for (i, row) in table.iter_mut().enumerate() {
            // The 32-bit key window starting at each bit of input byte i.
            let mut windows = [0u32; 8];
            for (bit, w) in windows.iter_mut().enumerate() {
                let start = i * 8 + bit;
                let mut v = 0u32;
                for k in 0..32 {
                    let kb = start + k;
                    let set = (key[kb / 8] >> (7 - kb % 8)) & 1;
                    v = (v << 1) | u32::from(set);
                }
                *w = v;
            }
            for (b, out) in row.iter_mut().enumerate() {
                let mut h = 0u32;
                for (bit, w) in windows.iter().enumerate() {
                    if b & (0x80 >> bit) != 0 {
                        h ^= w;
                    }
                }
                *out = h;
            }
        }
        Ok(Rss { fields, table })
    }

    /// Parses a comma-separated field list (`ipv4.src,ipv4.dst,l4.src,l4.dst`, `@30:4`, ...);
    /// `default` is [`Rss::default`].
    pub fn parse(spec: &str) -> Result<Rss, RssError> {
        let spec = spec.trim();
        if spec == "default" {
            return Ok(Rss::default());
        }
        let fields = spec
            .split(',')
            .map(|s| RssField::parse(s.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        Rss::new(fields)
    }

    /// The fields hashed, in order.
    pub fn fields(&self) -> &[RssField] {
        &self.fields
    }

    /// The Toeplitz hash of the selected fields of `frame` (fields the frame lacks are left
    /// out), or `None` when it carries none of them.
    pub fn hash(&self, frame: &[u8]) -> Option<u32> {
        let l = layers(frame);
        let mut h = 0u32;
        let mut pos = 0usize;
        let mut any = false;
        for f in &self.fields {
            let at = match *f {
                RssField::EthDst => Some(0).filter(|_| l.eth_type.is_some()),
                RssField::EthSrc => Some(6).filter(|_| l.eth_type.is_some()),
                RssField::EthType => l.eth_type,
                RssField::Ipv4Src => l.ipv4.map(|o| o + 12),
                RssField::Ipv4Dst => l.ipv4.map(|o| o + 16),
                RssField::Ipv4Proto => l.ipv4.map(|o| o + 9),
                RssField::Ipv6Src => l.ipv6.map(|o| o + 8),
                RssField::Ipv6Dst => l.ipv6.map(|o| o + 24),
                RssField::L4Src => l.l4,
                RssField::L4Dst => l.l4.map(|o| o + 2),
                RssField::Bytes { offset, .. } => Some(offset),
            };
            let w = f.width();
            let Some(bytes) = at.and_then(|a| frame.get(a..a + w)) else {
                continue;
            };
            for &b in bytes {
                h ^= self.table[pos][usize::from(b)];
                pos += 1;
            }
            any = true;
        }
        any.then_some(h)
    }

    /// The worker (0..n) of `frame`: indirection table entry `hash mod 128`, filled round
    /// robin with 0..n as NIC drivers do. `n == 0` is treated as 1.
    pub fn queue(&self, frame: &[u8], n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        match self.hash(frame) {
            Some(h) => (h as usize % RETA_SIZE) % n,
            None => 0,
        }
    }
}

/// Spreads `pkts` over `n` per-worker queues by [`Rss::queue`], keeping their order within each.
pub fn spread(pkts: Vec<Packet>, rss: &Rss, n: usize) -> Vec<Vec<Packet>> {
    let n = n.max(1);
    let mut out: Vec<Vec<Packet>> = (0..n)
        .map(|_| Vec::with_capacity(pkts.len() / n + 1))
        .collect();
    for p in pkts {
        let q = rss.queue(p.data(), n);
        out[q].push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, proto: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 9] = proto;
        f[26..30].copy_from_slice(&src);
        f[30..34].copy_from_slice(&dst);
        f[34..36].copy_from_slice(&sport.to_be_bytes());
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f
    }

    /// The RSS specification's IPv4 verification values for the default key.
    #[test]
    fn toeplitz_verification_vectors() {
        let both = Rss::parse("ipv4.src,ipv4.dst,l4.src,l4.dst").unwrap();
        let ip = Rss::parse("ipv4.src,ipv4.dst").unwrap();
        let cases = [
            (
                [66, 9, 149, 187],
                [161, 142, 100, 80],
                2794,
                1766,
                0x323e_8fc2,
                0x51cc_c178,
            ),
            (
                [199, 92, 111, 2],
                [65, 69, 140, 83],
                14230,
                4739,
                0xd718_262a,
                0xc626_b0ea,
            ),
        ];
        for (s, d, sp, dp, h_ip, h_l4) in cases {
            let f = ipv4_udp(s, d, sp, dp, 6);
            assert_eq!(ip.hash(&f), Some(h_ip));
            assert_eq!(both.hash(&f), Some(h_l4));
            // The default config hashes the same bytes for IPv4/TCP.
            assert_eq!(Rss::default().hash(&f), Some(h_l4));
        }
    }

    #[test]
    fn flows_stay_together_and_spread_evenly() {
        let rss = Rss::default();
        let mut counts = [0usize; 2];
        for i in 0..10_000u32 {
            let f = ipv4_udp([10, 0, 0, 1], i.to_be_bytes(), 1000, 2000, 17);
            let q = rss.queue(&f, 2);
            assert_eq!(q, rss.queue(&f, 2));
            counts[q] += 1;
        }
        assert!(counts[0] > 4_000 && counts[1] > 4_000, "{counts:?}");
    }

    #[test]
    fn fragments_and_non_ip_and_garbage() {
        let rss = Rss::default();
        let mut frag = ipv4_udp([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, 17);
        frag[20] = 0x20; // more fragments
        let ip_only = Rss::parse("ipv4.src,ipv4.dst").unwrap();
        assert_eq!(rss.hash(&frag), ip_only.hash(&frag));
        let arp = {
            let mut f = vec![0u8; 60];
            f[12] = 0x08;
            f[13] = 0x06;
            f
        };
        assert_eq!(rss.hash(&arp), None);
        assert_eq!(rss.queue(&arp, 4), 0);
        for len in 0..64 {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let q = rss.queue(&junk, 3);
            assert!(q < 3);
        }
    }

    #[test]
    fn byte_ranges_and_vlan() {
        let rss = Rss::parse("@30:4").unwrap();
        let a = ipv4_udp([1, 1, 1, 1], [9, 9, 9, 9], 1, 2, 17);
        let b = ipv4_udp([2, 2, 2, 2], [9, 9, 9, 9], 3, 4, 17);
        assert_eq!(rss.hash(&a), rss.hash(&b));
        assert_eq!(rss.hash(&a[..31]), None);
        let mut tagged = a[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        tagged.extend_from_slice(&a[12..]);
        assert_eq!(Rss::default().hash(&tagged), Rss::default().hash(&a));
    }

    #[test]
    fn bad_specs() {
        for s in [
            "",
            "ipv5.src",
            "@1",
            "@x:2",
            "@1:0",
            "@1:99",
            "ipv6.src,ipv6.dst,eth.dst,eth.src",
        ] {
            assert!(Rss::parse(s).is_err(), "{s}");
        }
        assert!(Rss::parse(" default ").is_ok());
    }

    /// The messages, word for word as they were when the error was a string.
    #[test]
    fn error_messages() {
        for (s, want) in [
            (
                "ipv5.src",
                "unknown rss field `ipv5.src` (eth.dst, eth.src, eth.type, ipv4.src, ipv4.dst, \
                 ipv4.proto, ipv6.src, ipv6.dst, l4.src, l4.dst, @OFFSET:LEN)",
            ),
            ("@1", "`@1`: a byte range is @OFFSET:LEN"),
            ("@x:2", "`@x:2`: `x` is not an offset"),
            ("@1:y", "`@1:y`: `y` is not a length"),
            (
                "@1:0",
                "`@1:0`: length must be 1..=36 and offset at most 65535",
            ),
            (
                "ipv6.src,ipv6.dst,eth.dst,eth.src",
                "rss fields cover 44 bytes; the hash key covers at most 36",
            ),
        ] {
            assert_eq!(Rss::parse(s).unwrap_err().to_string(), want, "{s}");
        }
        assert_eq!(
            Rss::new(Vec::new()).unwrap_err().to_string(),
            "no rss fields given"
        );
    }

    #[test]
    fn spread_keeps_order() {
        let rss = Rss::default();
        let pkts: Vec<Packet> = (0..100u32)
            .map(|i| {
                Packet::from_bytes(
                    &ipv4_udp([1, 0, 0, 1], [0, 0, 0, (i % 7) as u8], 5, 6, 17),
                    0,
                    u64::from(i),
                )
            })
            .collect();
        let qs = spread(pkts, &rss, 3);
        assert_eq!(qs.iter().map(Vec::len).sum::<usize>(), 100);
        for q in &qs {
            assert!(q.windows(2).all(|w| w[0].ts_ns < w[1].ts_ns));
        }
    }
}
