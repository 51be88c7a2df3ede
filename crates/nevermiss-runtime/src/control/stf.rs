//! Control-plane operations in p4c's STF syntax (`add`, `setdefault`, `check_counter` and the
//! BMv2 CLI commands STF tests use: mirroring sessions, multicast groups, registers, meters).
//!
//! Names are matched as p4c's runners match them: the full control-plane name, or else a
//! unique suffix after a `.` (`ipv4_lpm` for `MyIngress.ipv4_lpm`). Every unknown name is an
//! error naming it; nothing here panics on bad input.

use crate::state::GREEN;
use crate::state::{RtExtern, Switch};
use nevermiss_io::stf::{CmpOp, CountType, CounterRef, KeyValue, Number, StfCommand};
use nevermiss_tables::{ActionData, EntryHandle, FieldMatch};
use num_bigint::BigUint;
use p4_ir::{find_by_name, MatchKind, Table, TableAction};
use std::collections::HashMap;
use std::fmt;
use std::sync::PoisonError;

/// Control-plane state of one session (entry ids named by `add ... = ID`, multicast nodes).
pub struct ControlPlane<'s> {
    /// The switch the commands apply to.
    pub sw: &'s Switch,
    ids: HashMap<String, (usize, EntryHandle)>,
    nodes: Vec<(u32, Vec<u32>)>,
    /// Entries added without an explicit priority get decreasing priorities (first wins).
    next_prio: u32,
}

/// The result of a `check_counter`: `Err` on a failed check.
pub type CheckResult = Result<(), CommandError>;

/// Why an STF or BMv2 CLI control-plane command was refused, or a `check_counter` failed.
/// Every name in it is the one the command gave (or the table's, action's or field's full
/// name where it was found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// `packet` and `expect` given to the control plane.
    NotControl,
    /// No table of that name.
    UnknownTable(String),
    /// The table has no action of that name.
    UnknownAction {
        /// The table.
        table: String,
        /// The action named.
        action: String,
    },
    /// The action has no parameter of that name.
    UnknownParam {
        /// The action.
        action: String,
        /// The parameter named.
        param: String,
    },
    /// An action parameter the command did not give.
    MissingParam {
        /// The action.
        action: String,
        /// The parameter.
        param: String,
    },
    /// A parameter's value wider than the parameter.
    ParamTooWide {
        /// The value as written.
        value: String,
        /// The action.
        action: String,
        /// The parameter.
        param: String,
        /// The parameter's width in bits.
        width: u32,
    },
    /// An action only a table's default may use (`@defaultonly`), in an entry.
    DefaultOnly {
        /// The action.
        action: String,
        /// The table.
        table: String,
    },
    /// An action only entries may use (`@tableonly`), as the default.
    TableOnly {
        /// The action.
        action: String,
        /// The table.
        table: String,
    },
    /// `setdefault` on a table whose default action is `const`.
    ConstDefault(String),
    /// The table has no key field of that name.
    UnknownKey {
        /// The table.
        table: String,
        /// The key field named.
        key: String,
    },
    /// An exact or selector key field the entry did not give.
    MissingKey {
        /// The table.
        table: String,
        /// The key field.
        key: String,
    },
    /// A key value (`what`: its value, or its mask) wider than its field.
    KeyTooWide {
        /// What does not fit: `value` or `mask`.
        what: KeyPart,
        /// The value as written.
        value: String,
        /// The table.
        table: String,
        /// The key field.
        key: String,
        /// The field's width in bits.
        width: u32,
    },
    /// An LPM key value that is not a prefix.
    NotAPrefix {
        /// The value as written.
        value: String,
        /// The key field.
        key: String,
    },
    /// A prefix length longer than its key field.
    PrefixTooLong {
        /// The prefix length.
        len: u32,
        /// The value as written.
        value: String,
        /// The table.
        table: String,
        /// The key field.
        key: String,
        /// The field's width in bits.
        width: u32,
    },
    /// The table refused the entry or default action.
    Table {
        /// The table.
        table: String,
        /// Why.
        error: nevermiss_tables::TableError,
    },
    /// No extern of that kind and name (`counter`, `register`, `meter`).
    UnknownExtern {
        /// The kind the command needs.
        kind: &'static str,
        /// The name given.
        name: String,
    },
    /// `check_counter` on something that is not a counter.
    NotACounter(String),
    /// A counter index beyond the counter's size.
    CounterIndex {
        /// The counter.
        name: String,
        /// The index as written.
        index: String,
    },
    /// An entry id (`$ID`) no `add ... = ID` named.
    UnknownEntryId(String),
    /// A `check_counter` that does not hold.
    CheckFailed {
        /// The counter.
        name: String,
        /// The count read.
        got: u64,
        /// What was compared (packets or bytes).
        ty: CountType,
        /// The comparison.
        op: CmpOp,
        /// The number compared with.
        want: u64,
    },
    /// `mc_node_update` or `mc_node_associate` of a node handle never created.
    UnknownNode {
        /// The command.
        command: String,
        /// The node handle.
        node: usize,
    },
    /// A command neither STF nor the BMv2 CLI subset knows.
    UnknownCommand(String),
    /// A CLI command without its argument number `n` (1-based).
    MissingArg {
        /// The command.
        command: String,
        /// The argument's number.
        n: usize,
    },
    /// A CLI argument that should be a number and is not.
    NotANumber {
        /// The command.
        command: String,
        /// The argument as written.
        word: String,
    },
    /// A meter rate argument without `:` (`RATE:BURST`).
    RateBurst {
        /// The command.
        command: String,
        /// The argument as written.
        word: String,
    },
    /// A meter rate or burst that is not a number.
    BadRate {
        /// The command.
        command: String,
        /// `rate` or `burst`.
        what: &'static str,
        /// The text as written.
        text: String,
    },
    /// Meter rates not given as one or two `RATE:BURST` pairs.
    RatePairs(String),
}

