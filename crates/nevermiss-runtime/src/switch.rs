//! The switch: a lowered program plus everything stateful it uses — tables, extern state,
//! value sets, multicast groups, clone/mirror sessions, action profiles, digests and idle
//! notifications — shared by all workers and the control plane through `&self`
//! (`Send + Sync`). Its state is private to the runtime: the data plane reaches it through the
//! interpreter, the control plane through the typed API of [`crate::control`], other crates
//! through the read-only accessors below.

use crate::arch::ArchInfo;
use crate::control::ControlState;
use crate::delay::Watch;
use crate::externs::{counters, meters, CounterCell, Meter, RegisterStore};
use crate::profiles::{ActionProfile, PortStatus};
use nevermiss_tables::{
    ActionData, EntryView, FieldMatch, Gate, IdleTimeout as TIdle, KeySpec, MatchKind as TKind,
    Table, TableError, TableSpec, MAX_TABLE_SIZE,
};
use p4_ir::ir::{FnId, FnKind, Stmt, TableId};
use p4_ir::{EntryMatch, ExternKind, IdleTimeout, MatchKind, Program, Ty, Val};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

/// Run-time configuration of a switch.
#[derive(Clone, Debug)]
pub struct Config {
    /// PNA: the host-side ports (vports); every other port is a network port
    /// (`is_net_port`, `direction`).
    pub host_ports: Vec<u32>,
    /// PNA expire-time profiles in nanoseconds (profile id = index); `None` keeps the tables'
    /// defaults (10 s, 30 s, 60 s, 120 s, 300 s, 12 h, 120 s, 120 s).
    pub expire_profiles_ns: Option<Vec<u64>>,
    /// Resolution of idle timers.
    pub tick_ns: u64,
    /// Most passes of one packet (resubmit, recirculate) before it is dropped.
    pub max_passes: u32,
    /// Most parser state transitions per packet before `ParserTimeout`.
    pub parser_steps: u32,
    /// Most loop iterations per packet before the packet is dropped.
    pub loop_limit: u64,
    /// Seed of the per-worker random generators.
    pub seed: u64,
    /// Most digests kept for the control plane (older ones are dropped and counted).
    pub digest_queue: usize,
    /// Exact tables per packet whose buckets a batch prefetches after parsing (0 = none).
    pub prefetch_tables: usize,
    /// Keep the add-on-miss insert path warm: after this many packets without an insert, a
    /// worker's `maintain` replays a recent packet through a private shadow switch (0 = off).
    pub warm_insert_every: u32,
    /// Largest size of any table (the shadow switch of `warm_insert_every` uses 64).
    pub table_size_cap: Option<usize>,
    /// Measure update delays: every control-plane insert and modify of an entry arms a probe
    /// that the first packet using the new entry fires (`crate::delay`).
    pub track_updates: bool,
    /// Which engine runs the program's parsers, controls and actions.
    pub engine: Engine,
    /// Tables whose actions write `@__ref` parameters back, or with an idle timeout, store
    /// one word of parameters and restart timers without the entry's lock
    /// (`TableSpec::data_plane_updates`; their deletes, modifies and batches of expiries then
    /// wait for a process-wide barrier). Off: every update locks (the private shadow switch
    /// of `warm_insert_every`, whose tables are cleared over and over).
    pub lock_free_updates: bool,
    /// Egress queues between v1model's ingress and egress (`crate::queues`), for the ports
    /// they name; `None`: every packet runs to completion (no queue, no cost).
    pub queues: Option<Arc<crate::queues::QueueSettings>>,
}

/// The engine that runs a program (`--engine`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// Machine code compiled at load time (`nevermiss-jit`; docs/jit.md).
    #[default]
    Jit,
    /// The tree-walking interpreter (`exec.rs`), the reference.
    Interp,
}

impl Engine {
    /// The name `--engine` takes.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Jit => "jit",
            Engine::Interp => "interp",
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            host_ports: Vec::new(),
            expire_profiles_ns: None,
            tick_ns: 1_000_000,
            max_passes: 16,
            parser_steps: 100_000,
            loop_limit: 1_000_000,
            seed: 1,
            digest_queue: 1 << 16,
            prefetch_tables: 2,
            warm_insert_every: 64,
            table_size_cap: None,
            track_updates: false,
            lock_free_updates: true,
            engine: Engine::default(),
            queues: None,
        }
    }
}

