//! ESwitch's re-specialisation of a table's code to its control-plane contents (docs/jit.md,
//! "Re-specialising a table's code to its contents").
//!
//! Generated applies of a [`nevermiss_jit::respecialisable`] table first call the code in the
//! table's slot of [`Specs::slots`] (`Ctx::spec`); 0 means "take the general apply". Every
//! write that may change such a table's entries runs through [`Switch::respec`], under
//! [`Specs`]' lock: the slot is set to 0 (packets from then on look the live table up), the write
//! is done, and the table is marked stale. At the end of the control-plane operation
//! ([`Switch::settle_specs`]: a P4Runtime Write, an STF command) each stale table's entries are
//! read back and compiled (on the writer's thread: ~0.1–1 ms for a table of at most 16 entries)
//! and the new code's address is stored — once per operation, not once per update, and at most
//! once per [`RESPEC_INTERVAL`] per table: a table written more often than that stays on the
//! general apply until an operation ends after the interval (its writes never wait for a
//! compilation then). A packet thus sees the table before a write (old code, whose entries are
//! the table before it, or a miss in it falling through to the live table) or after it.
//!
//! The code replaced may still run on a worker that loaded the address before the slot changed:
//! it is retired, and freed only after a [`nevermiss_tables::Gate::close`] (no worker is inside
//! a batch then, and every packet runs inside one: `Worker::process`, `Worker::process_batch`),
//! once [`RETIRED_MAX`] modules have piled up, at the end of a control-plane operation; a
//! dataplane-atomic write, which holds the gate closed already, frees them at once. The rest
//! are freed with the switch.

use super::Switch;
use nevermiss_jit::{FieldTest, Helpers, Spec, SpecEntry};
use nevermiss_tables::FieldMatch;
use p4_ir::MatchKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Retired modules kept before a write closes the gate to free them.
const RETIRED_MAX: usize = 16;

/// The least time between two compilations of one table's code.
const RESPEC_INTERVAL: Duration = Duration::from_millis(20);

/// How long a write waits for the gate to free retired modules (it tries again at the next
/// write when the workers did not reach their quiescent point in time).
const REAP_TIMEOUT: Duration = Duration::from_millis(100);

/// The per-table slots generated code reads and the modules behind them.
pub(crate) struct Specs {
    /// Per table: the address of its specialised code, or 0. `Ctx::spec` points here.
    pub(crate) slots: Box<[AtomicUsize]>,
    /// Per table: whether it is re-specialised (the compiled engine, a table
    /// `nevermiss_jit::respecialisable` accepts).
    on: Vec<bool>,
    /// The runtime's helpers the specialised code calls (the engine's, given at build).
    helpers: Helpers,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per table: the module whose address is in its slot.
    current: Vec<Option<Spec>>,
    /// Modules no slot holds any more that a worker may still run.
    retired: Vec<Spec>,
    /// Per table: written since its code was last compiled (its slot is 0).
    stale: Vec<bool>,
    /// Per table: when its code was last compiled.
    last: Vec<Option<Instant>>,
    /// Compilations done (tests and statistics).
    compiled: u64,
}

impl Specs {
    pub(crate) fn new(prog: &p4_ir::Program, jit: bool, helpers: Helpers) -> Specs {
        let n = prog.tables.len();
        // `NEVERMISS_RESPEC=0` turns it off (measurements, debugging): every slot stays 0.
        let jit = jit && std::env::var_os("NEVERMISS_RESPEC").is_none_or(|v| v != "0");
        Specs {
            slots: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            on: (0..n)
                .map(|t| jit && nevermiss_jit::respecialisable(prog, t as u32))
                .collect(),
            helpers,
            state: Mutex::new(State {
                current: (0..n).map(|_| None).collect(),
                stale: vec![false; n],
                last: vec![None; n],
                ..State::default()
            }),
        }
    }
}

fn word(b: &[u8]) -> Option<u64> {
    (b.len() <= 8).then(|| b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x)))
}

impl Switch {
    /// Runs `write`, which may change table `t`'s entries, with the table's specialised code
    /// out of the way; [`Switch::settle_specs`] specialises it again to what it then holds.
    pub(crate) fn respec<R>(&self, t: usize, write: impl FnOnce() -> R) -> R {
        if !self.plan.specs().on.get(t).copied().unwrap_or(false) {
            return write();
        }
        let mut st = self
            .plan()
            .specs()
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.plan.specs().slots[t].store(0, Ordering::SeqCst);
        if let Some(old) = st.current[t].take() {
            st.retired.push(old);
        }
        st.stale[t] = true;
        write()
    }

    /// The end of a control-plane operation: the stale tables whose code was not compiled
    /// within [`RESPEC_INTERVAL`] get code for their present entries, and retired modules are
    /// freed when enough have piled up.
    pub(crate) fn settle_specs(&self) {
        self.compile_stale(false);
        self.reap_specs(false);
    }

