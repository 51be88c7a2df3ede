//! Assembly of a switch from a lowered program: its tables with their default actions and
//! constant entries, the extern state, the engine's plan (machine code, header layouts,
//! prefetched tables) and the architecture's facts, put together as a [`Switch`].

use crate::state::{counters, meters, ActionProfile, Externs, RegisterStore, RtExtern, RtTable};
use crate::state::{ArchInfo, FastHeader, Parts, Plan, Specs, Switch};
use crate::types::{BuildError, Config, Engine, TablePart};
use nevermiss_tables::{
    ActionData, FieldMatch, IdleTimeout as TIdle, KeySpec, MatchKind as TKind, Table, TableError,
    TableSpec, MAX_TABLE_SIZE,
};
use p4_ir::{EntryMatch, ExternKind, IdleTimeout, MatchKind, Program, Ty, Val};
use std::sync::Arc;

impl Switch {
    /// Builds the tables (with their default actions and constant entries) and extern state of
    /// a program.
    pub fn new(prog: Program, config: Config) -> Result<Switch, BuildError> {
        Switch::with_program(Arc::new(prog), config)
    }

    /// [`Switch::new`] over a program shared with other switches.
    pub fn with_program(prog: Arc<Program>, config: Config) -> Result<Switch, BuildError> {
        let native = match config.engine {
            Engine::Jit => Some(Arc::new(crate::engine::native::compile(&prog, &config)?)),
            Engine::Interp => None,
        };
        Switch::with_native(prog, config, native)
    }

    /// [`Switch::with_program`] with the program's machine code already compiled.
    pub(crate) fn with_native(
        prog: Arc<Program>,
        config: Config,
        native: Option<Arc<nevermiss_jit::Compiled>>,
    ) -> Result<Switch, BuildError> {
        let arch = ArchInfo::new(&prog)?;
        let tables = prog
            .tables
            .iter()
            .map(|td| rt_table(&prog, td, &config))
            .collect::<Result<Vec<_>, _>>()?;
        install_constant_entries(&prog, &tables)?;
        let externs = Externs::new(extern_cells(&prog, &tables), action_profiles(&prog));
        let plan = plan(&prog, &config, &arch, &tables, native);
        let sw = Switch::assemble(Parts {
            prog,
            config,
            arch,
            plan,
            tables,
            externs,
        });
        // The entries installed at load.
        sw.respec_all();
        Ok(sw)
    }
}

/// Table `td` at run time: its match-action table (keys, size, idle timeout, default action)
/// and what the engine needs to apply it fast.
fn rt_table(prog: &Program, td: &p4_ir::Table, config: &Config) -> Result<RtTable, BuildError> {
    let keys: Vec<KeySpec> = td
        .keys
        .iter()
        .filter(|k| k.kind != MatchKind::Selector)
        .map(|k| {
            KeySpec::new(
                k.name.clone(),
                k.expr.ty().width,
                match k.kind {
                    MatchKind::Exact | MatchKind::Selector => TKind::Exact,
                    MatchKind::Lpm => TKind::Lpm,
                    MatchKind::Ternary => TKind::Ternary,
                    MatchKind::Range => TKind::Range,
                    MatchKind::Optional => TKind::Optional,
                },
            )
        })
        .collect();
    let max_params = td
        .actions
        .iter()
        .map(|a| a.params_bytes())
        .max()
        .unwrap_or(0);
    let indirect = td.implementation.filter(|x| {
        matches!(
            prog.externs.get(*x as usize).map(|e| &e.kind),
            Some(ExternKind::ActionProfile { .. } | ExternKind::ActionSelector { .. })
        )
    });
    // An indirect table's entries hold a member or group id (`profiles::reference`).
    let max_params = if indirect.is_some() {
        max_params.max(4)
    } else {
        max_params
    };
    let declared = config
        .table_sizes
        .iter()
        .rev()
        .find(|(name, _)| *name == td.name)
        .map_or(td.size, |&(_, n)| n);
    let size = (declared.max(1) as usize)
        .min(MAX_TABLE_SIZE)
        .min(config.table_size_cap.unwrap_or(usize::MAX));
    let writes_back: Vec<bool> = td
        .actions
        .iter()
        .map(|a| a.params.iter().any(|p| p.is_ref))
        .collect();
    let spec = TableSpec::new(td.name.clone(), keys, size)
        .with_add_on_miss(td.add_on_miss)
        .with_data_plane_updates(
            config.lock_free_updates
                && (writes_back.contains(&true) || td.idle_timeout != IdleTimeout::None),
        )
        .with_idle_timeout(match td.idle_timeout {
            IdleTimeout::None => TIdle::NoTimeout,
            IdleTimeout::NotifyControl => TIdle::NotifyControl,
            IdleTimeout::AutoDelete => TIdle::AutoDelete,
        })
        .with_max_params_bytes(max_params);
    let t = Table::with_tick(spec, config.tick_ns.max(1))
        .map_err(|e| table_error(td, TablePart::Spec, e))?;
    if let Some(p) = &config.expire_profiles_ns {
        if td.idle_timeout != IdleTimeout::None {
            t.set_profiles(p)
                .map_err(|e| table_error(td, TablePart::Spec, e))?;
        }
    }
    if let Some((a, params)) = &td.default_action {
        t.set_default(ActionData::new(*a, params.as_slice()))
            .map_err(|e| table_error(td, TablePart::DefaultAction, e))?;
    }
    let restart_on_hit = td.restarts_on_hit(prog.arch);
    let lean = td.lean(prog.arch);
    let plan = lean.then(|| {
        td.actions
            .iter()
            .map(|a| {
                let mut off = 0u32;
                a.params
                    .iter()
                    .map(|p| {
                        let n = p.ty.bytes() as u32;
                        let at = (p.slot, off, n, p4_ir::ops::mask(p.ty.width));
                        off += n;
                        at
                    })
                    .collect()
            })
            .collect()
    });
    Ok(RtTable::new(
        t,
        writes_back,
        restart_on_hit,
        indirect,
        plan,
        td.direct_counter.is_some() || td.direct_meter.is_some(),
    ))
}

