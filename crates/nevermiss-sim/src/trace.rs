//! Traces in memory: per kept packet its IP length, timestamp and one digest column per flow key.

use crate::keys::{Interner, KeySpec};
use crate::packet::{decode, PacketInfo, ReadStats};
use crate::synth::SynthSpec;
use crate::SimError;
use nevermiss_io::pcap::{PcapError, PcapReader};
use serde::Serialize;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "crc16" | "crc" => Ok(HashMode::Crc16),
            "exact" => Ok(HashMode::Exact),
            _ => Err(format!("unknown hash mode `{s}` (expected crc16 or exact)")),
        }
    }
}

/// The digests of one flow key over a trace.
#[derive(Clone, Debug)]
pub struct KeyColumn {
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

/// Where a trace comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceSource {
    /// One capture file, or several merged by timestamp (like opp-sim's directions A and B).
    Files(Vec<PathBuf>),
    /// A synthetic trace.
    Synthetic(SynthSpec),
}

impl std::str::FromStr for TraceSource {
    type Err = String;

    /// `synthetic:key=value,...`, a capture path, or several paths joined by `+` to merge them
    /// by timestamp.
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(rest) = s.strip_prefix("synthetic:") {
            return Ok(TraceSource::Synthetic(rest.parse()?));
        }
        if s.is_empty() {
            return Err("empty trace path".into());
        }
        if Path::new(s).exists() || !s.contains('+') {
            return Ok(TraceSource::Files(vec![PathBuf::from(s)]));
        }
        Ok(TraceSource::Files(
            s.split('+').map(PathBuf::from).collect(),
        ))
    }
}

impl std::fmt::Display for TraceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceSource::Files(p) => {
                let v: Vec<String> = p.iter().map(|p| p.display().to_string()).collect();
                f.write_str(&v.join("+"))
            }
            TraceSource::Synthetic(s) => write!(f, "synthetic:{s}"),
        }
    }
}

impl TraceSource {
    /// Loads the trace computing the digests of `keys`.
    pub fn load(&self, keys: &[KeySpec], hash: HashMode) -> Result<Trace, SimError> {
        let name = self.to_string();
        match self {
            TraceSource::Synthetic(spec) => spec.generate(&name, keys, hash),
            TraceSource::Files(paths) => {
                if paths.len() == 1 {
                    return load_capture(&paths[0], &name, keys, hash);
                }
                if hash == HashMode::Exact {
                    // Exact ids are interned in merged order so that the parts share them.
                    return load_merged_exact(paths, &name, keys);
                }
                let mut parts = Vec::new();
                for p in paths {
                    parts.push(load_capture(p, &name, keys, HashMode::Crc16)?);
                }
                Ok(merge(parts, &name))
            }
        }
    }
}

