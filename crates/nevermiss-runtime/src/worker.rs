//! A worker: one thread's interpreter, running packets to completion one after the other.

use crate::arch::{
    pna_finish, pna_parse_in_place, process_pna, process_psa, process_v1, psa_finish,
    psa_parse_first, v1_finish, v1_parse_first, Outputs, PnaPass,
};
use crate::engine::exec::{Exec, TableOps};
use crate::state::{ArchInfo, Switch};
use nevermiss_io::Packet;
use nevermiss_tables::{Prefetch, Ticket};
use std::sync::Arc;

/// Packets a batch parses before their tables are prefetched and they run on (the group size
/// of the engine's own batched lookup).
pub const PREFETCH_GROUP: usize = 32;

/// One worker thread's state. The switch is shared (`Arc`), everything else is owned and
/// reused from packet to packet.
pub struct Worker {
    /// The switch it runs; shared with the other workers and the control plane.
    pub sw: Arc<Switch>,
    /// Its interpreter state: the packet's frame, registers and deparser output.
    pub ex: Exec,
    /// The packets the last input packet produced.
    pub out: Outputs,
    /// Interpreter states of the packets of a prefetching batch (created on first use).
    slots: Vec<Exec>,
    /// The address of `slots`' buffer and their number when they were last bound to the
    /// switch (`Exec::bind`): they are bound again only when the vector has moved or grown.
    bound: (usize, usize),
    hints: Vec<Option<Prefetch>>,
    id: u64,
    warm: Warm,
    /// This worker's slot in the switch's quiescence gate: every batch (and every single
    /// packet of [`Worker::process`]) runs between `enter` and `leave`, so a dataplane-atomic
    /// control-plane batch is seen whole or not at all (`Switch::write`).
    ticket: Option<Ticket>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(t) = self.ticket.take() {
            self.sw.gate().unregister(t);
        }
    }
}

/// State of the insert-path warming (see [`Worker::maintain`]).
#[derive(Default)]
struct Warm {
    /// Packets since the last insert (or the last warming).
    since: u32,
    /// A recent packet that hit an add-on-miss table, and its port.
    pkt: Vec<u8>,
    port: u32,
    /// The shadow worker (created on first use; `None` inside a shadow).
    shadow: Option<Box<Worker>>,
    /// This program has no add-on-miss table, or warming is off.
    off: bool,
    /// Packets replayed through the shadow so far.
    count: u64,
}

impl Warm {
    /// Notes what a packet just processed did, for [`Worker::maintain`].
    #[inline]
    fn note(&mut self, ops: TableOps, data: &[u8], port: u32) {
        if self.off {
            return;
        }
        if ops.contains(TableOps::INSERT) {
            self.since = 0;
            return;
        }
        self.since = self.since.saturating_add(1);
        if ops.contains(TableOps::HIT) && (self.pkt.is_empty() || self.since % 16 == 1) {
            self.pkt.clear();
            self.pkt.extend_from_slice(data);
            self.port = port;
        }
    }
}

impl Worker {
    /// What a profiling build (`Config::profile`) measured in this worker's
    /// [`Worker::process`] calls since it was made or last cleared; `None` in the plain build.
    /// (A batch's other packet states keep their own, not read here.)
    pub fn profile(&mut self) -> Option<&mut crate::engine::profile::Profile> {
        self.ex.profile.as_deref_mut()
    }

    /// A worker for `sw`; `id` seeds its random generator.
    pub fn new(sw: Arc<Switch>, id: u64) -> Worker {
        let ex = Exec::new(&sw, id);
        let sw_ticket = sw.gate().register();
        // Nothing to warm: no add-on-miss table, or warming switched off.
        let warm_off = sw.config().warm_insert_every == 0
            || !sw.rt_tables().iter().any(|t| t.table().spec().add_on_miss);
        Worker {
            sw,
            ex,
            out: Outputs::default(),
            slots: Vec::new(),
            bound: (0, 0),
            hints: Vec::new(),
            id,
            warm: Warm {
                off: warm_off,
                ..Warm::default()
            },
            ticket: Some(sw_ticket),
        }
    }