/// The part of a key value a [`CommandError::KeyTooWide`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPart {
    /// The value itself.
    Value,
    /// A ternary value's mask.
    Mask,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CommandError as E;
        match self {
            E::NotControl => f.write_str("packet and expect are not control-plane commands"),
            E::UnknownTable(name) => write!(f, "unknown table `{name}`"),
            E::UnknownAction { table, action } => {
                write!(f, "table `{table}` has no action `{action}`")
            }
            E::UnknownParam { action, param } => {
                write!(f, "action `{action}` has no parameter `{param}`")
            }
            E::MissingParam { action, param } => {
                write!(f, "missing parameter `{param}` of action `{action}`")
            }
            E::ParamTooWide {
                value,
                action,
                param,
                width,
            } => write!(
                f,
                "value {value} does not fit parameter `{param}` of action `{action}` ({width} bits)"
            ),
            E::DefaultOnly { action, table } => {
                write!(f, "action `{action}` of table `{table}` is @defaultonly")
            }
            E::TableOnly { action, table } => {
                write!(f, "action `{action}` of table `{table}` is @tableonly")
            }
            E::ConstDefault(table) => write!(f, "table `{table}` has a const default action"),
            E::UnknownKey { table, key } => write!(f, "table `{table}` has no key field `{key}`"),
            E::MissingKey { table, key } => {
                write!(f, "missing key field `{key}` of table `{table}`")
            }
            E::KeyTooWide {
                what,
                value,
                table,
                key,
                width,
            } => {
                match what {
                    KeyPart::Value => write!(f, "value {value}")?,
                    KeyPart::Mask => write!(f, "mask of `{value}`")?,
                }
                write!(
                    f,
                    " does not fit key field `{key}` of table `{table}` ({width} bits)"
                )
            }
            E::NotAPrefix { value, key } => {
                write!(f, "`{value}` is not a prefix for key field `{key}`")
            }
            E::PrefixTooLong {
                len,
                value,
                table,
                key,
                width,
            } => write!(
                f,
                "prefix length {len} of `{value}` is longer than key field `{key}` of table \
                 `{table}` ({width} bits)"
            ),
            E::Table { table, error } => write!(f, "table `{table}`: {error}"),
            E::UnknownExtern { kind, name } => write!(f, "unknown {kind} `{name}`"),
            E::NotACounter(name) => write!(f, "`{name}` is not a counter"),
            E::CounterIndex { name, index } => {
                write!(f, "counter `{name}`: index {index} out of range")
            }
            E::UnknownEntryId(id) => write!(f, "unknown entry id `{id}`"),
            E::CheckFailed {
                name,
                got,
                ty,
                op,
                want,
            } => write!(
                f,
                "check_counter {name}: {got} {ty:?} does not satisfy {op:?} {want}"
            ),
            E::UnknownNode { command, node } => write!(f, "{command}: unknown node {node}"),
            E::UnknownCommand(c) => write!(f, "unknown command `{c}`"),
            E::MissingArg { command, n } => write!(f, "{command}: missing argument {n}"),
            E::NotANumber { command, word } => write!(f, "{command}: `{word}` is not a number"),
            E::RateBurst { command, word } => {
                write!(f, "{command}: expected RATE:BURST, found `{word}`")
            }
            E::BadRate {
                command,
                what,
                text,
            } => write!(f, "{command}: bad {what} `{text}`"),
            E::RatePairs(command) => write!(f, "{command}: expected two RATE:BURST pairs"),
        }
    }
}

