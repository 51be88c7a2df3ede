//! Packet input/output for nevermiss: packets and batches, pcap/pcapng files, ports (pcap files,
//! in-memory queues, the built-in generator, null), the two-phase key-cycling traffic generator,
//! p4c's STF test format and its expectation matcher, and per-port counters.
//!
//! See `docs/io.md` for the command-line port syntax and the design decisions.

pub mod afpacket;
pub mod afxdp;
pub mod expect;
pub mod gen;
pub mod headers;
pub mod idle;
pub mod packet;
pub mod pcap;
pub mod port;
pub mod rss;
pub mod stats;
pub mod stf;
pub mod units;

pub use expect::{Expectation, Expectations, Mismatch};
pub use gen::{KeyCycle, KeyEvent, KeyField, KeyKind, TwoPhaseConfig, TwoPhaseGen, TwoPhaseKeys};
pub use idle::{IdleWait, Polling};
pub use packet::{Batch, Packet, BATCH_MAX, DEFAULT_HEADROOM};
pub use pcap::{PcapError, PcapReader, PcapWriter};
pub use port::{
    GenPort, NullPort, PcapPort, Port, PortError, PortKind, PortSpec, QueueHandle, QueuePort,
    SpecError,
};
pub use rss::{Rss, RssError, RssField};
pub use stats::{PortStats, StatsSnapshot, StatsTable};
pub use stf::{
    parse_stf, stf_header_options, ExpectPattern, KeyValue, Statement, StfCommand, StfError,
};
pub use units::parse_duration_ns;