    /// Runs one packet that arrived on `port` at `now_ns`; the packets it produces are in
    /// [`Worker::outputs`] until the next call. Never panics on any input bytes.
    pub fn process(&mut self, data: &[u8], port: u32, now_ns: u64) -> &Outputs {
        if let Some(t) = &self.ticket {
            self.sw.gate().enter(t);
        }
        self.process_inside(data, port, now_ns);
        if let Some(t) = &self.ticket {
            self.sw.gate().leave(t);
        }
        // A packet alone runs in `ex` only (the batch states are a batch's).
        if self.ex.fallbacks != 0 {
            self.flush_fallbacks();
        }
        &self.out
    }

    /// Moves the interpreter fallbacks of this worker's states into `SwitchStats::fallbacks`
    /// (one atomic add when there were any, none otherwise).
    #[inline]
    fn flush_fallbacks(&mut self) {
        let mut n = std::mem::take(&mut self.ex.fallbacks);
        for s in &mut self.slots {
            n += std::mem::take(&mut s.fallbacks);
        }
        if n != 0 {
            self.sw
                .stats()
                .fallbacks
                .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            if self.ex.sites.is_some() {
                self.flush_sites();
            }
        }
    }

    /// Moves the per-site fallback counts (`Config::fallback_sites`) into the switch's.
    #[cold]
    fn flush_sites(&mut self) {
        let all = &self.sw.stats().fallback_sites;
        let mut all = all.lock().unwrap_or_else(|p| p.into_inner());
        for m in
            std::iter::once(&mut self.ex.sites).chain(self.slots.iter_mut().map(|s| &mut s.sites))
        {
            if let Some(m) = m.as_deref_mut() {
                all.merge(std::mem::take(m));
            }
        }
    }

    /// [`Worker::process`] inside the gate.
    #[inline(always)]
    fn process_inside(&mut self, data: &[u8], port: u32, now_ns: u64) {
        self.out.clear();
        self.ex.now_ns = now_ns;
        self.ex.ops = TableOps::NONE;
        let sw = &*self.sw;
        match sw.arch() {
            ArchInfo::Pna(pi) => process_pna(&mut self.ex, sw, pi, data, port, &mut self.out),
            ArchInfo::V1(vi) => process_v1(&mut self.ex, sw, vi, data, port, &mut self.out),
            ArchInfo::Psa(pi) => process_psa(&mut self.ex, sw, pi, data, port, &mut self.out),
        }
        self.warm.note(self.ex.ops, data, port);
    }

    /// Runs a batch of packets, each at `now_ns(packet)`, calling `done(i, &outputs)` for packet
    /// `i` in order. The outputs are those [`Worker::process`] would give packet by packet.
    ///
    /// Programs whose first control after the parser applies exact tables (`Switch::prefetch`;
    /// PNA, v1model and PSA alike) are run in groups of [`PREFETCH_GROUP`]: every packet of a
    /// group is parsed, the buckets then entries of its tables are prefetched from its key as
    /// parsed, and only then does each packet run the rest of its passes — so the group's table
    /// misses overlap instead of costing one DRAM latency after another (papers/000 §IV;
    /// docs/runtime.md). The prefetch is a hint: a key the control changes before the apply is
    /// looked up as usual. Other programs run packet by packet.
    pub fn process_batch(
        &mut self,
        pkts: &[Packet],
        now_ns: impl Fn(&Packet) -> u64,
        done: impl FnMut(usize, &mut Outputs),
    ) {
        self.process_batch_ahead(pkts, &[], now_ns, done)
    }

    /// [`Worker::process_batch`], told which packets come next (`ahead`, typically the next
    /// batch of a queue held in memory): as packet `i` runs, the headers of `ahead[i]` start to
    /// be fetched ([`Packet::prefetch_headers`]) — one packet at a time, and in
    /// a group's run loop, not its parse loop, because a core has few line-fill buffers and
    /// the parse loop's table prefetches need them (measured at m = 2^20: add-on-miss inserts
    /// 8.5 → 9.3 Mpps for that move alone; docs/jit.md). Results are those of
    /// `process_batch`; `ahead` is only read.
    pub fn process_batch_ahead(
        &mut self,
        pkts: &[Packet],
        ahead: &[Packet],
        now_ns: impl Fn(&Packet) -> u64,
        done: impl FnMut(usize, &mut Outputs),
    ) {
        if let Some(t) = &self.ticket {
            self.sw.gate().enter(t);
        }
        self.process_batch_inside(pkts, ahead, now_ns, done);
        if let Some(t) = &self.ticket {
            self.sw.gate().leave(t);
        }
        self.flush_fallbacks();
        // More packets ahead than in this batch: the rest at once.
        if let Some(rest) = ahead.get(pkts.len()..) {
            nevermiss_io::packet::prefetch_headers(rest);
        }
    }

