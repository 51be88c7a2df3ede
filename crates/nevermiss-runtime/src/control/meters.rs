//! Indexed and direct meters: their configuration and, for PNA and PSA, their per-colour
//! counters (P4Runtime §9.4 "MeterEntry", §9.5 "DirectMeterEntry").

use super::*;

impl Switch {
    pub(super) fn meter_cells(&self, x: ExternId) -> ControlResult<&[Mutex<Meter>]> {
        match self.externs().get(x) {
            Some(RtExtern::Meter(c)) => Ok(c),
            _ => Err(ControlError::NotFound(format!(
                "{x} is not an indexed meter"
            ))),
        }
    }

    /// Number of cells of indexed meter `x`.
    pub fn meter_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.meter_cells(x)?.len() as u32)
    }

    /// The configuration of cell `index` of meter `x` (`None`: unconfigured).
    pub fn read_meter(&self, x: ExternId, index: u32) -> ControlResult<Option<MeterConfig>> {
        let cells = self.meter_cells(x)?;
        let m = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "meter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        Ok(m.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .config
            .map(from_units))
    }

    /// The color counts of cell `index` of meter `x`.
    pub fn read_meter_counters(&self, x: ExternId, index: u32) -> ControlResult<MeterCounterData> {
        let cells = self.meter_cells(x)?;
        let m = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "meter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        Ok(meter_counts(
            &m.lock().unwrap_or_else(PoisonError::into_inner),
        ))
    }

    /// Writes cell `index` of meter `x`, or every cell; returns the undo if asked.
    pub(super) fn write_meter(
        &self,
        x: ExternId,
        index: Option<u32>,
        c: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let cells = self.meter_cells(x)?;
        let write = |m: &Mutex<Meter>| {
            let mut m = m.lock().unwrap_or_else(PoisonError::into_inner);
            let old = (m.config.map(from_units), counters.map(|_| meter_counts(&m)));
            configure_meter(&mut m, c);
            if let Some(n) = counters {
                set_meter_counts(&mut m, n);
            }
            old
        };
        let saved = match index {
            Some(i) => {
                let Some(m) = cells.get(i as usize) else {
                    return Err(ControlError::OutOfRange(format!(
                        "meter index {i} is past its size {}",
                        cells.len()
                    )));
                };
                let (config, counters) = write(m);
                Change::Meter {
                    meter: x,
                    index: Some(i),
                    config,
                    counters,
                }
            }
            None => {
                let mut old = Vec::with_capacity(if undo { cells.len() } else { 0 });
                for m in cells.iter() {
                    let o = write(m);
                    if undo {
                        old.push(o);
                    }
                }
                Change::Restore(SavedCells(Saved::Meter(x, old)))
            }
        };
        Ok((self.applied(), undo.then_some(saved)))
    }

    /// The direct meter configuration of table `t`'s entry with this key.
    pub fn read_direct_meter(
        &self,
        t: TableId,
        key: &EntryKey,
    ) -> ControlResult<Option<MeterConfig>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        if td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        Ok(self.meta_of(rt, &v).meter)
    }

    pub(super) fn write_direct_meter(
        &self,
        t: TableId,
        key: &EntryKey,
        c: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        let mut meta = self.meta_of(rt, &v);
        let old = meta.meter;
        let old_counters = counters.and(self.direct_meter_counters_of(td, v.id));
        self.write_direct(td, v.id, None, c, counters);
        meta.gen = v.id.generation();
        meta.meter = c;
        rt.meta().entries().insert(v.id.slot() as u32, meta);
        Ok((
            self.applied(),
            Change::DirectMeter {
                table: t,
                key: key.clone(),
                config: old,
                counters: old_counters,
            },
        ))
    }
}

/// The color counts of meter `m`.
pub(super) fn meter_counts(m: &Meter) -> MeterCounterData {
    let c = |i: usize| CounterData {
        packets: m.counts[i][0],
        bytes: m.counts[i][1],
    };
    MeterCounterData {
        green: c(GREEN),
        yellow: c(YELLOW),
        red: c(RED),
    }
}

/// Sets meter `m`'s color counts.
pub(super) fn set_meter_counts(m: &mut Meter, counts: MeterCounterData) {
    for (i, c) in [counts.green, counts.yellow, counts.red].iter().enumerate() {
        m.counts[i] = [c.packets, c.bytes];
    }
}

/// Configures a meter from P4Runtime units (rates per second) or resets it (`None`).
pub(super) fn configure_meter(m: &mut Meter, c: Option<MeterConfig>) {
    match c {
        Some(c) => {
            m.configure(c.cir as f64 / 1e6, c.cburst, c.pir as f64 / 1e6, c.pburst);
            m.config = Some([c.cir, c.cburst, c.pir, c.pburst]);
        }
        None => m.unconfigure(),
    }
}

pub(super) fn from_units(u: [u64; 4]) -> MeterConfig {
    MeterConfig {
        cir: u[0],
        cburst: u[1],
        pir: u[2],
        pburst: u[3],
    }
}
