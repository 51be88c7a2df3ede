//! What the engine and front-end comparison tests share (each test binary uses a part).
#![allow(dead_code)]

use nevermiss_runtime::{build, Config, Engine, Switch};
use p4_front::driver::Options;
use p4_ir::ir::{ExternKind, MatchKind};
use p4_ir::{Arch, Program};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A switch running `path` on `engine`: port 1 a host port of PNA programs, no insert-path
/// warming (so both engines see exactly the same packets); `Err` if the program does not load.
pub fn switch(path: &Path, engine: Engine) -> Result<Arc<Switch>, String> {
    let prog = nevermiss_runtime::load(path, &Options::default())?;
    let host_ports = if matches!(prog.arch, Arch::PnaV06 | Arch::PnaV07) {
        vec![1]
    } else {
        Vec::new()
    };
    let config = Config {
        host_ports,
        engine,
        warm_insert_every: 0,
        ..Config::default()
    };
    build(path, &Options::default(), config)
}

/// The P4 source of a BMv2 JSON fixture `tests/bmv2-json/NAME.json` (tests/bmv2-json/README.md):
/// `examples/NAME.p4`, or `tests/stf/NAME.p4` for the STF regression programs; its STF test
/// is beside it.
pub fn json_fixture_source(json: &Path) -> PathBuf {
    let root = json.ancestors().nth(3).unwrap_or(Path::new("."));
    let name = json.with_extension("p4");
    let name = name.file_name().unwrap_or_default();
    let example = root.join("examples").join(name);
    if example.is_file() {
        example
    } else {
        root.join("tests/stf").join(name)
    }
}

