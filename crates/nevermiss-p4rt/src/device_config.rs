//! The device config of `SetForwardingPipelineConfig` (P4Runtime spec §"ForwardingPipelineConfig":
//! `p4_device_config` is target-specific): what nevermiss needs to load a program.
//!
//! Format (docs/p4runtime.md, "P4Info and the device config"): a UTF-8 JSON object
//!
//! ```text
//! {"format": "nevermiss-device-config", "version": 1, "program": "NAME",
//!  "pna_dialect": 3 | 4 | null, "source": "THE PREPROCESSED P4 TEXT"}
//! ```
//!
//! The source is the program after nevermiss's preprocessor (every `#include`, `p4include/`'s
//! architecture files among them, expanded; every macro applied), so a config loads the same
//! program on any machine, without files or include paths.
//!
//! [`decode`] also reads, detected by content, in this order:
//! - a BMv2 JSON program (what p4c-bm2-ss writes and `simple_switch_grpc` takes; crate
//!   `bmv2-json`);
//! - PI's `p4.tmp.P4DeviceConfig` (p4lang/PI `proto/p4/tmp/p4config.proto`: `reassign` = 1,
//!   `extras` = 2, `device_data` = 3; the layout before `reassign` existed, `extras` = 1 and
//!   `device_data` = 2, is read too) around any of these formats: what the P4 tutorials', p4-utils'
//!   and ONOS's BMv2 controllers send;
//! - as a convenience, P4 source text (a `.p4` file with only `#include`s of nevermiss's own
//!   `p4include/`).

use p4_front::driver::{self, Compiled, Options};
use p4_front::pna_dialect::{PnaDialect, DIALECT_MACRO};
use prost::Message;
use std::fmt;

/// The `format` field's value.
pub const FORMAT: &str = "nevermiss-device-config";
/// The version this build writes and reads.
pub const VERSION: u64 = 1;

/// A program loaded from a device config.
pub struct Loaded {
    /// The checked P4 program (absent for a BMv2 JSON program, which has no P4 source).
    pub compiled: Option<Compiled>,
    /// The lowered program the runtime runs, from either front end.
    pub program: p4_ir::Program,
}

/// PI's `p4.tmp.P4DeviceConfig` (field numbers from p4lang/PI's `p4config.proto`).
#[derive(Clone, PartialEq, Message)]
struct PiDeviceConfig {
    #[prost(bool, tag = "1")]
    reassign: bool,
    #[prost(message, optional, tag = "2")]
    extras: Option<PiExtras>,
    #[prost(bytes = "vec", tag = "3")]
    device_data: Vec<u8>,
}

/// `P4DeviceConfig.Extras`.
#[derive(Clone, PartialEq, Message)]
struct PiExtras {
    #[prost(map = "string, string", tag = "1")]
    kv: std::collections::HashMap<String, String>,
}

/// The older `p4.tmp.P4DeviceConfig`, before `reassign` was added.
#[derive(Clone, PartialEq, Message)]
struct PiDeviceConfigV0 {
    #[prost(message, optional, tag = "1")]
    extras: Option<PiExtras>,
    #[prost(bytes = "vec", tag = "2")]
    device_data: Vec<u8>,
}

/// What [`decode`] says a config is when it is none of the formats.
const FORMATS: &str = "a device config is nevermiss's (`nevermiss p4info PROGRAM --device-config \
     FILE` writes it), a BMv2 JSON program (p4c-bm2-ss's output), PI's p4.tmp.P4DeviceConfig \
     whose device_data is one of these, or P4 source text";

/// The `device_data` of PI's `P4DeviceConfig`, if `bytes` are one (a protobuf message whose
/// device_data is set; P4 source and JSON text never decode so, their bytes being printable).
fn pi_device_data(bytes: &[u8]) -> Option<Vec<u8>> {
    if let Ok(c) = PiDeviceConfig::decode(bytes) {
        if !c.device_data.is_empty() {
            return Some(c.device_data);
        }
    }
    match PiDeviceConfigV0::decode(bytes) {
        Ok(c) if !c.device_data.is_empty() => Some(c.device_data),
        _ => None,
    }
}

