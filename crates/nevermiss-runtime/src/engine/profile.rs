//! A profiling build of a program (`Config::profile`): where a packet's time goes, block by
//! block and table by table, read with the caller's clock (`nevermiss bench component`'s
//! profile run gives it the TSC).
//!
//! A profiling build differs from the plain one in three ways, so its figures come from runs of
//! their own, never from the throughput or latency runs: every block of the architecture (each
//! parser, control and deparser) is called on its own and bracketed by two clock reads (PNA's
//! generated whole pass, `PnaInfo::glue`, is not built, so PNA runs its blocks one by one as
//! v1model and PSA do); every table lookup generated code calls into the runtime
//! (`Helpers::table_lookup`, `Helpers::table_find`) is bracketed by two reads; and no table's
//! code is re-specialised to its entries (such a table's hits would be matched inside generated
//! code, untimed). `const` tables still match their entries in generated code: their hits are
//! counted in the table's statistics but take no lookup, and are not timed here.

use p4_ir::ir::{FnId, ParserId, TableId};

/// A block of the architecture, as the arch's packet flow calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Block {
    /// A parser.
    Parser(ParserId),
    /// A control (the deparser is one).
    Control(FnId),
}

/// Calls and clock ticks summed over them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticks {
    /// How many times it ran.
    pub calls: u64,
    /// Clock ticks over all of them (the clock's own cost included, once per call).
    pub ticks: u64,
}

impl Ticks {
    fn add(&mut self, ticks: u64) {
        self.calls += 1;
        self.ticks = self.ticks.wrapping_add(ticks);
    }
}

/// What one worker's profiling build measured since it was made or last [`Profile::clear`]ed.
#[derive(Clone, Debug)]
pub struct Profile {
    clock: fn() -> u64,
    /// Each block that ran, in the order it first ran.
    pub blocks: Vec<(Block, Ticks)>,
    /// Per table (by `TableId`): the lookups generated code called, and their ticks.
    pub tables: Vec<Ticks>,
}

impl Profile {
    /// An empty profile of a program with `tables` tables, read with `clock`.
    pub fn new(clock: fn() -> u64, tables: usize) -> Profile {
        Profile {
            clock,
            blocks: Vec::new(),
            tables: vec![Ticks::default(); tables],
        }
    }

    /// The clock's reading now.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        (self.clock)()
    }

    /// Adds one run of `b` that took `ticks`.
    pub(crate) fn add_block(&mut self, b: Block, ticks: u64) {
        match self.blocks.iter_mut().find(|(x, _)| *x == b) {
            Some((_, t)) => t.add(ticks),
            None => {
                let mut t = Ticks::default();
                t.add(ticks);
                self.blocks.push((b, t));
            }
        }
    }

    /// Adds one lookup of table `t` that took `ticks`.
    pub(crate) fn add_table(&mut self, t: TableId, ticks: u64) {
        if let Some(x) = self.tables.get_mut(t as usize) {
            x.add(ticks);
        }
    }

    /// Forgets everything measured so far.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.tables.iter_mut().for_each(|t| *t = Ticks::default());
    }
}