impl std::error::Error for CommandError {}

impl<'s> ControlPlane<'s> {
    /// A session with no named entries and no multicast nodes yet.
    pub fn new(sw: &'s Switch) -> ControlPlane<'s> {
        ControlPlane {
            sw,
            ids: HashMap::new(),
            nodes: Vec::new(),
            next_prio: 1 << 30,
        }
    }

    /// Applies one control-plane command. Packet and expectation commands are not handled
    /// here (an error).
    pub fn apply(&mut self, cmd: &StfCommand) -> Result<(), CommandError> {
        match cmd {
            StfCommand::Add {
                table,
                priority,
                keys,
                action,
                id,
            } => {
                let (ti, h) = self.add(table, *priority, keys, &action.name, &action.args)?;
                if let Some(id) = id {
                    self.ids.insert(id.clone(), (ti, h));
                }
                Ok(())
            }
            StfCommand::SetDefault { table, action } => {
                self.set_default(table, &action.name, &action.args)
            }
            StfCommand::CheckCounter {
                name,
                target,
                check,
            } => self.check_counter(name, target, check),
            StfCommand::RemoveAll => {
                for (i, t) in self.sw.rt_tables().iter().enumerate() {
                    self.sw.respec(i, || t.table().clear());
                }
                self.sw.settle_specs();
                Ok(())
            }
            StfCommand::Wait | StfCommand::NoPacket => Ok(()),
            StfCommand::Other { command, rest } => self.cli(command, rest),
            StfCommand::Packet { .. } | StfCommand::Expect { .. } => Err(CommandError::NotControl),
        }
    }

    fn table(&self, name: &str) -> Result<(usize, &'s Table), CommandError> {
        match self.sw.prog().find_table(name) {
            Some(i) => Ok((i as usize, &self.sw.prog().tables[i as usize])),
            None => Err(CommandError::UnknownTable(name.to_string())),
        }
    }

    fn action<'t>(t: &'t Table, name: &str) -> Result<(u32, &'t TableAction), CommandError> {
        match find_by_name(t.actions.iter().map(|a| a.name.as_str()), name) {
            Some(i) => Ok((i, &t.actions[i as usize])),
            None => Err(CommandError::UnknownAction {
                table: t.name.clone(),
                action: name.to_string(),
            }),
        }
    }