/// A table at run time.
pub struct RtTable {
    pub(crate) t: Table,
    /// Per action: whether it has `@__ref` parameters (written back into the entry).
    pub(crate) writes_back: Vec<bool>,
    /// v1model/PSA tables with an idle timeout: a hit restarts the entry's timer (the idle time
    /// is the time since the last hit). PNA restarts timers only when the program says so.
    pub(crate) restart_on_hit: bool,
    /// The action profile or selector the table's entries point into.
    pub(crate) indirect: Option<u32>,
    /// The update-delay probe (`crate::delay`).
    pub(crate) watch: Watch,
    /// Per action: where each parameter goes, when every parameter is at most 64 bits —
    /// (frame slot, byte offset in the packed parameters, bytes, mask) — for the lean apply
    /// path (`Exec::table_lookup_core`); `None` for a table that needs the general one
    /// (`p4_ir::Table::lean`: an action profile, v1model's direct counter, a timer restarted
    /// on hits, wide parameters).
    pub(crate) plan: Option<Vec<Vec<ParamPlan>>>,
    /// Control-plane state of the table's entries (metadata, idle timeouts).
    pub(crate) meta: crate::control::TableMeta,
    /// The table has a direct counter or meter, whose cell a new entry's slot resets
    /// ([`Switch::reset_direct`]).
    pub(crate) direct_cells: bool,
}

/// Where one action parameter goes: (frame slot, byte offset in the packed parameters, bytes,
/// mask of its width).
pub(crate) type ParamPlan = (u32, u32, u32, u64);

/// State of an extern instance.
pub enum RtExtern {
    Counter(Box<[CounterCell]>),
    /// Indexed by the entry's slot; the last cell counts nothing (misses).
    DirectCounter(Box<[CounterCell]>),
    Meter(Box<[Mutex<Meter>]>),
    DirectMeter(Box<[Mutex<Meter>]>),
    Register(RegisterStore),
    /// Stateless at switch level (hash, checksums, random, digests, profiles).
    None,
}

/// The members of a parser value set: one (value, mask) per component each.
pub type ValueSetMembers = Vec<Vec<(u64, u64)>>;

/// A message produced by a `digest` (v1model) or `Digest.pack` (PNA).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestMsg {
    /// The extern's name (PNA) or `receiver N` (v1model).
    pub name: String,
    /// The packed data, big-endian, fields concatenated.
    pub data: Vec<u8>,
}

/// An idle-timeout notification for the control plane (NOTIFY_CONTROL): the entry as it was
/// when its idle time ran out. [`crate::control`] turns it into a typed entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub table: TableId,
    pub entry: EntryView,
}

/// Counters of the switch itself.
#[derive(Default, Debug)]
pub struct SwitchStats {
    pub digests_dropped: AtomicU64,
    pub assertion_failures: AtomicU64,
    pub loop_limit_hits: AtomicU64,
    pub pass_limit_hits: AtomicU64,
}

/// The shared state of a running program.
pub struct Switch {
    /// The program (shared with the shadow switch of `Worker::maintain`).
    pub(crate) prog: Arc<Program>,
    pub(crate) config: Config,
    pub(crate) arch: ArchInfo,
    pub(crate) tables: Vec<RtTable>,
    pub(crate) externs: Vec<RtExtern>,
    /// Members of each value set.
    pub(crate) value_sets: Vec<RwLock<ValueSetMembers>>,
    pub(crate) digests: Mutex<Vec<DigestMsg>>,
    pub(crate) notifications: Mutex<Vec<Notification>>,
    /// Clone / mirror session → egress port.
    pub(crate) sessions: RwLock<HashMap<u32, u32>>,
    /// Clone / mirror session → multicast group (`mirroring_add_mc`).
    pub(crate) session_groups: RwLock<HashMap<u32, u32>>,
    /// Multicast group → (port, replication id) list.
    pub(crate) mc_groups: RwLock<HashMap<u32, Vec<(u32, u32)>>>,
    pub(crate) flow_ids: AtomicU32,
    pub(crate) stats: SwitchStats,
    /// Per header type: its compact layout when every field is fixed-width ≤ 64 bits and the
    /// header is a whole number of bytes (`Exec::extract`/`emit` fast paths).
    pub(crate) fast_headers: Vec<Option<FastHeader>>,
    /// Exact tables a batch prefetches for after parsing: the first `Config::prefetch_tables`
    /// exact tables whose key needs no calls that the control after the parser applies (PNA:
    /// the pre-control, then the main control; v1model: ingress; PSA: ingress); see
    /// `Worker::process_batch`.
    pub(crate) prefetch: Vec<TableId>,
    /// Where generated `pass_parse` left the keys of the `prefetch` tables past `Ctx::key`
    /// ((table, byte offset, length) each, in `prefetch`'s order), when it stores them (PNA,
    /// compiled engine).
    pub(crate) prefetch_keys: Option<Vec<(TableId, u32, u32)>>,
    /// Clone session → its replicas (P4Runtime sessions of more than one replica).
    pub(crate) clone_replicas: RwLock<HashMap<u32, Vec<(u32, u32)>>>,
    /// Action profiles and selectors, by extern index (`None` for other externs).
    pub(crate) profiles: Vec<Option<ActionProfile>>,
    /// Which ports are down (watch ports of selector groups).
    pub(crate) ports: PortStatus,
    /// Workers pass it at every batch; the control plane closes it for whole-batch updates.
    pub(crate) gate: Gate,
    /// The origin of [`Switch::now_ns`], the time base of packets, timers and the control plane.
    pub(crate) origin: Instant,
    /// Control-plane state (write serialization, replication model).
    pub(crate) ctl: ControlState,
    /// The program as machine code (`Engine::Jit`), shared with the shadow switch.
    pub(crate) native: Option<Arc<nevermiss_jit::Compiled>>,
    /// Tables whose code is re-specialised to their control-plane entries (`spec.rs`).
    pub(crate) specs: crate::spec::Specs,
}