    fn process_batch_inside(
        &mut self,
        pkts: &[Packet],
        ahead: &[Packet],
        now_ns: impl Fn(&Packet) -> u64,
        mut done: impl FnMut(usize, &mut Outputs),
    ) {
        let prefetch_ahead = |i: usize| {
            if let Some(a) = ahead.get(i) {
                a.prefetch_headers();
            }
        };
        if self.sw.plan().prefetch().is_empty() || pkts.len() <= 1 {
            let sw: &Switch = &self.sw;
            if let (ArchInfo::Pna(pi), Some(pass), None) =
                (sw.arch(), PnaPass::of(sw), &self.ex.trace)
            {
                // Generated code runs every packet: set up once for the batch.
                self.ex.bind(sw);
                for (i, p) in pkts.iter().enumerate() {
                    prefetch_ahead(i);
                    self.out.clear();
                    self.ex.now_ns = now_ns(p);
                    self.ex.ops = TableOps::NONE;
                    // SAFETY: `ex` was bound to `sw` above and is not traced; the batch's
                    // packets outlive it.
                    unsafe { pass.process(&mut self.ex, sw, pi, p.data(), p.port, &mut self.out) };
                    self.warm.note(self.ex.ops, p.data(), p.port);
                    done(i, &mut self.out);
                }
                return;
            }
            for (i, p) in pkts.iter().enumerate() {
                prefetch_ahead(i);
                self.process_inside(p.data(), p.port, now_ns(p));
                done(i, &mut self.out);
            }
            return;
        }
        // Borrow the fields apart: no reference-count traffic on the shared switch per batch.
        let Worker {
            sw,
            out,
            slots,
            bound,
            hints,
            id,
            warm,
            ..
        } = self;
        let sw: &Switch = sw;
        let arch = &sw.arch();
        let tables = sw.plan().prefetch().len();
        while slots.len() < PREFETCH_GROUP.min(pkts.len()) {
            let n = slots.len() as u64;
            slots.push(Exec::new(
                sw,
                id.wrapping_mul(PREFETCH_GROUP as u64 + 1) + n + 1,
            ));
        }
        // A PNA pass in generated code (slots are never traced): the states are set up for it
        // once, and again only after they moved (the worker's switch never changes).
        let pass = match arch {
            ArchInfo::Pna(pi) => PnaPass::of(sw).map(|f| (pi, f)),
            _ => None,
        };
        let at = (slots.as_ptr() as usize, slots.len());
        if pass.is_some() && *bound != at {
            for ex in slots.iter_mut() {
                ex.bind(sw);
            }
            *bound = at;
        }
        for (g, group) in pkts.chunks(PREFETCH_GROUP).enumerate() {
            hints.clear();
            for (ex, p) in slots.iter_mut().zip(group) {
                ex.now_ns = now_ns(p);
                ex.ops = TableOps::NONE;
                match (pass, arch) {
                    // SAFETY: `ex` was bound above; the group's packets outlive the batch,
                    // whose `finish` of this packet comes below.
                    (Some((pi, f)), _) => unsafe { f.parse(ex, sw, pi, p.data(), p.port) },
                    // SAFETY: the group's packets outlive the batch, whose
                    // `pna_finish` of this packet comes below.
                    (None, ArchInfo::Pna(pi)) => unsafe {
                        pna_parse_in_place(ex, sw, pi, p.data(), p.port)
                    },
                    (None, ArchInfo::V1(vi)) => v1_parse_first(ex, sw, vi, p.data(), p.port),
                    (None, ArchInfo::Psa(pi)) => psa_parse_first(ex, sw, pi, p.data(), p.port),
                }
                match sw.plan().prefetch_keys() {
                    // Generated `pass_parse` stored the keys (slots are never traced).
                    Some(keys) if arch.pna().is_some() => {
                        for &(t, off, len) in keys {
                            hints.push(ex.prefetch_stored(sw, t, off, len));
                        }
                    }
                    _ => {
                        for &t in sw.plan().prefetch() {
                            hints.push(ex.prefetch_table(sw, t));
                        }
                    }
                }
            }
            for hs in hints.chunks_exact(tables) {
                for (h, &t) in hs.iter().zip(sw.plan().prefetch()) {
                    if let (Some(h), Some(rt)) = (h, sw.rt_tables().get(t as usize)) {
                        rt.table().prefetch_entry(*h);
                    }
                }
            }
            for (j, (ex, p)) in slots.iter_mut().zip(group).enumerate() {
                // Here rather than in the parse loop above, whose bucket prefetches would
                // otherwise queue behind these for the core's few line-fill buffers.
                prefetch_ahead(g * PREFETCH_GROUP + j);
                out.clear();
                match (pass, arch) {
                    // SAFETY: as for its `parse` above.
                    (Some((pi, f)), _) => unsafe { f.finish(ex, sw, pi, p.port, out) },
                    (None, ArchInfo::Pna(pi)) => pna_finish(ex, sw, pi, p.port, 0, out),
                    (None, ArchInfo::V1(vi)) => v1_finish(ex, sw, vi, p.data(), p.port, out),
                    (None, ArchInfo::Psa(pi)) => psa_finish(ex, sw, pi, p.data(), p.port, out),
                }
                warm.note(ex.ops, p.data(), p.port);
                done(g * PREFETCH_GROUP + j, out);
            }
        }
    }

