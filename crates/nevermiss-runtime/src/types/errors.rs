//! The runtime's errors: one enum per seam, each message made in one place.

use nevermiss_tables::TableError;
use std::fmt;

/// Why a control-plane operation was refused. One variant per gRPC status code the P4Runtime
/// specification uses for the case (the server maps them one to one); the message is short,
/// lowercase and names the offending object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// `INVALID_ARGUMENT` (3): malformed request (bad match, wrong parameters, ...).
    InvalidArgument(String),
    /// `NOT_FOUND` (5): unknown object or absent entry.
    NotFound(String),
    /// `ALREADY_EXISTS` (6): insert of an existing entry.
    AlreadyExists(String),
    /// `PERMISSION_DENIED` (7): const tables and default actions, action scope.
    PermissionDenied(String),
    /// `RESOURCE_EXHAUSTED` (8): a full table, profile, value set.
    ResourceExhausted(String),
    /// `FAILED_PRECONDITION` (9): e.g. deleting a member a group still uses.
    FailedPrecondition(String),
    /// `ABORTED` (10): an update of a batch that was rolled back or not attempted.
    Aborted(String),
    /// `OUT_OF_RANGE` (11): a value wider than its field, an index past the end.
    OutOfRange(String),
    /// `UNIMPLEMENTED` (12).
    Unimplemented(String),
    /// `INTERNAL` (13).
    Internal(String),
    /// `UNAVAILABLE` (14): the data plane did not reach a quiescent point in time.
    Unavailable(String),
}

/// A control-plane result.
pub type ControlResult<T> = Result<T, ControlError>;

impl ControlError {
    /// The gRPC status code (`google.rpc.Code`).
    pub fn code(&self) -> i32 {
        match self {
            ControlError::InvalidArgument(_) => 3,
            ControlError::NotFound(_) => 5,
            ControlError::AlreadyExists(_) => 6,
            ControlError::PermissionDenied(_) => 7,
            ControlError::ResourceExhausted(_) => 8,
            ControlError::FailedPrecondition(_) => 9,
            ControlError::Aborted(_) => 10,
            ControlError::OutOfRange(_) => 11,
            ControlError::Unimplemented(_) => 12,
            ControlError::Internal(_) => 13,
            ControlError::Unavailable(_) => 14,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            ControlError::InvalidArgument(m)
            | ControlError::NotFound(m)
            | ControlError::AlreadyExists(m)
            | ControlError::PermissionDenied(m)
            | ControlError::ResourceExhausted(m)
            | ControlError::FailedPrecondition(m)
            | ControlError::Aborted(m)
            | ControlError::OutOfRange(m)
            | ControlError::Unimplemented(m)
            | ControlError::Internal(m)
            | ControlError::Unavailable(m) => m,
        }
    }

    /// The same error with `prefix: ` before its message.
    pub fn context(self, prefix: impl fmt::Display) -> ControlError {
        let f = |m: String| format!("{prefix}: {m}");
        match self {
            ControlError::InvalidArgument(m) => ControlError::InvalidArgument(f(m)),
            ControlError::NotFound(m) => ControlError::NotFound(f(m)),
            ControlError::AlreadyExists(m) => ControlError::AlreadyExists(f(m)),
            ControlError::PermissionDenied(m) => ControlError::PermissionDenied(f(m)),
            ControlError::ResourceExhausted(m) => ControlError::ResourceExhausted(f(m)),
            ControlError::FailedPrecondition(m) => ControlError::FailedPrecondition(f(m)),
            ControlError::Aborted(m) => ControlError::Aborted(f(m)),
            ControlError::OutOfRange(m) => ControlError::OutOfRange(f(m)),
            ControlError::Unimplemented(m) => ControlError::Unimplemented(f(m)),
            ControlError::Internal(m) => ControlError::Internal(f(m)),
            ControlError::Unavailable(m) => ControlError::Unavailable(f(m)),
        }
    }
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ControlError {}

impl From<TableError> for ControlError {
    fn from(e: TableError) -> ControlError {
        let m = e.to_string();
        match e {
            TableError::Exists => ControlError::AlreadyExists(m),
            TableError::NotFound => ControlError::NotFound(m),
            TableError::Full => ControlError::ResourceExhausted(m),
            TableError::OutOfMemory => ControlError::ResourceExhausted(m),
            TableError::BadKey { .. }
            | TableError::BadPriority
            | TableError::ParamsTooLong { .. }
            | TableError::BadProfile(_)
            | TableError::NoIdleTimeout
            | TableError::NotAddOnMiss
            | TableError::BadSpec(_) => ControlError::InvalidArgument(m),
        }
    }
}

/// Why a switch could not be built from a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// `main` is not the package its architecture declares.
    Package(PackageError),
    /// A table was refused: its spec or expire profiles, its default action, a constant entry.
    Table {
        /// The table's name.
        table: String,
        /// What of it.
        part: TablePart,
        /// Why.
        error: TableError,
    },
    /// The compiled engine could not compile the program (it names the function or parser).
    Jit(nevermiss_jit::JitError),
}

