//! The shared table: `&self` methods for N data-plane workers and one control-plane thread.
//!
//! Concurrency scheme (docs/tables.md, "Concurrency"):
//! - exact tables use the lock-free cuckoo index of [`crate::exact`], or for keys of 1 or 2
//!   bytes the direct array of [`crate::direct`]: lookups take no lock and write no shared
//!   memory; inserts and deletes lock their key's two buckets (or its one index word), so
//!   inserts from every worker and the control plane run in parallel, and two cores adding the
//!   same key are serialized: one `Added`, the other `AlreadyPresent`;
//! - lpm/ternary/range/optional tables keep their tuple-space index behind one `RwLock`;
//! - each entry's action data, version, generation and timer live in a sequence-locked cell
//!   ([`crate::cell`]): `modify`, `update_params`, `restart_timer` and `set_expire_profile`
//!   never take an index lock exclusively, and readers see the old or the new data, never a mix;
//! - idle timers are a timer wheel behind its own mutex, touched by the data plane only when a
//!   deadline moves earlier or a notified entry is re-armed.
//!
//! Lock order: index (RwLock or bucket locks) → cell → wheel; no thread waits for a lock while
//! holding a cell lock, and no thread takes the wheel lock while holding bucket locks.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::action::ActionData;
use crate::cell::{alloc_slice, CellGuard, Cells, EntryRead, NEVER};
use crate::direct::{DKey, Direct};
use crate::error::TableError;
use crate::exact::{Exact, Ins, Line, Probe, SECOND};
use crate::hash::{hash_start, random_seed, word_at, Four, FromKey, Key, ProbeKey, Words};
use crate::hazard::Hazards;
use crate::index::Index;
use crate::slots::Slots;
use crate::spec::{
    compile, decompile, Compiled, EntryView, ExactEngine, FieldMatch, IdleTimeout, Layout,
    TableSpec,
};
use crate::stamp::{stamp, Stage};
use crate::stats::{owned_stripe, Counter, Stats, TableStats};
use crate::wheel::{Wheel, DEFAULT_TICK_NS, NIL};

/// Identifies one live entry. Stays valid until the entry is deleted (then every operation given
/// it reports it as stale), and `slot()` is stable for the entry's lifetime, so direct counters
/// and meters can be plain arrays indexed by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryHandle {
    slot: u32,
    gen: u32,
}

impl EntryHandle {
    /// Slot index in `0..capacity()`.
    #[inline]
    pub fn slot(&self) -> usize {
        self.slot as usize
    }
    /// Generation of the slot when the handle was issued.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.gen
    }
}

/// Control-plane name for an entry handle.
pub type EntryId = EntryHandle;

/// Result of a lookup. On a miss `data` is the table's default action (P4_16 §14.2.2).
/// Equality compares the outcome (`hit`, `data`, `version`), not [`Lookup::key_hash`].
#[derive(Clone, Debug, Default)]
pub struct Lookup {
    /// The matched entry, `None` on a miss.
    pub hit: Option<EntryHandle>,
    /// Copy of the matched entry's (or the default) action data.
    pub data: ActionData,
    /// Version of the copied data (entry version, or default-action version on a miss).
    pub version: u64,
    /// See [`Lookup::key_hash`].
    hash: u64,
}

impl PartialEq for Lookup {
    fn eq(&self, o: &Lookup) -> bool {
        self.hit == o.hit && self.data == o.data && self.version == o.version
    }
}

impl Eq for Lookup {}

impl Lookup {
    /// Whether an entry matched.
    #[inline]
    pub fn is_hit(&self) -> bool {
        self.hit.is_some()
    }

    /// The hash the lookup that filled this result used: of an exact table (either engine),
    /// the key's [`Table::hash_key`] (for [`Table::lookup_exact_hashed`], the hash it was
    /// given); 0 for other tables and keys of the wrong length. So a caller that looked a
    /// key up and missed can add it with [`Table::add_on_miss_hashed`]`(key, key_hash(), ..)`
    /// without hashing it again.
    #[inline]
    pub fn key_hash(&self) -> u64 {
        self.hash
    }
}

/// Outcome of a data-plane insert (PNA `add_entry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddStatus {
    /// The entry was added.
    Added(EntryHandle),
    /// An entry with this key exists (another core may have added it first).
    AlreadyPresent,
    /// No free slot.
    Full,
    /// Bad key length, parameters, profile, or a table without `add_on_miss`.
    Rejected(TableError),
}

impl AddStatus {
    /// Whether an entry was added (PNA `ADD_ENTRY_SUCCESS`).
    #[inline]
    pub fn is_added(&self) -> bool {
        matches!(self, AddStatus::Added(_))
    }
}

/// An entry whose idle timer ran out, reported by [`Table::expire`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expired {
    /// The entry as it was when it expired.
    pub entry: EntryView,
    /// `true` for NOTIFY_CONTROL (entry kept, notify the control plane), `false` for
    /// AUTO_DELETE (entry removed).
    pub notify: bool,
}

/// Default expire-time profiles in seconds (those of p4c-dpdk's learner tables).
pub const DEFAULT_PROFILES_S: [u64; 8] = [10, 30, 60, 120, 300, 43200, 120, 120];
/// Number of expire-time profile ids (`ExpireTimeProfileId_t` is `bit<8>`).
pub const MAX_PROFILES: usize = 256;

/// Cache lines of code prefetched from the start of each function of the insert path: about
/// their sizes in a release build of x86-64 (the table's add-on-miss functions with the
/// common insert inlined, 1.7–2.0 KB; the general insert `Exact::insert_slow`, 2.7–3.0 KB; the
/// slot allocator's slow path, 0.8 KB; the insert into a full primary bucket `Table::add_slow`,
/// 2.8–3.0 KB). A wrong size only wastes or misses a few prefetches.
const WARM_LINES: [usize; 4] = [40, 56, 14, 48];

/// Keys per group in [`Table::lookup_batch`]: all their buckets are requested before any is
/// used, so about this many DRAM misses are in flight at once.
const BATCH: usize = 32;

/// Evaluates `$body` with `$k` bound to the fastest [`ProbeKey`] form of the key `$key`:
/// register-held words for keys of up to 48 bytes, the byte slice otherwise.
macro_rules! with_key {
    ($key:expr, |$k:ident| $body:expr) => {{
        let key: &[u8] = $key;
        match key.len().div_ceil(8) {
            1 => {
                let $k = Words::<1>::new(key);
                $body
            }
            2 => {
                let $k = Words::<2>::new(key);
                $body
            }
            3 => {
                let $k = Words::<3>::new(key);
                $body
            }
            4 => {
                let $k = Words::<4>::new(key);
                $body
            }
            5 => {
                let $k = Words::<5>::new(key);
                $body
            }
            6 => {
                let $k = Words::<6>::new(key);
                $body
            }
            _ => {
                let $k = Key::new(key);
                $body
            }
        }
    }};
}

/// [`Table::kw`] of a table with 4-byte keys.
const KW_FOUR: usize = 7;

/// Evaluates `$body` with the type `$K` bound to the [`FromKey`] type of key shape `$kw`
/// (see [`with_words!`]), or `$other` for shapes without one.
macro_rules! with_shape {
    ($kw:expr, |$K:ident| $body:expr, $other:expr) => {{
        match $kw {
            1 => {
                type $K = Words<1>;
                $body
            }
            2 => {
                type $K = Words<2>;
                $body
            }
            3 => {
                type $K = Words<3>;
                $body
            }
            4 => {
                type $K = Words<4>;
                $body
            }
            5 => {
                type $K = Words<5>;
                $body
            }
            6 => {
                type $K = Words<6>;
                $body
            }
            KW_FOUR => {
                type $K = Four;
                $body
            }
            _ => $other,
        }
    }};
}

/// `Table::$f::<KL, A, B>` for a direct table's key length `$kl` (1 or 2) and the flags `$a`,
/// `$b`, or `$other` for other lengths.
macro_rules! direct_fn {
    ($kl:expr, $a:expr, $b:expr, $f:ident, $other:expr) => {{
        match ($kl, $a, $b) {
            (1, false, false) => Table::$f::<1, false, false>,
            (1, false, true) => Table::$f::<1, false, true>,
            (1, true, false) => Table::$f::<1, true, false>,
            (1, true, true) => Table::$f::<1, true, true>,
            (2, false, false) => Table::$f::<2, false, false>,
            (2, false, true) => Table::$f::<2, false, true>,
            (2, true, false) => Table::$f::<2, true, false>,
            (2, true, true) => Table::$f::<2, true, true>,
            _ => $other,
        }
    }};
}

/// What an exact insert writes: (action, parameters, expire profile, deadline, now, whether an
/// AUTO_DELETE entry of the key past its deadline at `now` is replaced).
type InsertArgs<'a> = (u32, &'a [u8], u8, u64, u64, bool);

/// [`Table::hash_key`] specialized for one table kind.
type HashFn = fn(&Table, &[u8]) -> u64;
/// A lookup specialized for one table kind: (table, key, hash, now, out) -> hit.
type LookupFn = fn(&Table, &[u8], u64, u64, &mut Lookup) -> bool;
/// An add-on-miss specialized for one table kind: (table, key, hash, parameters,
/// `action | expire_profile << 32`, now) -> `(slot + 1) | gen << 32` when added, else
/// [`ADD_PRESENT`], [`ADD_FULL`] or [`ADD_REJECTED`] (a result in two registers, no status
/// written through memory).
type AddFn = fn(&Table, &[u8], u64, &[u8], u64, u64) -> u64;
const ADD_PRESENT: u64 = 1 << 32;
const ADD_FULL: u64 = 2 << 32;
const ADD_REJECTED: u64 = 3 << 32;

/// The [`AddFn`] result of an added entry (slots are < 2^28, so `slot + 1` is never 0).
#[inline(always)]
fn add_code(h: EntryHandle) -> u64 {
    (h.slot as u64 + 1) | (h.gen as u64) << 32
}

/// (`repr(u8)`: the variant is a byte at a fixed place, which the data-plane functions, each
/// chosen for one engine, check with one compare; a niche-encoded tag took eight instructions.)
#[repr(u8)]
enum Engine {
    /// Lock-free cuckoo index (all fields exact).
    Exact(Exact),
    /// Lock-free direct array indexed by the key (all fields exact, packed in 1 or 2 bytes).
    Direct(Direct),
    /// Tuple-space index behind a lock (lpm, ternary, range, optional).
    Tuple(RwLock<Index>),
}

/// A match-action table shared by worker threads and the control plane (`Send + Sync`).
pub struct Table {
    spec: TableSpec,
    layout: Layout,
    has_priority: bool,
    auto_delete: bool,
    /// The declared size: at most this many entries.
    size: usize,
    /// Entry slots (cells `0..nslots`; cell `nslots` holds the default action): `size`, or for
    /// a direct table at most one per key value.
    nslots: usize,
    /// Exact tables: the key's shape, what the data-plane calls dispatch on once: its words
    /// (`ceil(key_len / 8)`, 1 for direct tables) or [`KW_FOUR`] for 4-byte keys; 0 for other
    /// tables and empty keys.
    kw: usize,
    /// Exact tables: the state a key's hash starts from (`hash_start(key_len, seed)`).
    hstart: u64,
    /// [`Table::lookup_into`] and [`Table::lookup_exact_hashed`] for this table's engine and
    /// key shape, chosen once: a data-plane lookup is one indirect call, not a dispatch.
    lookup_fn: LookupFn,
    lookup_hashed_fn: LookupFn,
    /// [`Table::hash_key`], chosen likewise.
    hash_fn: HashFn,
    /// [`Table::add_on_miss`] and [`Table::add_on_miss_hashed`], chosen likewise.
    add_fn: AddFn,
    add_hashed_fn: AddFn,
    /// The out-of-line rest of `add_hashed_fn`'s insert (`Table::add_slow`: a full primary
    /// bucket, ~40 % of the inserts into a table filled to 75 % of its ways), whose code
    /// [`Table::warm`] keeps in cache too; `None` where there is none.
    add_slow_fn: Option<AddFn>,
    engine: Engine,
    cells: Cells,
    wheel: Option<Mutex<Wheel>>,
    profiles: Box<[AtomicU64]>,
    n_profiles: AtomicU32,
    /// Profiles set one by one with [`Table::set_profile`] (a bit per id), valid besides the
    /// first `n_profiles`.
    extra_profiles: [AtomicU64; MAX_PROFILES / 64],
    stats: Stats,
    /// Lock-free data-plane updates and what excludes them (`hazard.rs`).
    /// Lock-free data-plane writes (`hazard.rs`); shared with the exact engines' slot
    /// allocator, whose limbo waits for them.
    hazards: Arc<Hazards>,
}

