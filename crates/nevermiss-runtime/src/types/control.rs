//! The control plane's vocabulary: the entities a controller writes and reads (table entries,
//! counters, meters, registers, action profile members and groups, multicast groups, clone
//! sessions, value sets), one [`Change`] per update and what applying it did. Keyed by the
//! runtime's own indices (a table is an index into `Program::tables`, an action an index into
//! that table's `actions`, an extern an index into `Program::externs`); names and P4Info ids
//! are the business of the layers above. Semantics: P4Runtime v1.5 §9 "P4 Entity Messages".

use nevermiss_tables::{EntryHandle, FieldMatch};
use p4_ir::ir::{ExternId, TableId, ValueSetId};

/// The key of a table entry: one match per key field (in key order, `selector` fields excluded;
/// a don't-care field is given as its wildcard: ternary mask 0, lpm length 0, the full range,
/// `Optional(None)`) and the priority (≥ 1, larger wins, for tables with ternary, range or
/// optional fields; 0 otherwise). Values are big-endian, of any length as long as they fit the
/// field (P4Runtime §8.3 "Bytestrings").
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EntryKey {
    pub matches: Vec<FieldMatch>,
    pub priority: u32,
}

/// An action with its parameter values (one per parameter, in order, big-endian).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCall {
    /// Index into the table's `actions`.
    pub action: u32,
    pub params: Vec<Vec<u8>>,
}

/// What an entry runs: an action (direct tables) or a member or group of the table's action
/// profile (indirect tables), or a one-shot action set (tables whose implementation is an
/// action selector; P4Runtime §9.2.3 "One Shot Action Selector Programming").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryAction {
    Call(ActionCall),
    Member(u32),
    Group(u32),
    ActionSet(Vec<SetAction>),
}

/// One action of a one-shot action set: the action (an index into the table's actions), its
/// weight (≥ 1) and the port its liveness depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAction {
    pub call: ActionCall,
    pub weight: u32,
    pub watch: Option<WatchPort>,
}

/// A member of a group: its id, weight (≥ 1) and the port its liveness depends on (P4Runtime
/// §9.3 "ActionProfileGroup": a member whose watch port is down is not selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMember {
    pub id: u32,
    pub weight: u32,
    pub watch: Option<WatchPort>,
}

/// Packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterData {
    pub packets: u64,
    pub bytes: u64,
}

/// The packets and bytes a meter marked with each color (P4Runtime §9.5 "MeterCounterData").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeterCounterData {
    pub green: CounterData,
    pub yellow: CounterData,
    pub red: CounterData,
}

/// A two-rate three-color meter's configuration in P4Runtime units: rates per second and
/// bursts, in packets or bytes as the meter counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeterConfig {
    pub cir: u64,
    pub cburst: u64,
    pub pir: u64,
    pub pburst: u64,
}

/// A table entry as written (P4Runtime `TableEntry`). `action` may be `None` only in a modify
/// (keep the action). `counter` and `meter` are the entry's direct counter and meter, if the
/// table has them (`None`: zero / all green on insert, unchanged counter and default meter on
/// modify, as P4Runtime §9.1.1 says); `meter_counters` sets the direct meter's color counts
/// (`None`: zero on insert, unchanged on modify; P4Runtime writes only zeros, a reset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableEntry {
    pub key: EntryKey,
    pub action: Option<EntryAction>,
    pub controller_metadata: u64,
    pub metadata: Vec<u8>,
    /// Idle timeout in ns; 0 = none. Tables with an idle timeout only.
    pub idle_timeout_ns: u64,
    pub counter: Option<CounterData>,
    pub meter: Option<MeterConfig>,
    pub meter_counters: Option<MeterCounterData>,
}

/// An entry as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryState {
    pub key: EntryKey,
    pub action: EntryAction,
    pub controller_metadata: u64,
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
    pub port: u32,
    /// `instance` (v1model `egress_rid`, PSA `instance`).
    pub instance: u32,
}

/// A multicast group (P4Runtime `MulticastGroupEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulticastGroup {
    pub id: u32,
    pub replicas: Vec<Replica>,
    pub metadata: Vec<u8>,
}

/// A clone session (P4Runtime `CloneSessionEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneSession {
    pub id: u32,
    pub replicas: Vec<Replica>,
    pub class_of_service: u32,
    /// Truncation length (0 = whole packet). Stored and read back; not applied to clones.
    pub packet_length_bytes: i32,
}

/// A member of an action profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileMember {
    pub id: u32,
    /// The action, as an index into the actions of the profile's first table
    /// ([`Switch::profile_tables`]).
    pub action: ActionCall,
}

/// A group of an action selector: members with weights and watch ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileGroup {
    pub id: u32,
    pub members: Vec<GroupMember>,
    /// Most members (0 = the profile's size).
    pub max_size: u32,
}

/// Kind of change of an insert/modify/delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Insert,
    Modify,
    Delete,
}

/// One change of a [`Switch::write`] batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Insert, modify or delete (the key alone counts) an entry.
    Entry(Op, TableId, TableEntry),
    /// Set the default action (`None`: back to the program's initial default).
    Default(TableId, Option<ActionCall>),
    /// Cell `index` of an indexed counter, or every cell (`None`: P4Runtime's CounterEntry
    /// without an index), set to `data` (`None`: left as it is, the index still checked).
    Counter {
        counter: ExternId,
        index: Option<u32>,
        data: Option<CounterData>,
    },
    /// `data` `None`: the counter left as it is (the entry must exist).
    DirectCounter {
        table: TableId,
        key: EntryKey,
        data: Option<CounterData>,
    },
    /// Cell `index` of an indexed meter, or every cell (`None`). `config` `None`: back to the
    /// default (unconfigured: every packet green); `counters` `None`: the color counts
    /// unchanged, else set (P4Runtime resets them to zero).
    Meter {
        meter: ExternId,
        index: Option<u32>,
        config: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
    },
    DirectMeter {
        table: TableId,
        key: EntryKey,
        config: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
    },
    /// Cell `index` of a register, or every cell (`None`), set to one value per field of the
    /// register's cell type ([`Switch::register_fields`]).
    Register {
        register: ExternId,
        index: Option<u32>,
        value: Vec<Vec<u8>>,
    },
    /// Puts back every cell of a counter, meter or register as a write of every cell found
    /// them: the undo of such a write in a batch that may roll back (only the runtime makes
    /// one).
    Restore(SavedCells),
    Member(Op, ExternId, ProfileMember),
    Group(Op, ExternId, ProfileGroup),
    Multicast(Op, MulticastGroup),
    Clone(Op, CloneSession),
    /// Replaces every member of a parser value set; each member has one match per component
    /// (`Exact` or `Ternary`).
    ValueSet {
        set: ValueSetId,
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
    pub table: TableId,
    pub entry: EntryState,
}

/// A watch port as the controller wrote it: the port, and whether it came in P4Runtime's
/// deprecated `int32 watch` field rather than `bytes watch_port` (read back the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchPort {
    pub port: u32,
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