    /// Compiles the code of every stale table (`all`), or of those whose code was not compiled
    /// within [`RESPEC_INTERVAL`].
    fn compile_stale(&self, all: bool) {
        let mut st = self
            .plan()
            .specs()
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        for t in 0..st.stale.len() {
            let due = st.last[t].is_none_or(|l| now.duration_since(l) >= RESPEC_INTERVAL);
            if !st.stale[t] || !(all || due) {
                continue;
            }
            st.stale[t] = false;
            if let Some(es) = self.spec_entries(t).filter(|es| !es.is_empty()) {
                st.last[t] = Some(now);
                let helpers = &self.plan.specs().helpers;
                if let Ok(s) = nevermiss_jit::specialise(&self.prog, helpers, t as u32, &es) {
                    self.plan.specs().slots[t].store(s.addr(), Ordering::Release);
                    st.current[t] = Some(s);
                    st.compiled += 1;
                }
            }
        }
    }

    /// Compiles the code of every table written since its code was last compiled, whatever
    /// `RESPEC_INTERVAL` says: for callers that run packets against a control plane at rest
    /// (STF, tests), so that they run the specialised code.
    pub fn specialise_now(&self) {
        self.compile_stale(true);
    }

    /// Specialises every re-specialised table to its present entries (at load).
    pub(crate) fn respec_all(&self) {
        for t in 0..self.plan.specs().on.len() {
            self.respec(t, || ());
        }
        self.compile_stale(true);
    }

    /// Frees the retired modules when enough have piled up (`closed`: the caller holds the
    /// gate closed: free them all now).
    pub(crate) fn reap_specs(&self, closed: bool) {
        let mut st = self
            .plan()
            .specs()
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if st.retired.is_empty() || (!closed && st.retired.len() < RETIRED_MAX) {
            return;
        }
        if closed {
            st.retired.clear();
        } else if let Ok(g) = self.gate.close(REAP_TIMEOUT) {
            st.retired.clear();
            drop(g);
        }
    }

    /// How many times a table's code was specialised to its entries.
    pub fn spec_compilations(&self) -> u64 {
        self.plan
            .specs()
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .compiled
    }

    /// Whether table `t` has specialised code now.
    pub fn spec_active(&self, t: usize) -> bool {
        self.plan
            .specs()
            .slots
            .get(t)
            .is_some_and(|s| s.load(Ordering::Relaxed) != 0)
    }

    /// Table `t`'s entries in the order the table gives them precedence, as the specialised
    /// code tests them; `None` when there are too many, or when two could match one key with
    /// an order the code cannot know (equal priorities; several lpm fields).
    fn spec_entries(&self, t: usize) -> Option<Vec<SpecEntry>> {
        let (td, rt) = (self.prog.tables.get(t)?, self.tables.get(t)?);
        if rt.table().len() > nevermiss_jit::SPEC_MAX_ENTRIES {
            return None;
        }
        let mut views = rt.table().iter();
        if views.len() > nevermiss_jit::SPEC_MAX_ENTRIES {
            return None;
        }
        let keys = &td.keys;
        let lpm: Vec<usize> = (0..keys.len())
            .filter(|&i| keys[i].kind == MatchKind::Lpm)
            .collect();
        if rt.table().spec().has_priority() {
            views.sort_by_key(|v| std::cmp::Reverse(v.priority));
            if views.windows(2).any(|w| w[0].priority == w[1].priority) {
                return None;
            }
        } else if !lpm.is_empty() {
            if lpm.len() > 1 && views.len() > 1 {
                return None;
            }
            let len = |v: &nevermiss_tables::EntryView| match v.matches.get(lpm[0]) {
                Some(FieldMatch::Lpm(_, l)) => *l,
                Some(FieldMatch::Exact(_)) => keys[lpm[0]].expr.ty().width,
                _ => 0,
            };
            views.sort_by_key(|v| std::cmp::Reverse(len(v)));
        }
        views
            .iter()
            .map(|v| {
                if v.matches.len() != keys.len() {
                    return None;
                }
                let tests = v
                    .matches
                    .iter()
                    .zip(keys)
                    .map(|(m, k)| {
                        let w = k.expr.ty().width;
                        Some(match m {
                            FieldMatch::Exact(b) => FieldTest::Masked(word(b)?, u64::MAX),
                            FieldMatch::Lpm(b, l) => FieldTest::prefix(word(b)?, *l, w),
                            FieldMatch::Ternary(b, m) => FieldTest::Masked(word(b)?, word(m)?),
                            FieldMatch::Range(lo, hi) => FieldTest::Range(word(lo)?, word(hi)?),
                            FieldMatch::Optional(None) => FieldTest::Any,
                            FieldMatch::Optional(Some(b)) => FieldTest::Masked(word(b)?, u64::MAX),
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(SpecEntry {
                    tests,
                    action: v.data.action,
                    params: v.data.params.to_vec(),
                })
            })
            .collect()
    }
}