impl Table {
    /// A table for `spec` with 1 ms expiry ticks. Allocates all memory now.
    pub fn new(spec: TableSpec) -> Result<Table, TableError> {
        Table::with_tick(spec, DEFAULT_TICK_NS)
    }

    /// A table whose idle timers have a resolution of `tick_ns` nanoseconds.
    pub fn with_tick(spec: TableSpec, tick_ns: u64) -> Result<Table, TableError> {
        spec.validate()?;
        let layout = Layout::new(&spec);
        let size = spec.size;
        let timed = spec.idle_timeout != IdleTimeout::NoTimeout;
        let seed = random_seed();
        let direct = spec.is_exact()
            && match spec.exact_engine {
                ExactEngine::Auto | ExactEngine::Direct => Direct::fits(&layout),
                ExactEngine::Hash => false,
            };
        // A direct table holds at most one entry per key value: no more slots than that (a
        // replaced expired entry's slot is reused by its key's new entry, so no spare is needed).
        let nslots = match direct {
            true => size.min(Direct::indices(&layout)),
            false => size,
        };
        let mut engine = if direct {
            Engine::Direct(Direct::new(&layout, nslots)?)
        } else if spec.is_exact() {
            Engine::Exact(Exact::new(size, seed)?)
        } else {
            Engine::Tuple(RwLock::new(Index::new(size, &layout, seed)?))
        };
        // Lock-free data-plane writes (`data_plane_updates`: `@__ref` updates, timer
        // restarts). An exact table's removals in bulk (expiry, reclaim, clear) wait for them
        // once per batch (`slots.rs`, "Limbo"); a timed tuple table keeps the locks, as each
        // of its removals would pay a process-wide barrier of its own.
        let lock_free = spec.data_plane_updates && !(timed && matches!(engine, Engine::Tuple(_)));
        let hazards = Arc::new(Hazards::new(lock_free));
        match &mut engine {
            Engine::Exact(x) => x.slots.bind_hazards(hazards.clone()),
            Engine::Direct(d) => d.slots.bind_hazards(hazards.clone()),
            Engine::Tuple(_) => {}
        }
        let key_in_cell = if spec.is_exact() { layout.key_len } else { 0 };
        let auto_delete = spec.idle_timeout == IdleTimeout::AutoDelete;
        let kw = match layout.key_len {
            _ if !spec.is_exact() || spec.keys.is_empty() => 0,
            4 if !direct => KW_FOUR,
            n => n.div_ceil(8),
        };
        let cells = Cells::new(nslots + 1, key_in_cell, spec.max_params_bytes, timed)?;
        // The default action starts as ACTION_NONE, version 0.
        cells.lock(nslots).write(&ActionData::default());
        let wheel = match timed {
            false => None,
            true => Some(Mutex::new(Wheel::new(nslots, tick_ns)?)),
        };
        let profiles = alloc_slice(MAX_PROFILES, AtomicU64::default)?;
        for (p, s) in profiles.iter().zip(DEFAULT_PROFILES_S) {
            p.store(s * 1_000_000_000, Relaxed);
        }
        Ok(Table {
            has_priority: spec.has_priority(),
            auto_delete,
            size,
            nslots,
            kw,
            hstart: hash_start(layout.key_len, seed),
            lookup_fn: Table::lookup_fn(&engine, kw, layout.key_len, false, auto_delete),
            lookup_hashed_fn: Table::lookup_fn(&engine, kw, layout.key_len, true, auto_delete),
            hash_fn: Table::hash_fn(&engine, kw, layout.key_len),
            add_fn: Table::add_fn(&engine, kw, layout.key_len, false, timed, spec.add_on_miss),
            add_hashed_fn: Table::add_fn(
                &engine,
                kw,
                layout.key_len,
                true,
                timed,
                spec.add_on_miss,
            ),
            add_slow_fn: Table::add_slow_fn(&engine, kw, spec.add_on_miss),
            layout,
            engine,
            cells,
            wheel,
            profiles,
            n_profiles: AtomicU32::new(DEFAULT_PROFILES_S.len() as u32),
            extra_profiles: Default::default(),
            stats: Stats::new(),
            hazards,
            spec,
        })
    }

    /// The description the table was built from.
    #[inline]
    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// Bytes of a packed key.
    #[inline]
    pub fn key_len(&self) -> usize {
        self.layout.key_len
    }

