//! The control plane's vocabulary: the entities a controller writes and reads (table entries,
//! counters, meters, registers, action profile members and groups, multicast groups, clone
//! sessions, value sets), one [`Change`] per update and what applying it did. Keyed by the
//! runtime's own indices (a table is an index into `Program::tables`, an action an index into
//! that table's `actions`, an extern an index into `Program::externs`); names and P4Info ids
//! are the business of the layers above. Semantics: P4Runtime v1.5 §11 "P4 Entity Messages".

use nevermiss_tables::{EntryHandle, FieldMatch};
use p4_ir::ir::{ExternId, TableId, ValueSetId};

/// The key of a table entry: one match per key field (in key order, `selector` fields excluded;
/// a don't-care field is given as its wildcard: ternary mask 0, lpm length 0, the full range,
/// `Optional(None)`) and the priority (≥ 1, larger wins, for tables with ternary, range or
/// optional fields; 0 otherwise). Values are big-endian, of any length as long as they fit the
/// field (P4Runtime §10.3 "Bytestrings").
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EntryKey {
    /// One match per key field, in key order (P4Runtime §11.1.1 "Match Format").
    pub matches: Vec<FieldMatch>,
    /// The entry's priority: ≥ 1 and larger wins where the table needs one, else 0.
    pub priority: u32,
}

/// An action with its parameter values (one per parameter, in order, big-endian).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCall {
    /// Index into the table's `actions`.
    pub action: u32,
    /// One value per parameter of the action, in declaration order, big-endian.
    pub params: Vec<Vec<u8>>,
}

/// What an entry runs: an action (direct tables) or a member or group of the table's action
/// profile (indirect tables), or a one-shot action set (tables whose implementation is an
/// action selector; P4Runtime §11.2.3 "One Shot Action Selector Programming").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryAction {
    /// An action of the table with its parameters (a direct table; P4Runtime §11.1.2).
    Call(ActionCall),
    /// A member of the table's action profile, by its id (P4Runtime §11.2.1).
    Member(u32),
    /// A group of the table's action selector, by its id (P4Runtime §11.2.2).
    Group(u32),
    /// A one-shot action set: the actions the selector chooses among (P4Runtime §11.2.3).
    ActionSet(Vec<SetAction>),
}

/// One action of a one-shot action set: the action (an index into the table's actions), its
/// weight (≥ 1) and the port its liveness depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAction {
    /// The action and its parameters.
    pub call: ActionCall,
    /// Its weight among the set's actions (≥ 1).
    pub weight: u32,
    /// The port whose link must be up for the action to be chosen; `None`: always eligible.
    pub watch: Option<WatchPort>,
}

/// A member of a group: its id, weight (≥ 1) and the port its liveness depends on (P4Runtime
/// §11.2.2 "Action Profile Group Programming": a member whose watch port is down is not selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMember {
    /// The member's id in the action profile.
    pub id: u32,
    /// Its weight in the group (≥ 1): how many times it counts in the selection.
    pub weight: u32,
    /// The port whose link must be up for the member to be selected; `None`: always eligible.
    pub watch: Option<WatchPort>,
}

/// Packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterData {
    /// Packets counted.
    pub packets: u64,
    /// Bytes counted (the packets' lengths).
    pub bytes: u64,
}

/// The packets and bytes a meter marked with each color (P4Runtime §11.4.3 "MeterCounterData").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeterCounterData {
    /// Marked green (within the committed rate).
    pub green: CounterData,
    /// Marked yellow (over the committed rate, within the peak rate).
    pub yellow: CounterData,
    /// Marked red (over the peak rate).
    pub red: CounterData,
}

/// A two-rate three-color meter's configuration in P4Runtime units: rates per second and
/// bursts, in packets or bytes as the meter counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeterConfig {
    /// Committed information rate, per second (RFC 2698).
    pub cir: u64,
    /// Committed burst size.
    pub cburst: u64,
    /// Peak information rate, per second (≥ `cir`).
    pub pir: u64,
    /// Peak burst size.
    pub pburst: u64,
}

/// A table entry as written (P4Runtime `TableEntry`). `action` may be `None` only in a modify
/// (keep the action). `counter` and `meter` are the entry's direct counter and meter, if the
/// table has them (`None`: zero / all green on insert, unchanged counter and default meter on
/// modify, as P4Runtime §11.1.7 "Direct Resources" says); `meter_counters` sets the direct meter's color counts
/// (`None`: zero on insert, unchanged on modify; P4Runtime writes only zeros, a reset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableEntry {
    /// The key that identifies the entry in its table.
    pub key: EntryKey,
    /// What it runs on a hit; `None` only in a modify that keeps the action.
    pub action: Option<EntryAction>,
    /// An opaque 64-bit value the controller stores and reads back (`controller_metadata`).
    pub controller_metadata: u64,
    /// Opaque bytes the controller stores and reads back (`metadata`).
    pub metadata: Vec<u8>,
    /// Idle timeout in ns; 0 = none. Tables with an idle timeout only.
    pub idle_timeout_ns: u64,
    /// The direct counter's value to set (tables with a direct counter).
    pub counter: Option<CounterData>,
    /// The direct meter's configuration (tables with a direct meter).
    pub meter: Option<MeterConfig>,
    /// The direct meter's color counts to set (tables with a direct meter).
    pub meter_counters: Option<MeterCounterData>,
}

