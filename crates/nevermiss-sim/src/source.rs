//! Where a trace comes from: capture files or a synthetic trace, as written on the command line
//! (`a.pcap`, `a.pcap+b.pcap`, `synthetic:key=value,...`).

use crate::capture::load_files;
use crate::error::ParseError;
use crate::keys::KeySpec;
use crate::synth::SynthSpec;
use crate::trace::{HashMode, Trace};
use crate::SimError;
use std::path::{Path, PathBuf};

/// Where a trace comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceSource {
    /// One capture file, or several merged by timestamp (like opp-sim's directions A and B).
    Files(Vec<PathBuf>),
    /// A synthetic trace.
    Synthetic(SynthSpec),
}

impl std::str::FromStr for TraceSource {
    type Err = ParseError;

    /// `synthetic:key=value,...`, a capture path, or several paths joined by `+` to merge them
    /// by timestamp.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if let Some(rest) = s.strip_prefix("synthetic:") {
            return Ok(TraceSource::Synthetic(rest.parse()?));
        }
        if s.is_empty() {
            return Err(ParseError::EmptyTracePath);
        }
        if Path::new(s).exists() || !s.contains('+') {
            return Ok(TraceSource::Files(vec![PathBuf::from(s)]));
        }
        Ok(TraceSource::Files(
            s.split('+').map(PathBuf::from).collect(),
        ))
    }
}

impl std::fmt::Display for TraceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceSource::Files(p) => {
                let v: Vec<String> = p.iter().map(|p| p.display().to_string()).collect();
                f.write_str(&v.join("+"))
            }
            TraceSource::Synthetic(s) => write!(f, "synthetic:{s}"),
        }
    }
}

impl TraceSource {
    /// Loads the trace computing the digests of `keys`.
    pub fn load(&self, keys: &[KeySpec], hash: HashMode) -> Result<Trace, SimError> {
        let name = self.to_string();
        match self {
            TraceSource::Synthetic(spec) => spec.generate(&name, keys, hash),
            TraceSource::Files(paths) => load_files(paths, &name, keys, hash),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_parsing() {
        assert_eq!(
            "a.pcap".parse::<TraceSource>().unwrap(),
            TraceSource::Files(vec!["a.pcap".into()])
        );
        assert_eq!(
            "a.pcap+b.pcap".parse::<TraceSource>().unwrap(),
            TraceSource::Files(vec!["a.pcap".into(), "b.pcap".into()])
        );
        assert!("synthetic:size=100,packets=10"
            .parse::<TraceSource>()
            .is_ok());
        assert!("synthetic:bogus=1".parse::<TraceSource>().is_err());
    }
}
