//! Built-in traffic generator: the two-phase key-cycling workload of Simon et al.,
//! "On-the-fly Table Insertions on Programmable Software Data Planes", §V.c.
//!
//! The workload: the lookup key of packet *i* cycles pseudo-randomly through `[0, m)` with period
//! exactly `m` (every key once per cycle). Phase 1 is the first `m` packets, each carrying a key
//! the table has not seen (an insertion with add-on-miss). Phase 2 is every later packet: it carries
//! the next key of the same cycle (a lookup), except that every `r`-th packet of phase 2 carries a
//! *new* key (an insertion during regular operation). New keys come from `[m, 2m)`, each used
//! once, in a pseudo-random order of its own; should more than `m` be needed they continue with
//! `[2m, 3m)`, `[3m, 4m)`, … (the paper's runs never need that). `r = 0` means no new keys.
//!
//! Frames: the paper's packets are "84 B without CRC", i.e. 84 bytes as software sees them
//! (the NIC adds the 4-byte FCS; 88 B frame + 20 B preamble/SFD/inter-frame gap = 108 B of wire
//! time each). The default frame is 84 bytes: Ethernet (14) + IPv4 (20) + UDP (8) + 42 zero bytes
//! of payload, with a valid IPv4 header checksum and UDP checksum 0 (none).
//!
//! Guarantees: [`KeyCycle`] is a permutation of `[0, m)` repeated forever, for every `m ≥ 1` and
//! seed; the whole stream is a pure function of the configuration (same seed, same packets);
//! [`TwoPhaseGen::fill`] allocates nothing once the batch's buffers have been sized.

use std::fmt;

use crate::packet::{Batch, Packet};

/// Error in a generator configuration: one variant per rule it breaks, its message made in
/// [`Display`](fmt::Display) (lowercase, naming the option or value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    /// [`KeyCycle::new`]'s range `m` outside `1..=2^63`.
    KeyRange(u64),
    /// A key field that is neither one of [`NAMED_FIELDS`] nor `OFFSET:WIDTH`.
    UnknownKeyField(String),
    /// The offset or width (`part`) of an `OFFSET:WIDTH` key field is not a number (`text`).
    KeyFieldNumber {
        /// `"offset"` or `"width"`.
        part: &'static str,
        /// What was given.
        text: String,
    },
    /// A key field width outside 1..=8 bytes.
    KeyFieldWidth(u64),
    /// [`TwoPhaseConfig::m`] outside `1..=2^62`.
    M(u64),
    /// A frame size outside [`MIN_FRAME_LEN`]`..=`[`MAX_FRAME_LEN`] bytes.
    FrameSize(usize),
    /// The key field at bytes `start..end` does not fit in a `frame_len`-byte frame.
    FieldOutsideFrame {
        /// First byte of the field.
        start: usize,
        /// One past its last byte.
        end: usize,
        /// The frame's size in bytes.
        frame_len: usize,
    },
    /// The key field overlaps the IPv4 header checksum, which the generator computes.
    FieldOverlapsChecksum,
    /// `flows` is 0.
    NoFlows,
    /// `flows > 1` with a key field overlapping the IPv4 source address the flows vary.
    FlowsOverlapField,
    /// The largest key the configuration uses does not fit in the key field's `width` bytes.
    KeyTooWide {
        /// The largest key.
        max: u128,
        /// The field's width in bytes.
        width: usize,
    },
    /// A `gen:` spec naming a generator other than `two-phase`.
    UnknownGenerator(String),
    /// A `gen:` option that is not `KEY=VALUE`.
    NotKeyValue(String),
    /// A numeric `gen:` option (`key`) whose value (`text`) is not a number.
    OptionNumber {
        /// The option.
        key: String,
        /// Its value as given.
        text: String,
    },
    /// A `flows=` value beyond `u32`.
    FlowsTooLarge(String),
    /// A `gen:` option the generator does not have.
    UnknownOption(String),
}

