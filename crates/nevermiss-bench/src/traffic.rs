//! The packets of a component bench's runs: the built-in two-phase generator (a `gen:` port's
//! spec) or the frames of a capture file, read into memory once and replayed by every run.

use crate::error::BenchError;
use crate::throughput::Workload;
use nevermiss_io::rss::{spread, Rss};
use nevermiss_io::{Batch, Packet, PcapReader, TwoPhaseConfig, TwoPhaseGen};
use std::path::Path;
use std::sync::Arc;

/// Where a run's packets come from.
#[derive(Clone)]
pub enum Traffic {
    /// The two-phase generator (docs/io.md), generated afresh for every run.
    Gen(TwoPhaseConfig),
    /// Frames of a capture file, in file order, each with the port it names (0 in a pcap).
    Packets(Arc<Vec<Packet>>),
}

impl Traffic {
    /// Every frame of the pcap or pcapng file at `path`; an unreadable, malformed or truncated
    /// file (the message names the byte offset) or one without a packet is an error.
    pub fn from_pcap(path: &Path) -> Result<Traffic, BenchError> {
        let err = |error: String| BenchError::Pcap {
            path: path.to_path_buf(),
            error,
        };
        let mut r = PcapReader::open(path).map_err(|e| err(e.to_string()))?;
        let mut all = Vec::new();
        loop {
            let mut p = Packet::new();
            match r.next_packet(&mut p).map_err(|e| err(e.to_string()))? {
                Some(_) => all.push(p),
                None => break,
            }
        }
        if all.is_empty() {
            return Err(err("no packet in the file".into()));
        }
        Ok(Traffic::Packets(Arc::new(all)))
    }

    /// Calls `f` with every packet of one run, in order (batches of the generator, reused).
    pub fn for_each(&self, mut f: impl FnMut(&Packet)) -> Result<(), BenchError> {
        match self {
            Traffic::Gen(cfg) => {
                let mut gen = TwoPhaseGen::new(cfg.clone())?;
                let mut batch = Batch::with_capacity(nevermiss_io::BATCH_MAX);
                while !gen.is_done() {
                    batch.clear();
                    gen.fill(&mut batch);
                    batch.iter().for_each(&mut f);
                }
            }
            Traffic::Packets(v) => v.iter().for_each(f),
        }
        Ok(())
    }

    /// One throughput run's packets spread over `cores` queues by software RSS: the generator's
    /// two phases timed apart, a capture's frames as one phase.
    pub fn workload(&self, cores: usize) -> Result<Workload, BenchError> {
        match self {
            Traffic::Gen(cfg) => Workload::generate(cfg, cores),
            Traffic::Packets(v) => Ok(Workload {
                phase1: vec![Vec::new(); cores],
                phase2: spread(v.to_vec(), &Rss::default(), cores),
            }),
        }
    }
}

impl std::fmt::Debug for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Traffic::Gen(cfg) => f.debug_tuple("Gen").field(cfg).finish(),
            Traffic::Packets(v) => write!(f, "Packets({} frames)", v.len()),
        }
    }
}
