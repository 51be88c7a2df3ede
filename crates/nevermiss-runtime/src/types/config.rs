//! A switch's run-time configuration and the engine that runs its program.

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
    /// Sizes that replace tables' `size` properties (P4_16 §14.2.1.5), by control-plane name
    /// (`--table-size NAME=N`): a table sized for a deployment, say DASH's connection
    /// table, without editing the program. Still capped by `table_size_cap`.
    pub table_sizes: Vec<(String, u64)>,
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
    pub queues: Option<std::sync::Arc<crate::queues::QueueSettings>>,
    /// PNA: where a packet goes whose main control called neither `send_to_port` nor
    /// `drop_packet` (PNA §6.1 leaves it to the target). `None`: it is dropped (nevermiss's
    /// default, as PSA's). `Some(p)`: it leaves on port `p`, as on P4-DPDK, whose pipeline
    /// ends with `tx` of the output port metadata, 0 unless set (`--pna-default-port`; SONiC
    /// DASH's PNA build, written for P4-DPDK, calls neither).
    pub pna_default_port: Option<u32>,
    /// A profiling build read with this clock (`crate::engine::profile`): every block and
    /// every table lookup of generated code timed, PNA's blocks run one by one, no table code
    /// re-specialised. For measurements of where the time goes, in runs of their own; `None`
    /// (the default): the plain build, with no trace of profiling on the packet path.
    pub profile: Option<fn() -> u64>,
    /// Count the interpreter fallbacks per site (`nevermiss run --fallbacks`; docs/jit.md,
    /// "Fallbacks"): each helper call of generated code also adds one to its statement's,
    /// expression's or `select`'s count ([`crate::Switch::fallback_sites`]). Off: one
    /// not-taken branch per fallback.
    pub fallback_sites: bool,
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
            table_sizes: Vec::new(),
            table_size_cap: None,
            track_updates: false,
            lock_free_updates: true,
            engine: Engine::default(),
            queues: None,
            pna_default_port: None,
            profile: None,
            fallback_sites: false,
        }
    }
}