    /// Packs an action's arguments (by name) into its parameter block.
    fn params(a: &TableAction, args: &[(String, Number)]) -> Result<Vec<u8>, CommandError> {
        for (n, _) in args {
            if !a.params.iter().any(|p| &p.name == n) {
                return Err(CommandError::UnknownParam {
                    action: a.name.clone(),
                    param: n.clone(),
                });
            }
        }
        let mut out = Vec::with_capacity(a.params_bytes());
        for p in &a.params {
            let Some((_, v)) = args.iter().find(|(n, _)| *n == p.name) else {
                return Err(CommandError::MissingParam {
                    action: a.name.clone(),
                    param: p.name.clone(),
                });
            };
            out.extend(bytes_of(&v.value, p.ty.width).ok_or_else(|| {
                CommandError::ParamTooWide {
                    value: v.text.clone(),
                    action: a.name.clone(),
                    param: p.name.clone(),
                    width: p.ty.width,
                }
            })?);
        }
        Ok(out)
    }

    /// `add TABLE [PRIORITY] KEY:VALUE... ACTION(ARGS)`.
    pub fn add(
        &mut self,
        table: &str,
        priority: Option<u64>,
        keys: &[nevermiss_io::stf::KeyMatch],
        action: &str,
        args: &[(String, Number)],
    ) -> Result<(usize, EntryHandle), CommandError> {
        let (ti, t) = self.table(table)?;
        let (ai, a) = Self::action(t, action)?;
        if a.default_only {
            return Err(CommandError::DefaultOnly {
                action: a.name.clone(),
                table: t.name.clone(),
            });
        }
        let params = Self::params(a, args)?;
        let tkeys: Vec<&p4_ir::TableKey> = t
            .keys
            .iter()
            .filter(|k| k.kind != MatchKind::Selector)
            .collect();
        let mut given: Vec<Option<&KeyValue>> = vec![None; tkeys.len()];
        for km in keys {
            let want = stack_names(&km.name);
            let Some(i) = find_by_name(tkeys.iter().map(|k| k.name.as_str()), &want) else {
                return Err(CommandError::UnknownKey {
                    table: t.name.clone(),
                    key: km.name.clone(),
                });
            };
            given[i as usize] = Some(&km.value);
        }
        let mut ms = Vec::with_capacity(tkeys.len());
        for (k, g) in tkeys.iter().zip(&given) {
            let w = k.expr.ty().width;
            let too_wide = |what, v: &KeyValue| CommandError::KeyTooWide {
                what,
                value: v.to_string(),
                table: t.name.clone(),
                key: k.name.clone(),
                width: w,
            };
            let bad = |v: &KeyValue| too_wide(KeyPart::Value, v);
            let too_long = |len, v: &KeyValue| CommandError::PrefixTooLong {
                len,
                value: v.to_string(),
                table: t.name.clone(),
                key: k.name.clone(),
                width: w,
            };
            let m = match (k.kind, g) {
                (MatchKind::Exact | MatchKind::Selector, None) => {
                    return Err(CommandError::MissingKey {
                        table: t.name.clone(),
                        key: k.name.clone(),
                    })
                }
                (MatchKind::Exact | MatchKind::Selector, Some(v)) => {
                    FieldMatch::Exact(bytes_of(v.value(), w).ok_or_else(|| bad(v))?)
                }
                (MatchKind::Lpm, None) => FieldMatch::Lpm(vec![0; bytes_len(w)], 0),
                (MatchKind::Lpm, Some(v)) => {
                    let Some((val, len)) = v.to_lpm(w) else {
                        return Err(CommandError::NotAPrefix {
                            value: v.to_string(),
                            key: k.name.clone(),
                        });
                    };
                    if len > w {
                        return Err(too_long(len, v));
                    }
                    FieldMatch::Lpm(bytes_of(&val, w).ok_or_else(|| bad(v))?, len)
                }
                (MatchKind::Ternary, None) => {
                    FieldMatch::Ternary(vec![0; bytes_len(w)], vec![0; bytes_len(w)])
                }
                (MatchKind::Ternary, Some(v)) => {
                    match v {
                        KeyValue::Lpm { prefix_len, .. } if *prefix_len > w => {
                            return Err(too_long(*prefix_len, v));
                        }
                        KeyValue::Ternary { mask, .. } if bytes_of(mask, w).is_none() => {
                            return Err(too_wide(KeyPart::Mask, v));
                        }
                        _ => {}
                    }
                    let (val, m) = v.to_ternary(w);
                    if bytes_of(&val, w).is_none() {
                        return Err(bad(v));
                    }
                    FieldMatch::Ternary(
                        bytes_of(&val, w).ok_or_else(|| bad(v))?,
                        bytes_of(&m, w).ok_or_else(|| bad(v))?,
                    )
                }
                (MatchKind::Range, None) => {
                    let max = (BigUint::from(1u8) << w) - 1u8;
                    FieldMatch::Range(vec![0; bytes_len(w)], bytes_of(&max, w).unwrap_or_default())
                }
                (MatchKind::Range, Some(v)) => {
                    let b = bytes_of(v.value(), w).ok_or_else(|| bad(v))?;
                    FieldMatch::Range(b.clone(), b)
                }
                (MatchKind::Optional, None) => FieldMatch::Optional(None),
                (MatchKind::Optional, Some(v)) => match v {
                    KeyValue::Ternary { mask, .. } if *mask == BigUint::default() => {
                        FieldMatch::Optional(None)
                    }
                    _ => FieldMatch::Optional(Some(bytes_of(v.value(), w).ok_or_else(|| bad(v))?)),
                },
            };
            ms.push(m);
        }
        let rt = &self.sw.rt_tables()[ti];
        let prio = if rt.table().spec().has_priority() {
            match priority {
                Some(p) => u32::try_from(p.min(u64::from(u32::MAX - 1)) + 1).unwrap_or(u32::MAX),
                None => {
                    self.next_prio = self.next_prio.saturating_sub(1).max(1);
                    self.next_prio
                }
            }
        } else {
            0
        };
        let h = self
            .sw
            .respec(ti, || {
                rt.table().insert(&ms, prio, ActionData::new(ai, params))
            })
            .map_err(|error| CommandError::Table {
                table: t.name.clone(),
                error,
            })?;
        self.sw.settle_specs();
        self.sw.reset_direct(ti, h.slot());
        Ok((ti, h))
    }

