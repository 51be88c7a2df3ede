//! The simulator's errors: parameters written as text ([`ParseError`]), configurations that
//! cannot run ([`ConfigError`]) and inputs and outputs ([`SimError`]). Every message is made
//! here, lowercase and without a trailing period.

use std::fmt;
use std::path::PathBuf;

/// A parameter written as text (a rate, a count, a flow key, a synthetic trace, a size
/// distribution) that does not parse. The text itself is part of the message.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseError {
    /// Not a rate in bit/s.
    NotRate(String),
    /// A rate of zero, below zero or not finite.
    NotPositiveRate(String),
    /// Not a count.
    NotNumber(String),
    /// A count with a fraction, below zero or beyond 10^18.
    NotWholeNumber(String),
    /// Not a hash mode.
    UnknownHashMode(String),
    /// Not a flow key.
    UnknownKey(String),
    /// One range of a byte-range key is malformed.
    ByteRange {
        /// The range as written.
        part: String,
        /// What is wrong with it.
        fault: RangeFault,
    },
    /// A byte-range key selects more bytes than a key holds.
    KeyTooLong {
        /// The most bytes a key holds ([`crate::keys::MAX_KEY_BYTES`]).
        max: usize,
    },
    /// A byte-range key with no range.
    EmptyKey,
    /// An empty trace path.
    EmptyTracePath,
    /// A synthetic trace's parameter that is not `key=value`.
    NotKeyValue(String),
    /// A synthetic trace's parameter with a bad value.
    BadParam {
        /// The parameter's name.
        key: String,
        /// Its value as written.
        value: String,
        /// Why it is refused.
        why: ParamFault,
    },
    /// A synthetic trace's parameter that does not exist.
    UnknownParam(String),
    /// A synthetic trace without `dist=` or `size=`.
    NoSizes,
    /// A line of a size distribution file is malformed.
    SizeLine {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        fault: SizeFault,
    },
    /// A size distribution in which no packet has a positive fraction.
    EmptyDistribution,
}

/// What is wrong with a byte range `ip[a..b]`/`l4[a..b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeFault {
    /// Neither `ip[` nor `l4[`.
    Base,
    /// No closing `]`.
    NoBracket,
    /// No `..` between start and end.
    NoDots,
    /// The start is not a number.
    Start,
    /// The end is not a number.
    End,
    /// The end is not after the start.
    Empty,
}

/// Why a synthetic trace's parameter value is refused.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamFault {
    /// The value does not parse as its kind of quantity.
    Parse(Box<ParseError>),
    /// The value parses but is out of the parameter's domain; the domain in words.
    Domain(&'static str),
}

