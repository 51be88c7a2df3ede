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
//! program on any machine, without files or include paths. As a convenience, a device config
//! that is not such an object is taken as P4 source text (a `.p4` file with only `#include`s of
//! nevermiss's own `p4include/`).

use p4_front::driver::{self, Compiled, Options};
use p4_front::pna_dialect::{PnaDialect, DIALECT_MACRO};

/// The `format` field's value.
pub const FORMAT: &str = "nevermiss-device-config";
/// The version this build writes and reads.
pub const VERSION: u64 = 1;

/// A program loaded from a device config.
pub struct Loaded {
    pub compiled: Compiled,
    pub program: p4_ir::Program,
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

/// Loads the program a device config carries. Errors say what is wrong with the config, or give
/// the program's diagnostics (`file:line:col: error: ...`).
pub fn decode(bytes: &[u8]) -> Result<Loaded, String> {
    if bytes.is_empty() {
        return Err("the device config is empty".into());
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("the device config is not UTF-8 text: {e}"))?;
    let (name, source, dialect) = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(o)) => {
            let format = o.get("format").and_then(|f| f.as_str());
            if format != Some(FORMAT) {
                return Err(format!(
                    "the device config's format is {format:?}, not \"{FORMAT}\""
                ));
            }
            let version = o.get("version").and_then(|v| v.as_u64());
            if version != Some(VERSION) {
                return Err(format!(
                    "device config version {version:?}: this nevermiss reads version {VERSION}"
                ));
            }
            let source = o
                .get("source")
                .and_then(|s| s.as_str())
                .ok_or("the device config has no \"source\" string")?;
            let name = o
                .get("program")
                .and_then(|s| s.as_str())
                .unwrap_or("<device config>");
            let dialect = match o.get("pna_dialect") {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(3) | Some(4) => v.as_u64(),
                    _ => return Err(format!("pna_dialect {v}: expected 3, 4 or null")),
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
    let compiled = driver::compile_str(&name, &source, &opts).map_err(|f| f.render())?;
    let program =
        p4_ir::lower(&compiled).map_err(|d| p4_front::diag::render(&compiled.unit, &d))?;
    Ok(Loaded { compiled, program })
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

    fn err(b: &[u8]) -> String {
        match decode(b) {
            Ok(_) => panic!("loaded"),
            Err(e) => e,
        }
    }

    #[test]
    fn bad_configs_are_errors_that_say_why() {
        assert!(err(b"").contains("empty"));
        assert!(err(&[0xff, 0xfe]).contains("UTF-8"));
        let e = err(br#"{"format":"other","version":1,"source":""}"#);
        assert!(e.contains("format"), "{e}");
        let e = err(br#"{"format":"nevermiss-device-config","version":9,"source":""}"#);
        assert!(e.contains("version"), "{e}");
        let e = err(b"control c() { apply { x = 1; } }");
        assert!(e.contains("error:"), "{e}");
    }
}
