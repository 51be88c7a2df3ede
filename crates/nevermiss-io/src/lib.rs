//! Packet input/output for nevermiss: packets and batches, pcap/pcapng files, ports (pcap files,
//! in-memory queues, the built-in generator, null, network interfaces), the two-phase
//! key-cycling traffic generator, p4c's STF test format and its expectation matcher, and
//! per-port counters.
//!
//! Ports in floors, imports pointing down only: [`port`] (the [`Port`] trait, naming no
//! implementation) and [`iface`] (what interface ports need of the kernel) at the bottom; the
//! ports themselves above them ([`local`]: inside the process; [`afpacket`], [`afxdp`]:
//! interface back ends); [`spec`] (the command line's `--port`, which opens any of them) on top.
//!
//! See `docs/io.md` for the command-line port syntax and the design decisions.

#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
// unsafe: the kernel's socket, mmap'd rings and ioctls.
#[allow(unsafe_code)]
pub mod afpacket;
// unsafe: libxdp loaded at run time, UMEM and rings shared with the kernel.
#[allow(unsafe_code)]
pub mod afxdp;
pub mod expect;
pub mod gen;
pub mod headers;
// unsafe: poll(2) on the ports' sockets.
#[allow(unsafe_code)]
pub mod idle;
// unsafe: ioctls and sysfs-free kernel queries on interfaces.
#[allow(unsafe_code)]
pub mod iface;
pub mod local;
// unsafe: the packet buffer's uninitialised headroom.
#[allow(unsafe_code)]
pub mod packet;
pub mod pcap;
pub mod port;
pub mod rss;
pub mod spec;
pub mod stats;
pub mod stf;
pub mod units;

pub use expect::{Expectation, Expectations, Mismatch};
pub use gen::{KeyCycle, KeyEvent, KeyField, KeyKind, TwoPhaseConfig, TwoPhaseGen, TwoPhaseKeys};
pub use idle::{IdleWait, Polling};
pub use local::{CapturePort, GenPort, NullPort, PcapPort, QueueHandle, QueuePort};
pub use packet::{Batch, Packet, BATCH_MAX, DEFAULT_HEADROOM};
pub use pcap::{PcapError, PcapReader, PcapWriter};
pub use port::{Port, PortError};
pub use rss::{Rss, RssError, RssField};
pub use spec::{parse_port_specs, Backend, PortKind, PortSpec, SpecError};
pub use stats::{PortStats, StatsSnapshot, StatsTable};
pub use stf::{
    parse_stf, stf_header_options, ExpectPattern, KeyValue, Statement, StfCommand, StfError,
};
pub use units::{parse_duration_ns, DurationError};