/// The control-plane lines of an STF test (packets come from the test that uses them).
pub fn setup_of(stf: &str) -> String {
    stf.lines()
        .filter(|l| {
            let w = l.split_whitespace().next().unwrap_or("");
            !matches!(w, "packet" | "expect" | "wait" | "")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// STF `add` lines of random entries for the tables whose keys are exact, lpm or ternary.
pub fn random_entries(prog: &Program, seed: u64) -> String {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut lines = Vec::new();
    for t in &prog.tables {
        if t.entries_const || t.keys.is_empty() {
            continue;
        }
        let kinds_ok = t.keys.iter().all(|k| {
            matches!(
                k.kind,
                MatchKind::Exact | MatchKind::Lpm | MatchKind::Ternary
            )
        });
        let actions: Vec<_> = t.actions.iter().filter(|a| !a.default_only).collect();
        if !kinds_ok || actions.is_empty() || t.implementation.is_some() {
            continue;
        }
        let ternary = t.keys.iter().any(|k| k.kind == MatchKind::Ternary);
        for _ in 0..(next() % 4) {
            let mut line = format!("add {}", t.name);
            if ternary {
                line += &format!(" {}", 1 + next() % 100);
            }
            for k in &t.keys {
                let w = k.expr.ty().width.clamp(1, 64);
                let m = if w == 64 { u64::MAX } else { (1 << w) - 1 };
                // Small values too, so that generated packets hit them.
                let v = if next() % 2 == 0 { next() % 8 } else { next() } & m;
                match k.kind {
                    MatchKind::Lpm => {
                        line += &format!(" {}:{v}/{}", k.name, next() % u64::from(w + 1))
                    }
                    MatchKind::Ternary => line += &format!(" {}:{v}&&&{}", k.name, next() & m),
                    _ => line += &format!(" {}:{v}", k.name),
                }
            }
            let a = actions[(next() % actions.len() as u64) as usize];
            let params: Vec<String> = a
                .params
                .iter()
                .map(|p| {
                    let w = p.ty.width.clamp(1, 64);
                    let m = if w == 64 { u64::MAX } else { (1 << w) - 1 };
                    format!("{}:{}", p.name, (next() % 8) & m)
                })
                .collect();
            line += &format!(" {}({})", a.name, params.join(", "));
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// Everything the control plane can read back, minus what depends on the switch's own clock
/// (`elapsed_ns`) or slot placement (`handle`).
pub fn state(sw: &Switch) -> Vec<String> {
    let prog = sw.prog();
    let mut out = Vec::new();
    for (t, td) in prog.tables.iter().enumerate() {
        let mut rows: Vec<String> = sw
            .read_entries(t as u32)
            .unwrap_or_default()
            .into_iter()
            .map(|e| {
                format!(
                    "{:?} {:?} {:?} {:?} {}",
                    e.key, e.action, e.metadata, e.counter, e.from_data_plane
                )
            })
            .collect();
        rows.sort();
        out.push(format!("table {}: {rows:?}", td.name));
        // Hits and misses: the compiled engine counts the hits it matches in its own code
        // (`const` entries) as the table's lookups count theirs.
        if let Some(t) = sw.table(t as u32) {
            let st = t.stats();
            out.push(format!(
                "stats {}: hits {} misses {}",
                td.name, st.hits, st.misses
            ));
        }
    }
    for (x, xd) in prog.externs.iter().enumerate() {
        let x = x as u32;
        match &xd.kind {
            ExternKind::Counter { size, .. } => {
                let cells: Vec<_> = (0..*size).map(|i| sw.read_counter(x, i).ok()).collect();
                out.push(format!("counter {}: {cells:?}", xd.name));
            }
            ExternKind::Register { size, .. } => {
                let cells: Vec<_> = (0..*size.min(&4096))
                    .map(|i| sw.read_register(x, i).ok())
                    .collect();
                out.push(format!("register {}: {cells:?}", xd.name));
            }
            _ => {}
        }
    }
    let digests: Vec<String> = sw.take_digests().iter().map(|d| format!("{d:?}")).collect();
    out.push(format!("digests: {digests:?}"));
    out
}

/// Frames that get past the parsers of the examples: Ethernet/IPv4/UDP or TCP with a payload,
/// then corrupted at a few places.
pub fn frame(tcp: bool, src: u32, dst: u32, flips: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    let proto = if tcp { 6 } else { 17 };
    f.extend_from_slice(&[0x45, 0, 0, 46, 0, 1, 0, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&src.to_be_bytes());
    f.extend_from_slice(&dst.to_be_bytes());
    if tcp {
        f.extend_from_slice(&[
            0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
        ]);
    } else {
        f.extend_from_slice(&[0x30, 0x39, 0x00, 0x50, 0, 26, 0, 0]);
    }
    f.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8]);
    for &(i, b) in flips {
        if let Some(x) = f.get_mut(i % 64) {
            *x ^= b;
        }
    }
    f.truncate(f.len().saturating_sub(cut));
    f
}

#[derive(Clone, Debug)]
pub enum Pkt {
    Bytes(Vec<u8>),
    Frame {
        tcp: bool,
        src: u32,
        dst: u32,
        flips: Vec<(usize, u8)>,
        cut: usize,
    },
}

impl Pkt {
    /// The packet's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Pkt::Bytes(b) => b.clone(),
            Pkt::Frame {
                tcp,
                src,
                dst,
                flips,
                cut,
            } => frame(*tcp, *src, *dst, flips, *cut),
        }
    }
}

pub fn pkt() -> impl Strategy<Value = (Pkt, u32)> {
    let bytes = proptest::collection::vec(any::<u8>(), 0..128).prop_map(Pkt::Bytes);
    let framed = (
        any::<bool>(),
        0u32..6,
        0u32..6,
        proptest::collection::vec((0usize..64, any::<u8>()), 0..3),
        prop_oneof![3 => Just(0usize), 1 => 0usize..70],
    )
        .prop_map(|(tcp, s, d, flips, cut)| Pkt::Frame {
            tcp,
            src: 0x0a00_0000 | s,
            dst: 0x0a00_0000 | d,
            flips,
            cut,
        });
    (prop_oneof![1 => bytes, 4 => framed], 0u32..4)
}