    /// Housekeeping between packets, for the run loop to call after each batch (and a latency
    /// measurement between packets, outside the timed region): keeps the add-on-miss insert path
    /// warm. An insert that comes once in 100000 packets otherwise finds the interpreter's and the
    /// engine's insert code evicted from the caches by then and fetches it from DRAM line by line
    /// (measured: ~14 µs instead of ~0.3 µs; papers/000 Table IIIb's "insertion cost grows as
    /// insertions get rarer"). After `Config::warm_insert_every` packets without an insert, a recent
    /// packet that hit an add-on-miss table is replayed through a private shadow switch — the same
    /// program (shared: the same IR in memory, so its lines are warmed too) with tables of 64
    /// entries and none of the control plane's — where it misses and inserts, running the same
    /// code; the shadow's tables are then cleared, [`nevermiss_tables::Table::warm`] fetches
    /// the real tables' insert lines, and this worker's own insert-only lines (its parameter
    /// buffers, written with their own bytes) are touched. No value of the real switch changes.
    /// Costs one packet's processing per `warm_insert_every` packets at most, and nothing while
    /// inserts are frequent.
    pub fn maintain(&mut self) {
        let every = self.sw.config().warm_insert_every;
        if self.warm.off || every == 0 || self.warm.since < every || self.warm.pkt.is_empty() {
            return;
        }
        self.warm.since = 0;
        if self.warm.shadow.is_none() {
            let sw = &self.sw;
            let config = crate::types::Config {
                warm_insert_every: 0,
                prefetch_tables: 0,
                table_size_cap: Some(64),
                lock_free_updates: false,
                ..sw.config().clone()
            };
            match Switch::with_native(Arc::clone(sw.prog()), config, sw.plan().native().cloned()) {
                Ok(s) => self.warm.shadow = Some(Box::new(Worker::new(Arc::new(s), self.id))),
                Err(_) => {
                    self.warm.off = true;
                    return;
                }
            }
        }
        if let Some(sh) = &mut self.warm.shadow {
            self.warm.count += 1;
            sh.process(&self.warm.pkt, self.warm.port, self.ex.now_ns);
            for t in sh.sw.rt_tables() {
                if t.table().spec().add_on_miss {
                    t.table().clear();
                }
            }
        }
        // The real tables: their insert code and the slot the next insert takes (hints only);
        // then this worker's own lines of the insert path.
        for t in self.sw.rt_tables() {
            t.table().warm();
        }
        self.ex.warm_insert_lines(&self.sw);
    }

