//! Counter entries and direct counter entries (P4Runtime §9.4 "CounterEntry", §9.5
//! "DirectCounterEntry").

use super::table::{direct_entries, direct_key, key_entry};
use super::{entity, extern_of, index_msg, index_of, only_modified, read_cells};
use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, ControlError, CounterData, Op};

use p4::entity::Entity as E;

/// A write of counter cells: without an index every cell is set; without data nothing is
/// (P4Runtime §9.4).
pub(super) fn translate(
    p: &Pipeline,
    op: Op,
    ce: &p4::CounterEntry,
) -> Result<Change, ControlError> {
    only_modified(op, "counter entries")?;
    let x = extern_of(p, ce.counter_id, "counter")?;
    Ok(Change::Counter {
        counter: x,
        index: ce.index.map(|i| index_of(i.index)).transpose()?,
        data: ce.data.map(counter_of),
    })
}

/// A write of a direct counter: the cell of one table entry.
pub(super) fn translate_direct(
    p: &Pipeline,
    op: Op,
    dc: &p4::DirectCounterEntry,
) -> Result<Change, ControlError> {
    only_modified(op, "direct counter entries")?;
    let (table, key) = direct_key(p, dc.table_entry.as_ref())?;
    Ok(Change::DirectCounter {
        table,
        key,
        data: dc.data.map(counter_of),
    })
}

/// A read of counter cells (wildcards: every counter, every cell).
pub(super) fn read(p: &Pipeline, ce: &p4::CounterEntry) -> Result<Vec<p4::Entity>, ControlError> {
    let all = p.p4info.counters.iter().map(|c| c.preamble.as_ref());
    let cells = read_cells(p, ce.counter_id, all, ce.index.as_ref(), "counter", |x| {
        p.sw.counter_size(x)
    })?;
    cells
        .into_iter()
        .map(|(id, x, i)| {
            Ok(entity(E::CounterEntry(p4::CounterEntry {
                counter_id: id,
                index: index_msg(i),
                data: Some(counter_data(p.sw.read_counter(x, i)?)),
            })))
        })
        .collect()
}

/// A read of direct counters: the entries of the table (or the one named) that have one.
pub(super) fn read_direct(
    p: &Pipeline,
    dc: &p4::DirectCounterEntry,
) -> Result<Vec<p4::Entity>, ControlError> {
    let (t, states) = direct_entries(p, dc.table_entry.as_ref(), "direct counter")?;
    Ok(states
        .into_iter()
        .filter_map(|s| {
            let c = s.counter?;
            Some(entity(E::DirectCounterEntry(Box::new(
                p4::DirectCounterEntry {
                    table_entry: Some(key_entry(p, t, &s)),
                    data: Some(counter_data(c)),
                },
            ))))
        })
        .collect())
}

/// The packets and bytes of a write's `CounterData` (negative counts as 0).
fn counter_of(d: p4::CounterData) -> CounterData {
    CounterData {
        packets: d.packet_count.max(0) as u64,
        bytes: d.byte_count.max(0) as u64,
    }
}

/// The `CounterData` of a cell.
fn counter_data(d: CounterData) -> p4::CounterData {
    p4::CounterData {
        byte_count: d.bytes as i64,
        packet_count: d.packets as i64,
    }
}