/// An entry as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryState {
    /// The key that identifies it.
    pub key: EntryKey,
    /// What it runs on a hit.
    pub action: EntryAction,
    /// As written (`controller_metadata`); 0 unless a controller wrote it.
    pub controller_metadata: u64,
    /// As written (`metadata`); empty unless a controller wrote it.
    pub metadata: Vec<u8>,
    /// As written; for entries the data plane added, the duration of their expire profile.
    pub idle_timeout_ns: u64,
    /// Time since the entry was last hit (v1model/PSA) or its timer last restarted (PNA);
    /// tables with an idle timeout only.
    pub elapsed_ns: Option<u64>,
    /// The direct counter (tables that have one).
    pub counter: Option<CounterData>,
    /// The direct meter's configuration, if one was set.
    pub meter: Option<MeterConfig>,
    /// The direct meter's color counts (tables that have one).
    pub meter_counters: Option<MeterCounterData>,
    /// An entry of a `const entries` table.
    pub is_const: bool,
    /// Added by the data plane (PNA `add_entry`) rather than by a controller or the program.
    pub from_data_plane: bool,
    /// The entry's current handle (valid until it is deleted).
    pub handle: EntryHandle,
}

impl EntryState {
    /// The entry as it would be written back (the state of its direct counter not included).
    pub fn into_entry(self) -> TableEntry {
        TableEntry {
            key: self.key,
            action: Some(self.action),
            controller_metadata: self.controller_metadata,
            metadata: self.metadata,
            idle_timeout_ns: if self.from_data_plane {
                0
            } else {
                self.idle_timeout_ns
            },
            counter: None,
            meter: self.meter,
            meter_counters: None,
        }
    }
}

/// A replica of a multicast group or clone session (P4Runtime `Replica`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Replica {
    /// The egress port of the copy.
    pub port: u32,
    /// `instance` (v1model `egress_rid`, PSA `instance`).
    pub instance: u32,
}

/// A multicast group (P4Runtime `MulticastGroupEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulticastGroup {
    /// The group's id, as the program's `mcast_grp` names it.
    pub id: u32,
    /// Its copies, in the order they are made.
    pub replicas: Vec<Replica>,
    /// Opaque bytes the controller stores and reads back.
    pub metadata: Vec<u8>,
}

/// A clone session (P4Runtime `CloneSessionEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneSession {
    /// The session's id, as the program's `clone` names it.
    pub id: u32,
    /// Its copies, in the order they are made.
    pub replicas: Vec<Replica>,
    /// Class of service of the copies (PSA's `class_of_service`); stored and read back.
    pub class_of_service: u32,
    /// Truncation length (0 = whole packet). Stored and read back; not applied to clones.
    pub packet_length_bytes: i32,
}

/// A member of an action profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileMember {
    /// The member's id, unique in its profile.
    pub id: u32,
    /// The action, as an index into the actions of the profile's first table
    /// ([`crate::Switch::profile_tables`]).
    pub action: ActionCall,
}

/// A group of an action selector: members with weights and watch ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileGroup {
    /// The group's id, unique in its profile.
    pub id: u32,
    /// Its members.
    pub members: Vec<GroupMember>,
    /// Most members (0 = the profile's size).
    pub max_size: u32,
}

/// Kind of change of an insert/modify/delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Adds what does not exist yet (an existing one is `ALREADY_EXISTS`).
    Insert,
    /// Changes what exists (a missing one is `NOT_FOUND`).
    Modify,
    /// Removes what exists (a missing one is `NOT_FOUND`).
    Delete,
}

