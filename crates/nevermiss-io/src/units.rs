//! Quantities written on command lines and in option headers.

/// Parses `10s`, `500ms`, `20us`, `100ns`, `2m`, `1h` or a plain number of seconds into
/// nanoseconds. Errors say what was wrong with the text (no flag name: the caller adds it).
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 500ms)"))?;
    let mul = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "`{s}`: unknown unit `{unit}` (ns, us, ms, s, m, h)"
            ))
        }
    };
    let ns = v * mul;
    if !(0.0..=1.8e19).contains(&ns) {
        return Err(format!("`{s}` is out of range"));
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
        assert!(parse_duration_ns("5 parsecs").is_err());
        assert!(parse_duration_ns("-1s").is_err());
        assert!(parse_duration_ns("NaN").is_err());
    }
}