    /// `setdefault TABLE ACTION(ARGS)`.
    pub fn set_default(
        &mut self,
        table: &str,
        action: &str,
        args: &[(String, Number)],
    ) -> Result<(), CommandError> {
        let (ti, t) = self.table(table)?;
        let (ai, a) = Self::action(t, action)?;
        if a.table_only {
            return Err(CommandError::TableOnly {
                action: a.name.clone(),
                table: t.name.clone(),
            });
        }
        if t.default_const {
            return Err(CommandError::ConstDefault(t.name.clone()));
        }
        let params = Self::params(a, args)?;
        self.sw.rt_tables()[ti]
            .table()
            .set_default(ActionData::new(ai, params))
            .map_err(|error| CommandError::Table {
                table: t.name.clone(),
                error,
            })
    }

    fn check_counter(
        &self,
        name: &str,
        target: &CounterRef,
        check: &Option<(CountType, CmpOp, Number)>,
    ) -> CheckResult {
        let Some(xi) = self.sw.prog().find_extern(name) else {
            return Err(CommandError::UnknownExtern {
                kind: "counter",
                name: name.to_string(),
            });
        };
        let (packets, bytes) = match (self.sw.externs().get(xi), target) {
            (Some(RtExtern::Counter(cells)), CounterRef::Index(n)) => {
                let i = n.to_u64().unwrap_or(u64::MAX) as usize;
                cells
                    .get(i)
                    .map(|c| c.read())
                    .ok_or_else(|| CommandError::CounterIndex {
                        name: name.to_string(),
                        index: n.text.clone(),
                    })?
            }
            (Some(RtExtern::DirectCounter(cells)), CounterRef::Id(id)) => {
                let Some((_, h)) = self.ids.get(id.trim_start_matches('$')) else {
                    return Err(CommandError::UnknownEntryId(id.clone()));
                };
                cells.get(h.slot()).map(|c| c.read()).unwrap_or((0, 0))
            }
            (Some(RtExtern::DirectCounter(cells)), CounterRef::Index(n)) => {
                let i = n.to_u64().unwrap_or(u64::MAX) as usize;
                cells.get(i).map(|c| c.read()).unwrap_or((0, 0))
            }
            _ => return Err(CommandError::NotACounter(name.to_string())),
        };
        let (ty, op, want) = match check {
            Some((t, o, n)) => (*t, *o, n.to_u64().unwrap_or(u64::MAX)),
            None => (CountType::Packets, CmpOp::Eq, 0),
        };
        let got = if ty == CountType::Packets {
            packets
        } else {
            bytes
        };
        let ok = match op {
            CmpOp::Eq => got == want,
            CmpOp::Ne => got != want,
            CmpOp::Lt => got < want,
            CmpOp::Le => got <= want,
            CmpOp::Gt => got > want,
            CmpOp::Ge => got >= want,
        };
        if ok {
            Ok(())
        } else {
            Err(CommandError::CheckFailed {
                name: name.to_string(),
                got,
                ty,
                op,
                want,
            })
        }
    }

