//! nevermiss's second front end: the BMv2 JSON that p4c-bm2-ss (v1model) and p4c-bm2-psa (PSA)
//! write, loaded into [`p4_ir::Program`] so that the same runtime, generated code and tables run
//! it as run a program loaded from P4 source.
//!
//! The format is BMv2's (`docs/JSON_format.md` of p4lang/behavioral-model, versions 2.x, read from
//! `__meta__.version`); where the document leaves a choice open, this front end does what BMv2's
//! own loader (`src/bm_sim/P4Objects.cpp`) and targets (`simple_switch`, `psa_switch`) do, and
//! each such place says so. The names in the JSON are the control-plane names (they are the
//! names of p4c's P4Info), and they become the IR's names unchanged.
//!
//! What becomes what (docs/bmv2-json.md has the whole table):
//! - header types and instances, stacks, unions and union stacks → frame regions laid out as
//!   the P4 lowering lays them out (`layout.rs`); metadata instances are always valid;
//! - expressions → IR expressions with BMv2's arbitrary-precision arithmetic made exact by
//!   widths chosen per operation (`expr.rs`);
//! - actions' primitives, with p4c's `_jump`/`_jump_if_zero` turned back into `if`/`else` and
//!   `for` loops (`prims.rs`);
//! - parsers, parse value sets, deparsers (`parser.rs`); pipelines: tables, conditionals and
//!   their next-node graph, turned back into structured statements (`pipeline.rs`);
//! - counters, meters, registers, calculations (hashes), checksums, field and learn lists, action
//!   profiles and selectors (`externs.rs`); the architecture's blocks (`arch.rs`; PSA's blocks
//!   and externs as psa_switch has them, `psa.rs`).
//!
//! Loading never panics: malformed JSON and constructs this front end does not support are an
//! [`Error`] naming the JSON path.

#![deny(missing_docs)]

mod arch;
mod expr;
mod externs;
mod json;
mod layout;
mod parser;
mod pipeline;
mod prims;
mod psa;

pub use json::Error;
use json::{Result, J};
use p4_ir::*;
use serde_json::Value;
use std::collections::HashMap;

/// The BMv2 JSON major version this front end reads (BMv2 requires it too).
pub const MAJOR_VERSION: i64 = 2;
/// The newest minor version this front end knows (BMv2's `max_minor_version` is 24).
pub const MAX_MINOR_VERSION: i64 = 24;

/// The top-level keys that only a BMv2 JSON has (p4c-bm2-* writes all of them).
const BMV2_KEYS: [&str; 5] = [
    "header_types",
    "headers",
    "parsers",
    "deparsers",
    "pipelines",
];

/// Whether `bytes` are a BMv2 JSON document: a JSON object with BMv2's top-level keys
/// (`header_types`, `headers`, `parsers`, `deparsers`, `pipelines`). Decides by content, for
/// files and device configs alike; a document that is not JSON, or JSON of another shape, is not.
pub fn is_bmv2_json(bytes: &[u8]) -> bool {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
    if start.map(|i| bytes[i]) != Some(b'{') {
        return false;
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(o)) => BMV2_KEYS.iter().all(|k| o.contains_key(*k)),
        _ => false,
    }
}

/// When `bytes` are a JSON object but not a BMv2 program: the BMv2 keys it lacks (so that a
/// loader can say so instead of reading the JSON as P4 source).
pub fn missing_bmv2_keys(bytes: &[u8]) -> Option<Vec<&'static str>> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(o)) => {
            let missing: Vec<&str> = BMV2_KEYS
                .iter()
                .copied()
                .filter(|k| !o.contains_key(*k))
                .collect();
            (!missing.is_empty()).then_some(missing)
        }
        _ => None,
    }
}

/// Loads a BMv2 JSON document from its bytes.
pub fn load_bytes(bytes: &[u8]) -> std::result::Result<Program, Error> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| Error {
        path: "$".into(),
        msg: format!("not valid JSON: {e}"),
    })?;
    load_value(&v)
}

/// Loads a parsed BMv2 JSON document.
pub fn load_value(v: &Value) -> std::result::Result<Program, Error> {
    let root = J::root(v);
    if !v.is_object() {
        return Err(root.err("expected a BMv2 JSON object"));
    }
    for k in BMV2_KEYS {
        root.get(k)?;
    }
    check_version(&root)?;
    let mut b = Builder::new(root.clone());
    b.run()?;
    Ok(b.finish())
}