/// Installs the tables' constant entries (`const entries`, `entries`): a duplicate of an earlier
/// entry is shadowed by it (first wins), an entry no table can express is left out.
fn install_constant_entries(prog: &Program, tables: &[RtTable]) -> Result<(), BuildError> {
    for (td, rt) in prog.tables.iter().zip(tables) {
        let kinds: Vec<(MatchKind, Ty)> = td
            .keys
            .iter()
            .filter(|k| k.kind != MatchKind::Selector)
            .map(|k| (k.kind, k.expr.ty()))
            .collect();
        for e in &td.entries {
            let Some(ms) = entry_matches(&kinds, &e.matches) else {
                continue;
            };
            // Duplicates of earlier entries are shadowed by them (first wins).
            match rt.table().insert(
                &ms,
                e.priority,
                ActionData::new(e.action, e.params.as_slice()),
            ) {
                Ok(_) | Err(TableError::Exists) => {}
                Err(err) => return Err(table_error(td, TablePart::ConstantEntry, err)),
            }
        }
    }
    Ok(())
}

/// The cells of every extern instance, in extern order (direct counters and meters sized to
/// their table, one cell more for misses).
fn extern_cells(prog: &Program, tables: &[RtTable]) -> Vec<RtExtern> {
    let mut externs = Vec::with_capacity(prog.externs.len());
    for (i, x) in prog.externs.iter().enumerate() {
        let slots_of = |want_counter: bool| -> usize {
            prog.tables
                .iter()
                .zip(tables)
                .find(|(td, _)| {
                    if want_counter {
                        td.direct_counter == Some(i as u32)
                    } else {
                        td.direct_meter == Some(i as u32)
                    }
                })
                .map_or(1, |(_, rt)| rt.table().capacity() + 1)
        };
        externs.push(match &x.kind {
            ExternKind::Counter { size, .. } => RtExtern::Counter(counters(*size as usize)),
            ExternKind::DirectCounter { .. } => RtExtern::DirectCounter(counters(slots_of(true))),
            ExternKind::Meter { size, .. } => RtExtern::Meter(meters(*size as usize)),
            ExternKind::DirectMeter { .. } => RtExtern::DirectMeter(meters(slots_of(false))),
            ExternKind::Register { size, layout, init } => {
                let w = layout.words(&prog.headers);
                RtExtern::Register(RegisterStore::new(*size, w, init))
            }
            _ => RtExtern::None,
        });
    }
    externs
}

/// The action profiles and selectors, by extern index (`None` for other externs).
fn action_profiles(prog: &Program) -> Vec<Option<ActionProfile>> {
    prog.externs
        .iter()
        .map(|x| match x.kind {
            ExternKind::ActionProfile { size } => Some(ActionProfile::new(size, false)),
            ExternKind::ActionSelector { size, .. } => Some(ActionProfile::new(size, true)),
            _ => None,
        })
        .collect()
}