    /// The BMv2 CLI commands.
    fn cli(&mut self, command: &str, rest: &str) -> Result<(), CommandError> {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| cli_number(command, &words, i);
        match command {
            "mirroring_add" => {
                let (s, p) = (num(0)?, num(1)?);
                self.sw.pre().add_mirror(s as u32, p as u32);
                Ok(())
            }
            "mirroring_delete" => {
                let s = num(0)?;
                self.sw.pre().delete_mirror(s as u32);
                Ok(())
            }
            "mirroring_get" | "counter_read" | "register_read" | "meter_get_rates" => Ok(()),
            "mc_mgrp_create" => {
                let g = num(0)?;
                self.sw.pre().create_group(g as u32);
                Ok(())
            }
            "mc_node_create" | "mc_node_update" => {
                let rid = num(0)? as u32;
                let mut ports = Vec::new();
                for i in 1..words.len() {
                    ports.push(num(i)? as u32);
                }
                if command == "mc_node_create" {
                    self.nodes.push((rid, ports));
                } else {
                    let h = rid as usize;
                    let Some(n) = self.nodes.get_mut(h) else {
                        return Err(CommandError::UnknownNode {
                            command: command.to_string(),
                            node: h,
                        });
                    };
                    n.1 = ports;
                }
                Ok(())
            }
            "mc_node_associate" => {
                let (g, h) = (num(0)? as u32, num(1)? as usize);
                let Some((rid, ports)) = self.nodes.get(h).cloned() else {
                    return Err(CommandError::UnknownNode {
                        command: command.to_string(),
                        node: h,
                    });
                };
                self.sw.pre().add_to_group(g, rid, &ports);
                Ok(())
            }
            "register_write" => {
                let name = words.first().copied().unwrap_or("");
                let (i, v) = (num(1)?, num(2)?);
                match self.extern_named(name) {
                    Some(RtExtern::Register(r)) => {
                        r.write(i, &[v]);
                        Ok(())
                    }
                    _ => Err(CommandError::UnknownExtern {
                        kind: "register",
                        name: name.to_string(),
                    }),
                }
            }
            "register_reset" => {
                let name = words.first().copied().unwrap_or("");
                match self.extern_named(name) {
                    Some(RtExtern::Register(r)) => {
                        r.reset();
                        Ok(())
                    }
                    _ => Err(CommandError::UnknownExtern {
                        kind: "register",
                        name: name.to_string(),
                    }),
                }
            }
            "counter_write" => {
                let name = words.first().copied().unwrap_or("");
                let (i, p, b) = (num(1)?, num(2)?, num(3)?);
                match self.extern_named(name) {
                    Some(RtExtern::Counter(cells)) => {
                        if let Some(c) = cells.get(i as usize) {
                            c.reset();
                            c.count(p, b);
                        }
                        Ok(())
                    }
                    _ => Err(CommandError::UnknownExtern {
                        kind: "counter",
                        name: name.to_string(),
                    }),
                }
            }
            "meter_set_rates" | "meter_array_set_rates" => self.cli_meter_rates(command, &words),
            "mirroring_add_mc" => {
                let (s, g) = (num(0)?, num(1)?);
                self.sw.pre().add_mirror_group(s as u32, g as u32);
                Ok(())
            }
            other => Err(CommandError::UnknownCommand(other.to_string())),
        }
    }