/// BMv2's version check (`check_json_version`): a document without `__meta__.version` is
/// accepted (BMv2 does so for old inputs); the major version must be 2; a newer minor version
/// than this front end knows is refused, as BMv2 refuses it.
fn check_version(root: &J<'_>) -> Result<()> {
    let Some(meta) = root.opt("__meta__") else {
        return Ok(());
    };
    let Some(v) = meta.opt("version") else {
        return Ok(());
    };
    let parts = v.arr()?;
    if parts.len() != 2 {
        return Err(v.err("expected [major, minor]"));
    }
    let (major, minor) = (parts[0].int()?, parts[1].int()?);
    if major != MAJOR_VERSION {
        return Err(v.err(format!(
            "BMv2 JSON version {major}.{minor}: nevermiss reads major version {MAJOR_VERSION}"
        )));
    }
    if minor > MAX_MINOR_VERSION {
        return Err(v.err(format!(
            "BMv2 JSON version {major}.{minor}: the newest nevermiss reads is \
             {MAJOR_VERSION}.{MAX_MINOR_VERSION}"
        )));
    }
    Ok(())
}

/// One JSON action, lowered.
#[derive(Clone, Debug)]
pub(crate) struct ActionInfo {
    pub name: String,
    pub func: FnId,
    pub params: Vec<ActionParam>,
}

/// The loader's state: the program being built and what it knows about the document's names.
pub(crate) struct Builder<'a> {
    pub root: J<'a>,
    pub p: Program,
    /// Words of per-packet state allocated so far (zeroed for every packet).
    pub state_words: u32,
    /// Temporaries allocated so far (after the state region; not zeroed).
    pub temp_words: u32,
    pub lay: layout::Layouts,
    /// JSON action id → the lowered action.
    pub actions: HashMap<i64, ActionInfo>,
    pub tables: HashMap<String, TableId>,
    pub counters: HashMap<String, ExternId>,
    pub meters: HashMap<String, externs::MeterInfo>,
    pub registers: HashMap<String, (ExternId, u32)>,
    pub profiles: HashMap<String, ExternId>,
    pub calcs: HashMap<String, externs::Calc<'a>>,
    pub field_lists: HashMap<i64, J<'a>>,
    pub learn_lists: HashMap<i64, J<'a>>,
    pub value_sets: HashMap<String, ValueSetId>,
    /// Extern instances of `extern_instances` (PSA), by name, with their type.
    pub extern_insts: HashMap<String, (ExternId, String)>,
    /// Each pipeline's control function, by name.
    pub pipeline_fns: HashMap<String, FnId>,
    /// The JSON's value of each IR error code, when they differ ([`Program::error_values`]).
    pub error_values: Vec<u64>,
}