/// Opens a capture with nevermiss-io's streaming reader (one reused frame buffer, 1 MiB reads).
fn open(path: &Path) -> Result<PcapReader<BufReader<File>>, SimError> {
    let f = File::open(path).map_err(|e| SimError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    PcapReader::new(BufReader::with_capacity(1 << 20, f)).map_err(|e| cap_err(path, e))
}

fn cap_err(path: &Path, e: PcapError) -> SimError {
    SimError::Capture {
        path: path.display().to_string(),
        error: e,
    }
}

/// Reads one capture file.
pub fn load_capture(
    path: &Path,
    name: &str,
    keys: &[KeySpec],
    hash: HashMode,
) -> Result<Trace, SimError> {
    let mut r = open(path)?;
    let mut b = TraceBuilder::new(name, keys, hash);
    loop {
        let frame = r.next_frame().map_err(|e| cap_err(path, e))?;
        let Some(f) = frame else { break };
        b.stats_mut().frames += 1;
        match decode(f.info.link_type, f.info.ts_ns, f.data) {
            Ok(p) => {
                b.stats_mut().kept += 1;
                b.push(&p);
            }
            Err(why) => b.stats_mut().skip(why),
        }
    }
    Ok(b.finish())
}

/// Merge order of several parts: by timestamp, earlier part first on ties (opp-sim takes A
/// when `ts_a <= ts_b`, reference A.2).
fn merge_order(parts: &[Vec<u64>]) -> Vec<(usize, usize)> {
    let mut idx = vec![0usize; parts.len()];
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = Vec::with_capacity(total);
    for _ in 0..total {
        let mut best: Option<usize> = None;
        for (i, p) in parts.iter().enumerate() {
            if idx[i] < p.len() && best.is_none_or(|b| p[idx[i]] < parts[b][idx[b]]) {
                best = Some(i);
            }
        }
        let b = best.expect("a part has packets left");
        out.push((b, idx[b]));
        idx[b] += 1;
    }
    out
}

fn merge(parts: Vec<Trace>, name: &str) -> Trace {
    let order = merge_order(&parts.iter().map(|t| t.ts_ns.clone()).collect::<Vec<_>>());
    let mut stats = ReadStats::default();
    for p in &parts {
        stats.add(&p.stats);
    }
    let keys = parts[0]
        .keys
        .iter()
        .enumerate()
        .map(|(k, c)| KeyColumn {
            spec: c.spec.clone(),
            crc: order
                .iter()
                .map(|&(p, i)| parts[p].keys[k].crc[i])
                .collect(),
            ids: None,
            distinct: 0,
        })
        .collect();
    Trace {
        name: name.to_string(),
        lens: order.iter().map(|&(p, i)| parts[p].lens[i]).collect(),
        ts_ns: order.iter().map(|&(p, i)| parts[p].ts_ns[i]).collect(),
        keys,
        stats,
    }
}

fn load_merged_exact(paths: &[PathBuf], name: &str, keys: &[KeySpec]) -> Result<Trace, SimError> {
    // Collect key bytes per part, then intern in merged order so ids are shared.
    struct Part {
        lens: Vec<u16>,
        ts: Vec<u64>,
        crc: Vec<Vec<u16>>,
        bytes: Vec<Vec<Box<[u8]>>>,
        stats: ReadStats,
    }
    let mut parts = Vec::new();
    for path in paths {
        let mut r = open(path)?;
        let mut part = Part {
            lens: Vec::new(),
            ts: Vec::new(),
            crc: vec![Vec::new(); keys.len()],
            bytes: vec![Vec::new(); keys.len()],
            stats: ReadStats::default(),
        };
        loop {
            let frame = r.next_frame().map_err(|e| cap_err(path, e))?;
            let Some(f) = frame else { break };
            part.stats.frames += 1;
            match decode(f.info.link_type, f.info.ts_ns, f.data) {
                Ok(p) => {
                    part.stats.kept += 1;
                    part.lens.push(p.ip_len);
                    part.ts.push(p.ts_ns);
                    for (k, spec) in keys.iter().enumerate() {
                        let kb = spec.bytes(&p);
                        part.crc[k].push(crate::keys::crc16_arc(kb.as_slice()));
                        part.bytes[k].push(kb.as_slice().into());
                    }
                }
                Err(why) => part.stats.skip(why),
            }
        }
        parts.push(part);
    }
    let order = merge_order(&parts.iter().map(|p| p.ts.clone()).collect::<Vec<_>>());
    let mut b = TraceBuilder::new(name, keys, HashMode::Exact);
    let mut digests = vec![(0u16, 0u32); keys.len()];
    for &(p, i) in &order {
        for (k, d) in digests.iter_mut().enumerate() {
            let id = b
                .interner(k)
                .expect("exact mode has interners")
                .id(&parts[p].bytes[k][i]);
            *d = (parts[p].crc[k][i], id);
        }
        b.push_digests(parts[p].lens[i], parts[p].ts[i], &digests);
    }
    for p in &parts {
        b.stats_mut().add(&p.stats);
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_prefers_first_part_on_ties() {
        let o = merge_order(&[vec![1, 3, 3], vec![0, 3, 5]]);
        assert_eq!(o, vec![(1, 0), (0, 0), (0, 1), (0, 2), (1, 1), (1, 2)]);
    }

    #[test]
    fn source_parsing() {
        assert_eq!(
            "a.pcap".parse::<TraceSource>().unwrap(),
            TraceSource::Files(vec!["a.pcap".into()])
        );
        assert_eq!(
            "a.pcap+b.pcap".parse::<TraceSource>().unwrap(),
            TraceSource::Files(vec!["a.pcap".into(), "b.pcap".into()])
        );
        assert!("synthetic:size=100,packets=10"
            .parse::<TraceSource>()
            .is_ok());
        assert!("synthetic:bogus=1".parse::<TraceSource>().is_err());
    }
}
