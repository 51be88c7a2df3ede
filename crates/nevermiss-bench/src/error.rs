//! The benchmarks' errors: [`BenchError`], one variant per kind of failure, every message made
//! in its `Display`. Histogram logs have their own seam, [`crate::hdr::HdrError`], which the
//! CLI also uses.

use crate::hdr::HdrError;
use nevermiss_io::gen::GenError;
use nevermiss_runtime::run::RunError;
use nevermiss_runtime::BuildError;
use p4_ir::lower::source::SourceError;
use std::fmt;
use std::path::PathBuf;

/// Why a benchmark did not run or did not finish.
#[derive(Debug)]
pub enum BenchError {
    /// Options the benchmark does not take: a figure out of range or options in conflict.
    /// The text, made by the options' `validate` (or the run's own checks of its options),
    /// names the flag.
    Options(String),
    /// A name (of a scenario, a variant) the benchmark does not know.
    Unknown {
        /// What was named: `scenario`, `variant`.
        what: &'static str,
        /// The name given.
        name: String,
        /// The names it knows, for the message.
        known: &'static str,
    },
    /// A program file that does not exist.
    NoSuchFile(PathBuf),
    /// P4 source that did not compile or lower (its diagnostics).
    Source(SourceError),
    /// A program of which no switch could be built.
    Switch {
        /// The program's file.
        path: PathBuf,
        /// Why.
        error: BuildError,
    },
    /// The caller's builder of the component benchmark's switches failed (its message).
    Build(Box<dyn std::error::Error + Send + Sync>),
    /// An add-on-miss run inserted no entry: the program does not key its add-on-miss table on
    /// the field the generator varies.
    NoInserts(PathBuf),
    /// A packet of the learning benchmark applied no table.
    NoTableApplied {
        /// The packet's number within its flow.
        packet: u64,
        /// The flow.
        flow: u32,
    },
    /// A histogram or its interval log (`--hdr-dir`).
    Hdr(HdrError),
    /// The per-packet samples file (`--samples`) could not be written.
    Samples {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The traffic generator refused its configuration.
    Gen(GenError),
    /// A capture file of traffic (`--pcap`) could not be read: missing, malformed or truncated
    /// (the reader's message names the byte offset), or holding no packet.
    Pcap {
        /// The file.
        path: PathBuf,
        /// Why.
        error: String,
    },
    /// A file of component models (`--models`, the lab's `models.json`) could not be read.
    Models {
        /// The file.
        path: PathBuf,
        /// Why.
        error: String,
    },
    /// A run of the switch failed (pinning, workers, ports).
    Run(RunError),
    /// A thread of the benchmark panicked (a bug); `what` names it.
    Panicked(&'static str),
    /// An async task of the benchmark failed (panicked or was cancelled); `what` names it.
    Task {
        /// The task (`traffic`, `controller`, ...); `None` for a Write in flight.
        what: Option<&'static str>,
        /// Why.
        error: tokio::task::JoinError,
    },
    /// The async runtime or the P4Runtime server's socket could not be set up.
    Io(std::io::Error),
    /// The P4Runtime client could not connect.
    Connect(tonic::transport::Error),
    /// The stream channel could not be opened.
    Stream(tonic::Status),
    /// The server did not answer the client's arbitration.
    ArbitrationFailed,
    /// The stream channel's request side is closed.
    StreamClosed,
    /// The server closed the stream channel while the controller listened.
    ServerClosedStream,
    /// An RPC failed: `call` names it, the status's message says why.
    Rpc {
        /// The RPC (`SetForwardingPipelineConfig`, `Write`).
        call: &'static str,
        /// The server's status.
        status: tonic::Status,
    },
    /// A Write refused without per-update errors for each update.
    WriteRefused(tonic::Status),
    /// The channel could not take a Write.
    NotReady(tonic::transport::Error),
    /// The server has no pipeline where the benchmark set one.
    NoPipeline,
    /// A name the benchmark's program should have is not in its P4Info.
    NotInP4Info(String),
    /// Broken invariant or a machine limit the benchmark cannot work around; the text says
    /// which.
    Internal(&'static str),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BenchError as E;
        match self {
            E::Options(text) => f.write_str(text),
            E::Unknown { what, name, known } => write!(f, "unknown {what} `{name}` ({known})"),
            E::NoSuchFile(p) => write!(f, "{}: no such file", p.display()),
            E::Source(e) => write!(f, "{e}"),
            E::Switch { path, error } => write!(f, "{}: error: {error}", path.display()),
            E::Build(e) => write!(f, "{e}"),
            E::NoInserts(p) => write!(
                f,
                "{}: the run inserted no entry: the add-on-miss table must be keyed on ipv4.dst, \
                 the field the generator varies",
                p.display()
            ),
            E::NoTableApplied { packet, flow } => write!(
                f,
                "packet {packet} of flow {flow} applied no table: the program does not key on \
                 the IPv4 destination of the generated packets"
            ),
            E::Hdr(e) => write!(f, "{e}"),
            E::Samples { path, error } => write!(f, "--samples {}: {error}", path.display()),
            E::Gen(e) => write!(f, "{e}"),
            E::Pcap { path, error } => write!(f, "--pcap {}: {error}", path.display()),
            E::Models { path, error } => write!(f, "--models {}: {error}", path.display()),
            E::Run(e) => write!(f, "{e}"),
            E::Panicked(what) => write!(f, "{what} panicked"),
            E::Task {
                what: Some(what),
                error,
            } => write!(f, "{what}: {error}"),
            E::Task { what: None, error } => write!(f, "{error}"),
            E::Io(e) => write!(f, "{e}"),
            E::Connect(e) => write!(f, "connect: {e}"),
            E::Stream(status) => write!(f, "{status}"),
            E::ArbitrationFailed => f.write_str("arbitration failed"),
            E::StreamClosed => f.write_str("the stream channel is closed"),
            E::ServerClosedStream => f.write_str("the server closed the stream channel"),
            E::Rpc { call, status } => write!(f, "{call}: {}", status.message()),
            E::WriteRefused(status) => write!(f, "Write refused: {}", status.message()),
            E::NotReady(e) => write!(f, "Write: the channel is not ready: {e}"),
            E::NoPipeline => f.write_str("no pipeline"),
            E::NotInP4Info(name) => write!(f, "{name} is not in the P4Info"),
            E::Internal(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        use BenchError as E;
        match self {
            E::Source(e) => Some(e),
            E::Switch { error, .. } => Some(error),
            E::Build(e) => Some(&**e),
            E::Hdr(e) => Some(e),
            E::Samples { error, .. } => Some(error),
            E::Gen(e) => Some(e),
            E::Run(e) => Some(e),
            E::Task { error, .. } => Some(error),
            E::Io(e) => Some(e),
            E::Connect(e) | E::NotReady(e) => Some(e),
            E::Stream(s) | E::Rpc { status: s, .. } | E::WriteRefused(s) => Some(s),
            _ => None,
        }
    }
}

impl From<SourceError> for BenchError {
    fn from(e: SourceError) -> BenchError {
        BenchError::Source(e)
    }
}

impl From<HdrError> for BenchError {
    fn from(e: HdrError) -> BenchError {
        BenchError::Hdr(e)
    }
}

impl From<GenError> for BenchError {
    fn from(e: GenError) -> BenchError {
        BenchError::Gen(e)
    }
}

impl From<RunError> for BenchError {
    fn from(e: RunError) -> BenchError {
        BenchError::Run(e)
    }
}