/// The engine's plan: machine code, header layouts, the tables a batch prefetches (and where
/// generated code leaves their keys), re-specialisation slots.
fn plan(
    prog: &Arc<Program>,
    config: &Config,
    arch: &ArchInfo,
    tables: &[RtTable],
    native: Option<Arc<nevermiss_jit::Compiled>>,
) -> Plan {
    let fast_headers = prog.headers.iter().map(FastHeader::new).collect();
    let prefetch = crate::state::prefetch_list(prog, arch, config.prefetch_tables, |t| {
        tables
            .get(t as usize)
            .is_some_and(|rt| rt.table().spec().is_exact())
    });
    // `pass_parse` stores these tables' keys when they are the ones the batch prefetches.
    let prefetch_keys = native.as_ref().and_then(|n| {
        let keys = n.prefetch_keys();
        (n.pass_parse().is_some()
            && !keys.is_empty()
            && keys.iter().map(|k| k.0).eq(prefetch.iter().copied()))
        .then(|| keys.to_vec())
    });
    // Not with update probes: a hit in specialised code would not fire them; nor in a
    // profiling build, whose table lookups are timed in the runtime's helpers.
    let specs = Specs::new(
        prog,
        native.is_some() && !config.track_updates && config.profile.is_none(),
        crate::engine::native::helpers(),
    );
    Plan::new(native, specs, fast_headers, prefetch, prefetch_keys)
}

/// A [`BuildError`] of table `td`.
fn table_error(td: &p4_ir::Table, part: TablePart, error: TableError) -> BuildError {
    BuildError::Table {
        table: td.name.clone(),
        part,
        error,
    }
}

/// Big-endian bytes of a value of width `w` (`ceil(w/8)` bytes).
pub fn val_bytes(v: &Val, w: u32) -> Vec<u8> {
    let n = (w as usize).div_ceil(8);
    let b = p4_ir::ops::mask_big(&v.to_big(), w).to_bytes_be();
    let mut out = vec![0u8; n];
    let k = b.len().min(n);
    out[n - k..].copy_from_slice(&b[b.len() - k..]);
    out
}

/// The table crate's match spec of a constant entry (`None` when a wildcard is given for an
/// exact field, which no entry can express).
pub fn entry_matches(kinds: &[(MatchKind, Ty)], ms: &[EntryMatch]) -> Option<Vec<FieldMatch>> {
    let mut out = Vec::with_capacity(kinds.len());
    for ((k, t), m) in kinds.iter().zip(ms) {
        let w = t.width;
        out.push(match (k, m) {
            (_, EntryMatch::Exact(v)) => FieldMatch::Exact(val_bytes(v, w)),
            (MatchKind::Lpm, EntryMatch::Lpm(v, l)) => {
                FieldMatch::Lpm(val_bytes(v, w), (*l).min(w))
            }
            (MatchKind::Lpm, EntryMatch::Any) => FieldMatch::Lpm(val_bytes(&Val::U(0), w), 0),
            (MatchKind::Ternary, EntryMatch::Ternary(v, m)) => {
                FieldMatch::Ternary(val_bytes(v, w), val_bytes(m, w))
            }
            (MatchKind::Ternary, EntryMatch::Lpm(v, l)) => {
                let m = if *l == 0 {
                    num_bigint::BigUint::default()
                } else {
                    ((num_bigint::BigUint::from(1u8) << *l) - 1u8) << (w - (*l).min(w))
                };
                FieldMatch::Ternary(val_bytes(v, w), val_bytes(&Val::from_big(m), w))
            }
            (MatchKind::Ternary, EntryMatch::Any) => {
                FieldMatch::Ternary(val_bytes(&Val::U(0), w), val_bytes(&Val::U(0), w))
            }
            (MatchKind::Range, EntryMatch::Range(lo, hi)) => {
                FieldMatch::Range(val_bytes(lo, w), val_bytes(hi, w))
            }
            (MatchKind::Range, EntryMatch::Any) => {
                let max = (num_bigint::BigUint::from(1u8) << w) - 1u8;
                FieldMatch::Range(val_bytes(&Val::U(0), w), val_bytes(&Val::from_big(max), w))
            }
            (MatchKind::Optional, EntryMatch::Any) => FieldMatch::Optional(None),
            (MatchKind::Optional, EntryMatch::Ternary(v, _)) => {
                FieldMatch::Optional(Some(val_bytes(v, w)))
            }
            _ => return None,
        });
    }
    Some(out)
}