/// Slots of the quiescence gate: workers beyond this share one slot (still correct, a little
/// slower per batch).
const GATE_SLOTS: usize = 256;

/// Why a switch could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

impl Switch {
    /// Builds the tables (with their default actions and constant entries) and extern state of
    /// a program.
    pub fn new(prog: Program, config: Config) -> Result<Switch, BuildError> {
        Switch::with_program(Arc::new(prog), config)
    }

    /// [`Switch::new`] over a program shared with other switches.
    pub fn with_program(prog: Arc<Program>, config: Config) -> Result<Switch, BuildError> {
        let native = match config.engine {
            Engine::Jit => Some(Arc::new(crate::native::compile(&prog, &config)?)),
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
        let arch = ArchInfo::new(&prog).map_err(BuildError)?;
        let mut tables = Vec::with_capacity(prog.tables.len());
        for td in &prog.tables {
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
            let size = (td.size.max(1) as usize)
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
                .map_err(|e| BuildError(format!("table {}: {e}", td.name)))?;
            if let Some(p) = &config.expire_profiles_ns {
                if td.idle_timeout != IdleTimeout::None {
                    t.set_profiles(p)
                        .map_err(|e| BuildError(format!("table {}: {e}", td.name)))?;
                }
            }
            if let Some((a, params)) = &td.default_action {
                t.set_default(ActionData::new(*a, params.as_slice()))
                    .map_err(|e| BuildError(format!("table {}: default action: {e}", td.name)))?;
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
            tables.push(RtTable {
                t,
                writes_back,
                restart_on_hit,
                indirect,
                watch: Watch::default(),
                meta: Default::default(),
                plan,
                direct_cells: td.direct_counter.is_some() || td.direct_meter.is_some(),
            });
        }
        // Constant entries.
        for (td, rt) in prog.tables.iter().zip(&tables) {
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
                match rt.t.insert(
                    &ms,
                    e.priority,
                    ActionData::new(e.action, e.params.as_slice()),
                ) {
                    Ok(_) | Err(TableError::Exists) => {}
                    Err(err) => {
                        return Err(BuildError(format!(
                            "table {}: constant entry: {err}",
                            td.name
                        )))
                    }
                }
            }
        }
        let mut externs = Vec::with_capacity(prog.externs.len());
        for (i, x) in prog.externs.iter().enumerate() {
            let slots_of = |want_counter: bool| -> usize {
                prog.tables
                    .iter()
                    .zip(&tables)
                    .find(|(td, _)| {
                        if want_counter {
                            td.direct_counter == Some(i as u32)
                        } else {
                            td.direct_meter == Some(i as u32)
                        }
                    })
                    .map_or(1, |(_, rt)| rt.t.capacity() + 1)
            };
            externs.push(match &x.kind {
                ExternKind::Counter { size, .. } => RtExtern::Counter(counters(*size as usize)),
                ExternKind::DirectCounter { .. } => {
                    RtExtern::DirectCounter(counters(slots_of(true)))
                }
                ExternKind::Meter { size, .. } => RtExtern::Meter(meters(*size as usize)),
                ExternKind::DirectMeter { .. } => RtExtern::DirectMeter(meters(slots_of(false))),
                ExternKind::Register { size, layout, init } => {
                    let w = layout.words(&prog.headers);
                    RtExtern::Register(RegisterStore::new(*size, w, init))
                }
                _ => RtExtern::None,
            });
        }
        let value_sets = prog
            .value_sets
            .iter()
            .map(|_| RwLock::new(Vec::new()))
            .collect();
        let fast_headers = prog.headers.iter().map(FastHeader::new).collect();
        let profiles = prog
            .externs
            .iter()
            .map(|x| match x.kind {
                ExternKind::ActionProfile { size } => Some(ActionProfile::new(size, false)),
                ExternKind::ActionSelector { size, .. } => Some(ActionProfile::new(size, true)),
                _ => None,
            })
            .collect();
        let prefetch = prefetch_list(&prog, &arch, config.prefetch_tables, |t| {
            tables
                .get(t as usize)
                .is_some_and(|rt| rt.t.spec().is_exact())
        });
        // `pass_parse` stores these tables' keys when they are the ones the batch prefetches.
        let prefetch_keys = native.as_ref().and_then(|n| {
            let keys = n.prefetch_keys();
            (n.pass_parse().is_some()
                && !keys.is_empty()
                && keys.iter().map(|k| k.0).eq(prefetch.iter().copied()))
            .then(|| keys.to_vec())
        });
        // Not with update probes: a hit in specialised code would not fire them.
        let specs = crate::spec::Specs::new(&prog, native.is_some() && !config.track_updates);
        let sw = Switch {
            prog,
            config,
            arch,
            tables,
            externs,
            value_sets,
            digests: Mutex::new(Vec::new()),
            notifications: Mutex::new(Vec::new()),
            sessions: RwLock::new(HashMap::new()),
            session_groups: RwLock::new(HashMap::new()),
            mc_groups: RwLock::new(HashMap::new()),
            flow_ids: AtomicU32::new(1),
            stats: SwitchStats::default(),
            fast_headers,
            prefetch,
            prefetch_keys,
            clone_replicas: RwLock::new(HashMap::new()),
            profiles,
            ports: PortStatus::default(),
            gate: Gate::new(GATE_SLOTS),
            origin: Instant::now(),
            ctl: ControlState::default(),
            native,
            specs,
        };
        // The entries installed at load.
        sw.respec_all();
        Ok(sw)
    }

    /// Records whether port `port` is up (P4Runtime watch ports: a selector group member
    /// watching a port that is down is not selected). Every port is up until told otherwise;
    /// the run loop reports interface ports' link state. Returns whether it changed.
    pub fn set_port_up(&self, port: u32, up: bool) -> bool {
        self.ports.set(port, up)
    }

    /// Whether port `port` is up (as last reported by [`Switch::set_port_up`]).
    pub fn port_up(&self, port: u32) -> bool {
        self.ports.is_up(port)
    }

    /// The ports that are down, in order.
    pub fn ports_down(&self) -> Vec<u32> {
        self.ports.down()
    }

    /// The engine running this switch's program.
    pub fn engine(&self) -> Engine {
        if self.native.is_some() {
            Engine::Jit
        } else {
            Engine::Interp
        }
    }

    /// Compile time and code size of the program's machine code (`Engine::Jit`).
    pub fn native_stats(&self) -> Option<(u64, usize)> {
        self.native.as_ref().map(|c| (c.compile_ns, c.code_bytes))
    }

    // ------------------------------------------------------------------ read-only accessors

    /// The program.
    pub fn prog(&self) -> &Arc<Program> {
        &self.prog
    }

    /// The run-time configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What the architecture's blocks are and where their metadata lives.
    pub fn arch(&self) -> &ArchInfo {
        &self.arch
    }

    /// The table `t` (an index into `prog().tables`).
    pub fn table(&self, t: TableId) -> Option<&Table> {
        self.tables.get(t as usize).map(|rt| &rt.t)
    }

    /// Every table, in program order.
    pub fn tables(&self) -> impl ExactSizeIterator<Item = &Table> + '_ {
        self.tables.iter().map(|rt| &rt.t)
    }