    /// Runs a copy taken from an egress queue (`crate::queues`) at `now_ns`: egress, and the
    /// passes that follow from it; its packets (and copies for queues) are in
    /// [`Worker::outputs`] until the next call.
    pub(crate) fn run_dequeued(
        &mut self,
        job: crate::arch::EgressJob,
        q: crate::arch::QueueMeta,
        now_ns: u64,
    ) {
        if let Some(t) = &self.ticket {
            self.sw.gate().enter(t);
        }
        self.out.clear();
        self.ex.now_ns = now_ns;
        self.ex.ops = TableOps::NONE;
        if let Some(vi) = self.sw.arch().v1() {
            crate::arch::v1_dequeued(&mut self.ex, &self.sw, vi, job, q, &mut self.out);
        }
        if let Some(t) = &self.ticket {
            self.sw.gate().leave(t);
        }
        self.flush_fallbacks();
    }

    /// How many times [`Worker::maintain`] has warmed the insert path.
    pub fn warmings(&self) -> u64 {
        self.warm.count
    }

    /// What the last [`Worker::process`] did to tables (hit, miss, insert, failed insert,
    /// in-place update; empty if no table was applied), over all its passes.
    #[inline]
    pub fn last_ops(&self) -> TableOps {
        self.ex.ops
    }

    /// The packets produced by the last [`Worker::process`].
    pub fn outputs(&self) -> &Outputs {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The switch is shared by workers and the control plane; a worker moves to its thread.
    #[test]
    fn switch_is_sync_and_worker_is_send() {
        fn sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        sync::<Switch>();
        sync::<p4_ir::Program>();
        send::<Worker>();
    }

    fn example(name: &str, size: u32) -> Arc<Switch> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        let opts = p4_front::driver::Options {
            defines: vec![("FLOW_TABLE_SIZE".into(), size.to_string())],
            ..Default::default()
        };
        let prog = p4_ir::lower::source::compile_file(&path, &opts).unwrap();
        Arc::new(Switch::new(prog, crate::Config::default()).unwrap())
    }

    fn frame(key: u32) -> Vec<u8> {
        let g = nevermiss_io::TwoPhaseGen::new(nevermiss_io::TwoPhaseConfig::default()).unwrap();
        let mut f = g.template().to_vec();
        f[30..34].copy_from_slice(&key.to_be_bytes());
        f
    }

    /// Each packet's operation flags: miss+insert, then hit, then miss+full when the table
    /// is full; flags do not leak from one packet to the next.
    #[test]
    fn last_ops_add_on_miss() {
        let mut w = Worker::new(example("pna-add-on-miss.p4", 1), 0);
        assert_eq!(w.last_ops(), TableOps::NONE);
        w.process(&frame(7), 0, 0);
        assert_eq!(w.last_ops(), TableOps::MISS | TableOps::INSERT);
        w.process(&frame(7), 0, 0);
        assert_eq!(w.last_ops(), TableOps::HIT);
        // The table holds one entry: a second key cannot be inserted.
        w.process(&frame(8), 0, 0);
        assert_eq!(w.last_ops(), TableOps::MISS | TableOps::INSERT_FULL);
        assert!(!w.last_ops().contains(TableOps::INSERT));
        // A packet that applies no table (not UDP: the table is skipped).
        let mut f = frame(7);
        f[23] = 6;
        w.process(&f, 0, 0);
        assert!(w.last_ops().is_empty());
        // Garbage bytes: no panic, no table.
        w.process(&[1, 2, 3], 0, 0);
        assert!(w.last_ops().is_empty());
    }

    /// The update variant: a hit writes its `@__ref` parameter back.
    #[test]
    fn last_ops_update() {
        let mut w = Worker::new(example("pna-dataplane-update.p4", 16), 0);
        w.process(&frame(1), 0, 0);
        assert_eq!(w.last_ops(), TableOps::MISS | TableOps::INSERT);
        w.process(&frame(1), 0, 0);
        assert_eq!(w.last_ops(), TableOps::HIT | TableOps::UPDATE);
        assert!(w.last_ops().contains(TableOps::HIT));
        assert!(!w.last_ops().contains(TableOps::MISS));
    }
}
