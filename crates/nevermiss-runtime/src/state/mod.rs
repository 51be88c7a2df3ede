//! The switch's shared state, the second floor: a [`Switch`] holds a program and everything
//! stateful it uses — tables, extern state, value sets, action profiles, the replication engine,
//! the queues to the control plane — and the engine's plan for it, shared by all workers and
//! the control plane through `&self` (`Send + Sync`).
//!
//! The fields are grouped into owned sub-states, one child module each, and are private to this
//! module: the floors above (the engine, the architectures, the control plane, the build) reach
//! them only through the accessors here and in the child modules.

mod arch_info;
mod delay;
mod externs;
mod plan;
mod pre;
mod profiles;
mod queues;
mod specs;
mod tables;

pub(crate) use arch_info::Carry;
pub use arch_info::{ArchInfo, Field, PnaInfo, PsaInfo, V1Info, PSA_PORT_RECIRCULATE};
pub use delay::Probe;
pub(crate) use delay::Probes;
pub(crate) use externs::{counters, meters, Externs, RtExtern};
pub(crate) use externs::{crc32, hash, ones_sum16, xor16};
pub(crate) use externs::{CounterCell, Meter, RegisterStore, GREEN, RED, YELLOW};
pub(crate) use plan::{prefetch_list, FastHeader, Plan, FAST_HEADER_MAX_BYTES};
pub(crate) use pre::Pre;
pub use profiles::PortStatus;
pub(crate) use profiles::{
    expand, reference, ActionProfile, Group, Member, OneShot, ACTION_GROUP, ACTION_MEMBER,
    ACTION_ONESHOT,
};
pub use queues::Notification;
pub(crate) use queues::Queues;
pub(crate) use specs::Specs;
pub(crate) use tables::{EntryMeta, ParamPlan, RtTable};

use crate::types::{Config, Engine};
use nevermiss_tables::{Gate, Table};
use p4_ir::ir::TableId;
use p4_ir::Program;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

/// The members of a parser value set: one (value, mask) per component each.
pub(crate) type ValueSetMembers = Vec<Vec<(u64, u64)>>;

/// Counters of the switch itself.
#[derive(Default, Debug)]
pub struct SwitchStats {
    /// Digests dropped because the queue to the control plane was full.
    pub digests_dropped: AtomicU64,
    /// `assert`/`assume` calls whose condition was false.
    pub assertion_failures: AtomicU64,
    /// Packets dropped for running more loop iterations than `Config::loop_limit`.
    pub loop_limit_hits: AtomicU64,
    /// Packets dropped for more passes (resubmit, recirculate) than `Config::max_passes`.
    pub pass_limit_hits: AtomicU64,
    /// Statements, expressions and parser `select`s that generated code left to the
    /// interpreter (`Engine::Jit` only; docs/jit.md, "Fallbacks"): added by each worker after
    /// each packet or batch, so a reader sees them up to the last one finished.
    pub fallbacks: AtomicU64,
    /// With `Config::fallback_sites`: the fallbacks by site, as the workers added them (see
    /// [`Switch::fallback_sites`]).
    pub(crate) fallback_sites: std::sync::Mutex<crate::engine::sites::SiteCounts>,
}

/// Slots of the quiescence gate: workers beyond this share one slot (still correct, a little
/// slower per batch).
const GATE_SLOTS: usize = 256;

/// The shared state of a running program.
pub struct Switch {
    /// The program (shared with the shadow switch of `Worker::maintain`).
    prog: Arc<Program>,
    config: Config,
    /// What the architecture's blocks are and where their metadata lives.
    arch: ArchInfo,
    /// The origin of [`Switch::now_ns`], the time base of packets, timers and the control plane.
    origin: Instant,
    /// How the engine runs the program: its machine code, header layouts, prefetched tables.
    plan: Plan,
    tables: Vec<RtTable>,
    externs: Externs,
    /// Members of each value set.
    value_sets: Vec<RwLock<ValueSetMembers>>,
    /// Clone / mirror sessions and multicast groups.
    pre: Pre,
    /// Digests and idle notifications waiting for the control plane.
    queues: Queues,
    stats: SwitchStats,
    /// Which ports are down (watch ports of selector groups).
    ports: PortStatus,
    /// Workers pass it at every batch; the control plane closes it for whole-batch updates.
    gate: Gate,
    /// The control plane's lock: writes exclusive, reads shared.
    control: RwLock<()>,
    /// Update-delay probes retired and waiting to be collected.
    probes: Probes,
}

/// What a [`Switch`] is assembled from (`crate::build`); the rest of its state starts empty.
pub(crate) struct Parts {
    pub prog: Arc<Program>,
    pub config: Config,
    pub arch: ArchInfo,
    pub plan: Plan,
    pub tables: Vec<RtTable>,
    pub externs: Externs,
}

impl Switch {
    /// The switch of `parts`, with empty value sets, replication engine and queues, every port
    /// up and the clock started.
    pub(crate) fn assemble(parts: Parts) -> Switch {
        let Parts {
            prog,
            config,
            arch,
            plan,
            tables,
            externs,
        } = parts;
        let value_sets = prog
            .value_sets
            .iter()
            .map(|_| RwLock::new(Vec::new()))
            .collect();
        Switch {
            prog,
            config,
            arch,
            origin: Instant::now(),
            plan,
            tables,
            externs,
            value_sets,
            pre: Pre::default(),
            queues: Queues::default(),
            stats: SwitchStats::default(),
            ports: PortStatus::default(),
            gate: Gate::new(GATE_SLOTS),
            control: RwLock::new(()),
            probes: Probes::default(),
        }
    }