    /// The state of extern instance `x` (an index into `prog().externs`).
    pub fn extern_state(&self, x: u32) -> Option<&RtExtern> {
        self.externs.get(x as usize)
    }

    /// The exact tables a batch prefetches for after parsing (`Worker::process_batch`).
    pub fn prefetched_tables(&self) -> &[TableId] {
        &self.prefetch
    }

    /// The switch's own counters.
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }

    /// Nanoseconds since the switch was built: the clock of packets (`Clock::Wall`), idle
    /// timers and control-plane timestamps.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// The instant [`Switch::now_ns`] counts from.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Number of digest messages waiting for the control plane.
    pub fn pending_digests(&self) -> usize {
        self.digests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Number of idle-timeout notifications waiting for the control plane.
    pub fn pending_notifications(&self) -> usize {
        self.notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Takes the waiting idle-timeout notifications (oldest first).
    pub fn take_notifications(&self) -> Vec<Notification> {
        std::mem::take(
            &mut *self
                .notifications
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The quiescence gate workers pass at every batch (`Worker` registers with it).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Adds a member to the parser value set `name` (full name or unique suffix): one
    /// (value, mask) per component. Fails for an unknown set, a wrong number of components or
    /// a full set.
    pub fn add_value_set_member(&self, name: &str, member: &[(u64, u64)]) -> Result<(), String> {
        let Some(i) =
            p4_ir::find_by_name(self.prog.value_sets.iter().map(|v| v.name.as_str()), name)
        else {
            return Err(format!("unknown value set `{name}`"));
        };
        let def = &self.prog.value_sets[i as usize];
        if member.len() != def.widths.len() {
            return Err(format!(
                "value set `{}` has {} components, {} given",
                def.name,
                def.widths.len(),
                member.len()
            ));
        }
        let mut m = self.value_sets[i as usize]
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if m.len() >= def.size as usize {
            return Err(format!(
                "value set `{}` is full ({} members)",
                def.name, def.size
            ));
        }
        m.push(member.to_vec());
        Ok(())
    }

    /// Whether a port is a network port (PNA).
    #[inline]
    pub fn is_net_port(&self, port: u64) -> bool {
        !self.config.host_ports.iter().any(|p| u64::from(*p) == port)
    }

    /// Queues a digest message, dropping it (and counting) when the queue is full.
    pub fn push_digest(&self, msg: DigestMsg) {
        let mut q = self.digests.lock().unwrap_or_else(PoisonError::into_inner);
        if q.len() >= self.config.digest_queue {
            self.stats.digests_dropped.fetch_add(1, Relaxed);
            return;
        }
        q.push(msg);
    }

    /// Takes the queued digests.
    pub fn take_digests(&self) -> Vec<DigestMsg> {
        std::mem::take(&mut *self.digests.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Runs the idle timers of every table up to `now_ns`: AUTO_DELETE entries are removed,
    /// NOTIFY_CONTROL entries produce notifications. Returns the number of entries affected.
    pub fn expire(&self, now_ns: u64) -> usize {
        let mut n = 0;
        for (ti, (td, rt)) in self.prog.tables.iter().zip(&self.tables).enumerate() {
            if td.idle_timeout == IdleTimeout::None {
                continue;
            }
            let ex = rt.t.expire(now_ns);
            n += ex.len();
            let ti = ti as TableId;
            let notes: Vec<Notification> = ex
                .into_iter()
                .filter(|e| e.notify)
                .map(|e| Notification {
                    table: ti,
                    entry: e.entry,
                })
                .collect();
            if !notes.is_empty() {
                let mut q = self
                    .notifications
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if q.len() < self.config.digest_queue {
                    q.extend(notes);
                }
            }
        }
        n
    }

    /// Resets the direct counters of a table's entry slot (a new entry took it).
    #[inline]
    pub fn reset_direct(&self, table: usize, slot: usize) {
        if self
            .prog
            .tables
            .get(table)
            .is_some_and(|t| t.direct_counter.is_some() || t.direct_meter.is_some())
        {
            self.reset_direct_cells(table, slot);
        }
    }

    /// [`Switch::reset_direct`] of a table with a direct counter or meter.
    #[inline(never)]
    fn reset_direct_cells(&self, table: usize, slot: usize) {
        if let Some(dc) = self.prog.tables.get(table).and_then(|t| t.direct_counter) {
            if let Some(RtExtern::DirectCounter(cells)) = self.externs.get(dc as usize) {
                if let Some(c) = cells.get(slot) {
                    c.reset();
                }
            }
        }
        if let Some(dm) = self.prog.tables.get(table).and_then(|t| t.direct_meter) {
            if let Some(RtExtern::DirectMeter(cells)) = self.externs.get(dm as usize) {
                if let Some(c) = cells.get(slot) {
                    let mut m = c.lock().unwrap_or_else(PoisonError::into_inner);
                    *m = Meter::default();
                }
            }
        }
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

/// The exact tables a batch prefetches for (`Switch::prefetch`): up to `max` distinct tables
/// without key calls for which `exact` holds, in the order the control that runs first after a
/// packet's first parser applies them (through `if`/`switch` bodies and called controls, not
/// actions); for PNA's old dialect, then the main control's after the pre-control's.
pub(crate) fn prefetch_list(
    prog: &Program,
    arch: &ArchInfo,
    max: usize,
    exact: impl Fn(TableId) -> bool,
) -> Vec<TableId> {
    let first = match (&arch.pna, &arch.v1, &arch.psa) {
        (Some(pi), _, _) => Some(pi.pre.unwrap_or(pi.control)),
        (_, Some(vi), _) => Some(vi.ingress),
        (_, _, Some(pi)) => Some(pi.ig),
        _ => None,
    };
    let mut out = Vec::new();
    if let Some(c) = first {
        prefetch_walk(prog, c, max, &exact, &mut out);
    }
    if let Some(pi) = arch.pna.as_ref().filter(|pi| pi.pre.is_some()) {
        let mut more = Vec::new();
        prefetch_walk(prog, pi.control, max, &exact, &mut more);
        for t in more {
            if out.len() < max && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Up to `max` distinct tables of [`prefetch_list`] in the order `control` applies them.
fn prefetch_walk(
    prog: &Program,
    control: FnId,
    max: usize,
    exact: &impl Fn(TableId) -> bool,
    out: &mut Vec<TableId>,
) {
    fn walk(
        prog: &Program,
        body: &[Stmt],
        depth: u32,
        max: usize,
        exact: &impl Fn(TableId) -> bool,
        out: &mut Vec<TableId>,
    ) {
        for st in body {
            if out.len() >= max || depth > 8 {
                return;
            }
            match st {
                Stmt::ApplyTable { table, .. } => {
                    let ok = prog
                        .tables
                        .get(*table as usize)
                        .is_some_and(|td| td.key_pre.is_empty())
                        && exact(*table);
                    if ok && !out.contains(table) {
                        out.push(*table);
                    }
                }
                Stmt::If(_, a, b) => {
                    walk(prog, a, depth + 1, max, exact, out);
                    walk(prog, b, depth + 1, max, exact, out);
                }
                Stmt::Switch { bodies, .. } => {
                    for b in bodies {
                        walk(prog, b, depth + 1, max, exact, out);
                    }
                }
                Stmt::Call { func, .. } => {
                    if let Some(f) = prog.functions.get(*func as usize) {
                        if f.kind == FnKind::Control {
                            walk(prog, &f.body, depth + 1, max, exact, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(f) = prog.functions.get(control as usize) {
        walk(prog, &f.body, 0, max, exact, out);
    }
}

/// A header type laid out for the extract/emit fast paths: one compact record per field.
#[derive(Clone, Debug)]
pub struct FastHeader {
    /// Bytes on the wire.
    pub bytes: usize,
    /// Frame words, validity word included.
    pub words: usize,
    pub fields: Box<[FastField]>,
}

/// A field of a [`FastHeader`].
#[derive(Clone, Copy, Debug)]
pub struct FastField {
    /// Word offset from the validity word.
    pub off: u32,
    /// Bit offset from the start of the header.
    pub bit: u32,
    /// Width in bits, 1..=64.
    pub width: u32,
}

/// Largest header the fast paths take (their stack buffers).
pub const FAST_HEADER_MAX_BYTES: usize = 128;

impl FastHeader {
    /// The fast layout of `h`, if it has one.
    pub fn new(h: &p4_ir::ir::HeaderLayout) -> Option<FastHeader> {
        if !h.fixed_bits.is_multiple_of(8) || h.fixed_bits as usize / 8 > FAST_HEADER_MAX_BYTES {
            return None;
        }
        let mut bit = 0u32;
        let mut fields = Vec::with_capacity(h.fields.len());
        for f in &h.fields {
            if f.varbit.is_some() || f.ty.width > 64 {
                return None;
            }
            if f.ty.width > 0 {
                fields.push(FastField {
                    off: f.off,
                    bit,
                    width: f.ty.width,
                });
            }
            bit += f.ty.width;
        }
        let words = h.words as usize;
        if fields.iter().any(|f| f.off as usize >= words) {
            return None;
        }
        Some(FastHeader {
            bytes: h.fixed_bits as usize / 8,
            words,
            fields: fields.into_boxed_slice(),
        })
    }
}