/// How a number that did not parse is described ([`parse_u64`]'s syntax).
const NOT_A_NUMBER: &str = "is not a number (decimal or 0x hex, up to 2^64-1)";

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::KeyRange(m) => write!(f, "key range m={m} must be in 1..=2^63"),
            GenError::UnknownKeyField(s) => {
                let names: Vec<&str> = NAMED_FIELDS.iter().map(|(n, _)| *n).collect();
                write!(
                    f,
                    "unknown key field `{s}`: expected one of {} or OFFSET:WIDTH in bytes",
                    names.join(", ")
                )
            }
            GenError::KeyFieldNumber { part, text } => {
                write!(f, "key field {part}: `{text}` {NOT_A_NUMBER}")
            }
            GenError::KeyFieldWidth(w) => write!(f, "key field width {w} must be 1..=8 bytes"),
            GenError::M(m) => write!(f, "m={m} must be in 1..=2^62"),
            GenError::FrameSize(n) => write!(
                f,
                "frame size {n} must be {MIN_FRAME_LEN}..={MAX_FRAME_LEN} bytes"
            ),
            GenError::FieldOutsideFrame {
                start,
                end,
                frame_len,
            } => write!(
                f,
                "key field at bytes {start}..{end} does not fit in a {frame_len}-byte frame"
            ),
            GenError::FieldOverlapsChecksum => f.write_str(
                "key field overlaps the IPv4 header checksum (bytes 24..26), which the generator computes",
            ),
            GenError::NoFlows => f.write_str("flows must be at least 1"),
            GenError::FlowsOverlapField => f.write_str(
                "flows > 1 varies the IPv4 source address, which overlaps the key field",
            ),
            GenError::KeyTooWide { max, width } => {
                write!(f, "largest key {max} does not fit in a {width}-byte field")
            }
            GenError::UnknownGenerator(kind) => {
                write!(f, "unknown generator `{kind}`: expected `two-phase`")
            }
            GenError::NotKeyValue(part) => write!(f, "generator option `{part}` is not KEY=VALUE"),
            GenError::OptionNumber { key, text } => {
                write!(f, "generator option `{key}`: `{text}` {NOT_A_NUMBER}")
            }
            GenError::FlowsTooLarge(v) => write!(f, "flows={v} is too large"),
            GenError::UnknownOption(k) => write!(
                f,
                "unknown generator option `{k}`: expected m, r, count, field, seed, size, flows or ipg_ns"
            ),
        }
    }
}

impl std::error::Error for GenError {}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A pseudo-random cycle through `[0, m)` with period exactly `m`.
///
/// How: a linear congruential generator modulo `2^k` (the least power of two ≥ m) with
/// multiplier ≡ 1 (mod 4) and odd increment has full period `2^k` (Hull–Dobell theorem); each
/// state goes through a bijection of `[0, 2^k)` (xorshift, odd multiply, xorshift) to hide the
/// LCG's weak low bits, and outputs ≥ m are skipped (cycle walking). One period of the state
/// visits every value of `[0, 2^k)` once, so every key of `[0, m)` comes exactly once per cycle.
/// At most `2^k − m < m` states are skipped per cycle, fewer than one per key on average.
#[derive(Clone, Debug)]
pub struct KeyCycle {
    m: u64,
    mask: u64,
    state: u64,
    a: u64,
    c: u64,
    mul: u64,
    s1: u32,
    s2: u32,
}

impl KeyCycle {
    /// A cycle through `[0, m)` determined by `seed`. `m` must be in `1..=2^63`.
    pub fn new(m: u64, seed: u64) -> Result<KeyCycle, GenError> {
        if m == 0 || m > 1 << 63 {
            return Err(GenError::KeyRange(m));
        }
        let k = 64 - (m - 1).leading_zeros(); // 2^k >= m, k = 0 for m = 1
        let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        let mut s = seed;
        let a = (splitmix64(&mut s) << 2) | 1; // ≡ 1 (mod 4)
        let c = splitmix64(&mut s) | 1;
        let mul = splitmix64(&mut s) | 1;
        let state = splitmix64(&mut s) & mask;
        Ok(KeyCycle {
            m,
            mask,
            state,
            a,
            c,
            mul,
            s1: (k / 2).max(1),
            s2: (k / 3).max(1),
        })
    }

    /// The size of the key range.
    pub fn m(&self) -> u64 {
        self.m
    }

    #[inline(always)]
    fn mix(&self, mut x: u64) -> u64 {
        x ^= x >> self.s1;
        x = x.wrapping_mul(self.mul) & self.mask;
        x ^= x >> self.s2;
        x
    }

    /// The next key.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        loop {
            self.state = self.a.wrapping_mul(self.state).wrapping_add(self.c) & self.mask;
            let x = self.mix(self.state);
            if x < self.m {
                return x;
            }
        }
    }
}

/// Where the key goes in the frame: `width` bytes (1..=8), big-endian, at byte `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyField {
    /// Byte offset from the start of the Ethernet header.
    pub offset: usize,
    /// Width in bytes, 1..=8.
    pub width: usize,
}

