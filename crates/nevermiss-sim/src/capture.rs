//! Traces read from capture files (pcap/pcapng, nevermiss-io's streaming reader), one file or
//! several merged by timestamp (reference A.2).

use crate::keys::KeySpec;
use crate::packet::{decode, ReadStats};
use crate::trace::{HashMode, KeyColumn, Trace, TraceBuilder};
use crate::SimError;
use nevermiss_io::pcap::{PcapError, PcapReader};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Loads one capture file, or several merged by timestamp.
pub fn load_files(
    paths: &[PathBuf],
    name: &str,
    keys: &[KeySpec],
    hash: HashMode,
) -> Result<Trace, SimError> {
    if paths.len() == 1 {
        return load_capture(&paths[0], name, keys, hash);
    }
    if hash == HashMode::Exact {
        // Exact ids are interned in merged order so that the parts share them.
        return load_merged_exact(paths, name, keys);
    }
    let mut parts = Vec::new();
    for p in paths {
        parts.push(load_capture(p, name, keys, HashMode::Crc16)?);
    }
    Ok(merge(parts, name))
}

/// Opens a capture with nevermiss-io's streaming reader (one reused frame buffer, 1 MiB reads).
fn open(path: &Path) -> Result<PcapReader<BufReader<File>>, SimError> {
    let f = File::open(path).map_err(|e| SimError::io(path, e))?;
    PcapReader::new(BufReader::with_capacity(1 << 20, f)).map_err(|e| cap_err(path, e))
}

fn cap_err(path: &Path, e: PcapError) -> SimError {
    SimError::Capture {
        path: path.to_path_buf(),
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
}