/// What is wrong with a line of a size distribution file.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeFault {
    /// Not two fields.
    Fields,
    /// The first field is not a number.
    Size(String),
    /// The second field is not a number.
    Fraction(String),
    /// The size is not an IP length.
    NotIpLength {
        /// The size as written.
        size: String,
        /// The shortest IP length ([`crate::synth::MIN_IP_LEN`]).
        min: u16,
    },
    /// The fraction is negative or not finite.
    BadFraction(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotRate(s) => write!(f, "`{s}` is not a rate (e.g. 640G)"),
            ParseError::NotPositiveRate(s) => write!(f, "`{s}` is not a positive rate"),
            ParseError::NotNumber(s) => write!(f, "`{s}` is not a number"),
            ParseError::NotWholeNumber(s) => write!(f, "`{s}` is not a whole non-negative number"),
            ParseError::UnknownHashMode(s) => {
                write!(f, "unknown hash mode `{s}` (expected crc16 or exact)")
            }
            ParseError::UnknownKey(s) => write!(
                f,
                "unknown flow key `{s}` (expected global, 5tuple, ipdst, ipdst16, ipsrc+ipdst or bytes:ip[a..b]+l4[c..d])"
            ),
            ParseError::ByteRange { part, fault } => {
                write!(f, "bad byte range `{part}`")?;
                match fault {
                    RangeFault::Base => f.write_str(" (expected ip[start..end] or l4[start..end])"),
                    RangeFault::NoBracket => f.write_str(": missing `]`"),
                    RangeFault::NoDots => f.write_str(": expected start..end"),
                    RangeFault::Start => f.write_str(": start is not a number"),
                    RangeFault::End => f.write_str(": end is not a number"),
                    RangeFault::Empty => f.write_str(": empty range"),
                }
            }
            ParseError::KeyTooLong { max } => {
                write!(f, "byte-range key selects more than {max} bytes")
            }
            ParseError::EmptyKey => f.write_str("empty byte-range key"),
            ParseError::EmptyTracePath => f.write_str("empty trace path"),
            ParseError::NotKeyValue(part) => {
                write!(f, "synthetic trace: expected key=value, got `{part}`")
            }
            ParseError::BadParam { key, value, why } => {
                write!(f, "synthetic trace: bad {key}=`{value}` (")?;
                match why {
                    ParamFault::Parse(e) => write!(f, "{e})"),
                    ParamFault::Domain(d) => write!(f, "{d})"),
                }
            }
            ParseError::UnknownParam(k) => write!(
                f,
                "synthetic trace: unknown parameter `{k}` (expected dist, size, flows, zipf, packets, seed, srcs, dsts, prefixes, tcp, rate)"
            ),
            ParseError::NoSizes => f.write_str(
                "synthetic trace: give a size distribution (dist=<file>) or size=<bytes>",
            ),
            ParseError::SizeLine { line, fault } => {
                write!(f, "line {line}: ")?;
                match fault {
                    SizeFault::Fields => f.write_str("expected `<bytes> <fraction>`"),
                    SizeFault::Size(a) => write!(f, "`{a}` is not a size"),
                    SizeFault::Fraction(b) => write!(f, "`{b}` is not a fraction"),
                    SizeFault::NotIpLength { size, min } => {
                        write!(f, "size {size} is not an IP length ({min} to 65535)")
                    }
                    SizeFault::BadFraction(b) => {
                        write!(f, "fraction {b} is negative or not finite")
                    }
                }
            }
            ParseError::EmptyDistribution => {
                f.write_str("the distribution has no packet with a positive fraction")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// A locking-scheme configuration that cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// N = 0.
    NoStages,
    /// Q = 0.
    NoQueues,
    /// A queue length of 0.
    ZeroQueueLength,
    /// W beyond 16 bits.
    WideHash,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigError::NoStages => "the pipeline needs N >= 1 stages",
            ConfigError::NoQueues => "the locking scheme needs Q >= 1 queues",
            ConfigError::ZeroQueueLength => "a queue length must be >= 1 (use inf for infinite)",
            ConfigError::WideHash => "W is at most 16 bits (the hash is CRC-16)",
        })
    }
}

impl std::error::Error for ConfigError {}

/// Errors of the simulator's inputs and outputs.
#[derive(Debug)]
pub enum SimError {
    /// A file could not be opened, read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// A capture file is malformed or truncated.
    Capture {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its byte offset.
        error: nevermiss_io::PcapError,
    },
    /// A size distribution file does not parse.
    Distribution {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        error: ParseError,
    },
    /// A size distribution parses but cannot be sampled.
    UnusableDistribution {
        /// The file.
        path: PathBuf,
        /// Why it cannot be sampled.
        error: rand_distr::weighted::Error,
    },
    /// A synthetic trace's flow popularity cannot be sampled.
    Zipf(rand_distr::ZipfError),
    /// A synthetic trace's rate is not positive.
    NoRate,
    /// The worker threads could not be started.
    Threads {
        /// How many were asked for.
        n: usize,
        /// Why they could not be started.
        error: rayon::ThreadPoolBuildError,
    },
}

impl SimError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, error: impl Into<std::io::Error>) -> SimError {
        SimError::Io {
            path: path.to_path_buf(),
            error: error.into(),
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            SimError::Capture { path, error } => write!(f, "{}: {error}", path.display()),
            SimError::Distribution { path, error } => write!(f, "{}: {error}", path.display()),
            SimError::UnusableDistribution { path, error } => {
                write!(f, "{}: unusable distribution: {error}", path.display())
            }
            SimError::Zipf(e) => write!(f, "synthetic trace: {e}"),
            SimError::NoRate => f.write_str("synthetic trace: rate must be positive"),
            SimError::Threads { n, error } => write!(f, "cannot start {n} threads: {error}"),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Io { error, .. } => Some(error),
            SimError::Capture { error, .. } => Some(error),
            SimError::Distribution { error, .. } => Some(error),
            SimError::UnusableDistribution { error, .. } => Some(error),
            SimError::Zipf(e) => Some(e),
            SimError::NoRate | SimError::Threads { .. } => None,
        }
    }
}