/// Named fields of the generated Ethernet/IPv4/UDP frame and their locations.
pub const NAMED_FIELDS: &[(&str, KeyField)] = &[
    (
        "eth.dst",
        KeyField {
            offset: 0,
            width: 6,
        },
    ),
    (
        "eth.src",
        KeyField {
            offset: 6,
            width: 6,
        },
    ),
    (
        "eth.type",
        KeyField {
            offset: 12,
            width: 2,
        },
    ),
    (
        "ipv4.id",
        KeyField {
            offset: 18,
            width: 2,
        },
    ),
    (
        "ipv4.src",
        KeyField {
            offset: 26,
            width: 4,
        },
    ),
    (
        "ipv4.dst",
        KeyField {
            offset: 30,
            width: 4,
        },
    ),
    (
        "udp.sport",
        KeyField {
            offset: 34,
            width: 2,
        },
    ),
    (
        "udp.dport",
        KeyField {
            offset: 36,
            width: 2,
        },
    ),
    (
        "payload",
        KeyField {
            offset: 42,
            width: 8,
        },
    ),
];

impl KeyField {
    /// Parses a named field (see [`NAMED_FIELDS`]) or `OFFSET:WIDTH` in bytes, e.g. `30:4`.
    pub fn parse(s: &str) -> Result<KeyField, GenError> {
        if let Some((_, f)) = NAMED_FIELDS.iter().find(|(n, _)| *n == s) {
            return Ok(*f);
        }
        let Some((o, w)) = s.split_once(':') else {
            return Err(GenError::UnknownKeyField(s.to_string()));
        };
        let number = |part, text: &str| {
            parse_u64(text).ok_or_else(|| GenError::KeyFieldNumber {
                part,
                text: text.to_string(),
            })
        };
        let offset = number("offset", o)?;
        let width = number("width", w)?;
        if !(1..=8).contains(&width) {
            return Err(GenError::KeyFieldWidth(width));
        }
        Ok(KeyField {
            offset: usize::try_from(offset).unwrap_or(usize::MAX),
            width: width as usize,
        })
    }

    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.offset < end && start < self.offset + self.width
    }
}

/// Parses a decimal or `0x` hexadecimal unsigned number; `_` separators are allowed.
fn parse_u64(s: &str) -> Option<u64> {
    let t: String = s.chars().filter(|&c| c != '_').collect();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.ok()
}

/// What a generated packet does to a table that inserts on a miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// Phase 1: first use of a key of `[0, m)`.
    Insert,
    /// Phase 2: a key of `[0, m)` seen before.
    Lookup,
    /// Phase 2, every `r`-th packet: a key never seen before (from `[m, 2m)`, …).
    NewKey,
}

/// One packet's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyEvent {
    /// Packet number, from 0.
    pub index: u64,
    /// The key written into the frame.
    pub key: u64,
    /// What it does.
    pub kind: KeyKind,
}

/// Configuration of the two-phase workload. Defaults follow the paper where it says (84-byte
/// frames) and are otherwise arbitrary but fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoPhaseConfig {
    /// Number of distinct keys in phase 1 (keys `[0, m)`).
    pub m: u64,
    /// Every `r`-th packet of phase 2 carries a new key; 0 = never.
    pub r: u64,
    /// Total packets (both phases).
    pub count: u64,
    /// Where the key goes.
    pub field: KeyField,
    /// Seed of the key orders.
    pub seed: u64,
    /// Frame length in bytes, without FCS (≥ 42).
    pub frame_len: usize,
    /// Number of flows: the IPv4 source address cycles through `10.0.0.1 ..= 10.0.0.flows`
    /// (the paper used 300 flows "alternating the source IP address"); 1 = fixed source.
    pub flows: u32,
    /// Port number stamped on the packets.
    pub port: u32,
    /// Timestamp step: packet `i` gets `ts_ns = i * ipg_ns`.
    pub ipg_ns: u64,
}

impl Default for TwoPhaseConfig {
    fn default() -> TwoPhaseConfig {
        TwoPhaseConfig {
            m: 65_536,
            r: 0,
            count: 131_072,
            field: KeyField {
                offset: 30,
                width: 4,
            },
            seed: 1,
            frame_len: 84,
            flows: 1,
            port: 0,
            ipg_ns: 0,
        }
    }
}

/// Smallest frame: Ethernet + IPv4 + UDP headers.
pub const MIN_FRAME_LEN: usize = 42;
/// Largest frame the generator makes.
pub const MAX_FRAME_LEN: usize = 9_216;