impl<'a> Builder<'a> {
    fn new(root: J<'a>) -> Builder<'a> {
        Builder {
            root,
            p: Program::empty(Arch::V1Model),
            state_words: 0,
            temp_words: 0,
            lay: layout::Layouts::default(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            counters: HashMap::new(),
            meters: HashMap::new(),
            registers: HashMap::new(),
            profiles: HashMap::new(),
            calcs: HashMap::new(),
            field_lists: HashMap::new(),
            learn_lists: HashMap::new(),
            value_sets: HashMap::new(),
            extern_insts: HashMap::new(),
            pipeline_fns: HashMap::new(),
            error_values: Vec::new(),
        }
    }

    fn run(&mut self) -> Result<()> {
        let root = self.root.clone();
        self.p.arch = arch::detect(&root)?;
        self.errors(&root)?;
        self.enums(&root)?;
        self.header_types(&root)?;
        self.instances(&root)?;
        // Everything after this point allocates temporaries only.
        self.externs(&root)?;
        self.actions_all(&root)?;
        self.parsers_all(&root)?;
        self.pipelines_all(&root)?;
        self.assemble(&root)
    }

    fn finish(mut self) -> Program {
        // Temporaries were allocated at TEMP_BASE + n; move them after the state region.
        let base = self.state_words;
        self.p.zero_words = base;
        self.p.frame_words = base + self.temp_words;
        layout::relocate(&mut self.p, base);
        // core.p4 declares NoAction `@noWarn("unused")`, which p4c's P4Info shows.
        for f in &mut self.p.functions {
            if f.kind == FnKind::Action && f.name == "NoAction" && f.annotations.is_empty() {
                f.annotations.push(control_plane::Annotation {
                    name: "noWarn".into(),
                    body: control_plane::AnnotationBody::Unstructured {
                        text: "\"unused\"".into(),
                        args: None,
                    },
                });
            }
        }
        // P4Info lists the actions in the JSON's order (p4c's for the program it compiled).
        self.p.control_plane.actions = (0..self.p.functions.len() as FnId)
            .filter(|&f| self.p.functions[f as usize].kind == FnKind::Action)
            .collect();
        self.p
    }

    /// `errors`. The IR numbers `core.p4`'s errors as the runtime raises them (NoError 0,
    /// PacketTooShort 1, ...), the others after them. When the JSON gives the standard errors
    /// other values (p4c builds before C++17 numbered them from 1), the program keeps seeing its
    /// own values: [`Program::error_values`] maps each code to the JSON's value, and constants
    /// in `verify` are translated ([`Builder::error_code_of`]).
    fn errors(&mut self, root: &J<'a>) -> Result<()> {
        let mut given: Vec<(u64, String, J<'a>)> = Vec::new();
        for e in root.list("errors")? {
            let name = e.at(0)?.str()?.to_string();
            let v = e.at(1)?.int()?;
            if !(0..i64::from(i32::MAX)).contains(&v) {
                return Err(e.err(format!("error code {v} is out of range")));
            }
            if given.iter().any(|(w, n, _)| *w == v as u64 || *n == name) {
                return Err(e.err(format!("error {name} ({v}) is declared twice")));
            }
            given.push((v as u64, name, e));
        }
        let identity =
            given.iter().all(
                |(v, name, _)| match errors::NAMES.iter().position(|n| n == name) {
                    Some(std) => std as u64 == *v,
                    None => *v >= errors::NAMES.len() as u64,
                },
            ) && given.iter().all(|(v, _, _)| *v < 4096);
        if identity {
            for (v, name, _) in given {
                let i = v as usize;
                while self.p.errors.len() <= i {
                    let n = self.p.errors.len();
                    self.p.errors.push(format!("error#{n}"));
                }
                self.p.errors[i] = name;
            }
            return Ok(());
        }
        // Renumbered: standard names at their codes, then the others in value order.
        given.sort_by_key(|g| g.0);
        let mut values: Vec<Option<u64>> = vec![None; errors::NAMES.len()];
        for (v, name, _) in &given {
            match errors::NAMES.iter().position(|n| n == name) {
                Some(std) => values[std] = Some(*v),
                None => {
                    self.p.errors.push(name.clone());
                    values.push(Some(*v));
                }
            }
        }
        // A standard error the JSON does not list gets a value no listed error has.
        let mut next = given.iter().map(|g| g.0).max().unwrap_or(0) + 1;
        self.error_values = values
            .into_iter()
            .map(|v| {
                v.unwrap_or_else(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        self.p.error_values = self.error_values.clone();
        Ok(())
    }

    /// The IR code of an error the JSON names by its value.
    pub(crate) fn error_code_of(&self, value: u64) -> Option<u64> {
        if self.error_values.is_empty() {
            return Some(value);
        }
        self.error_values
            .iter()
            .position(|v| *v == value)
            .map(|c| c as u64)
    }

    /// `enums`: member names by value (for the runtime's messages and PSA's packet paths).
    fn enums(&mut self, root: &J<'a>) -> Result<()> {
        for e in root.list("enums")? {
            let name = e.str_of("name")?.to_string();
            let mut members: Vec<String> = Vec::new();
            for m in e.list("entries")? {
                let mname = m.at(0)?.str()?.to_string();
                let v = m.at(1)?.int()?;
                if !(0..=4096).contains(&v) {
                    return Err(m.unsupported(format!("enum value {v} (values above 4096)")));
                }
                let i = v as usize;
                while members.len() <= i {
                    members.push(String::new());
                }
                members[i] = mname;
            }
            self.p.enums.push((name, members));
        }
        Ok(())
    }

    /// Allocates `words` words of per-packet state.
    pub fn alloc_state(&mut self, words: u32, at: &J<'_>) -> Result<u32> {
        let off = self.state_words;
        self.state_words = self.state_words.saturating_add(words);
        if self.state_words.saturating_add(self.temp_words) > layout::MAX_FRAME_WORDS {
            return Err(at.unsupported("a program needing more than 2^24 words per packet"));
        }
        Ok(off)
    }

    /// Allocates `words` words of temporaries (relocated after the state region at the end).
    pub fn alloc_temp(&mut self, words: u32, at: &J<'_>) -> Result<u32> {
        let off = layout::TEMP_BASE + self.temp_words;
        self.temp_words = self.temp_words.saturating_add(words.max(1));
        if self.state_words.saturating_add(self.temp_words) > layout::MAX_FRAME_WORDS {
            return Err(at.unsupported("a program needing more than 2^24 words per packet"));
        }
        Ok(off)
    }

    /// Adds a function.
    pub fn add_fn(&mut self, name: String, kind: FnKind, body: Vec<Stmt>) -> FnId {
        let id = self.p.functions.len() as FnId;
        self.p.functions.push(Function {
            name,
            kind,
            body,
            annotations: Vec::new(),
            params: Vec::new(),
            top_level: false,
        });
        id
    }

    /// Adds an extern instance (one the JSON declares: the control plane sees it).
    pub fn add_extern(&mut self, name: String, kind: ExternKind) -> ExternId {
        let id = self.p.externs.len() as ExternId;
        self.p.externs.push(ExternInst {
            name,
            kind,
            site: ExternSite::Declared,
            type_args: Vec::new(),
            annotations: Vec::new(),
        });
        id
    }
}
