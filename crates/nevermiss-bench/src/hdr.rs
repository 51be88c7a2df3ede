//! HdrHistogram interval logs (V2 log format, compressed V2 histograms) of per-packet ticks,
//! one file per scenario × class, for the lab to plot (docs/bench.md).

use base64::Engine;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One interval of a log: a run of one benchmark point.
pub struct Interval<'a> {
    /// `m<M>-r<R>-run<K>`; no spaces or commas.
    pub tag: String,
    /// When the run started, since the start of the bench.
    pub start: Duration,
    /// How long the run took.
    pub duration: Duration,
    /// The run's histogram of ticks per packet.
    pub hist: &'a Histogram<u64>,
}

/// Why a histogram or an interval log failed.
#[derive(Debug)]
pub enum HdrError {
    /// A histogram could not be made.
    Create(hdrhistogram::errors::CreationError),
    /// A value could not be recorded into the histogram `what`.
    Record {
        /// The histogram's name.
        what: String,
        /// Why.
        error: hdrhistogram::errors::RecordError,
    },
    /// Two histograms could not be added.
    Add(hdrhistogram::errors::AdditionError),
    /// An interval's tag that an interval log cannot hold.
    BadTag(String),
    /// An interval log could not be written, read or decoded: `error` is the log library's
    /// own description, which has no common error type.
    Log {
        /// The log file.
        path: PathBuf,
        /// Why, as the library describes it.
        error: String,
    },
    /// A folder for logs could not be created.
    Dir {
        /// The folder.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A folder for logs is not writable.
    NotWritable {
        /// The folder.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl fmt::Display for HdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HdrError::Create(e) => write!(f, "{e}"),
            HdrError::Record { what, error } => write!(f, "{what}: {error}"),
            HdrError::Add(e) => write!(f, "histogram: {e}"),
            HdrError::BadTag(tag) => write!(f, "bad tag `{tag}`"),
            HdrError::Log { path, error } => write!(f, "{}: {error}", path.display()),
            HdrError::Dir { path, error } => write!(f, "{}: {error}", path.display()),
            HdrError::NotWritable { path, error } => {
                write!(f, "{}: not writable: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for HdrError {}

/// The file name of a scenario × class log.
pub fn file_name(scenario: &str, class: &str) -> String {
    format!("{scenario}.{class}.hlog")
}

/// A histogram (3 significant digits, growing to any value) of `values`; `what` names it in
/// an error.
pub fn histogram_of(values: &[u64], what: &str) -> Result<Histogram<u64>, HdrError> {
    let mut h = Histogram::<u64>::new(3).map_err(HdrError::Create)?;
    for &v in values {
        h.record(v).map_err(|error| HdrError::Record {
            what: what.to_string(),
            error,
        })?;
    }
    Ok(h)
}

/// Writes one interval log to `path`, with `comments` as `#` lines first.
pub fn write_log(
    path: &Path,
    comments: &[String],
    intervals: &[Interval<'_>],
) -> Result<(), HdrError> {
    let log = |error: String| HdrError::Log {
        path: path.to_path_buf(),
        error,
    };
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        for c in comments {
            b.add_comment(c);
        }
        let mut w = b
            .with_max_value_divisor(1.0)
            .begin_log_with(&mut buf, &mut ser)
            .map_err(|e| log(e.to_string()))?;
        for iv in intervals {
            let tag = Tag::new(&iv.tag).ok_or_else(|| HdrError::BadTag(iv.tag.clone()))?;
            w.write_histogram(iv.hist, iv.start, iv.duration, Some(tag))
                .map_err(|e| log(e.to_string()))?;
        }
    }
    std::fs::write(path, buf).map_err(|e| log(e.to_string()))
}

/// Reads an interval log back: each interval's tag and histogram.
pub fn read_log(path: &Path) -> Result<Vec<(String, Histogram<u64>)>, HdrError> {
    let log = |error: String| HdrError::Log {
        path: path.to_path_buf(),
        error,
    };
    let bytes = std::fs::read(path).map_err(|e| log(e.to_string()))?;
    let mut out = Vec::new();
    let mut de = Deserializer::new();
    for e in IntervalLogIterator::new(&bytes) {
        let e = e.map_err(|e| log(format!("{e:?}")))?;
        if let LogEntry::Interval(h) = e {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .map_err(|e| log(e.to_string()))?;
            let hist: Histogram<u64> = de
                .deserialize(&mut &raw[..])
                .map_err(|e| log(format!("{e:?}")))?;
            let tag = h.tag().map(|t| t.as_str().to_string()).unwrap_or_default();
            out.push((tag, hist));
        }
    }
    Ok(out)
}

/// Checks that `dir` exists (creating it) and is writable.
pub fn prepare_dir(dir: &Path) -> Result<PathBuf, HdrError> {
    std::fs::create_dir_all(dir).map_err(|error| HdrError::Dir {
        path: dir.to_path_buf(),
        error,
    })?;
    let probe = dir.join(".nevermiss-bench-probe");
    std::fs::write(&probe, b"").map_err(|error| HdrError::NotWritable {
        path: dir.to_path_buf(),
        error,
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = std::env::temp_dir().join(format!("nm-hdr-{}", std::process::id()));
        prepare_dir(&dir).unwrap();
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in [100u64, 200, 300, 100_000] {
            h.record(v).unwrap();
        }
        let p = dir.join(file_name("add-on-miss", "insert"));
        let iv = [Interval {
            tag: "m1024-r0-run0".into(),
            start: Duration::from_millis(5),
            duration: Duration::from_millis(7),
            hist: &h,
        }];
        write_log(&p, &["ticks per packet".into()], &iv).unwrap();
        let back = read_log(&p).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, "m1024-r0-run0");
        assert_eq!(back[0].1.len(), 4);
        assert_eq!(back[0].1.max(), h.max());
        assert!(read_log(&dir.join("missing.hlog")).is_err());
        let bad = Interval {
            tag: "has space".into(),
            ..iv[0]
        };
        assert!(write_log(&p, &[], &[bad]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