impl TwoPhaseConfig {
    /// Checks that the configuration is usable: `m ≥ 1`, frame size, field inside the frame and
    /// clear of the IPv4 checksum, the largest key used fits the field, flows do not collide with
    /// the key field.
    pub fn validate(&self) -> Result<(), GenError> {
        if self.m == 0 || self.m > 1 << 62 {
            return Err(GenError::M(self.m));
        }
        if !(MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&self.frame_len) {
            return Err(GenError::FrameSize(self.frame_len));
        }
        if !(1..=8).contains(&self.field.width) {
            return Err(GenError::KeyFieldWidth(self.field.width as u64));
        }
        if self.field.offset.saturating_add(self.field.width) > self.frame_len {
            return Err(GenError::FieldOutsideFrame {
                start: self.field.offset,
                end: self.field.offset.saturating_add(self.field.width),
                frame_len: self.frame_len,
            });
        }
        if self.field.overlaps(24, 26) {
            return Err(GenError::FieldOverlapsChecksum);
        }
        if self.flows == 0 {
            return Err(GenError::NoFlows);
        }
        if self.flows > 1 && self.field.overlaps(26, 30) {
            return Err(GenError::FlowsOverlapField);
        }
        let max = u128::from(self.max_key());
        let bits = 8 * self.field.width as u32;
        if bits < 128 && max >> bits != 0 {
            return Err(GenError::KeyTooWide {
                max,
                width: self.field.width,
            });
        }
        Ok(())
    }

    /// Number of new keys phase 2 uses.
    pub fn new_keys(&self) -> u64 {
        if self.r == 0 || self.count <= self.m {
            0
        } else {
            (self.count - self.m) / self.r
        }
    }

    /// The largest key any packet carries (saturating at `u64::MAX`).
    pub fn max_key(&self) -> u64 {
        let n = self.new_keys();
        if n == 0 {
            return self.m.min(self.count.max(1)) - 1;
        }
        // The last new key lies in generation ceil(n/m): [g*m, (g+1)*m).
        let g = u128::from(n.div_ceil(self.m));
        let max = (g + 1) * u128::from(self.m) - 1;
        u64::try_from(max).unwrap_or(u64::MAX)
    }
}

/// The key sequence of the two-phase workload (without frames); see the module documentation.
#[derive(Clone, Debug)]
pub struct TwoPhaseKeys {
    m: u64,
    r: u64,
    count: u64,
    index: u64,
    /// Phase-2 packets left until the next new key.
    until_new: u64,
    lookup: KeyCycle,
    fresh: KeyCycle,
    fresh_used: u64,
}

impl TwoPhaseKeys {
    /// The key sequence of `cfg` (which should have passed [`TwoPhaseConfig::validate`]).
    pub fn new(cfg: &TwoPhaseConfig) -> Result<TwoPhaseKeys, GenError> {
        let lookup = KeyCycle::new(cfg.m, cfg.seed)?;
        let fresh = KeyCycle::new(cfg.m, cfg.seed ^ 0x5bd1_e995_0000_0001)?;
        Ok(TwoPhaseKeys {
            m: cfg.m,
            r: cfg.r,
            count: cfg.count,
            index: 0,
            until_new: cfg.r,
            lookup,
            fresh,
            fresh_used: 0,
        })
    }

    /// Packets not yet produced.
    pub fn remaining(&self) -> u64 {
        self.count - self.index
    }

    #[inline(always)]
    fn next_event(&mut self) -> KeyEvent {
        let index = self.index;
        self.index += 1;
        if index < self.m {
            return KeyEvent {
                index,
                key: self.lookup.next(),
                kind: KeyKind::Insert,
            };
        }
        if self.r != 0 {
            self.until_new -= 1;
            if self.until_new == 0 {
                self.until_new = self.r;
                let generation = self.fresh_used / self.m + 1;
                self.fresh_used += 1;
                let key = generation
                    .wrapping_mul(self.m)
                    .wrapping_add(self.fresh.next());
                return KeyEvent {
                    index,
                    key,
                    kind: KeyKind::NewKey,
                };
            }
        }
        KeyEvent {
            index,
            key: self.lookup.next(),
            kind: KeyKind::Lookup,
        }
    }
}