/// The device config of a compiled program; `name` is what diagnostics will call it.
pub fn encode(c: &Compiled, name: &str) -> Vec<u8> {
    let dialect = match c.checked.arch {
        p4_front::check::Arch::Pna(_) => Some(match c.pna_dialect {
            PnaDialect::V07ThreeBlock => 3,
            PnaDialect::V06FourBlock => 4,
        }),
        _ => None,
    };
    let v = serde_json::json!({
        "format": FORMAT,
        "version": VERSION,
        "program": name,
        "pna_dialect": dialect,
        "source": c.unit.text,
    });
    let mut out = serde_json::to_vec_pretty(&v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Why a device config could not be loaded: what is wrong with the config, or the program's
/// own errors.
pub enum DecodeError {
    /// No bytes at all.
    Empty,
    /// Not UTF-8, not BMv2 JSON, not a PI device config.
    UnknownFormat,
    /// A JSON object of another format than nevermiss's (the `format` it gave).
    OtherFormat(Option<String>),
    /// nevermiss's format of another version (the `version` it gave).
    Version(Option<u64>),
    /// nevermiss's format without its `source` string.
    NoSource,
    /// A `pna_dialect` other than 3, 4 or null (the value as JSON).
    Dialect(String),
    /// A BMv2 JSON program that does not load.
    Bmv2Json(bmv2_json::Error),
    /// P4 source the front end refused.
    Front(Box<driver::Failed>),
    /// P4 source that checked but could not be lowered.
    Lower {
        /// The preprocessed source, for the diagnostic's position.
        unit: Box<p4_front::source::Unit>,
        /// Why.
        diagnostic: Box<p4_front::diag::Diagnostic>,
    },
    /// The error of the program inside a `p4.tmp.P4DeviceConfig`'s `device_data`.
    PiDeviceData(Box<DecodeError>),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Empty => f.write_str("the device config is empty"),
            DecodeError::UnknownFormat => write!(
                f,
                "the device config is none of the formats nevermiss reads: {FORMATS}"
            ),
            DecodeError::OtherFormat(format) => write!(
                f,
                "the device config is a JSON object of format {format:?}: neither \
                 nevermiss's (\"{FORMAT}\") nor a BMv2 JSON program (its keys \
                 header_types, headers, parsers, deparsers, pipelines); {FORMATS}"
            ),
            DecodeError::Version(version) => write!(
                f,
                "device config version {version:?}: this nevermiss reads version {VERSION}"
            ),
            DecodeError::NoSource => f.write_str("the device config has no \"source\" string"),
            DecodeError::Dialect(v) => write!(f, "pna_dialect {v}: expected 3, 4 or null"),
            DecodeError::Bmv2Json(e) => write!(f, "the BMv2 JSON program: {e}"),
            DecodeError::Front(failed) => f.write_str(&failed.render()),
            DecodeError::Lower { unit, diagnostic } => {
                f.write_str(&p4_front::diag::render(unit, diagnostic))
            }
            DecodeError::PiDeviceData(e) => {
                write!(f, "the p4.tmp.P4DeviceConfig's device_data: {e}")
            }
        }
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for DecodeError {}

/// Loads the program a device config carries. Errors say what is wrong with the config, or give
/// the program's diagnostics (`file:line:col: error: ...`, or a JSON path for BMv2 JSON).
pub fn decode(bytes: &[u8]) -> Result<Loaded, DecodeError> {
    decode_in(bytes, true)
}

fn decode_in(bytes: &[u8], outer: bool) -> Result<Loaded, DecodeError> {
    if bytes.is_empty() {
        return Err(DecodeError::Empty);
    }
    if bmv2_json::is_bmv2_json(bytes) {
        let program = bmv2_json::load_bytes(bytes).map_err(DecodeError::Bmv2Json)?;
        return Ok(Loaded {
            compiled: None,
            program,
        });
    }
    if outer {
        if let Some(inner) = pi_device_data(bytes) {
            return decode_in(&inner, false).map_err(|e| DecodeError::PiDeviceData(Box::new(e)));
        }
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(DecodeError::UnknownFormat);
    };
    let (name, source, dialect) = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(o)) => {
            let format = o.get("format").and_then(|f| f.as_str());
            if format != Some(FORMAT) {
                return Err(DecodeError::OtherFormat(format.map(str::to_string)));
            }
            let version = o.get("version").and_then(|v| v.as_u64());
            if version != Some(VERSION) {
                return Err(DecodeError::Version(version));
            }
            let source = o
                .get("source")
                .and_then(|s| s.as_str())
                .ok_or(DecodeError::NoSource)?;
            let name = o
                .get("program")
                .and_then(|s| s.as_str())
                .unwrap_or("<device config>");
            let dialect = match o.get("pna_dialect") {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(3) | Some(4) => v.as_u64(),
                    _ => return Err(DecodeError::Dialect(v.to_string())),
                },
            };
            (name.to_string(), source.to_string(), dialect)
        }
        _ => ("<device config>".to_string(), text.to_string(), None),
    };
    let mut opts = Options::default();
    if let Some(d) = dialect {
        opts.defines
            .push((DIALECT_MACRO.to_string(), d.to_string()));
    }
    let compiled = driver::compile_str(&name, &source, &opts).map_err(DecodeError::Front)?;
    let program = p4_ir::lower(&compiled).map_err(|diagnostic| DecodeError::Lower {
        unit: Box::new(compiled.unit.clone()),
        diagnostic: Box::new(diagnostic),
    })?;
    Ok(Loaded {
        compiled: Some(compiled),
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> Compiled {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        driver::compile_file(&p, &Options::default()).unwrap_or_else(|f| panic!("{}", f.render()))
    }

    #[test]
    fn round_trip_loads_the_same_program() {
        for ex in ["pna-add-on-miss.p4", "v1model-router.p4"] {
            let c = example(ex);
            let prog = p4_ir::lower(&c).unwrap();
            let cfg = encode(&c, ex);
            let l = decode(&cfg).unwrap();
            assert_eq!(l.program.tables.len(), prog.tables.len());
            let names: Vec<&str> = l.program.tables.iter().map(|t| t.name.as_str()).collect();
            let want: Vec<&str> = prog.tables.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, want, "{ex}");
            assert_eq!(l.program.arch, prog.arch);
        }
    }

    #[test]
    fn pi_wrappers_of_either_layout_load_what_they_carry() {
        let c = example("v1model-router.p4");
        let cfg = encode(&c, "v1model-router.p4");
        let want = decode(&cfg).unwrap().program.tables.len();
        let new = PiDeviceConfig {
            reassign: true,
            extras: Some(PiExtras {
                kv: [("k".to_string(), "v".to_string())].into_iter().collect(),
            }),
            device_data: cfg.clone(),
        }
        .encode_to_vec();
        let old = PiDeviceConfigV0 {
            extras: None,
            device_data: cfg.clone(),
        }
        .encode_to_vec();
        for w in [new, old] {
            let l = decode(&w).unwrap();
            assert_eq!(l.program.tables.len(), want);
            assert!(l.compiled.is_some());
        }
        // A wrapper around something that is no program says where the fault is.
        let bad = PiDeviceConfig {
            reassign: true,
            extras: None,
            device_data: vec![0xff, 0x00],
        }
        .encode_to_vec();
        let e = err(&bad);
        assert!(
            e.contains("device_data") && e.contains("none of the formats"),
            "{e}"
        );
        // A wrapper inside a wrapper is not unwrapped twice.
        let twice = PiDeviceConfig {
            reassign: false,
            extras: None,
            device_data: PiDeviceConfig {
                reassign: false,
                extras: None,
                device_data: cfg,
            }
            .encode_to_vec(),
        }
        .encode_to_vec();
        assert!(err(&twice).contains("device_data"));
    }

    fn err(b: &[u8]) -> String {
        match decode(b) {
            Ok(_) => panic!("loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_configs_are_errors_that_say_why() {
        assert!(err(b"").contains("empty"));
        let e = err(&[0xff, 0xfe]);
        assert!(
            e.contains("none of the formats") && e.contains("BMv2 JSON"),
            "{e}"
        );
        let e = err(br#"{"format":"other","version":1,"source":""}"#);
        assert!(e.contains("format") && e.contains("BMv2 JSON"), "{e}");
        let e = err(br#"{"format":"nevermiss-device-config","version":9,"source":""}"#);
        assert!(e.contains("version"), "{e}");
        let e = err(b"control c() { apply { x = 1; } }");
        assert!(e.contains("error:"), "{e}");
    }
}