/// One change of a [`crate::Switch::write`] batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Insert, modify or delete (the key alone counts) an entry.
    Entry(Op, TableId, TableEntry),
    /// Set the default action (`None`: back to the program's initial default).
    Default(TableId, Option<ActionCall>),
    /// Cell `index` of an indexed counter, or every cell (`None`: P4Runtime's CounterEntry
    /// without an index), set to `data` (`None`: left as it is, the index still checked).
    Counter {
        /// The counter (an index into `Program::externs`).
        counter: ExternId,
        /// The cell; `None`: every cell.
        index: Option<u32>,
        /// The value to set; `None`: left as it is.
        data: Option<CounterData>,
    },
    /// `data` `None`: the counter left as it is (the entry must exist).
    DirectCounter {
        /// The table whose direct counter it is.
        table: TableId,
        /// The entry's key.
        key: EntryKey,
        /// The value to set; `None`: left as it is.
        data: Option<CounterData>,
    },
    /// Cell `index` of an indexed meter, or every cell (`None`). `config` `None`: back to the
    /// default (unconfigured: every packet green); `counters` `None`: the color counts
    /// unchanged, else set (P4Runtime resets them to zero).
    Meter {
        /// The meter (an index into `Program::externs`).
        meter: ExternId,
        /// The cell; `None`: every cell.
        index: Option<u32>,
        /// The configuration; `None`: back to the default.
        config: Option<MeterConfig>,
        /// The color counts to set; `None`: unchanged.
        counters: Option<MeterCounterData>,
    },
    /// A table entry's direct meter: `config` `None` back to the default, `counters` as for
    /// [`Change::Meter`] (the entry must exist; P4Runtime §11.4.1).
    DirectMeter {
        /// The table whose direct meter it is.
        table: TableId,
        /// The entry's key.
        key: EntryKey,
        /// The configuration; `None`: back to the default.
        config: Option<MeterConfig>,
        /// The color counts to set; `None`: unchanged.
        counters: Option<MeterCounterData>,
    },
    /// Cell `index` of a register, or every cell (`None`), set to one value per field of the
    /// register's cell type ([`crate::Switch::register_fields`]).
    Register {
        /// The register (an index into `Program::externs`).
        register: ExternId,
        /// The cell; `None`: every cell.
        index: Option<u32>,
        /// One big-endian value per field of the cell type.
        value: Vec<Vec<u8>>,
    },
    /// Puts back every cell of a counter, meter or register as a write of every cell found
    /// them: the undo of such a write in a batch that may roll back (only the runtime makes
    /// one).
    Restore(SavedCells),
    /// Insert, modify or delete a member of an action profile (P4Runtime §11.2).
    Member(Op, ExternId, ProfileMember),
    /// Insert, modify or delete a group of an action selector (P4Runtime §11.2).
    Group(Op, ExternId, ProfileGroup),
    /// Insert, modify or delete a multicast group (P4Runtime §11.5.1).
    Multicast(Op, MulticastGroup),
    /// Insert, modify or delete a clone session (P4Runtime §11.5.2).
    Clone(Op, CloneSession),
    /// Replaces every member of a parser value set; each member has one match per component
    /// (`Exact` or `Ternary`).
    ValueSet {
        /// The value set (an index into `Program::value_sets`).
        set: ValueSetId,
        /// The new members (P4Runtime §11.6), replacing all the old ones.
        members: Vec<Vec<FieldMatch>>,
    },
}

/// Every cell of an indexed extern as a write of every cell found it ([`Change::Restore`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedCells(pub(crate) Saved);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Saved {
    Counter(ExternId, Vec<CounterData>),
    /// Each cell's configuration and, if the write set them, its color counts.
    Meter(
        ExternId,
        Vec<(Option<MeterConfig>, Option<MeterCounterData>)>,
    ),
    /// The register's words, cell after cell.
    Register(ExternId, Vec<u64>),
}

/// What a successful change did, for the update-delay instrumentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// When the change became visible to the data plane (`Switch::now_ns`).
    pub visible_ns: u64,
    /// The probe armed for it (`Config::track_updates`, entry inserts and modifies).
    pub probe: Option<u64>,
}

/// An idle-timeout notification: the entry whose idle time ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleNotification {
    /// The table the entry was in.
    pub table: TableId,
    /// The entry as it was when it expired.
    pub entry: EntryState,
}

/// A watch port as the controller wrote it: the port, and whether it came in P4Runtime's
/// deprecated `int32 watch` field rather than `bytes watch_port` (read back the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchPort {
    /// The port.
    pub port: u32,
    /// Whether it came in the deprecated `int32 watch` field.
    pub legacy: bool,
}

/// How a batch of changes behaves when one fails (P4Runtime `WriteRequest.Atomicity`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Atomicity {
    /// Every change is tried; each succeeds or fails on its own.
    #[default]
    ContinueOnError,
    /// If one change fails, those already applied are undone (in reverse order) and every
    /// change of the batch reports an error; packets may see intermediate states.
    RollbackOnError,
    /// As `RollbackOnError`, and packets see the state before the batch or after it, never in
    /// between: the workers wait at their quiescent point while the batch is applied.
    DataplaneAtomic,
}

/// A message produced by a `digest` (v1model) or `Digest.pack` (PNA).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestMsg {
    /// The extern's name (PNA) or `receiver N` (v1model).
    pub name: String,
    /// The packed data, big-endian, fields concatenated.
    pub data: Vec<u8>,
}