impl Iterator for TwoPhaseKeys {
    type Item = KeyEvent;
    fn next(&mut self) -> Option<KeyEvent> {
        if self.index >= self.count {
            return None;
        }
        Some(self.next_event())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// Generates the two-phase workload's frames into batches.
#[derive(Clone, Debug)]
pub struct TwoPhaseGen {
    cfg: TwoPhaseConfig,
    keys: TwoPhaseKeys,
    template: Vec<u8>,
    /// The key field or the flows touch the IPv4 header: update its checksum per packet.
    fix_ipv4_csum: bool,
    /// One's complement sum (unfolded) of the template's IPv4 header words, with the checksum,
    /// the key bytes and (with flows) the source address counted as zero.
    csum_base: u64,
    /// Per key byte (most significant first): its weight in the header sum (256 at an even header
    /// offset, 1 at an odd one, 0 outside the header).
    key_weight: [u64; 8],
}

/// IPv4 header checksum of a 20-byte header (RFC 791; the checksum field itself is skipped).
#[inline(always)]
fn ipv4_checksum(h: &[u8]) -> u16 {
    let w = |i: usize| u64::from(u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]));
    // Words 0..5 as 32-bit big-endian halves; bytes 10..12 (the checksum) masked out.
    let mut sum = w(0) + w(4) + (w(8) & 0xffff_0000) + w(12) + w(16);
    sum = (sum & 0xffff_ffff) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    !(sum as u16)
}

/// Writes the low `w` bytes of `key` big-endian at `d[off..off + w]`.
#[inline(always)]
fn put_key(d: &mut [u8], off: usize, w: usize, key: u64) {
    let b = key.to_be_bytes();
    match w {
        2 => d[off..off + 2].copy_from_slice(&b[6..]),
        4 => d[off..off + 4].copy_from_slice(&b[4..]),
        6 => d[off..off + 6].copy_from_slice(&b[2..]),
        8 => d[off..off + 8].copy_from_slice(&b),
        _ => d[off..off + w].copy_from_slice(&b[8 - w..]),
    }
}

