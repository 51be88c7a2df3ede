//! Table entries (P4Runtime §9.1 "TableEntry"), default entries among them, and the table
//! entries direct counters and meters are read by.

use super::entity;
use crate::pb::p4::v1 as p4;
use crate::pipeline::{Pipeline, ReadWants};
use nevermiss_runtime::control::{Change, ControlError, EntryKey, EntryState, Op, TableEntry};
use p4_ir::TableId;

use p4::entity::Entity as E;

/// A write of a table entry: an entry inserted, modified or deleted, or the default entry
/// modified.
pub(super) fn translate(p: &Pipeline, op: Op, te: &p4::TableEntry) -> Result<Change, ControlError> {
    let t = p.ir_table(te.table_id)?;
    if te.is_default_action {
        if op != Op::Modify {
            return Err(ControlError::InvalidArgument(
                "the default entry can only be modified".into(),
            ));
        }
        return Ok(Change::Default(t, p.default_call(te, t)?));
    }
    if op == Op::Delete {
        return Ok(Change::Entry(
            Op::Delete,
            t,
            TableEntry {
                key: p.key(te)?,
                ..Default::default()
            },
        ));
    }
    let entry = p.entry(te, t)?;
    Ok(Change::Entry(op, t, entry))
}

/// A read of table entries: one table or every table (`table_id` 0, no other filter), the
/// default entry, one key or every entry, filtered by priority, metadata and action.
pub(super) fn read(p: &Pipeline, te: &p4::TableEntry) -> Result<Vec<p4::Entity>, ControlError> {
    let tables = if te.table_id == 0 {
        if !te.r#match.is_empty() || te.is_default_action || te.priority != 0 {
            return Err(ControlError::InvalidArgument(
                "a read of every table (table_id 0) takes no other filter".into(),
            ));
        }
        p.all_tables()
    } else {
        vec![(te.table_id, p.ir_table(te.table_id)?)]
    };
    let want = ReadWants::of(te);
    let mut out = Vec::new();
    for (id, t) in tables {
        if want.elapsed && !p.has_idle_timeout(id) {
            if te.table_id == 0 {
                continue;
            }
            return Err(ControlError::InvalidArgument(
                "time_since_last_hit: the table has no idle timeout".into(),
            ));
        }
        if te.is_default_action {
            let d = p.sw.read_default(t)?;
            out.push(entity(E::TableEntry(Box::new(
                p.default_entry_of(t, d.as_ref()),
            ))));
            continue;
        }
        let states = if te.r#match.is_empty() {
            p.sw.read_entries(t)?
        } else {
            let key = p.key(te)?;
            match p.sw.read_entry(t, &key) {
                Ok(s) => vec![s],
                Err(ControlError::NotFound(_)) => Vec::new(),
                Err(e) => return Err(e),
            }
        };
        for s in states {
            let pe = p.entry_of(t, &s, want);
            if matches_filter(te, &pe) {
                out.push(entity(E::TableEntry(Box::new(pe))));
            }
        }
    }
    Ok(out)
}

/// Whether a read entry `pe` passes the read's filters: priority, controller metadata,
/// metadata and action id, each when set.
#[allow(deprecated)] // `controller_metadata` is deprecated in P4Runtime 1.4 but still filters reads.
fn matches_filter(te: &p4::TableEntry, pe: &p4::TableEntry) -> bool {
    let action_id = |e: &p4::TableEntry| {
        e.action.as_ref().and_then(|a| match &a.r#type {
            Some(p4::table_action::Type::Action(a)) => Some(a.action_id),
            _ => None,
        })
    };
    if te.priority != 0 && pe.priority != te.priority {
        return false;
    }
    if te.controller_metadata != 0 && pe.controller_metadata != te.controller_metadata {
        return false;
    }
    if !te.metadata.is_empty() && pe.metadata != te.metadata {
        return false;
    }
    match action_id(te).filter(|a| *a != 0) {
        Some(aid) => action_id(pe) == Some(aid),
        None => true,
    }
}

/// The table and the entries a direct counter or meter read names: every entry of the
/// table, or the one its key names (an error when there is none). `what` names the read in
/// the error for an unset table entry.
pub(super) fn direct_entries(
    p: &Pipeline,
    te: Option<&p4::TableEntry>,
    what: &str,
) -> Result<(TableId, Vec<EntryState>), ControlError> {
    let Some(te) = te else {
        return Err(ControlError::InvalidArgument(format!(
            "{what} read: table_entry unset"
        )));
    };
    let t = p.ir_table(te.table_id)?;
    let states = if te.r#match.is_empty() {
        p.sw.read_entries(t)?
    } else {
        vec![p.sw.read_entry(t, &p.key(te)?)?]
    };
    Ok((t, states))
}

/// The table entry a direct resource is reported under: its key only (no action, not const,
/// no idle timeout).
pub(super) fn key_entry(p: &Pipeline, t: TableId, s: &EntryState) -> p4::TableEntry {
    let mut e = p.entry_of(t, s, ReadWants::default());
    e.action = None;
    e.is_const = false;
    e.idle_timeout_ns = 0;
    e
}

/// The table and key a direct counter or meter write names.
pub(super) fn direct_key(
    p: &Pipeline,
    te: Option<&p4::TableEntry>,
) -> Result<(TableId, EntryKey), ControlError> {
    let Some(te) = te else {
        return Err(ControlError::InvalidArgument("table_entry unset".into()));
    };
    let t = p.ir_table(te.table_id)?;
    Ok((t, p.key(te)?))
}
