//! Traces in memory: per kept packet its IP length, timestamp and one digest column per flow key.

use crate::error::ParseError;
use crate::keys::{Interner, KeySpec};
use crate::packet::{PacketInfo, ReadStats};
use serde::Serialize;

/// How keys are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Default)]
pub enum HashMode {
    /// Compare CRC-16/ARC digests, collisions included, as opp-sim does (reference A.5).
    #[default]
    Crc16,
    /// Compare the key bytes themselves (hazard detector only; the locking scheme always hashes).
    Exact,
}

impl std::str::FromStr for HashMode {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s.to_ascii_lowercase().as_str() {
            "crc16" | "crc" => Ok(HashMode::Crc16),
            "exact" => Ok(HashMode::Exact),
            _ => Err(ParseError::UnknownHashMode(s.to_string())),
        }
    }
}

/// The digests of one flow key over a trace.
#[derive(Clone, Debug)]
pub struct KeyColumn {
    /// The key.
    pub spec: KeySpec,
    /// CRC-16/ARC of each packet's key.
    pub crc: Vec<u16>,
    /// Dense ids of each packet's key bytes, when exact comparison was asked for.
    pub ids: Option<Vec<u32>>,
    /// Number of distinct ids (0 without `ids`).
    pub distinct: usize,
}

/// A trace loaded for simulation.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Label (the source string).
    pub name: String,
    /// IPv4 total length of every kept packet.
    pub lens: Vec<u16>,
    /// Timestamp of every kept packet in nanoseconds.
    pub ts_ns: Vec<u64>,
    /// One column per requested key, in request order.
    pub keys: Vec<KeyColumn>,
    /// Frames read and skipped.
    pub stats: ReadStats,
}

impl Trace {
    /// Number of packets.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// True when no packet was kept.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The column of `key`.
    pub fn column(&self, key: &KeySpec) -> Option<&KeyColumn> {
        self.keys.iter().find(|c| &c.spec == key)
    }
}

/// Builds a trace packet by packet.
pub struct TraceBuilder {
    trace: Trace,
    interners: Vec<Option<Interner>>,
}

impl TraceBuilder {
    /// An empty trace with one column per key.
    pub fn new(name: &str, keys: &[KeySpec], hash: HashMode) -> Self {
        let exact = hash == HashMode::Exact;
        TraceBuilder {
            trace: Trace {
                name: name.to_string(),
                lens: Vec::new(),
                ts_ns: Vec::new(),
                keys: keys
                    .iter()
                    .map(|k| KeyColumn {
                        spec: k.clone(),
                        crc: Vec::new(),
                        ids: exact.then(Vec::new),
                        distinct: 0,
                    })
                    .collect(),
                stats: ReadStats::default(),
            },
            interners: keys.iter().map(|_| exact.then(Interner::default)).collect(),
        }
    }

    /// Appends a decoded packet, computing every key.
    pub fn push(&mut self, p: &PacketInfo<'_>) {
        self.trace.lens.push(p.ip_len);
        self.trace.ts_ns.push(p.ts_ns);
        for (col, int) in self.trace.keys.iter_mut().zip(self.interners.iter_mut()) {
            let kb = col.spec.bytes(p);
            col.crc.push(crate::keys::crc16_arc(kb.as_slice()));
            if let (Some(ids), Some(int)) = (col.ids.as_mut(), int.as_mut()) {
                ids.push(int.id(kb.as_slice()));
            }
        }
    }

    /// Appends a packet whose key digests are already known (one `(crc, id)` per key).
    pub fn push_digests(&mut self, ip_len: u16, ts_ns: u64, digests: &[(u16, u32)]) {
        self.trace.lens.push(ip_len);
        self.trace.ts_ns.push(ts_ns);
        for (col, &(crc, id)) in self.trace.keys.iter_mut().zip(digests) {
            col.crc.push(crc);
            if let Some(ids) = col.ids.as_mut() {
                ids.push(id);
            }
        }
    }

    /// Mutable access to the read counters.
    pub fn stats_mut(&mut self) -> &mut ReadStats {
        &mut self.trace.stats
    }

    /// The interner of key `i` (exact mode only).
    pub fn interner(&mut self, i: usize) -> Option<&mut Interner> {
        self.interners.get_mut(i).and_then(|x| x.as_mut())
    }

    /// The finished trace.
    pub fn finish(mut self) -> Trace {
        for (col, int) in self.trace.keys.iter_mut().zip(&self.interners) {
            col.distinct = int.as_ref().map_or(0, |i| i.len());
        }
        self.trace
    }
}