    /// The extern named `name` (full name or unique suffix), with its state.
    fn extern_named(&self, name: &str) -> Option<&'s RtExtern> {
        let sw = self.sw;
        sw.prog()
            .find_extern(name)
            .and_then(|x| sw.externs().get(x))
    }

    /// `meter_set_rates NAME INDEX RATE:BURST...` and `meter_array_set_rates NAME RATE:BURST...`.
    fn cli_meter_rates(&self, command: &str, words: &[&str]) -> Result<(), CommandError> {
        let name = words.first().copied().unwrap_or("");
        let (index, rates_at) = if command == "meter_set_rates" {
            (Some(cli_number(command, words, 1)?), 2)
        } else {
            (None, 1)
        };
        let mut rates = Vec::new();
        for w in words.iter().skip(rates_at) {
            let Some((r, b)) = w.split_once(':') else {
                return Err(CommandError::RateBurst {
                    command: command.to_string(),
                    word: w.to_string(),
                });
            };
            let bad = |what, text: &str| CommandError::BadRate {
                command: command.to_string(),
                what,
                text: text.to_string(),
            };
            let r: f64 = r.parse().map_err(|_| bad("rate", r))?;
            let b: u64 = b.parse().map_err(|_| bad("burst", b))?;
            rates.push((r, b));
        }
        let (c, p) = match rates.as_slice() {
            [c, p] => (*c, *p),
            [c] => (*c, *c),
            _ => return Err(CommandError::RatePairs(command.to_string())),
        };
        let cells = match self.extern_named(name) {
            Some(RtExtern::Meter(cells)) | Some(RtExtern::DirectMeter(cells)) => cells,
            _ => {
                return Err(CommandError::UnknownExtern {
                    kind: "meter",
                    name: name.to_string(),
                })
            }
        };
        for (i, m) in cells.iter().enumerate() {
            if index.is_none_or(|x| x as usize == i) {
                m.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .configure(c.0, c.1, p.0, p.1);
            }
        }
        let _ = GREEN;
        Ok(())
    }
}

/// Argument `i` of a CLI command as a number.
fn cli_number(command: &str, words: &[&str], i: usize) -> Result<u64, CommandError> {
    let w = words.get(i).ok_or_else(|| CommandError::MissingArg {
        command: command.to_string(),
        n: i + 1,
    })?;
    Number::parse(w, false)
        .ok()
        .and_then(|n| n.to_u64())
        .ok_or_else(|| CommandError::NotANumber {
            command: command.to_string(),
            word: w.to_string(),
        })
}

/// BMv2 writes stack elements as `name$N`; P4 as `name[N]`.
fn stack_names(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('[');
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                out.push(d);
                chars.next();
            }
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

fn bytes_len(w: u32) -> usize {
    (w as usize).div_ceil(8)
}

/// The value as `ceil(w/8)` big-endian bytes, `None` when it does not fit `w` bits.
pub fn bytes_of(v: &BigUint, w: u32) -> Option<Vec<u8>> {
    if v.bits() > u64::from(w) {
        return None;
    }
    let n = bytes_len(w);
    let b = v.to_bytes_be();
    let b: &[u8] = if b == [0] { &[] } else { &b };
    let mut out = vec![0u8; n];
    out[n - b.len()..].copy_from_slice(b);
    Some(out)
}