/// The part of a table a [`BuildError::Table`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TablePart {
    /// The table itself (keys, size, idle timeout, expire profiles).
    Spec,
    /// Its default action.
    DefaultAction,
    /// One of its constant entries.
    ConstantEntry,
}

/// How a program's `main` fails its architecture's package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackageError {
    /// PNA_NIC without a parser, a control and a deparser.
    PnaBlocks,
    /// V1Switch with fewer than six blocks.
    V1BlockCount,
    /// V1Switch without a parser, an ingress and a deparser where they belong.
    V1Blocks,
    /// v1model's ingress without its `standard_metadata` parameter.
    V1StandardMetadata,
    /// PSA_Switch with fewer than six blocks.
    PsaBlockCount,
    /// PSA_Switch's blocks out of order.
    PsaOrder,
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PackageError::PnaBlocks => {
                "the PNA_NIC package needs a parser, a control and a deparser"
            }
            PackageError::V1BlockCount => "the V1Switch package needs six blocks",
            PackageError::V1Blocks => {
                "the V1Switch package needs a parser, an ingress and a deparser"
            }
            PackageError::V1StandardMetadata => {
                "the ingress control has no standard_metadata parameter"
            }
            PackageError::PsaBlockCount => {
                "the PSA_Switch package needs six parsers, controls and deparsers"
            }
            PackageError::PsaOrder => {
                "the PSA_Switch package's blocks are not in the expected order"
            }
        })
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Package(e) => write!(f, "{e}"),
            BuildError::Table { table, part, error } => match part {
                TablePart::Spec => write!(f, "table {table}: {error}"),
                TablePart::DefaultAction => write!(f, "table {table}: default action: {error}"),
                TablePart::ConstantEntry => write!(f, "table {table}: constant entry: {error}"),
            },
            BuildError::Jit(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<PackageError> for BuildError {
    fn from(e: PackageError) -> BuildError {
        BuildError::Package(e)
    }
}

/// Why a run of the switch over ports (or over packets in memory) stopped with an error. An
/// input port's error is not one of these: it ends the run early and the run's report carries
/// it (`RunReport::error`), after every packet before it was processed.
#[derive(Debug)]
pub enum RunError {
    /// The batch size is not in `1..=nevermiss_io::BATCH_MAX`.
    BatchSize(usize),
    /// More workers to pin than CPUs this process may run on.
    TooFewCpus {
        /// Workers asked for.
        workers: usize,
        /// CPUs available to the process.
        cpus: usize,
    },
    /// The CPU number is beyond what the kernel's CPU set holds (`CPU_SETSIZE`).
    CpuOutOfRange(usize),
    /// The kernel refused to pin a worker to its CPU (`sched_setaffinity`).
    Pin {
        /// The CPU.
        cpu: usize,
        /// The kernel's error.
        error: std::io::Error,
    },
    /// Another worker of the run could not be pinned, so this one did not start either.
    OtherWorkerNotPinned,
    /// A worker's thread could not be started.
    Spawn {
        /// The worker's index.
        worker: usize,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A worker thread panicked (a bug: packets never make a worker panic).
    WorkerPanicked,
    /// An output port failed to transmit or to flush.
    Port(nevermiss_io::PortError),
    /// With several cores the input is read into memory first, and it is larger than allowed.
    PreloadLimit {
        /// Workers (`--cores`).
        cores: usize,
        /// The limit in MiB.
        limit_mib: usize,
    },
    /// With several cores an input port neither delivered packets nor ended for a long while.
    EndlessInput,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::BatchSize(b) => {
                write!(
                    f,
                    "batch size {b} is not in 1..={}",
                    nevermiss_io::BATCH_MAX
                )
            }
            RunError::TooFewCpus { workers, cpus } => {
                write!(f, "{workers} workers, but only {cpus} cpus to pin them to")
            }
            RunError::CpuOutOfRange(cpu) => write!(f, "cpu {cpu} is out of range"),
            RunError::Pin { cpu, error } => write!(f, "cannot pin to cpu {cpu}: {error}"),
            RunError::OtherWorkerNotPinned => f.write_str("another worker could not be pinned"),
            RunError::Spawn { worker, error } => {
                write!(f, "cannot start worker {worker}: {error}")
            }
            RunError::WorkerPanicked => f.write_str("a worker thread panicked"),
            RunError::Port(e) => write!(f, "{e}"),
            RunError::PreloadLimit { cores, limit_mib } => write!(
                f,
                "with --cores {cores} the input is read into memory first, and it exceeds \
                 {limit_mib} MiB; use --max-packets or fewer packets"
            ),
            RunError::EndlessInput => f.write_str(
                "an input port neither delivers packets nor ends; with --cores inputs must be \
                 finite",
            ),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Pin { error, .. } | RunError::Spawn { error, .. } => Some(error),
            RunError::Port(e) => Some(e),
            _ => None,
        }
    }
}

impl From<nevermiss_io::PortError> for RunError {
    fn from(e: nevermiss_io::PortError) -> RunError {
        RunError::Port(e)
    }
}