impl TwoPhaseGen {
    /// A generator for `cfg`; fails if the configuration does not validate.
    pub fn new(cfg: TwoPhaseConfig) -> Result<TwoPhaseGen, GenError> {
        cfg.validate()?;
        let keys = TwoPhaseKeys::new(&cfg)?;
        let n = cfg.frame_len;
        let mut t = vec![0u8; n];
        t[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]); // dst: locally administered
        t[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
        t[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        t[14] = 0x45;
        t[16..18].copy_from_slice(&((n - 14) as u16).to_be_bytes());
        t[22] = 64; // ttl
        t[23] = 17; // udp
        t[26..30].copy_from_slice(&[10, 0, 0, 1]);
        t[30..34].copy_from_slice(&[10, 0, 1, 1]);
        t[34..36].copy_from_slice(&1024u16.to_be_bytes());
        t[36..38].copy_from_slice(&4791u16.to_be_bytes());
        t[38..40].copy_from_slice(&((n - 34) as u16).to_be_bytes());
        let c = ipv4_checksum(&t[14..34]);
        t[24..26].copy_from_slice(&c.to_be_bytes());
        let fix_ipv4_csum = cfg.field.overlaps(14, 34) || cfg.flows > 1;
        let mut zeroed = t.clone();
        zeroed[24..26].fill(0);
        let (off, w) = (cfg.field.offset, cfg.field.width);
        zeroed[off..off + w].fill(0);
        if cfg.flows > 1 {
            zeroed[26..30].fill(0);
        }
        let csum_base = zeroed[14..34]
            .chunks_exact(2)
            .map(|c| u64::from(u16::from_be_bytes([c[0], c[1]])))
            .sum();
        let mut key_weight = [0u64; 8];
        for (i, kw) in key_weight.iter_mut().enumerate().take(w) {
            let pos = off + i;
            if (14..34).contains(&pos) {
                *kw = if (pos - 14) % 2 == 0 { 256 } else { 1 };
            }
        }
        Ok(TwoPhaseGen {
            cfg,
            keys,
            template: t,
            fix_ipv4_csum,
            csum_base,
            key_weight,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TwoPhaseConfig {
        &self.cfg
    }

    /// The frame every packet starts from (before the key is written).
    pub fn template(&self) -> &[u8] {
        &self.template
    }

    /// Packets not yet generated.
    pub fn remaining(&self) -> u64 {
        self.keys.remaining()
    }

    /// True when every packet has been generated.
    pub fn is_done(&self) -> bool {
        self.keys.remaining() == 0
    }

    /// Appends packets to `batch` until it is full or the workload is done; returns how many.
    #[inline]
    pub fn fill(&mut self, batch: &mut Batch) -> usize {
        let n = (batch.free() as u64).min(self.keys.remaining()) as usize;
        for _ in 0..n {
            let ev = self.keys.next_event();
            let Some(p) = batch.push_slot_raw() else {
                break;
            };
            self.write_frame(p, &ev);
        }
        n
    }

    #[inline(always)]
    fn write_frame(&self, p: &mut Packet, ev: &KeyEvent) {
        let off = self.cfg.field.offset;
        let w = self.cfg.field.width;
        p.set_data(&self.template);
        p.port = self.cfg.port;
        p.ts_ns = ev.index.wrapping_mul(self.cfg.ipg_ns);
        let d = p.data_mut();
        put_key(d, off, w, ev.key);
        if self.fix_ipv4_csum {
            // Incremental: the template's sum plus the varying bytes, without reading the frame
            // back (which would stall on store forwarding).
            let mut sum = self.csum_base;
            let kb = ev.key.to_be_bytes();
            for i in 0..w {
                sum += u64::from(kb[8 - w + i]) * self.key_weight[i];
            }
            if self.cfg.flows > 1 {
                let host = 1 + (ev.index % u64::from(self.cfg.flows)) as u32;
                let src = 0x0a00_0000u32.wrapping_add(host);
                d[26..30].copy_from_slice(&src.to_be_bytes());
                sum += u64::from(src >> 16) + u64::from(src & 0xffff);
            }
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            sum = (sum & 0xffff) + (sum >> 16);
            d[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        }
    }

    /// The frame of one key event (as [`TwoPhaseGen::fill`] makes it), for tests and tools.
    pub fn frame_for(&self, ev: &KeyEvent) -> Packet {
        let mut p = Packet::new();
        self.write_frame(&mut p, ev);
        p
    }
}

/// Parses the option list of a `gen:` port spec (after `gen:`), e.g.
/// `two-phase,m=65536,r=100,count=1000000,field=ipv4.dst`. Keys: `m`, `r`, `count`, `field`
/// (name or `OFFSET:WIDTH`), `seed`, `size` (frame bytes), `flows`, `ipg_ns`.
/// Unset keys take [`TwoPhaseConfig::default`] values, except that `count` defaults to `2*m`.
pub fn parse_gen_spec(spec: &str, port: u32) -> Result<TwoPhaseConfig, GenError> {
    parse_gen_spec_at(spec, port).map_err(|(_, e)| e)
}

/// [`parse_gen_spec`], with the 0-based character offset in `spec` of the option an error is
/// about (0 for errors about the whole configuration), for messages that point at it.
pub fn parse_gen_spec_at(spec: &str, port: u32) -> Result<TwoPhaseConfig, (usize, GenError)> {
    // (character offset, text) of each comma-separated part.
    let mut parts = Vec::new();
    let mut at = 0;
    for p in spec.split(',') {
        let lead = p.chars().take_while(|c| c.is_whitespace()).count();
        parts.push((at + lead, p.trim()));
        at += p.chars().count() + 1;
    }
    let (kind_at, kind) = parts[0];
    if kind != "two-phase" {
        return Err((kind_at, GenError::UnknownGenerator(kind.to_string())));
    }
    let mut cfg = TwoPhaseConfig {
        port,
        ..TwoPhaseConfig::default()
    };
    let mut count = None;
    for &(at, part) in &parts[1..] {
        if part.is_empty() {
            continue;
        }
        let fail = |e: GenError| (at, e);
        let Some((k, v)) = part.split_once('=') else {
            return Err(fail(GenError::NotKeyValue(part.to_string())));
        };
        let num = || {
            parse_u64(v).ok_or_else(|| {
                fail(GenError::OptionNumber {
                    key: k.to_string(),
                    text: v.to_string(),
                })
            })
        };
        match k {
            "m" => cfg.m = num()?,
            "r" => cfg.r = num()?,
            "count" => count = Some(num()?),
            "seed" => cfg.seed = num()?,
            "ipg_ns" => cfg.ipg_ns = num()?,
            "size" => cfg.frame_len = usize::try_from(num()?).unwrap_or(usize::MAX),
            "flows" => {
                cfg.flows = u32::try_from(num()?)
                    .map_err(|_| fail(GenError::FlowsTooLarge(v.to_string())))?
            }
            "field" => cfg.field = KeyField::parse(v).map_err(|e| (at, e))?,
            _ => return Err(fail(GenError::UnknownOption(k.to_string()))),
        }
    }
    cfg.count = count.unwrap_or_else(|| cfg.m.saturating_mul(2));
    cfg.validate().map_err(|e| (0, e))?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn check_full_period(m: u64, seed: u64) {
        let mut c = KeyCycle::new(m, seed).unwrap();
        for cycle in 0..3 {
            let mut seen = vec![false; m as usize];
            for _ in 0..m {
                let k = c.next();
                assert!(k < m, "key {k} out of range for m={m}");
                assert!(!seen[k as usize], "key {k} twice in cycle {cycle}, m={m}");
                seen[k as usize] = true;
            }
        }
    }

    #[test]
    fn key_cycle_full_period() {
        for m in [
            1, 2, 3, 4, 5, 7, 8, 10, 100, 255, 256, 257, 1000, 4097, 65_535, 65_536, 100_000,
        ] {
            for seed in [0, 1, 42, u64::MAX] {
                check_full_period(m, seed);
            }
        }
    }

    #[test]
    fn key_cycle_is_scrambled() {
        // Not the identity and different seeds differ.
        let a: Vec<u64> = {
            let mut c = KeyCycle::new(1000, 1).unwrap();
            (0..1000).map(|_| c.next()).collect()
        };
        let b: Vec<u64> = {
            let mut c = KeyCycle::new(1000, 2).unwrap();
            (0..1000).map(|_| c.next()).collect()
        };
        assert_ne!(a, b);
        let ascending = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 50, "{ascending} consecutive pairs");
        assert!(KeyCycle::new(0, 1).is_err());
    }

    #[test]
    fn two_phase_keys() {
        let cfg = TwoPhaseConfig {
            m: 1000,
            r: 7,
            count: 1000 + 7 * 1500 + 3,
            ..TwoPhaseConfig::default()
        };
        cfg.validate().unwrap();
        let ev: Vec<KeyEvent> = TwoPhaseKeys::new(&cfg).unwrap().collect();
        assert_eq!(ev.len() as u64, cfg.count);
        // Phase 1: every key of [0, m) exactly once, all inserts.
        let p1: HashSet<u64> = ev[..1000].iter().map(|e| e.key).collect();
        assert_eq!(p1.len(), 1000);
        assert!(ev[..1000]
            .iter()
            .all(|e| e.kind == KeyKind::Insert && e.key < 1000));
        // Phase 2: every 7th packet is new.
        for (j, e) in ev[1000..].iter().enumerate() {
            let new = (j + 1) % 7 == 0;
            assert_eq!(e.kind == KeyKind::NewKey, new, "phase-2 packet {j}");
            if new {
                assert!(e.key >= 1000);
            } else {
                assert!(e.key < 1000);
            }
        }
        // New keys: 1500 of them, each once: [1000,2000) fully, then 500 of [2000,3000).
        let fresh: Vec<u64> = ev
            .iter()
            .filter(|e| e.kind == KeyKind::NewKey)
            .map(|e| e.key)
            .collect();
        assert_eq!(fresh.len(), 1500);
        assert_eq!(fresh.iter().collect::<HashSet<_>>().len(), 1500);
        assert!(fresh[..1000].iter().all(|&k| (1000..2000).contains(&k)));
        assert!(fresh[1000..].iter().all(|&k| (2000..3000).contains(&k)));
        assert_eq!(cfg.new_keys(), 1500);
        assert_eq!(cfg.max_key(), 2999);
        // Lookups continue the same cycle: every window of m lookups covers [0, m).
        let lk: Vec<u64> = ev
            .iter()
            .filter(|e| e.kind == KeyKind::Lookup)
            .map(|e| e.key)
            .collect();
        assert_eq!(lk[..1000].iter().collect::<HashSet<_>>().len(), 1000);
        assert_eq!(
            &lk[..100],
            &ev[..100].iter().map(|e| e.key).collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn checksum_reference() {
        // RFC 1071 style reference: 16-bit one's complement sum.
        let h: [u8; 20] = [
            0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8,
            0, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&h), 0xb861);
        let mut all = [0xffu8; 20];
        all[10] = 0;
        all[11] = 0;
        let mut sum: u32 = 9 * 0xffff;
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(ipv4_checksum(&all), !(sum as u16));
    }

    #[test]
    fn frames() {
        let cfg = parse_gen_spec("two-phase,m=16,r=4,count=40,field=ipv4.dst,seed=9", 3).unwrap();
        let mut g = TwoPhaseGen::new(cfg.clone()).unwrap();
        let keys: Vec<KeyEvent> = TwoPhaseKeys::new(&cfg).unwrap().collect();
        let mut b = Batch::with_capacity(32);
        assert_eq!(g.fill(&mut b), 32);
        let mut got: Vec<Vec<u8>> = b.iter().map(|p| p.data().to_vec()).collect();
        b.clear();
        assert_eq!(g.fill(&mut b), 8);
        got.extend(b.iter().map(|p| p.data().to_vec()));
        assert!(g.is_done());
        b.clear();
        assert_eq!(g.fill(&mut b), 0);
        assert_eq!(got.len(), 40);
        for (f, e) in got.iter().zip(&keys) {
            assert_eq!(f.len(), 84);
            assert_eq!(
                u32::from_be_bytes([f[30], f[31], f[32], f[33]]) as u64,
                e.key
            );
            assert_eq!(
                ipv4_checksum(&f[14..34]),
                u16::from_be_bytes([f[24], f[25]])
            );
            assert_eq!(&f[..], g.frame_for(e).data());
        }
        assert_eq!(b.capacity(), 32);
    }

    #[test]
    fn checksum_valid_for_any_field_placement() {
        for off in 10..40 {
            for w in 1..=8 {
                for flows in [1, 5] {
                    let cfg = TwoPhaseConfig {
                        m: 300,
                        r: 3,
                        count: 700,
                        field: KeyField {
                            offset: off,
                            width: w,
                        },
                        flows,
                        seed: off as u64,
                        ..TwoPhaseConfig::default()
                    };
                    if cfg.validate().is_err() {
                        continue;
                    }
                    let mut g = TwoPhaseGen::new(cfg).unwrap();
                    let mut b = Batch::new();
                    while g.fill(&mut b) > 0 {
                        for p in &b {
                            let d = p.data();
                            assert_eq!(
                                ipv4_checksum(&d[14..34]),
                                u16::from_be_bytes([d[24], d[25]]),
                                "field {off}:{w} flows {flows}"
                            );
                        }
                        b.clear();
                    }
                }
            }
        }
    }

    #[test]
    fn flows_vary_source() {
        let cfg = parse_gen_spec("two-phase,m=4,count=8,flows=3,field=udp.dport", 0).unwrap();
        let mut g = TwoPhaseGen::new(cfg).unwrap();
        let mut b = Batch::new();
        g.fill(&mut b);
        let srcs: Vec<u8> = b.iter().map(|p| p.data()[29]).collect();
        assert_eq!(srcs, vec![1, 2, 3, 1, 2, 3, 1, 2]);
        for p in &b {
            let d = p.data();
            assert_eq!(
                ipv4_checksum(&d[14..34]),
                u16::from_be_bytes([d[24], d[25]])
            );
        }
    }

    #[test]
    fn spec_errors() {
        for (s, want) in [
            ("three-phase", "unknown generator"),
            ("two-phase,m", "not KEY=VALUE"),
            ("two-phase,q=1", "unknown generator option"),
            ("two-phase,m=abc", "not a number"),
            ("two-phase,m=0", "m=0"),
            ("two-phase,m=70000,field=eth.type", "does not fit"),
            (
                "two-phase,m=60000,r=1,count=200000,field=udp.dport",
                "does not fit",
            ),
            ("two-phase,field=9:9", "width"),
            ("two-phase,field=80:8", "does not fit in a 84-byte frame"),
            ("two-phase,size=20", "frame size"),
            ("two-phase,flows=2,field=ipv4.src", "overlaps"),
            ("two-phase,field=nope", "unknown key field"),
            ("two-phase,field=22:4", "checksum"),
        ] {
            let e = parse_gen_spec(s, 0).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        // Whole messages, as they were when the error was a string.
        for (s, want) in [
            (
                "two-phase,m=abc",
                "generator option `m`: `abc` is not a number (decimal or 0x hex, up to 2^64-1)",
            ),
            (
                "two-phase,field=x:4",
                "key field offset: `x` is not a number (decimal or 0x hex, up to 2^64-1)",
            ),
            ("two-phase,bogus", "generator option `bogus` is not KEY=VALUE"),
            (
                "three-phase,m=1",
                "unknown generator `three-phase`: expected `two-phase`",
            ),
            ("two-phase,flows=5000000000", "flows=5000000000 is too large"),
            (
                "two-phase,x=1",
                "unknown generator option `x`: expected m, r, count, field, seed, size, flows or ipg_ns",
            ),
            ("two-phase,flows=0", "flows must be at least 1"),
            ("two-phase,m=0", "m=0 must be in 1..=2^62"),
            ("two-phase,field=9:9", "key field width 9 must be 1..=8 bytes"),
        ] {
            assert_eq!(parse_gen_spec(s, 0).unwrap_err().to_string(), want, "{s}");
        }
        assert_eq!(
            parse_gen_spec_at("two-phase, m=1, x=1", 0).unwrap_err().0,
            16,
            "the offset of the option an error is about"
        );
        let c = parse_gen_spec("two-phase,m=0x10,r=1_0,field=42:2,size=128", 0).unwrap();
        assert_eq!((c.m, c.r, c.count, c.frame_len), (16, 10, 32, 128));
        assert_eq!(
            c.field,
            KeyField {
                offset: 42,
                width: 2
            }
        );
    }
}
