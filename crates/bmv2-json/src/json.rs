//! Reading the JSON with its path: every value is handed out with the JSON path that leads to
//! it (`$.pipelines[0].tables[3].key[0]`), so that every error, malformed input or unsupported
//! construct alike, names the place it is about.

use num_bigint::{BigInt, Sign};
use serde_json::Value;
use std::fmt;

/// An error of loading a BMv2 JSON: where (a JSON path) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The JSON path of the offending value (`$` is the whole document).
    pub path: String,
    /// What is wrong there, lowercase without a trailing period (`expected a string, found
    /// number`, `unsupported: PNA programs …`); [`Display`](fmt::Display) prints `path: msg`.
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.msg)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// A JSON value and its path.
#[derive(Clone, Debug)]
pub struct J<'a> {
    pub v: &'a Value,
    pub path: String,
}

impl<'a> J<'a> {
    /// The document's root.
    pub fn root(v: &'a Value) -> J<'a> {
        J {
            v,
            path: "$".into(),
        }
    }

    /// An error about this value.
    pub fn err(&self, msg: impl Into<String>) -> Error {
        Error {
            path: self.path.clone(),
            msg: msg.into(),
        }
    }

    /// An error naming a construct nevermiss does not support.
    pub fn unsupported(&self, what: impl fmt::Display) -> Error {
        self.err(format!("unsupported: {what}"))
    }

    fn kind(&self) -> &'static str {
        match self.v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    fn child(&self, v: &'a Value, key: &str) -> J<'a> {
        J {
            v,
            path: format!("{}.{key}", self.path),
        }
    }

    /// The member `key`, which must be there (it may be `null`).
    pub fn get(&self, key: &str) -> Result<J<'a>> {
        match self.v {
            Value::Object(o) => match o.get(key) {
                Some(v) => Ok(self.child(v, key)),
                None => Err(self.err(format!("missing \"{key}\""))),
            },
            _ => Err(self.err(format!("expected an object, found {}", self.kind()))),
        }
    }

    /// The member `key` when it is there and not `null`.
    pub fn opt(&self, key: &str) -> Option<J<'a>> {
        match self.v.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.child(v, key)),
        }
    }

    /// Element `i` of an array.
    pub fn at(&self, i: usize) -> Result<J<'a>> {
        match self.v {
            Value::Array(a) => match a.get(i) {
                Some(v) => Ok(J {
                    v,
                    path: format!("{}[{i}]", self.path),
                }),
                None => Err(self.err(format!(
                    "expected at least {} elements, found {}",
                    i + 1,
                    a.len()
                ))),
            },
            _ => Err(self.err(format!("expected an array, found {}", self.kind()))),
        }
    }

    /// The elements of an array.
    pub fn arr(&self) -> Result<Vec<J<'a>>> {
        match self.v {
            Value::Array(a) => Ok(a
                .iter()
                .enumerate()
                .map(|(i, v)| J {
                    v,
                    path: format!("{}[{i}]", self.path),
                })
                .collect()),
            _ => Err(self.err(format!("expected an array, found {}", self.kind()))),
        }
    }

    /// The elements of the array member `key`; a missing or `null` member is empty.
    pub fn list(&self, key: &str) -> Result<Vec<J<'a>>> {
        match self.opt(key) {
            Some(j) => j.arr(),
            None => Ok(Vec::new()),
        }
    }

    pub fn str(&self) -> Result<&'a str> {
        self.v
            .as_str()
            .ok_or_else(|| self.err(format!("expected a string, found {}", self.kind())))
    }

    pub fn bool(&self) -> Result<bool> {
        self.v
            .as_bool()
            .ok_or_else(|| self.err(format!("expected a boolean, found {}", self.kind())))
    }

    /// An integer (JSON numbers without a fraction).
    pub fn int(&self) -> Result<i64> {
        self.v
            .as_i64()
            .ok_or_else(|| self.err(format!("expected an integer, found {}", self.kind())))
    }

    /// A non-negative integer that fits in 32 bits.
    pub fn u32(&self) -> Result<u32> {
        let i = self.int()?;
        u32::try_from(i).map_err(|_| self.err(format!("{i} is out of range")))
    }

    /// The string member `key`.
    pub fn str_of(&self, key: &str) -> Result<&'a str> {
        self.get(key)?.str()
    }

    /// The integer member `key`.
    pub fn int_of(&self, key: &str) -> Result<i64> {
        self.get(key)?.int()
    }

    /// The boolean member `key`, `default` when missing or `null`.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.opt(key) {
            Some(j) => j.bool(),
            None => Ok(default),
        }
    }

    /// A BMv2 hexstring (`"0x0a0b"`, `"-0x5"`; BMv2 also accepts plain decimal) as an integer.
    pub fn hexstr(&self) -> Result<BigInt> {
        parse_hexstr(self.str()?).ok_or_else(|| self.err("expected a hexstring such as \"0x0a\""))
    }

    /// The bytes of a hexstring (its digits, big-endian, as BMv2's `ByteContainer` reads them:
    /// an odd number of digits gets a leading zero).
    pub fn hex_bytes(&self) -> Result<Vec<u8>> {
        let s = self.str()?;
        let t = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .ok_or_else(|| self.err("expected a hexstring such as \"0x0a\""))?;
        let digits: Vec<u32> = t
            .chars()
            .map(|c| c.to_digit(16))
            .collect::<Option<_>>()
            .ok_or_else(|| self.err(format!("\"{s}\" is not a hexstring")))?;
        let mut out = Vec::with_capacity(digits.len().div_ceil(2));
        let mut it = digits.iter();
        if digits.len() % 2 == 1 {
            out.push(*it.next().unwrap_or(&0) as u8);
        }
        while let (Some(a), Some(b)) = (it.next(), it.next()) {
            out.push((a * 16 + b) as u8);
        }
        Ok(out)
    }
}

/// `"0x…"`, `"-0x…"` or decimal digits as an integer.
pub fn parse_hexstr(s: &str) -> Option<BigInt> {
    let (neg, t) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() {
            return None;
        }
        BigInt::parse_bytes(h.as_bytes(), 16)?
    } else {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        BigInt::parse_bytes(t.as_bytes(), 10)?
    };
    if v.sign() == Sign::Minus {
        return None;
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_place() {
        let v: Value = serde_json::from_str(r#"{"a": [{"b": 1}, {"b": "x"}]}"#).unwrap();
        let r = J::root(&v);
        let e = r.get("a").unwrap().at(1).unwrap().get("b").unwrap();
        assert_eq!(
            e.int().unwrap_err().to_string(),
            "$.a[1].b: expected an integer, found a string"
        );
        assert_eq!(r.get("z").unwrap_err().to_string(), "$: missing \"z\"");
        assert_eq!(
            r.get("a").unwrap().at(5).unwrap_err().to_string(),
            "$.a: expected at least 6 elements, found 2"
        );
    }

    #[test]
    fn hexstrings() {
        assert_eq!(parse_hexstr("0x0a"), Some(BigInt::from(10)));
        assert_eq!(parse_hexstr("-0x05"), Some(BigInt::from(-5)));
        assert_eq!(parse_hexstr("12"), Some(BigInt::from(12)));
        assert_eq!(parse_hexstr("0x"), None);
        assert_eq!(parse_hexstr("0xzz"), None);
        let v = Value::String("0xabc".into());
        assert_eq!(J::root(&v).hex_bytes().unwrap(), vec![0x0a, 0xbc]);
    }
}