    /// Maximum number of entries.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.size
    }

    /// Number of entries (including AUTO_DELETE entries past their deadline not yet reclaimed).
    /// For exact tables a sum of per-thread counters: exact when no insert or delete runs.
    pub fn len(&self) -> usize {
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => self.stats.live(),
            Engine::Tuple(ix) => read(ix).len(),
        }
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters since creation.
    pub fn stats(&self) -> TableStats {
        self.stats.snapshot()
    }

    /// Number of tuples (distinct masks) a lookup may probe; 1 for exact tables.
    pub fn tuple_count(&self) -> usize {
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => 1,
            Engine::Tuple(ix) => read(ix).tuple_count(),
        }
    }

    /// Bytes of memory the table holds (all of it allocated by [`Table::new`]: entry cells,
    /// index, free list, timer wheel, profiles). Compare with the seed's model
    /// `m = 128 B + e·(key + action + 72 B)` (papers/004 Eq. 5): see docs/tables.md, "Memory".
    pub fn memory_bytes(&self) -> usize {
        let index = match &self.engine {
            Engine::Exact(x) => x.bytes(),
            Engine::Direct(d) => d.bytes(),
            Engine::Tuple(ix) => read(ix).bytes(),
        };
        let wheel = self.wheel.as_ref().map_or(0, |w| lock(w).bytes());
        std::mem::size_of::<Table>() + index + self.cells.bytes() + wheel + self.profiles.len() * 8
    }

    /// Bytes of one entry's cell (action data, version, generation, timer, and the key for exact
    /// tables), a multiple of 64.
    pub fn cell_bytes(&self) -> usize {
        self.cells.stride_bytes()
    }

    /// Whether the table is exact and uses the direct array indexed by the key (keys of 1 or
    /// 2 bytes; see [`ExactEngine`]) rather than the cuckoo hash.
    pub fn is_direct(&self) -> bool {
        matches!(self.engine, Engine::Direct(_))
    }

    fn default_slot(&self) -> usize {
        self.nslots
    }

    fn timed(&self) -> bool {
        self.wheel.is_some()
    }

    // ------------------------------------------------------------------ data plane

    /// Looks `key` up (packed as described in [`crate::spec`]); at `now_ns` AUTO_DELETE entries
    /// past their deadline do not match. A key of the wrong length misses. Never allocates when
    /// the parameters fit [`crate::Params::INLINE`].
    pub fn lookup(&self, key: &[u8], now_ns: u64) -> Lookup {
        let mut out = Lookup::default();
        self.lookup_into(key, now_ns, &mut out);
        out
    }

    /// [`Table::lookup`] into a caller-owned result (reuses its parameter buffer); returns hit.
    /// Exact tables: lock-free, no shared memory written but this thread's statistics line.
    #[inline]
    pub fn lookup_into(&self, key: &[u8], now_ns: u64, out: &mut Lookup) -> bool {
        (self.lookup_fn)(self, key, 0, now_ns, out)
    }

    /// The lookup function of a table with engine `engine`, key shape `kw`, key length `kl`,
    /// AUTO_DELETE entries if `auto`.
    fn lookup_fn(engine: &Engine, kw: usize, kl: usize, hashed: bool, auto: bool) -> LookupFn {
        fn generic(t: &Table, key: &[u8], _: u64, now: u64, out: &mut Lookup) -> bool {
            t.lookup_generic(key, now, out)
        }
        match (engine, hashed, auto) {
            (Engine::Direct(_), ..) => direct_fn!(kl, hashed, auto, lookup_direct, generic),
            (Engine::Exact(_), false, false) => {
                with_shape!(kw, |K| Table::lookup_shape::<K, false, false>, generic)
            }
            (Engine::Exact(_), true, false) => {
                with_shape!(kw, |K| Table::lookup_shape::<K, true, false>, generic)
            }
            (Engine::Exact(_), false, true) => {
                with_shape!(kw, |K| Table::lookup_shape::<K, false, true>, generic)
            }
            (Engine::Exact(_), true, true) => {
                with_shape!(kw, |K| Table::lookup_shape::<K, true, true>, generic)
            }
            (Engine::Tuple(_), ..) => generic,
        }
    }

    /// The hash of `key` for [`Table::lookup_exact_hashed`], [`Table::prefetch_hashed`] and
    /// [`Table::add_on_miss_hashed`] (exact tables; a seeded function of the key's bytes, fixed
    /// for the table's lifetime). 0 for other tables and keys of the wrong length.
    #[inline]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        (self.hash_fn)(self, key)
    }

    /// Counts a hit that the caller found without a lookup (the compiled engine matches a
    /// table's `const` entries in its own code): the statistics then read as if it had looked.
    #[inline]
    pub fn count_hit(&self) {
        self.stats.add(Counter::Hits, 1);
    }

    /// The key-hashing function of a table with engine `engine`, key shape `kw` and key
    /// length `kl`.
    fn hash_fn(engine: &Engine, kw: usize, kl: usize) -> HashFn {
        fn generic(t: &Table, key: &[u8]) -> u64 {
            match &t.engine {
                Engine::Exact(x) if key.len() == t.layout.key_len => x.hash(&Key::new(key)),
                Engine::Direct(_) if key.len() == t.layout.key_len => {
                    DKey::of(key).map_or(0, |k| k.hash())
                }
                _ => 0,
            }
        }
        match engine {
            Engine::Exact(_) => with_shape!(kw, |K| Table::hash_shape::<K>, generic),
            Engine::Direct(_) => match kl {
                1 => Table::hash_direct::<1>,
                2 => Table::hash_direct::<2>,
                _ => generic,
            },
            Engine::Tuple(_) => generic,
        }
    }

    /// [`Table::hash_key`] of a direct table with keys of `KL` bytes: the key's index in the
    /// array, with [`crate::direct::HASH_BIT`] set (a hash is never 0).
    #[inline(never)]
    fn hash_direct<const KL: usize>(&self, key: &[u8]) -> u64 {
        DKey::new::<KL>(key).map_or(0, |k| k.hash())
    }

    /// [`Table::hash_key`] for keys prepared as `K`s.
    #[inline(never)]
    fn hash_shape<K: FromKey>(&self, key: &[u8]) -> u64 {
        if !K::len_ok(key, self.layout.key_len) {
            return 0;
        }
        K::from_key(key).hash_from(self.hstart)
    }

    /// [`Table::lookup_into`] for a caller that already has `hash` = [`Table::hash_key`]`(key)`
    /// (e.g. from [`Table::prefetch_hashed`]): the same result, without hashing the key again.
    /// A `hash` that is not the key's makes the lookup miss (never a wrong hit, never unsafe).
    /// Tables other than exact ones ignore `hash`.
    #[inline]
    pub fn lookup_exact_hashed(
        &self,
        key: &[u8],
        hash: u64,
        now_ns: u64,
        out: &mut Lookup,
    ) -> bool {
        (self.lookup_hashed_fn)(self, key, hash, now_ns, out)
    }

    /// The exact lookup of `key` (of the table's length) prepared as a `K`, hashed unless
    /// `HASHED` (then `hash` is its hash), counted: one function per key shape, so that each
    /// keeps only its own values in registers.
    #[inline(never)]
    fn lookup_shape<K: FromKey, const HASHED: bool, const AUTO: bool>(
        &self,
        key: &[u8],
        hash: u64,
        now: u64,
        out: &mut Lookup,
    ) -> bool {
        let Engine::Exact(x) = &self.engine else {
            return self.lookup_generic(key, now, out);
        };
        // (The function was chosen for this table, so `K::LEN`, if set, is its key length.)
        if !K::len_ok(key, self.layout.key_len) {
            return self.lookup_generic(key, now, out);
        }
        let k = K::from_key(key);
        let h = if HASHED {
            hash
        } else {
            k.hash_from(self.hstart)
        };
        out.hash = h;
        // One-line cells: the common cases inline, without a call that is not the last thing
        // done (so that the function needs few registers); anything else — a writer met, a
        // tag collision, the secondary bucket, a concurrent move — runs the whole lookup again.
        if K::WORDS != 0 && K::WORDS <= 4 {
            if let Some(lc) = self.cells.lines() {
                let default = self.default_slot();
                let line =
                    x.hot()
                        .lookup_line(&lc, default, h, &k, &mut out.data, &mut out.version);
                if let Some(hit) = self.settle_line::<AUTO>(line, now, out) {
                    return hit;
                }
            }
        }
        self.lookup_exact_cells(x, k, h, now, out)
    }

    /// The lookup of a direct table with keys of `KL` bytes, counted; if `HASHED`, a `hash`
    /// other than the key's makes it miss. One-line cells: the common cases inline (a word
    /// without a slot, or a word whose generation the entry's cell has, read once), anything
    /// else — a writer met, another generation, a key the table cannot hold — out of line.
    #[inline(never)]
    fn lookup_direct<const KL: usize, const HASHED: bool, const AUTO: bool>(
        &self,
        key: &[u8],
        hash: u64,
        now: u64,
        out: &mut Lookup,
    ) -> bool {
        let Engine::Direct(d) = &self.engine else {
            return self.lookup_generic(key, now, out);
        };
        let Some(k) = DKey::new::<KL>(key) else {
            return self.lookup_generic(key, now, out);
        };
        out.hash = if HASHED { hash } else { k.hash() };
        if HASHED && hash as u32 != k.index as u32 {
            // No index: a miss.
            return self.lookup_direct_slow(d, usize::MAX, now, out);
        }
        if let Some(lc) = self.cells.lines() {
            let default = self.default_slot();
            let line = d.lookup_line(&lc, default, k.index, &mut out.data, &mut out.version);
            if let Some(hit) = self.settle_line::<AUTO>(line, now, out) {
                return hit;
            }
        }
        self.lookup_direct_slow(d, k.index, now, out)
    }

    /// What a one-line lookup's inline path (either exact engine) comes to: `Some(hit)` with
    /// `out.hit` set and the hit or miss counted, or `None` — run the slow path (a writer met,
    /// another generation, or an AUTO_DELETE entry past its deadline; AUTO = `self.auto_delete`,
    /// the lookup function was chosen for the table).
    #[inline(always)]
    fn settle_line<const AUTO: bool>(
        &self,
        line: Line,
        now: u64,
        out: &mut Lookup,
    ) -> Option<bool> {
        match line {
            Line::Hit(slot, gen)
                if !AUTO || self.cells.cell(slot as usize).deadline.load(Relaxed) > now =>
            {
                out.hit = Some(EntryHandle { slot, gen });
                self.stats.add(Counter::Hits, 1);
                Some(true)
            }
            Line::Miss => {
                out.hit = None;
                self.stats.add(Counter::Misses, 1);
                Some(false)
            }
            _ => None,
        }
    }

    /// [`Table::lookup_direct`] for every cell layout and case, counted.
    #[inline(never)]
    fn lookup_direct_slow(&self, d: &Direct, i: usize, now: u64, out: &mut Lookup) -> bool {
        let r = d.find(&self.cells, i, &mut out.data);
        let hit = self.finish_exact(r, now, out);
        self.stats.add(Counter::hit_or_miss(hit), 1);
        hit
    }

    /// [`Table::lookup_shape`] for every cell layout and case, counted.
    #[inline(never)]
    fn lookup_exact_cells<K: ProbeKey>(
        &self,
        x: &Exact,
        k: K,
        h: u64,
        now: u64,
        out: &mut Lookup,
    ) -> bool {
        let r = x.hot().find(&self.cells.hot(), h, &k, &mut out.data);
        let hit = self.finish_exact(r, now, out);
        self.stats.add(Counter::hit_or_miss(hit), 1);
        hit
    }

    /// [`Table::lookup_into`] for every kind of table and key.
    #[inline(never)]
    fn lookup_generic(&self, key: &[u8], now_ns: u64, out: &mut Lookup) -> bool {
        out.hash = 0;
        let hit = if !self.key_ok(key) {
            self.finish(None, now_ns, out)
        } else {
            match &self.engine {
                Engine::Exact(x) => with_key!(key, |k| {
                    out.hash = x.hash(&k);
                    let r = x.find(&self.cells, out.hash, &k, &mut out.data);
                    self.finish_exact(r, now_ns, out)
                }),
                Engine::Direct(d) => {
                    let k = DKey::of(key);
                    out.hash = k.map_or(0, |k| k.hash());
                    let r = k.and_then(|k| d.find(&self.cells, k.index, &mut out.data));
                    self.finish_exact(r, now_ns, out)
                }
                Engine::Tuple(ix) => {
                    let idx = read(ix);
                    self.finish(idx.lookup(key), now_ns, out)
                }
            }
        };
        self.stats.add(Counter::hit_or_miss(hit), 1);
        hit
    }

    fn key_ok(&self, key: &[u8]) -> bool {
        key.len() == self.layout.key_len && !self.spec.keys.is_empty()
    }

    /// Completes an exact lookup whose entry data (if any) `find` already copied into `out`.
    #[inline(always)]
    fn finish_exact(&self, r: Option<(u32, u32, u64)>, now: u64, out: &mut Lookup) -> bool {
        if let Some((s, gen, version)) = r {
            if !self.auto_delete || self.cells.cell(s as usize).deadline.load(Relaxed) > now {
                out.hit = Some(EntryHandle { slot: s, gen });
                out.version = version;
                return true;
            }
        }
        self.finish(None, now, out)
    }

    #[inline]
    fn finish(&self, slot: Option<u32>, now: u64, out: &mut Lookup) -> bool {
        if let Some(s) = slot {
            let (gen, version) = self.cells.read(s as usize, &mut out.data);
            if !self.auto_delete || self.cells.cell(s as usize).deadline.load(Relaxed) > now {
                out.hit = Some(EntryHandle { slot: s, gen });
                out.version = version;
                return true;
            }
        }
        let (_, version) = self.cells.read(self.default_slot(), &mut out.data);
        out.hit = None;
        out.version = version;
        false
    }

    /// Looks up `out.len()` keys packed back to back in `keys` (each [`Table::key_len`] bytes),
    /// writing result `i` to `out[i]`. Exact tables: lock-free, in groups of 32 keys whose
    /// buckets, then likely entries, are prefetched before any is probed (group prefetching),
    /// so a group's DRAM misses overlap. Other tables take the index lock once per batch.
    /// Returns the number of hits.
    pub fn lookup_batch(
        &self,
        keys: &[u8],
        now_ns: u64,
        out: &mut [Lookup],
    ) -> Result<usize, TableError> {
        let kl = self.layout.key_len;
        if keys.len() != out.len() * kl {
            return Err(TableError::BadKey {
                field: None,
                reason: "batch length is not a multiple of the key length",
            });
        }
        let mut hits = 0;
        if self.spec.keys.is_empty() {
            for o in out.iter_mut() {
                o.hash = 0;
                self.finish(None, now_ns, o);
            }
        } else {
            match &self.engine {
                Engine::Direct(d) => hits = self.direct_batch(d, keys, kl, now_ns, out),
                Engine::Exact(x) if kl > 0 => {
                    if self.spec.add_on_miss {
                        // A miss of this batch may be added next: fetch the slot it would take.
                        x.slots.prefetch_alloc(&self.cells);
                    }
                    // One-line cells (only for keys of ≤ 4 words) are read at fixed offsets.
                    macro_rules! groups {
                        ($mk:expr) => {{
                            let chunks = keys.chunks(kl * BATCH).zip(out.chunks_mut(BATCH));
                            match self.cells.lines() {
                                Some(lc) => {
                                    for (kc, oc) in chunks {
                                        hits += self.exact_group(x, &lc, kc, kl, now_ns, oc, $mk);
                                    }
                                }
                                None => {
                                    let ch = self.cells.hot();
                                    for (kc, oc) in chunks {
                                        hits += self.exact_group(x, &ch, kc, kl, now_ns, oc, $mk);
                                    }
                                }
                            }
                        }};
                    }
                    match kl.div_ceil(8) {
                        1 => groups!(Words::<1>::new),
                        2 => groups!(Words::<2>::new),
                        3 => groups!(Words::<3>::new),
                        4 => groups!(Words::<4>::new),
                        5 => groups!(Words::<5>::new),
                        6 => groups!(Words::<6>::new),
                        _ => groups!(Key::new),
                    }
                }
                Engine::Exact(x) => {
                    let k = Key::new(&[]);
                    for o in out.iter_mut() {
                        o.hash = x.hash(&k);
                        let r = x.find(&self.cells, o.hash, &k, &mut o.data);
                        hits += self.finish_exact(r, now_ns, o) as usize;
                    }
                }
                Engine::Tuple(ix) => {
                    let idx = read(ix);
                    for (k, o) in keys.chunks_exact(kl).zip(out.iter_mut()) {
                        o.hash = 0;
                        hits += self.finish(idx.lookup(k), now_ns, o) as usize;
                    }
                }
            }
        }
        self.stats.add(Counter::Hits, hits as u64);
        self.stats.add(Counter::Misses, (out.len() - hits) as u64);
        Ok(hits)
    }

    /// [`Table::lookup_batch`] of a direct table: in groups of 32 keys, the index words of all
    /// are prefetched, then the entries (or the default action) they name, then each is read.
    fn direct_batch(
        &self,
        d: &Direct,
        keys: &[u8],
        kl: usize,
        now: u64,
        out: &mut [Lookup],
    ) -> usize {
        if self.spec.add_on_miss {
            // A miss of this batch may be added next: fetch the slot it would take.
            d.slots.prefetch_alloc(&self.cells);
        }
        let ch = self.cells.hot();
        let default = self.default_slot();
        let mut hits = 0;
        for (kc, oc) in keys.chunks(kl * BATCH).zip(out.chunks_mut(BATCH)) {
            let mut ix = [usize::MAX; BATCH];
            for ((i, k), o) in ix.iter_mut().zip(kc.chunks_exact(kl)).zip(oc.iter_mut()) {
                let k = DKey::of(k);
                *i = k.map_or(usize::MAX, |k| k.index);
                o.hash = k.map_or(0, |k| k.hash());
                d.prefetch_index(*i);
            }
            for &i in &ix[..oc.len()] {
                d.prefetch_entry(&ch, i, default);
            }
            match self.cells.lines() {
                // One-line cells: the one-at-a-time lookup's inline path.
                Some(lc) => {
                    for (o, &i) in oc.iter_mut().zip(&ix) {
                        match d.lookup_line(&lc, default, i, &mut o.data, &mut o.version) {
                            Line::Hit(slot, gen)
                                if !self.auto_delete
                                    || self.cells.cell(slot as usize).deadline.load(Relaxed)
                                        > now =>
                            {
                                o.hit = Some(EntryHandle { slot, gen });
                                hits += 1;
                            }
                            Line::Miss => o.hit = None,
                            _ => {
                                let r = d.find(&self.cells, i, &mut o.data);
                                hits += self.finish_exact(r, now, o) as usize;
                            }
                        }
                    }
                }
                None => {
                    for (o, &i) in oc.iter_mut().zip(&ix) {
                        let r = d.find(&self.cells, i, &mut o.data);
                        hits += self.finish_exact(r, now, o) as usize;
                    }
                }
            }
        }
        hits
    }

    /// Starts fetching the bucket `key` lives in (exact tables; `None` for other kinds or a
    /// key of the wrong length). A hint for callers that batch packets but look keys up one at
    /// a time: call this for every packet of a batch, then [`Table::prefetch_entry`] for each,
    /// then look them up; the DRAM misses of the batch overlap. Reads nothing but the table's
    /// geometry, writes nothing, never changes a lookup's result.
    #[inline]
    pub fn prefetch(&self, key: &[u8]) -> Option<Prefetch> {
        match &self.engine {
            Engine::Exact(x) if key.len() == self.layout.key_len && self.kw > 0 => {
                Some(Prefetch(x.hot().stage1(self.hash_key(key))))
            }
            Engine::Direct(d) if key.len() == self.layout.key_len => {
                let i = DKey::of(key)?.index;
                d.prefetch_index(i);
                Some(Prefetch(Probe::direct(i)))
            }
            _ => None,
        }
    }

    /// [`Table::prefetch`] of the key whose [`Table::hash_key`] is `hash` (exact tables; `None`
    /// for others).
    #[inline]
    pub fn prefetch_hashed(&self, hash: u64) -> Option<Prefetch> {
        match &self.engine {
            Engine::Exact(x) if self.kw > 0 => Some(Prefetch(x.hot().stage1(hash))),
            Engine::Direct(d) => {
                let i = hash as u32 as usize;
                d.prefetch_index(i);
                Some(Prefetch(Probe::direct(i)))
            }
            _ => None,
        }
    }

    /// Second step of [`Table::prefetch`]: with the bucket (likely) at hand, starts fetching
    /// the entry whose tag matches, or the key's other bucket. A hint, as `prefetch`.
    #[inline]
    pub fn prefetch_entry(&self, p: Prefetch) {
        match &self.engine {
            Engine::Exact(x) => x.hot().prefetch_entry(&self.cells, p.0),
            Engine::Direct(d) => d.prefetch_entry(&self.cells.hot(), p.0.index(), self.nslots),
            Engine::Tuple(_) => {}
        }
    }

    /// For callers that look up one key at a time (the interpreter) between rare inserts: the
    /// insert path's code, the slot the next insert takes and the default action's cell (read
    /// by the miss before the insert) are fetched into the caches (see
    /// `warm_insert_path`). A hint: reads nothing a lookup or insert depends on, writes nothing.
    /// Does nothing for tables without add-on-miss.
    pub fn warm(&self) {
        if !self.spec.add_on_miss {
            return;
        }
        let (ins, slots) = match &self.engine {
            Engine::Exact(x) => (&x.insert_code, &x.slots),
            Engine::Direct(d) => (&d.insert_code, &d.slots),
            Engine::Tuple(_) => return,
        };
        self.warm_insert_path(ins.load(Relaxed));
        slots.prefetch_alloc(&self.cells);
        // A miss reads the default action's cell.
        self.cells.prefetch(self.default_slot());
    }

    /// Keeps the code of the add-on-miss path in the second-level cache (and its page-table
    /// entries in the data caches) while only lookups run: a batched lookup streams enough
    /// table lines through the caches to evict it, and an insert that comes once in 100000
    /// packets otherwise fetches its code from DRAM line by line (measured: 3.4 µs instead of
    /// 0.1 µs; the seed paper's "insertion cost grows as insertions get rarer"). Prefetches the
    /// first lines of the functions an insert runs (`ins`: the engine's general insert, 0 if
    /// it has not run yet); a hint, never a fault.
    #[inline(always)]
    fn warm_insert_path(&self, ins: usize) {
        let alloc: fn(&Slots, usize) -> Option<u32> = Slots::alloc_in;
        for (f, lines) in [
            (self.add_fn as usize, WARM_LINES[0]),
            (self.add_hashed_fn as usize, WARM_LINES[0]),
            (self.add_slow_fn.map_or(0, |f| f as usize), WARM_LINES[3]),
            (ins, WARM_LINES[1]),
            (alloc as usize, WARM_LINES[2]),
        ] {
            if f != 0 {
                for l in 0..lines {
                    crate::sync::prefetch_l2(f.wrapping_add(l * 64) as *const u8);
                }
            }
        }
    }

    /// One group of a batched exact lookup: hash all and prefetch their primary buckets; then
    /// prefetch each likely entry (or the secondary bucket); then the secondary buckets' likely
    /// entries; then probe.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn exact_group<'k, K: ProbeKey + Copy>(
        &self,
        x: &Exact,
        ch: &impl EntryRead,
        kc: &'k [u8],
        kl: usize,
        now: u64,
        oc: &mut [Lookup],
        mk: impl Fn(&'k [u8]) -> K,
    ) -> usize {
        let xh = x.hot();
        let n = oc.len().min(BATCH);
        let Some(k0) = kc.get(..kl) else {
            return 0;
        };
        let mut ks = [mk(k0); BATCH];
        let mut hs = [0u64; BATCH];
        let mut ps = [Probe::default(); BATCH];
        let mut cand = [0u64; BATCH];
        for (i, k) in kc.chunks_exact(kl).take(n).enumerate() {
            ks[i] = mk(k);
            hs[i] = x.hash(&ks[i]);
            ps[i] = xh.stage1(hs[i]);
        }
        // About one group in 32 (the first hash's low bits are random) re-warms the insert path.
        if self.spec.add_on_miss && hs[0] & 31 == 0 {
            self.warm_insert_path(x.insert_code.load(Relaxed));
        }
        let mut any_second = false;
        for i in 0..n {
            cand[i] = xh.stage2(ch, ps[i]);
            any_second |= cand[i] == SECOND;
        }
        if any_second {
            for i in 0..n {
                if cand[i] == SECOND {
                    cand[i] = xh.stage3(ch, ps[i]);
                }
            }
        }
        let auto_delete = self.auto_delete;
        let mut hits = 0;
        for (i, o) in oc.iter_mut().enumerate().take(n) {
            o.hash = hs[i];
            let r = match xh.stage4(ch, cand[i], &ks[i], &mut o.data) {
                Some((s, gen, version)) if !auto_delete => {
                    o.hit = Some(EntryHandle { slot: s, gen });
                    o.version = version;
                    hits += 1;
                    continue;
                }
                Some(r) => Some(r),
                None => xh.find(ch, hs[i], &ks[i], &mut o.data),
            };
            hits += self.finish_exact(r, now, o) as usize;
        }
        hits
    }

    /// PNA `add_entry` from a miss: adds an entry for exactly `key` with `data` and, for tables
    /// with an idle timeout, expire profile `expire_profile` armed at `now_ns`. Of several
    /// threads adding the same key at the same time exactly one gets `Added`; every other one
    /// gets `AlreadyPresent` (the entry exists once, with the data of the thread that added it).
    /// An AUTO_DELETE entry past its deadline counts as absent and is replaced. When the table
    /// is full, expired AUTO_DELETE entries are reclaimed before `Full` is reported. Exact
    /// tables: locks only the key's two buckets, so adds on other keys proceed in parallel.
    #[inline]
    pub fn add_on_miss(
        &self,
        key: &[u8],
        data: &ActionData,
        expire_profile: u8,
        now_ns: u64,
    ) -> AddStatus {
        let ap = data.action as u64 | (expire_profile as u64) << 32;
        let r = (self.add_fn)(self, key, 0, &data.params, ap, now_ns);
        self.add_status(r, key, data.params.len(), expire_profile)
    }

    /// [`Table::add_on_miss`] for a caller that has the key's `hash` = [`Table::hash_key`]`(key)`
    /// (e.g. from the lookup that missed) and the action as its id and packed parameter bytes:
    /// the same semantics (exactly one `Added` among concurrent adds of one key), without hashing
    /// the key again or building an [`ActionData`]. The hash decides the key's buckets, so it
    /// must be the key's: debug builds assert it, and release builds would store an entry that
    /// lookups of the key do not find (and that a later add of the key would duplicate).
    #[inline]
    pub fn add_on_miss_hashed(
        &self,
        key: &[u8],
        hash: u64,
        action: u32,
        params: &[u8],
        expire_profile: u8,
        now_ns: u64,
    ) -> AddStatus {
        debug_assert!(
            self.kw == 0 || key.len() != self.layout.key_len || hash == self.hash_key(key),
            "add_on_miss_hashed: the hash is not the key's"
        );
        let ap = action as u64 | (expire_profile as u64) << 32;
        let r = (self.add_hashed_fn)(self, key, hash, params, ap, now_ns);
        self.add_status(r, key, params.len(), expire_profile)
    }

    /// The [`AddStatus`] of an add function's result ([`AddFn`]).
    #[inline(always)]
    fn add_status(&self, r: u64, key: &[u8], params_len: usize, profile: u8) -> AddStatus {
        if r as u32 != 0 {
            return AddStatus::Added(EntryHandle {
                slot: (r as u32).wrapping_sub(1),
                gen: (r >> 32) as u32,
            });
        }
        self.add_status_cold(r, key, params_len, profile)
    }

    #[cold]
    #[inline(never)]
    fn add_status_cold(&self, r: u64, key: &[u8], params_len: usize, profile: u8) -> AddStatus {
        match r {
            ADD_PRESENT => AddStatus::AlreadyPresent,
            ADD_FULL => AddStatus::Full,
            _ => AddStatus::Rejected(self.add_error(key, params_len, profile)),
        }
    }

    /// Why an add-on-miss call with these arguments is refused.
    fn add_error(&self, key: &[u8], params_len: usize, profile: u8) -> TableError {
        if !self.spec.add_on_miss || !matches!(self.engine, Engine::Exact(_) | Engine::Direct(_)) {
            TableError::NotAddOnMiss
        } else if !self.key_ok(key) {
            TableError::BadKey {
                field: None,
                reason: "key length differs from the table's key length",
            }
        } else if params_len > self.cells.max_params() {
            TableError::ParamsTooLong {
                len: params_len,
                max: self.cells.max_params(),
            }
        } else if !self.direct_holds(key) {
            TableError::BadKey {
                field: None,
                reason: "non-zero pad bits",
            }
        } else {
            TableError::BadProfile(profile as u32)
        }
    }

    /// Whether `key` (of the table's length) is one the table can hold: false only for a key
    /// of a direct table with non-zero pad bits beyond the array ([`crate::direct`]).
    fn direct_holds(&self, key: &[u8]) -> bool {
        match &self.engine {
            Engine::Direct(d) => DKey::of(key).is_some_and(|k| d.holds(k.index)),
            _ => true,
        }
    }

    /// The out-of-line rest of the hashed add-on-miss function of an exact table with key shape
    /// `kw` (see `add_slow_fn`).
    fn add_slow_fn(engine: &Engine, kw: usize, enabled: bool) -> Option<AddFn> {
        match engine {
            Engine::Exact(_) if enabled => {
                with_shape!(kw, |K| Some(Table::add_slow::<K, true>), None)
            }
            _ => None,
        }
    }

    /// The add-on-miss function of a table with engine `engine`, key shape `kw`, key length
    /// `kl`, timers if `timed`, add-on-miss if `enabled`.
    fn add_fn(
        engine: &Engine,
        kw: usize,
        kl: usize,
        hashed: bool,
        timed: bool,
        enabled: bool,
    ) -> AddFn {
        fn generic(t: &Table, key: &[u8], hash: u64, params: &[u8], ap: u64, now: u64) -> u64 {
            t.add_generic(key, Some(hash), params, ap, now)
        }
        fn generic_unhashed(
            t: &Table,
            key: &[u8],
            _: u64,
            params: &[u8],
            ap: u64,
            now: u64,
        ) -> u64 {
            t.add_generic(key, None, params, ap, now)
        }
        if !enabled {
            return generic_unhashed;
        }
        match (engine, hashed, timed) {
            // The hash is the key's index, which the key gives at once: one function for both.
            (Engine::Direct(_), _, false) => match kl {
                1 => Table::add_direct::<1, false>,
                2 => Table::add_direct::<2, false>,
                _ => generic_unhashed,
            },
            (Engine::Direct(_), _, true) => match kl {
                1 => Table::add_direct::<1, true>,
                2 => Table::add_direct::<2, true>,
                _ => generic_unhashed,
            },
            (Engine::Exact(_), false, false) => {
                with_shape!(
                    kw,
                    |K| Table::add_shape::<K, false, false>,
                    generic_unhashed
                )
            }
            (Engine::Exact(_), true, false) => {
                with_shape!(kw, |K| Table::add_shape::<K, true, false>, generic)
            }
            (Engine::Exact(_), false, true) => {
                with_shape!(kw, |K| Table::add_shape::<K, false, true>, generic_unhashed)
            }
            (Engine::Exact(_), true, true) => {
                with_shape!(kw, |K| Table::add_shape::<K, true, true>, generic)
            }
            (Engine::Tuple(_), ..) => generic_unhashed,
        }
    }

    /// The arguments of an add-on-miss insert with parameters `params` and `ap` = action |
    /// profile << 32, at `now`: (action, profile, deadline — `NEVER` unless `TIMED`), or `None`
    /// for parameters the cells cannot hold or an unknown profile.
    #[inline(always)]
    fn add_args<const TIMED: bool>(
        &self,
        params: &[u8],
        ap: u64,
        now: u64,
    ) -> Option<(u32, u8, u64)> {
        if params.len() > self.cells.max_params() {
            return None;
        }
        let (action, profile) = (ap as u32, (ap >> 32) as u8);
        let deadline = if TIMED {
            self.add_deadline(profile, now)?
        } else {
            NEVER
        };
        Some((action, profile, deadline))
    }

    /// The deadline of an entry added at `now` with expire profile `profile`: `NEVER` without
    /// idle timeout, `None` for an unknown profile.
    #[inline(always)]
    fn add_deadline(&self, profile: u8, now: u64) -> Option<u64> {
        match self.wheel {
            None => Some(NEVER),
            Some(_) => Some(now.saturating_add(self.profile_ns(profile)?)),
        }
    }

    /// The add-on-miss call for keys prepared as `K`s (hashed here unless `HASHED`); `ap` is
    /// `action | expire_profile << 32`. Returns an [`AddFn`] result.
    /// The function was chosen for the table: it is an add-on-miss table, and `TIMED` says
    /// whether it has an idle timeout.
    #[inline(never)]
    fn add_shape<K: FromKey, const HASHED: bool, const TIMED: bool>(
        &self,
        key: &[u8],
        hash: u64,
        params: &[u8],
        ap: u64,
        now: u64,
    ) -> u64 {
        stamp(Stage::TableAdd);
        let Engine::Exact(x) = &self.engine else {
            return ADD_REJECTED;
        };
        if !K::len_ok(key, self.layout.key_len) {
            return ADD_REJECTED;
        }
        let Some((action, profile, deadline)) = self.add_args::<TIMED>(params, ap, now) else {
            return ADD_REJECTED;
        };
        let k = K::from_key(key);
        let h = if HASHED {
            hash
        } else {
            k.hash_from(self.hstart)
        };
        // The common case inline; anything else (present key, secondary bucket, cuckoo moves,
        // no free slot on this stripe) starts over out of line, with the same arguments.
        if let Some((s, gen)) = x.insert_fast(
            &self.cells,
            h,
            #[inline(always)]
            |s| self.init_cell_k(s, Some(&k), action, params, profile, deadline, TIMED),
        ) {
            self.stats.add(Counter::Inserts, 1);
            if TIMED {
                self.link_timer(s, gen, deadline);
            }
            stamp(Stage::Inserted);
            return add_code(EntryHandle { slot: s, gen });
        }
        stamp(Stage::OutOfLine);
        self.add_slow::<K, HASHED>(key, hash, params, ap, now)
    }

    /// [`Table::add_shape`] when its inline insert did not apply (it changed nothing): the
    /// whole insert.
    #[inline(never)]
    fn add_slow<K: FromKey, const HASHED: bool>(
        &self,
        key: &[u8],
        hash: u64,
        params: &[u8],
        ap: u64,
        now: u64,
    ) -> u64 {
        let Engine::Exact(x) = &self.engine else {
            return ADD_REJECTED;
        };
        let (action, profile) = (ap as u32, (ap >> 32) as u8);
        let Some(deadline) = self.add_deadline(profile, now) else {
            return ADD_REJECTED;
        };
        let k = K::from_key(key);
        let h = if HASHED {
            hash
        } else {
            k.hash_from(self.hstart)
        };
        // A full primary bucket (or one with overflowed entries): the secondary one, if free.
        if let Some((s, gen)) = x.insert_second(
            &self.cells,
            h,
            #[inline(always)]
            |s| self.init_cell_k(s, Some(&k), action, params, profile, deadline, self.timed()),
        ) {
            self.stats.add(Counter::Inserts, 1);
            self.link_timer(s, gen, deadline);
            return add_code(EntryHandle { slot: s, gen });
        }
        let ins = (action, params, profile, deadline, now, self.auto_delete);
        self.add_result(self.insert_exact_rest(x, &k, h, ins, Counter::Inserts))
    }

    /// The add-on-miss call of a direct table with keys of `KL` bytes and an idle timeout if
    /// `TIMED` (the hash is not needed: the key is its own index); returns an [`AddFn`]
    /// result. The common case — no entry, a slot on this thread's free list — inline, the
    /// rest out of line with the same arguments.
    #[inline(never)]
    fn add_direct<const KL: usize, const TIMED: bool>(
        &self,
        key: &[u8],
        _hash: u64,
        params: &[u8],
        ap: u64,
        now: u64,
    ) -> u64 {
        let Engine::Direct(d) = &self.engine else {
            return ADD_REJECTED;
        };
        let Some(k) = DKey::new::<KL>(key) else {
            return ADD_REJECTED;
        };
        let Some((action, profile, deadline)) = self.add_args::<TIMED>(params, ap, now) else {
            return ADD_REJECTED;
        };
        if let Some((s, gen)) = d.insert_fast(
            &self.cells,
            k.index,
            #[inline(always)]
            |s| self.init_cell_k(s, Some(&k.key), action, params, profile, deadline, TIMED),
        ) {
            self.stats.add(Counter::Inserts, 1);
            if TIMED {
                self.link_timer(s, gen, deadline);
            }
            return add_code(EntryHandle { slot: s, gen });
        }
        self.add_direct_slow::<KL>(key, params, ap, now)
    }

    /// [`Table::add_direct`] when its inline insert did not apply (it changed nothing): the
    /// whole insert, with the same arguments (so that the common path keeps a small frame).
    #[inline(never)]
    fn add_direct_slow<const KL: usize>(
        &self,
        key: &[u8],
        params: &[u8],
        ap: u64,
        now: u64,
    ) -> u64 {
        let (Engine::Direct(d), Some(k)) = (&self.engine, DKey::new::<KL>(key)) else {
            return ADD_REJECTED;
        };
        let (action, profile) = (ap as u32, (ap >> 32) as u8);
        let Some(deadline) = self.add_deadline(profile, now) else {
            return ADD_REJECTED;
        };
        let ins = (action, params, profile, deadline, now, self.auto_delete);
        self.add_result(self.insert_direct(d, k, ins, Counter::Inserts))
    }

    /// The add-on-miss call for every table and key (`hash`, if given, is the key's).
    #[inline(never)]
    fn add_generic(&self, key: &[u8], hash: Option<u64>, params: &[u8], ap: u64, now: u64) -> u64 {
        if !self.spec.add_on_miss || !self.key_ok(key) || params.len() > self.cells.max_params() {
            return ADD_REJECTED;
        }
        let (action, profile) = (ap as u32, (ap >> 32) as u8);
        let Some(deadline) = self.add_deadline(profile, now) else {
            return ADD_REJECTED;
        };
        let ins = (action, params, profile, deadline, now, self.auto_delete);
        match &self.engine {
            Engine::Exact(x) => {
                let k = Key::new(key);
                let h = hash.unwrap_or_else(|| x.hash(&k));
                self.add_result(self.insert_exact_k(x, &k, h, ins, Counter::Inserts))
            }
            Engine::Direct(d) => match DKey::of(key) {
                Some(k) => self.add_result(self.insert_direct(d, k, ins, Counter::Inserts)),
                None => ADD_REJECTED,
            },
            // add_on_miss tables are exact (checked by TableSpec::validate).
            Engine::Tuple(_) => ADD_REJECTED,
        }
    }

    /// The [`AddFn`] result of an insert.
    fn add_result(&self, r: Result<EntryHandle, TableError>) -> u64 {
        match r {
            Ok(h) => add_code(h),
            Err(TableError::Exists) => ADD_PRESENT,
            Err(TableError::Full) => {
                self.stats.add(Counter::InsertsFull, 1);
                ADD_FULL
            }
            Err(_) => ADD_REJECTED,
        }
    }

    /// Inserts into the exact index; `replace_expired`: an AUTO_DELETE entry of this key past
    /// its deadline at `now` is replaced instead of reported as `Exists`.
    #[allow(clippy::too_many_arguments)]
    fn insert_exact(
        &self,
        x: &Exact,
        key: &[u8],
        data: &ActionData,
        profile: u8,
        deadline: u64,
        now: u64,
        replace_expired: bool,
    ) -> Result<EntryHandle, TableError> {
        let ins = (
            data.action,
            &data.params[..],
            profile,
            deadline,
            now,
            replace_expired,
        );
        with_key!(key, |k| self.insert_exact_k(
            x,
            &k,
            x.hash(&k),
            ins,
            Counter::Live
        ))
    }

    /// [`Table::insert_exact`] with the key prepared as `k`; an added entry is counted in
    /// `counter` (`Inserts` for the data plane, `Live` for the control plane; both count as
    /// live entries).
    #[inline(always)]
    fn insert_exact_k<K: ProbeKey>(
        &self,
        x: &Exact,
        k: &K,
        h: u64,
        args: InsertArgs<'_>,
        counter: Counter,
    ) -> Result<EntryHandle, TableError> {
        let (action, params, profile, deadline, ..) = args;
        if let Some((s, gen)) = x.insert_fast(
            &self.cells,
            h,
            #[inline(always)]
            |s| self.init_cell_k(s, Some(k), action, params, profile, deadline, self.timed()),
        ) {
            self.stats.add(counter, 1);
            self.link_timer(s, gen, deadline);
            return Ok(EntryHandle { slot: s, gen });
        }
        self.insert_exact_rest(x, k, h, args, counter)
    }

    /// One [`Exact::insert_slow`] of `k` with the cell written from `args` (after an
    /// [`Exact::insert_fast`] that did not apply).
    #[inline(always)]
    fn insert_once<K: ProbeKey>(
        &self,
        x: &Exact,
        k: &K,
        h: u64,
        (action, params, profile, deadline, now, replace_expired): InsertArgs<'_>,
    ) -> Ins {
        // Its callers tried `insert_fast` already.
        x.insert_slow(
            &self.cells,
            h,
            k,
            |s| replace_expired && self.kill_expired_for_reuse(s, now),
            |s| self.init_cell_k(s, Some(k), action, params, profile, deadline, self.timed()),
        )
    }

    /// [`Table::insert_exact_k`] when the common case did not apply: the whole insert
    /// (present key, secondary bucket, cuckoo moves, an expired entry replaced in its slot),
    /// reclaiming expired entries once when the table is full before trying again.
    #[inline(never)]
    fn insert_exact_rest<K: ProbeKey>(
        &self,
        x: &Exact,
        k: &K,
        h: u64,
        args: InsertArgs<'_>,
        counter: Counter,
    ) -> Result<EntryHandle, TableError> {
        let (deadline, now) = (args.3, args.4);
        let mut reclaimed = false;
        loop {
            let r = self.insert_once(x, k, h, args);
            if let Some(done) = self.settle_insert(r, counter, deadline, now, &mut reclaimed) {
                return done;
            }
        }
    }

    /// What one insert attempt of an exact engine comes to: an added entry counted in
    /// `counter` and timed; an expired entry replaced in its slot counted as an expiration and
    /// the new entry as added, its timer moved; `Exists`, `Full`, or `None` — try again, once,
    /// after reclaiming expired entries of a full AUTO_DELETE table.
    #[inline(always)]
    fn settle_insert(
        &self,
        r: Ins,
        counter: Counter,
        deadline: u64,
        now: u64,
        reclaimed: &mut bool,
    ) -> Option<Result<EntryHandle, TableError>> {
        match r {
            Ins::Added(s, gen) => {
                self.stats.add(counter, 1);
                self.link_timer(s, gen, deadline);
                Some(Ok(EntryHandle { slot: s, gen }))
            }
            Ins::Replaced(s, gen) => {
                // The expired entry is gone (counted as `release` counts a removal) and the
                // new one is there, in the same slot: no slot was freed or taken.
                self.stats.add(Counter::Live, u64::MAX);
                self.stats.add(Counter::Expirations, 1);
                self.stats.add(counter, 1);
                self.relink_timer(s, gen);
                Some(Ok(EntryHandle { slot: s, gen }))
            }
            Ins::Present(_) => Some(Err(TableError::Exists)),
            Ins::Full if self.auto_delete && !*reclaimed => {
                *reclaimed = true;
                self.reclaim_expired(now);
                None
            }
            Ins::Full => Some(Err(TableError::Full)),
        }
    }

    /// The whole insert into a direct table (present key, an expired entry replaced in its
    /// slot), reclaiming expired entries once when the table is full before trying again; an added
    /// entry is counted in `counter` (as in [`Table::insert_exact_k`]). A key with non-zero pad
    /// bits beyond the array is refused.
    #[inline(never)]
    fn insert_direct(
        &self,
        d: &Direct,
        k: DKey,
        (action, params, profile, deadline, now, replace_expired): InsertArgs<'_>,
        counter: Counter,
    ) -> Result<EntryHandle, TableError> {
        if !d.holds(k.index) {
            return Err(TableError::BadKey {
                field: None,
                reason: "non-zero pad bits",
            });
        }
        let mut reclaimed = false;
        loop {
            let r = d.insert(
                k.index,
                |s| replace_expired && self.kill_expired_for_reuse(s, now),
                |s| {
                    let k = Some(&k.key);
                    self.init_cell_k(s, k, action, params, profile, deadline, self.timed())
                },
            );
            if let Some(done) = self.settle_insert(r, counter, deadline, now, &mut reclaimed) {
                return done;
            }
        }
    }

    /// Whether [`Table::update_params`] stores one word of parameters, and
    /// [`Table::restart_timer`] a deadline, without the cell lock:
    /// [`TableSpec::data_plane_updates`] (a ternary or LPM table: without an idle timeout) and
    /// `membarrier(2)` available.
    pub fn lock_free_updates(&self) -> bool {
        self.hazards.enabled()
    }

    /// Replaces the parameters of the entry `handle` (PNA data-plane update of a hit entry),
    /// keeping its action and its version (which counts control-plane modifies). Atomic per
    /// entry: readers see the old or the new parameters, never a mix. Needs no index lock.
    /// Returns false for a stale handle or parameters longer than the table allows. In a table
    /// with [`TableSpec::data_plane_updates`], parameters of the entry's length that fit one
    /// word are stored without the cell lock (`hazard.rs`). See also
    /// [`Table::update_params_at`].
    pub fn update_params(&self, handle: EntryHandle, params: &[u8]) -> bool {
        self.update(handle, None, params)
    }

    /// [`Table::update_params`] of the entry a lookup returned at `version`
    /// ([`Lookup::version`]), only if no control-plane modify changed it since: an update
    /// computed from the entry's old action data never lands on its new action data (it is
    /// ordered before the modify instead, which overwrites it). False when it did not apply.
    pub fn update_params_at(&self, handle: EntryHandle, version: u64, params: &[u8]) -> bool {
        self.update(handle, Some(version), params)
    }

    /// [`Table::update_params_at`] of parameters of `len` ≤ 8 bytes given as one word: byte
    /// `k` of them is bits `8k..8k+8` (a little-endian load of them), the bits past `len`
    /// bytes zero. The data plane's write-back of generated code, with no byte slice between.
    #[inline]
    pub fn update_word_at(&self, handle: EntryHandle, version: u64, word: u64, len: usize) -> bool {
        if len <= 8 && (handle.slot as usize) < self.nslots && self.hazards.enabled() {
            if let Some(done) = self.update_unlocked(handle, Some(version), word, len) {
                return done;
            }
        }
        let b = word.to_le_bytes();
        self.update(handle, Some(version), b.get(..len).unwrap_or(&b))
    }

    #[inline(always)]
    fn update(&self, handle: EntryHandle, version: Option<u64>, params: &[u8]) -> bool {
        if handle.slot as usize >= self.nslots || params.len() > self.cells.max_params() {
            return false;
        }
        if self.hazards.enabled() && params.len() <= 8 {
            let w = word_at(params, 0);
            if let Some(done) = self.update_unlocked(handle, version, w, params.len()) {
                return done;
            }
        }
        let g = self.cells.lock(handle.slot as usize);
        if g.gen() != handle.gen || version.is_some_and(|v| v != g.version()) {
            return false;
        }
        g.write_params(params);
        drop(g);
        self.stats.add(Counter::Updates, 1);
        true
    }

    /// The lock-free update of [`Table::update`], through the hazard word of this thread's
    /// statistics stripe; `None` when the cell lock must be taken instead (a thread without an
    /// owned stripe, a cell being written, parameters of another length).
    #[inline(always)]
    fn update_unlocked(
        &self,
        h: EntryHandle,
        version: Option<u64>,
        word: u64,
        len: usize,
    ) -> Option<bool> {
        let i = owned_stripe()?;
        self.hazards.protect(i, h.slot);
        let r = self
            .cells
            .store_params_unlocked(h.slot as usize, h.gen, version, word, len);
        self.hazards.clear(i);
        if r == Some(true) {
            self.stats.add_owned(i, Counter::Updates, 1);
        }
        r
    }

    /// PNA `restart_expire_timer()`: the entry's deadline becomes `now_ns` + its profile's
    /// duration. False for a stale handle or a table without an idle timeout.
    pub fn restart_timer(&self, handle: EntryHandle, now_ns: u64) -> bool {
        self.rearm(handle, None, now_ns)
    }

    /// PNA `set_entry_expire_time(id)`: sets the entry's profile and restarts its timer.
    /// False for a stale handle, an unknown profile, or a table without an idle timeout.
    pub fn set_expire_profile(&self, handle: EntryHandle, profile: u8, now_ns: u64) -> bool {
        self.rearm(handle, Some(profile), now_ns)
    }

    fn rearm(&self, h: EntryHandle, profile: Option<u8>, now: u64) -> bool {
        let Some(wheel) = &self.wheel else {
            return false;
        };
        if h.slot as usize >= self.nslots {
            return false;
        }
        if profile.is_none() && self.hazards.enabled() {
            if let Some(done) = self.restart_unlocked(wheel, h, now) {
                return done;
            }
        }
        let cell = self.cells.cell(h.slot as usize);
        let deadline = {
            let g = self.cells.lock(h.slot as usize);
            if g.gen() != h.gen {
                return false;
            }
            let p = profile.map_or_else(|| g.profile(), u32::from);
            let Some(d) = self.profile_ns(p as u8).filter(|_| p < MAX_PROFILES as u32) else {
                return false;
            };
            g.set_profile(p);
            let deadline = now.saturating_add(d);
            cell.deadline.store(deadline, SeqCst);
            deadline
        };
        // Dekker pair with `expire`: it stores `sched` then loads `deadline`; we store
        // `deadline` then load `sched`, so one of us sees the other and re-links.
        if deadline < cell.sched.load(SeqCst) {
            let mut w = lock(wheel);
            if cell.gen() == h.gen {
                w.link(h.slot, cell.deadline.load(SeqCst), cell.sched);
            }
        }
        true
    }

    /// The lock-free [`Table::restart_timer`] (`hazard.rs`): the new deadline is one plain
    /// store, under the hazard word of this thread's statistics stripe, so that the slot
    /// cannot be reused before the store is done. `None` when the cell lock must be taken
    /// (a thread without an owned stripe, a cell being written).
    ///
    /// Against `expire`, the same Dekker pair as the locked path's, with asymmetric fences:
    /// we store the deadline, then load the schedule; the sweep stores "not scheduled", issues
    /// the heavy fence once for all the entries due, then loads their deadlines. A restart
    /// racing `set_expire_profile` of the same entry may leave the deadline computed from the
    /// old profile's duration (both are data-plane writes of one entry by two packets at once;
    /// the next restart computes it from the new one).
    #[inline(always)]
    fn restart_unlocked(&self, wheel: &Mutex<Wheel>, h: EntryHandle, now: u64) -> Option<bool> {
        let i = owned_stripe()?;
        self.hazards.protect(i, h.slot);
        let cell = self.cells.cell(h.slot as usize);
        let Some((gen, p)) = self.cells.gen_profile_unlocked(h.slot as usize) else {
            self.hazards.clear(i);
            return None;
        };
        let duration = (gen == h.gen && p < MAX_PROFILES as u32)
            .then(|| self.profile_ns(p as u8))
            .flatten();
        let Some(d) = duration else {
            self.hazards.clear(i);
            return Some(false);
        };
        let deadline = now.saturating_add(d);
        cell.deadline.store(deadline, Relaxed);
        self.hazards.light_fence();
        let sched = cell.sched.load(Relaxed);
        self.hazards.clear(i);
        if deadline < sched {
            let mut w = lock(wheel);
            if cell.gen() == h.gen {
                w.link(h.slot, cell.deadline.load(SeqCst), cell.sched);
            }
        }
        Some(true)
    }

    // ------------------------------------------------------------------ entry life cycle

    fn check_params(&self, len: usize) -> Result<(), TableError> {
        if len > self.cells.max_params() {
            Err(TableError::ParamsTooLong {
                len,
                max: self.cells.max_params(),
            })
        } else {
            Ok(())
        }
    }

    fn compile(
        &self,
        matches: &[FieldMatch],
        priority: u32,
    ) -> Result<(Compiled, u32), TableError> {
        let c = compile(
            &self.spec,
            &self.layout,
            matches,
            !matches!(self.engine, Engine::Exact(_)),
        )?;
        let prio = if self.has_priority {
            if priority == 0 {
                return Err(TableError::BadPriority);
            }
            priority
        } else {
            if priority != 0 {
                return Err(TableError::BadPriority);
            }
            c.prefix_len
        };
        Ok((c, prio))
    }

    /// Whether slot `s`'s timer has run out at `now`.
    fn expired(&self, s: u32, now: u64) -> bool {
        self.cells.cell(s as usize).deadline.load(SeqCst) <= now
    }

    /// Whether slot `s` holds a live entry.
    fn is_live(&self, idx: Option<&Index>, s: u32) -> bool {
        match idx {
            Some(idx) => idx.is_used(s),
            None => (s as usize) < self.nslots && self.cells.cell(s as usize).gen() & 1 == 1,
        }
    }

    /// Writes a fresh entry into slot `s` (not yet reachable; the key given as prepared words,
    /// `None` for an empty key) and returns its generation. `timed`: the table has an idle
    /// timeout (`self.timed()`, passed as a constant by callers that know it).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn init_cell_k<K: ProbeKey>(
        &self,
        s: u32,
        key: Option<&K>,
        action: u32,
        params: &[u8],
        profile: u8,
        deadline: u64,
        timed: bool,
    ) -> u32 {
        let line = match (key, self.cells.lines()) {
            (Some(k), Some(lc)) => lc.init(s as usize, k, action, params, profile as u32),
            _ => None,
        };
        let gen = match line {
            Some(gen) => gen,
            None => self.cells.lock_fresh(s as usize).init_k(
                key,
                action,
                params.len(),
                |j| word_at(params, j),
                profile as u32,
            ),
        };
        if timed {
            self.cells.cell(s as usize).deadline.store(deadline, SeqCst);
        }
        gen
    }

    /// Puts a new entry's timer into the wheel, unless the entry is already gone again.
    /// Inlined test, out-of-line work: tables without timers pay one branch.
    #[inline(always)]
    fn link_timer(&self, s: u32, gen: u32, deadline: u64) {
        if self.wheel.is_some() && deadline != NEVER {
            self.link_timer_slow(s, gen, deadline);
        }
    }

    #[inline(never)]
    fn link_timer_slow(&self, s: u32, gen: u32, deadline: u64) {
        if let Some(w) = &self.wheel {
            if deadline != NEVER {
                let cell = self.cells.cell(s as usize);
                let mut w = lock(w);
                if cell.gen() == gen {
                    w.link(s, cell.deadline.load(SeqCst), cell.sched);
                }
            }
        }
    }

    /// Marks live slot `s` dead if `cond` holds under its cell lock; returns whether it did.
    /// The caller then unlinks it from the index and calls [`Table::release`] (an exact
    /// table's free is announced here, before the entry dies: [`Slots::freeing`]).
    fn kill(&self, s: u32, cond: impl FnOnce(&CellGuard<'_>) -> bool) -> bool {
        self.kill_cell(s, cond, true)
    }

    /// [`Table::kill`]; `freeing`: the slot is to be released (else the caller reuses it).
    #[inline(always)]
    fn kill_cell(&self, s: u32, cond: impl FnOnce(&CellGuard<'_>) -> bool, freeing: bool) -> bool {
        let g = self.cells.lock(s as usize);
        if g.gen() & 1 == 0 || !cond(&g) {
            return false;
        }
        if freeing {
            if let Some(slots) = self.exact_slots() {
                slots.freeing();
            }
        }
        g.set_gen(g.gen().wrapping_add(1));
        if self.timed() {
            self.cells.cell(s as usize).deadline.store(NEVER, SeqCst);
        }
        true
    }

    /// An insert's decision, under the index lock of its key, about the key's entry in slot
    /// `s`: if it is an AUTO_DELETE entry past its deadline at `now`, kills it and returns
    /// true, and the insert rewrites the same slot as the new entry ([`Ins::Replaced`]). The
    /// slot is not released: it stays in the wheel until the new entry's timer is linked
    /// ([`Table::relink_timer`]), but its schedule word says "not scheduled" meanwhile, so that
    /// a re-arm through the new entry's handle before then takes the wheel lock (as for a
    /// fresh slot) instead of trusting the old entry's place in the wheel.
    #[inline(never)]
    fn kill_expired_for_reuse(&self, s: u32, now: u64) -> bool {
        if !self.kill_cell(s, |_| self.expired(s, now), false) {
            return false;
        }
        // The caller rewrites the slot: no lock-free write through the old handle (an update,
        // a timer restart) may land in the new entry. One process-wide barrier, on the insert
        // that replaces its key's expired entry before a sweep removed it.
        self.hazards.wait_clear(&[s]);
        if self.timed() {
            self.cells.cell(s as usize).sched.store(NEVER, SeqCst);
        }
        true
    }

    /// Puts the timer of the entry that replaced an expired one in slot `s` (generation `gen`)
    /// into the wheel, where the old entry's may still be (linking unlinks it first; a new
    /// entry without a deadline just leaves the wheel), unless the entry is gone again.
    #[inline(never)]
    fn relink_timer(&self, s: u32, gen: u32) {
        if let Some(w) = &self.wheel {
            let cell = self.cells.cell(s as usize);
            let mut w = lock(w);
            if cell.gen() == gen {
                w.link(s, cell.deadline.load(SeqCst), cell.sched);
            }
        }
    }

    /// Releases a killed slot that is no longer reachable from the index: timer and (exact
    /// tables) free list, ending the announcement of its [`Table::kill`]. First waits until no
    /// lock-free update through an old handle can still land in it (`hazard.rs`; the wait
    /// takes no index lock, so a free in flight still always completes).
    fn release(&self, s: u32) {
        self.hazards.wait_clear(&[s]);
        self.untrack(s);
        if let Some(slots) = self.exact_slots() {
            slots.freed(s);
        }
    }

    /// What a removed slot leaves before it is freed: its timer (out of the wheel) and its
    /// count among the live entries.
    fn untrack(&self, s: u32) {
        if let Some(w) = &self.wheel {
            lock(w).unlink(s);
            self.cells.cell(s as usize).sched.store(NEVER, SeqCst);
        }
        self.stats.add(Counter::Live, u64::MAX);
    }

    /// [`Table::release`] for one removal of a batch (an expiry sweep, a reclaim, a clear):
    /// timer and count now, the free list after one hazard wait for many removals — when the
    /// limbo holds [`DRAIN_EVERY`] slots, at the batch's end ([`Table::drain_retired`]), or in
    /// an allocation that finds the table full (`slots.rs`, "Limbo"). Exact tables only; takes
    /// no index lock and must be called without one held.
    fn retire(&self, s: u32) {
        let Some(slots) = self.exact_slots() else {
            return self.release(s);
        };
        self.untrack(s);
        if slots.retire(s) >= DRAIN_EVERY as usize {
            slots.drain();
        }
    }

    /// Frees the slots retired by a batch of removals ([`Table::retire`]).
    fn drain_retired(&self) {
        if let Some(slots) = self.exact_slots() {
            slots.drain();
        }
    }

    /// The slot allocator of an exact table (either engine).
    fn exact_slots(&self) -> Option<&Slots> {
        match &self.engine {
            Engine::Exact(x) => Some(&x.slots),
            Engine::Direct(d) => Some(&d.slots),
            Engine::Tuple(_) => None,
        }
    }

    /// Slots an exact table has ever handed out (every live slot is below).
    fn exact_high_water(&self) -> u32 {
        self.exact_slots().map_or(0, |s| s.high_water() as u32)
    }

    /// The live entry of an exact table whose key is `key` (of the table's length): copies its
    /// action data into `out`, returns (slot, gen, version).
    fn exact_find(&self, key: &[u8], out: &mut ActionData) -> Option<(u32, u32, u64)> {
        match &self.engine {
            Engine::Exact(x) => {
                let k = Key::new(key);
                x.find(&self.cells, x.hash(&k), &k, out)
            }
            Engine::Direct(d) => d.find(&self.cells, DKey::of(key)?.index, out),
            Engine::Tuple(_) => None,
        }
    }

    /// Removes the entry of an exact table whose key is `key`, if `slot` is `None` or its slot
    /// and `cond(slot)` — run under the index's lock of the key — returns true (it must kill the
    /// slot). Returns the removed slot, to be released.
    fn exact_remove(
        &self,
        key: &[u8],
        slot: Option<u32>,
        cond: impl FnOnce(u32) -> bool,
    ) -> Option<u32> {
        match &self.engine {
            Engine::Exact(x) => {
                let k = Key::new(key);
                x.remove(&self.cells, x.hash(&k), &k, slot, cond)
            }
            Engine::Direct(d) => d.remove(DKey::of(key)?.index, slot, cond),
            Engine::Tuple(_) => None,
        }
    }

    /// Removes live slot `s` of the exact index if `cond` holds under its cell lock; its slot
    /// is released at once, or retired (`batch`: [`Table::retire`]; the caller then calls
    /// [`Table::drain_retired`]).
    fn remove_exact(&self, s: u32, cond: impl FnOnce(&CellGuard<'_>) -> bool, batch: bool) -> bool {
        if !self.is_live(None, s) {
            return false;
        }
        let key = self.cells.key(s as usize);
        let removed = self.exact_remove(&key, Some(s), |s| self.kill(s, cond));
        match removed {
            Some(s) if batch => self.retire(s),
            Some(s) => self.release(s),
            None => {}
        }
        removed.is_some()
    }

    /// Frees live slot `s` of the tuple index if `cond` holds under its cell lock.
    fn remove_tuple(
        &self,
        idx: &mut Index,
        s: u32,
        cond: impl FnOnce(&CellGuard<'_>) -> bool,
    ) -> bool {
        if !idx.is_used(s) || !self.kill(s, cond) {
            return false;
        }
        idx.remove(s);
        self.release(s);
        true
    }

    /// Removes every AUTO_DELETE entry past its deadline (when an insert finds the table full).
    fn reclaim_expired(&self, now: u64) {
        let mut n = 0;
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                for s in 0..self.exact_high_water() {
                    if self.is_live(None, s)
                        && self.expired(s, now)
                        && self.remove_exact(s, |_| self.expired(s, now), true)
                    {
                        n += 1;
                    }
                }
                self.drain_retired();
            }
            Engine::Tuple(ix) => {
                let mut idx = write(ix);
                let expired: Vec<u32> =
                    idx.live_slots().filter(|&s| self.expired(s, now)).collect();
                for s in expired {
                    if self.remove_tuple(&mut idx, s, |_| self.expired(s, now)) {
                        n += 1;
                    }
                }
            }
        }
        self.stats.add(Counter::Expirations, n);
    }

    // ------------------------------------------------------------------ control plane

    /// Control-plane insert (P4Runtime INSERT). `priority` must be non-zero for tables with
    /// ternary, range or optional fields (larger wins) and zero otherwise. Entries of tables with
    /// an idle timeout get no timer; see [`Table::insert_with_timeout`].
    pub fn insert(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
    ) -> Result<EntryId, TableError> {
        self.insert_inner(matches, priority, &data, None)
    }

    /// Control-plane insert with an idle timer of profile `profile` started at `now_ns`.
    pub fn insert_with_timeout(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
        profile: u8,
        now_ns: u64,
    ) -> Result<EntryId, TableError> {
        if self.wheel.is_none() {
            return Err(TableError::NoIdleTimeout);
        }
        self.insert_inner(matches, priority, &data, Some((profile, now_ns)))
    }

    fn insert_inner(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: &ActionData,
        timer: Option<(u8, u64)>,
    ) -> Result<EntryId, TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        self.check_params(data.params.len())?;
        let (profile, deadline, now) = match timer {
            None => (0, NEVER, 0),
            Some((p, now)) => {
                let d = self.profile_ns(p).ok_or(TableError::BadProfile(p as u32))?;
                (p, now.saturating_add(d), now)
            }
        };
        let ix = match &self.engine {
            Engine::Exact(x) => {
                let replace = self.auto_delete && timer.is_some();
                return self.insert_exact(x, &c.key, data, profile, deadline, now, replace);
            }
            Engine::Direct(d) => {
                let replace = self.auto_delete && timer.is_some();
                let k = DKey::of(&c.key).ok_or(TableError::BadKey {
                    field: None,
                    reason: "key length differs from the table's key length",
                })?;
                let ins = (
                    data.action,
                    &data.params[..],
                    profile,
                    deadline,
                    now,
                    replace,
                );
                return self.insert_direct(d, k, ins, Counter::Live);
            }
            Engine::Tuple(ix) => ix,
        };
        let mut idx = write(ix);
        if let Some(s) = idx.find_entry(&c, prio) {
            let replaced = self.auto_delete
                && timer.is_some()
                && self.remove_tuple(&mut idx, s, |_| self.expired(s, now));
            if !replaced {
                return Err(TableError::Exists);
            }
            self.stats.add(Counter::Expirations, 1);
        }
        let s = match idx.alloc() {
            Some(s) => s,
            None if self.auto_delete => {
                drop(idx);
                self.reclaim_expired(now);
                idx = write(ix);
                if idx.find_entry(&c, prio).is_some() {
                    return Err(TableError::Exists);
                }
                idx.alloc().ok_or(TableError::Full)?
            }
            None => return Err(TableError::Full),
        };
        idx.insert(s, &c, prio);
        let gen = self.init_cell_k(
            s,
            None::<&Key<'_>>,
            data.action,
            &data.params,
            profile,
            deadline,
            self.timed(),
        );
        self.stats.add(Counter::Live, 1);
        drop(idx);
        self.link_timer(s, gen, deadline);
        Ok(EntryHandle { slot: s, gen })
    }

    /// The slot and generation of the entry with this match spec and priority.
    fn find_entry(&self, c: &Compiled, prio: u32) -> Option<(u32, u32)> {
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                let mut tmp = ActionData::default();
                self.exact_find(&c.key, &mut tmp)
                    .map(|(s, gen, _)| (s, gen))
            }
            Engine::Tuple(ix) => {
                let s = read(ix).find_entry(c, prio)?;
                Some((s, self.cells.cell(s as usize).gen()))
            }
        }
    }

    /// Control-plane modify (P4Runtime MODIFY): replaces the action data of the entry with this
    /// match spec and priority, keeping its id and timer, and bumps its version. Lookups running
    /// concurrently see the old or the new data, never a miss or a mix.
    pub fn modify(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
    ) -> Result<EntryId, TableError> {
        self.modify_versioned(matches, priority, &data)
            .map(|(id, _)| id)
    }

    /// [`Table::modify`], also returning the entry's new version (what a lookup that sees the
    /// new data reports in [`Lookup::version`]).
    pub fn modify_versioned(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: &ActionData,
    ) -> Result<(EntryId, u64), TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        self.check_params(data.params.len())?;
        loop {
            // The tuple index is stable while its read lock is held; the exact index is
            // lock-free, so a concurrent delete + re-add of the key shows up as a generation
            // change under the cell lock, and we look the key up again.
            let guard = match &self.engine {
                Engine::Tuple(ix) => Some(read(ix)),
                Engine::Exact(_) | Engine::Direct(_) => None,
            };
            let (s, gen) = match &guard {
                Some(idx) => {
                    let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
                    (s, self.cells.cell(s as usize).gen())
                }
                None => self.find_entry(&c, prio).ok_or(TableError::NotFound)?,
            };
            let g = self.cells.lock(s as usize);
            if g.gen() != gen {
                continue;
            }
            // The action may change: no lock-free update may store the old action's
            // parameters after ours (an updater that meets the lock takes it after us).
            self.hazards.wait_clear(&[s]);
            g.write(data);
            let version = g.version().wrapping_add(1);
            g.set_version(version);
            return Ok((EntryHandle { slot: s, gen }, version));
        }
    }

    /// Control-plane delete (P4Runtime DELETE) by match spec and priority.
    pub fn delete(&self, matches: &[FieldMatch], priority: u32) -> Result<(), TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                let s = self
                    .exact_remove(&c.key, None, |s| self.kill(s, |_| true))
                    .ok_or(TableError::NotFound)?;
                self.release(s);
            }
            Engine::Tuple(ix) => {
                let mut idx = write(ix);
                let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
                self.remove_tuple(&mut idx, s, |_| true);
            }
        }
        Ok(())
    }

    /// Deletes the entry `id`; `NotFound` if it is gone.
    pub fn delete_id(&self, id: EntryId) -> Result<(), TableError> {
        if id.slot as usize >= self.nslots {
            return Err(TableError::NotFound);
        }
        let done = match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                self.remove_exact(id.slot, |g| g.gen() == id.gen, false)
            }
            Engine::Tuple(ix) => self.remove_tuple(&mut write(ix), id.slot, |g| g.gen() == id.gen),
        };
        if done {
            Ok(())
        } else {
            Err(TableError::NotFound)
        }
    }

    /// Deletes every entry.
    pub fn clear(&self) {
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                for s in 0..self.exact_high_water() {
                    self.remove_exact(s, |_| true, true);
                }
                self.drain_retired();
            }
            Engine::Tuple(ix) => {
                let mut idx = write(ix);
                let live: Vec<u32> = idx.live_slots().collect();
                for s in live {
                    self.remove_tuple(&mut idx, s, |_| true);
                }
            }
        }
    }

    /// The entry with this match spec and priority (P4Runtime READ of one entry).
    pub fn read(&self, matches: &[FieldMatch], priority: u32) -> Result<EntryView, TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                let (s, gen) = self.find_entry(&c, prio).ok_or(TableError::NotFound)?;
                let v = self.view(None, s);
                if v.id.gen == gen {
                    Ok(v)
                } else {
                    Err(TableError::NotFound)
                }
            }
            Engine::Tuple(ix) => {
                let idx = read(ix);
                let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
                Ok(self.view(Some(&idx), s))
            }
        }
    }

    /// The entry `id`, if it still exists.
    pub fn get(&self, id: EntryId) -> Option<EntryView> {
        let v = match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => {
                if !self.is_live(None, id.slot) {
                    return None;
                }
                self.view(None, id.slot)
            }
            Engine::Tuple(ix) => {
                let idx = read(ix);
                if !idx.is_used(id.slot) {
                    return None;
                }
                self.view(Some(&idx), id.slot)
            }
        };
        (v.id == id).then_some(v)
    }

    /// Snapshot of all entries (entries added by the data plane included), in slot order. Each
    /// entry is internally consistent. Tables with lpm/ternary/range/optional fields: no entry is
    /// added or removed while the snapshot is taken. Exact tables (lock-free): every entry present
    /// during the whole call is listed once; entries added or removed meanwhile may or may not be.
    pub fn iter(&self) -> Vec<EntryView> {
        match &self.engine {
            Engine::Exact(_) | Engine::Direct(_) => (0..self.exact_high_water())
                .filter(|&s| self.is_live(None, s))
                .map(|s| self.view(None, s))
                .filter(|v| v.id.gen & 1 == 1)
                .collect(),
            Engine::Tuple(ix) => {
                let idx = read(ix);
                idx.live_slots().map(|s| self.view(Some(&idx), s)).collect()
            }
        }
    }

    /// The entry in slot `s`; `idx` is the tuple index (None for exact tables).
    fn view(&self, idx: Option<&Index>, s: u32) -> EntryView {
        let (key, matches, priority) = match idx {
            Some(idx) => {
                let key = idx.key(s).to_vec();
                let m = decompile(&self.spec, &self.layout, &key, idx.mask(s), idx.ranges(s));
                let prio = if self.has_priority { idx.prio(s) } else { 0 };
                (key, m, prio)
            }
            None => {
                let key = self.cells.key(s as usize);
                let m = decompile(&self.spec, &self.layout, &key, None, &[]);
                (key, m, 0)
            }
        };
        let mut data = ActionData::default();
        let (gen, version) = self.cells.read(s as usize, &mut data);
        let cell = self.cells.cell(s as usize);
        let timed = self.timed();
        let deadline = cell.deadline.load(SeqCst);
        EntryView {
            id: EntryHandle { slot: s, gen },
            key,
            matches,
            priority,
            data,
            version,
            expire_profile: timed.then(|| cell.profile() as u8),
            deadline_ns: (timed && deadline != NEVER).then_some(deadline),
        }
    }

    /// Sets the default action (run on a miss), bumping the default's version.
    pub fn set_default(&self, data: ActionData) -> Result<(), TableError> {
        self.check_params(data.params.len())?;
        let g = self.cells.lock(self.default_slot());
        g.write(&data);
        g.set_version(g.version().wrapping_add(1));
        Ok(())
    }

    /// The default action ([`crate::ACTION_NONE`] until set).
    pub fn default_action(&self) -> ActionData {
        let mut d = ActionData::default();
        self.cells.read(self.default_slot(), &mut d);
        d
    }

    // ------------------------------------------------------------------ expiry

    /// Replaces the expire-time profiles: `durations_ns[i]` is the idle time of profile `i`
    /// (1 to 256 profiles). Running timers keep their deadline until re-armed.
    pub fn set_profiles(&self, durations_ns: &[u64]) -> Result<(), TableError> {
        if durations_ns.is_empty() || durations_ns.len() > MAX_PROFILES {
            return Err(TableError::BadProfile(durations_ns.len() as u32));
        }
        for (p, &d) in self.profiles.iter().zip(durations_ns) {
            p.store(d, Relaxed);
        }
        self.n_profiles.store(durations_ns.len() as u32, Release);
        Ok(())
    }

    /// Current profile durations in ns.
    pub fn profiles(&self) -> Vec<u64> {
        let n = self.n_profiles.load(Acquire) as usize;
        self.profiles[..n].iter().map(|p| p.load(Relaxed)).collect()
    }

    /// Sets the duration of one profile, leaving the others as they are (a control plane maps
    /// each distinct P4Runtime `idle_timeout_ns` to a profile id of its own this way). Running
    /// timers of that profile keep their deadline until re-armed.
    pub fn set_profile(&self, id: u8, duration_ns: u64) {
        self.profiles[id as usize].store(duration_ns, Relaxed);
        self.extra_profiles[id as usize / 64].fetch_or(1 << (id % 64), Release);
    }

    /// The duration of profile `id`, if it is set.
    pub fn profile_duration(&self, id: u8) -> Option<u64> {
        self.profile_ns(id)
    }

    fn profile_ns(&self, id: u8) -> Option<u64> {
        let set = (id as u32) < self.n_profiles.load(Acquire)
            || self.extra_profiles[id as usize / 64].load(Acquire) & (1 << (id % 64)) != 0;
        set.then(|| self.profiles[id as usize].load(Relaxed))
    }

    /// Advances the idle timers to `now_ns` (call it every tick, e.g. each millisecond, from
    /// one control thread). AUTO_DELETE entries whose deadline is ≤ `now_ns` are removed and
    /// returned with `notify == false`; NOTIFY_CONTROL entries are returned with
    /// `notify == true` once per idle period and kept (re-armed by `restart_timer` or
    /// `set_expire_profile`). Cost: the due wheel slots, not the whole table. Empty for tables
    /// without an idle timeout.
    pub fn expire(&self, now_ns: u64) -> Vec<Expired> {
        let Some(wheel) = &self.wheel else {
            return Vec::new();
        };
        // The entries due: out of the wheel, "not scheduled".
        let mut due = Vec::new();
        {
            let mut w = lock(wheel);
            let now_tick = now_ns / w.tick_ns;
            if now_tick > w.last_tick {
                let n = (now_tick - w.last_tick).min(Wheel::slots() as u64);
                let first = w.last_tick + 1;
                w.last_tick = now_tick;
                for k in 0..n {
                    let mut cur = w.detach(((first + k) as usize) & (Wheel::slots() - 1));
                    while cur != NIL {
                        let next = w.take_next(cur);
                        self.cells.cell(cur as usize).sched.store(NEVER, SeqCst);
                        due.push(cur);
                        cur = next;
                    }
                }
            }
        }
        if due.is_empty() {
            return Vec::new();
        }
        // Dekker pair with restarts (`rearm`, `restart_unlocked`): they store a deadline, then
        // load the schedule; we stored "not scheduled", and load the deadlines after this
        // fence. Either we see the new deadline or the restart sees "not scheduled" and links
        // the entry itself. One fence (a process-wide barrier with lock-free restarts) for all.
        self.hazards.heavy_fence();
        let mut out = Vec::new();
        let mut victims = Vec::new();
        {
            let guard = match &self.engine {
                Engine::Tuple(ix) => Some(read(ix)),
                Engine::Exact(_) | Engine::Direct(_) => None,
            };
            let idx = guard.as_deref();
            let mut w = lock(wheel);
            for cur in due {
                let cell = self.cells.cell(cur as usize);
                let d = cell.deadline.load(SeqCst);
                if d > now_ns {
                    w.link(cur, d, cell.sched);
                } else if self.auto_delete {
                    victims.push((cur, cell.gen()));
                } else if self.is_live(idx, cur) {
                    out.push(Expired {
                        entry: self.view(idx, cur),
                        notify: true,
                    });
                }
            }
        }
        self.stats.add(Counter::Notifications, out.len() as u64);
        for (s, gen) in victims {
            let cell = self.cells.cell(s as usize);
            let cond = |g: &CellGuard<'_>| g.gen() == gen && cell.deadline.load(SeqCst) <= now_ns;
            let view;
            let freed = match &self.engine {
                Engine::Exact(_) | Engine::Direct(_) => {
                    if !self.is_live(None, s) || cell.gen() != gen {
                        continue;
                    }
                    view = self.view(None, s);
                    self.remove_exact(s, cond, true)
                }
                Engine::Tuple(ix) => {
                    let mut idx = write(ix);
                    if !idx.is_used(s) || cell.gen() != gen {
                        continue;
                    }
                    view = self.view(Some(&idx), s);
                    self.remove_tuple(&mut idx, s, cond)
                }
            };
            if freed {
                self.stats.add(Counter::Expirations, 1);
                out.push(Expired {
                    entry: view,
                    notify: false,
                });
            } else if cell.gen() == gen {
                // Re-armed concurrently: put it back in the wheel.
                let mut w = lock(wheel);
                w.link(s, cell.deadline.load(SeqCst), cell.sched);
            }
        }
        self.drain_retired();
        out
    }
}

/// Removals in bulk free their retired slots when this many wait in the limbo (one hazard wait
/// each time), so that an insert into a full table seldom has to free them itself.
const DRAIN_EVERY: u32 = 1024;

fn read(ix: &RwLock<Index>) -> RwLockReadGuard<'_, Index> {
    ix.read().unwrap_or_else(PoisonError::into_inner)
}

fn write(ix: &RwLock<Index>) -> RwLockWriteGuard<'_, Index> {
    ix.write().unwrap_or_else(PoisonError::into_inner)
}

fn lock(w: &Mutex<Wheel>) -> MutexGuard<'_, Wheel> {
    w.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Table>();
    }
}

/// A key's place in an exact table, from [`Table::prefetch`].
#[derive(Clone, Copy)]
pub struct Prefetch(Probe);
