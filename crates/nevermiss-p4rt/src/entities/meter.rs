//! Meter entries and direct meter entries (P4Runtime §9.5 "MeterEntry", §9.6
//! "DirectMeterEntry").

use super::table::{direct_entries, direct_key, key_entry};
use super::{entity, extern_of, index_msg, index_of, only_modified, read_cells};
use crate::pb::p4::v1 as p4;
use crate::pipeline::{meter_config_msg, meter_counters_msg, meter_counters_reset, Pipeline};
use nevermiss_runtime::control::{Change, ControlError, MeterConfig, Op};

use p4::entity::Entity as E;

/// A write of meter cells: without an index every cell is configured (or reset to the
/// default without a config), P4Runtime §9.5.
pub(super) fn translate(p: &Pipeline, op: Op, m: &p4::MeterEntry) -> Result<Change, ControlError> {
    only_modified(op, "meter entries")?;
    let x = extern_of(p, m.meter_id, "meter")?;
    Ok(Change::Meter {
        meter: x,
        index: m.index.map(|i| index_of(i.index)).transpose()?,
        config: meter_config(m.config.as_ref())?,
        counters: meter_counters_reset(m.counter_data.as_ref())?,
    })
}

/// A write of a direct meter: the meter of one table entry.
pub(super) fn translate_direct(
    p: &Pipeline,
    op: Op,
    dm: &p4::DirectMeterEntry,
) -> Result<Change, ControlError> {
    only_modified(op, "direct meter entries")?;
    let (table, key) = direct_key(p, dm.table_entry.as_ref())?;
    Ok(Change::DirectMeter {
        table,
        key,
        config: meter_config(dm.config.as_ref())?,
        counters: meter_counters_reset(dm.counter_data.as_ref())?,
    })
}

/// A read of meter cells (wildcards: every meter, every cell); their counters when asked.
pub(super) fn read(p: &Pipeline, me: &p4::MeterEntry) -> Result<Vec<p4::Entity>, ControlError> {
    let all = p.p4info.meters.iter().map(|m| m.preamble.as_ref());
    let cells = read_cells(p, me.meter_id, all, me.index.as_ref(), "meter", |x| {
        p.sw.meter_size(x)
    })?;
    cells
        .into_iter()
        .map(|(id, x, i)| {
            Ok(entity(E::MeterEntry(Box::new(p4::MeterEntry {
                meter_id: id,
                index: index_msg(i),
                config: p.sw.read_meter(x, i)?.map(meter_config_msg),
                counter_data: if me.counter_data.is_some() {
                    Some(meter_counters_msg(p.sw.read_meter_counters(x, i)?))
                } else {
                    None
                },
            }))))
        })
        .collect()
}

/// A read of direct meters: the entries of the table (or the one named), with their meter's
/// configuration and, when asked, its counters.
pub(super) fn read_direct(
    p: &Pipeline,
    dm: &p4::DirectMeterEntry,
) -> Result<Vec<p4::Entity>, ControlError> {
    let (t, states) = direct_entries(p, dm.table_entry.as_ref(), "direct meter")?;
    let mut out = Vec::new();
    for s in states {
        let c = p.sw.read_direct_meter(t, &s.key)?;
        out.push(entity(E::DirectMeterEntry(Box::new(
            p4::DirectMeterEntry {
                table_entry: Some(key_entry(p, t, &s)),
                config: c.map(meter_config_msg),
                counter_data: if dm.counter_data.is_some() {
                    s.meter_counters.map(meter_counters_msg)
                } else {
                    None
                },
            },
        ))));
    }
    Ok(out)
}

/// A meter configuration (`None`: unset, back to the default: every packet green).
fn meter_config(c: Option<&p4::MeterConfig>) -> Result<Option<MeterConfig>, ControlError> {
    let Some(c) = c else { return Ok(None) };
    if c.cir < 0 || c.cburst < 0 || c.pir < 0 || c.pburst < 0 {
        return Err(ControlError::InvalidArgument(
            "meter rates and bursts must not be negative".into(),
        ));
    }
    if c.pir < c.cir {
        return Err(ControlError::InvalidArgument(
            "the peak rate must not be below the committed rate".into(),
        ));
    }
    Ok(Some(MeterConfig {
        cir: c.cir as u64,
        cburst: c.cburst as u64,
        pir: c.pir as u64,
        pburst: c.pburst as u64,
    }))
}
