//! Quantities written on command lines and in option headers.

/// A duration that does not parse; the message names the text (not the flag: the caller adds
/// it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// Not a number.
    NotNumber(String),
    /// A unit other than ns, us, ms, s, m, h.
    Unit {
        /// The text.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// Negative, not finite or beyond 1.8e19 ns.
    OutOfRange(String),
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DurationError::NotNumber(s) => write!(f, "`{s}` is not a duration (e.g. 30s, 500ms)"),
            DurationError::Unit { text, unit } => {
                write!(f, "`{text}`: unknown unit `{unit}` (ns, us, ms, s, m, h)")
            }
            DurationError::OutOfRange(s) => write!(f, "`{s}` is out of range"),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses `10s`, `500ms`, `20us`, `100ns`, `2m`, `1h` or a plain number of seconds into
/// nanoseconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, DurationError> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| DurationError::NotNumber(s.to_string()))?;
    let mul = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(DurationError::Unit {
                text: s.to_string(),
                unit: unit.to_string(),
            })
        }
    };
    let ns = v * mul;
    if !(0.0..=1.8e19).contains(&ns) {
        return Err(DurationError::OutOfRange(s.to_string()));
    }
    Ok(ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("30s"), Ok(30_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("2"), Ok(2_000_000_000));
        assert_eq!(
            parse_duration_ns("5 parsecs").unwrap_err().to_string(),
            "`5 parsecs`: unknown unit `parsecs` (ns, us, ms, s, m, h)"
        );
        assert!(parse_duration_ns("-1s").is_err());
        assert!(parse_duration_ns("NaN").is_err());
    }
}