    // ------------------------------------------------------------------ the program

    /// The program.
    #[inline(always)]
    pub fn prog(&self) -> &Arc<Program> {
        &self.prog
    }

    /// The run-time configuration.
    #[inline(always)]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What the architecture's blocks are and where their metadata lives.
    #[inline(always)]
    pub(crate) fn arch(&self) -> &ArchInfo {
        &self.arch
    }

    /// How the engine runs the program.
    #[inline(always)]
    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The engine running this switch's program.
    pub fn engine(&self) -> Engine {
        if self.plan.native().is_some() {
            Engine::Jit
        } else {
            Engine::Interp
        }
    }

    /// Compile time and code size of the program's machine code (`Engine::Jit`).
    pub fn native_stats(&self) -> Option<(u64, usize)> {
        self.plan.native().map(|c| (c.compile_ns, c.code_bytes))
    }

    /// Frame words a packet's start zeroes, and the program's per-packet state words
    /// (`Program::zero_words`): with machine code only those something may read
    /// (`nevermiss_jit::Compiled::zero_ranges`), with the interpreter all of them.
    pub fn zeroed_words(&self) -> (u64, u64) {
        let all = u64::from(self.prog.zero_words);
        let zeroed = self.plan.native().map_or(all, |c| {
            c.zero_ranges
                .iter()
                .map(|&(lo, hi)| u64::from(hi.saturating_sub(lo)))
                .sum()
        });
        (zeroed, all)
    }

    /// The exact tables a batch prefetches for after parsing (`Worker::process_batch`).
    pub fn prefetched_tables(&self) -> &[TableId] {
        self.plan.prefetch()
    }

    // ------------------------------------------------------------------ tables and externs

    /// The table `t` (an index into `prog().tables`).
    pub fn table(&self, t: TableId) -> Option<&Table> {
        self.tables.get(t as usize).map(RtTable::table)
    }

    /// Every table, in program order.
    pub fn tables(&self) -> impl ExactSizeIterator<Item = &Table> + '_ {
        self.tables.iter().map(RtTable::table)
    }

    /// Every table as the switch holds it, in program order.
    #[inline]
    pub(crate) fn rt_tables(&self) -> &[RtTable] {
        &self.tables
    }

    /// The state of the extern instances and action profiles.
    #[inline(always)]
    pub(crate) fn externs(&self) -> &Externs {
        &self.externs
    }

    /// The members of value set `id`.
    #[inline]
    pub(crate) fn value_set(&self, id: u32) -> Option<&RwLock<ValueSetMembers>> {
        self.value_sets.get(id as usize)
    }

    /// The replication engine.
    #[inline]
    pub(crate) fn pre(&self) -> &Pre {
        &self.pre
    }

    /// Resets the direct counters and meters of a table's entry slot (a new entry took it).
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
        let Some(td) = self.prog.tables.get(table) else {
            return;
        };
        if let Some(c) = td
            .direct_counter
            .and_then(|dc| self.externs.direct_counter(dc))
            .and_then(|cells| cells.get(slot))
        {
            c.reset();
        }
        if let Some(m) = td
            .direct_meter
            .and_then(|dm| self.externs.direct_meter(dm))
            .and_then(|cells| cells.get(slot))
        {
            *m.lock().unwrap_or_else(PoisonError::into_inner) = Meter::default();
        }
    }

    // ------------------------------------------------------------------ ports, clock, gate

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

    /// Which ports are down.
    #[inline]
    pub(crate) fn ports(&self) -> &PortStatus {
        &self.ports
    }

    /// Whether a port is a network port (PNA).
    #[inline]
    pub fn is_net_port(&self, port: u64) -> bool {
        !self.config.host_ports.iter().any(|p| u64::from(*p) == port)
    }

    /// The switch's own counters.
    #[inline]
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }

    /// The interpreter fallbacks counted by site so far (with `Config::fallback_sites`; empty
    /// otherwise), most taken first (docs/jit.md, "Fallbacks").
    pub fn fallback_sites(&self) -> Vec<crate::engine::sites::FallbackSite> {
        let counts = self
            .stats
            .fallback_sites
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        crate::engine::sites::describe(&self.prog, &counts)
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

    /// The quiescence gate workers pass at every batch (`Worker` registers with it).
    #[inline]
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    // ------------------------------------------------------------------ the control plane

    /// The control plane's lock, shared: a read sees all or none of any write.
    pub(crate) fn control_read(&self) -> RwLockReadGuard<'_, ()> {
        self.control.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The control plane's lock, exclusive: writes are serialized.
    pub(crate) fn control_write(&self) -> RwLockWriteGuard<'_, ()> {
        self.control.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The update-delay probes waiting to be collected.
    pub(crate) fn probes(&self) -> &Probes {
        &self.probes
    }

    /// The probes of updates that packets have used (and, with `all`, every armed one), each
    /// reported once: d_data is `seen_ns - visible_ns` (see [`Probe`]).
    pub fn take_update_probes(&self, all: bool) -> Vec<Probe> {
        for rt in &self.tables {
            if let Some(p) = rt.watch().harvest(all) {
                self.probes.push(p);
            }
        }
        self.probes.take()
    }
}
