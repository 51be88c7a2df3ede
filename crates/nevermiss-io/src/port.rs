//! The [`Port`] trait: where packets come from and go to, and [`PortError`]. This module names
//! no implementation: the ports inside the process are in [`crate::local`], the interface back
//! ends in [`crate::afpacket`] and [`crate::afxdp`], and [`crate::spec`] parses the command
//! line's `--port` and opens the right one.
//!
//! Guarantees: `rx_burst` only appends to the batch (never more than its free room) and stamps
//! every received packet with the port's number; every port counts what it receives and
//! transmits in its [`PortStats`].

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::gen::GenError;
use crate::packet::{Batch, Packet};
use crate::pcap::PcapError;
use crate::stats::PortStats;

/// An error of a port.
#[derive(Debug)]
pub enum PortError {
    /// Reading the input capture failed.
    Pcap {
        /// The file.
        path: PathBuf,
        /// What went wrong, with the byte offset.
        error: PcapError,
    },
    /// An I/O error on a file.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// The generator's configuration was rejected.
    Gen(GenError),
    /// Anything else.
    Other(String),
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortError::Pcap { path, error } => write!(f, "{}: {error}", path.display()),
            PortError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            PortError::Gen(e) => write!(f, "generator: {e}"),
            PortError::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for PortError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PortError::Pcap { error, .. } => Some(error),
            PortError::Io { error, .. } => Some(error),
            PortError::Gen(e) => Some(e),
            PortError::Other(_) => None,
        }
    }
}

/// A packet source and sink.
pub trait Port: Send {
    /// The port's number.
    fn id(&self) -> u32;

    /// Appends up to `batch.free()` received packets to `batch`, each with `port` set to
    /// [`Port::id`]; returns how many. 0 means nothing is available now (see [`Port::rx_done`]).
    ///
    /// An input error (a truncated or corrupt capture) never takes the packets read before it
    /// with it: a burst that meets the error returns those complete packets, and the error comes
    /// from the next call; after it the port is done.
    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError>;

    /// True when the input is exhausted and will never yield another packet.
    fn rx_done(&self) -> bool;

    /// Transmits the packets (their `port` field is not looked at); returns how many were taken.
    /// Packets not taken are counted as dropped.
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError>;

    /// Writes out anything buffered.
    fn flush(&mut self) -> Result<(), PortError>;

    /// The port's counters.
    fn stats(&self) -> &Arc<PortStats>;

    /// A one-line description, e.g. `0=pcap:in.pcap,out.pcap`.
    fn describe(&self) -> String;

    /// Whether the port's link is up: interface ports ask the kernel (the interface is up and
    /// has carrier: `IFF_UP` and `IFF_RUNNING`, a system call, so callers poll it sparingly);
    /// every other port is always up. P4Runtime watch ports depend on it.
    fn link_up(&self) -> bool {
        true
    }

    /// Whether [`Port::tx`] may take fewer packets than it is given because the port is busy
    /// for now (an interface sending through its qdisc, which tc shaping holds back), so that
    /// what it did not take may be offered again later rather than being dropped. Egress
    /// queues wait behind such a port (`nevermiss_runtime::queues`); every other port takes
    /// what it can at once and counts the rest as dropped.
    fn can_block(&self) -> bool {
        false
    }

    /// Pushes the file descriptors that become readable (`poll(2)`, `POLLIN`) when this port
    /// may have a packet to receive, and returns true; false (the default) when the port
    /// cannot be waited on that way (an in-memory queue), so that an idle run loop sleeps in
    /// short steps instead ([`crate::idle::IdleWait`]). Interface ports push their sockets.
    fn wait_fds(&self, out: &mut Vec<std::os::fd::RawFd>) -> bool {
        let _ = out;
        false
    }
}

/// The bytes of `pkts`, for the counters.
pub(crate) fn bytes_of(pkts: &[Packet]) -> u64 {
    pkts.iter().map(|p| p.len() as u64).sum()
}
