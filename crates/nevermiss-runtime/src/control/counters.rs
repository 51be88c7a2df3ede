//! Indexed and direct counters (P4Runtime §9.2 "CounterEntry", §9.3 "DirectCounterEntry").

use super::*;

impl Switch {
    pub(super) fn counter_cells(&self, x: ExternId) -> ControlResult<&[crate::state::CounterCell]> {
        match self.externs().get(x) {
            Some(RtExtern::Counter(c)) => Ok(c),
            _ => Err(ControlError::NotFound(format!(
                "{x} is not an indexed counter"
            ))),
        }
    }

    /// Number of cells of indexed counter `x`.
    pub fn counter_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.counter_cells(x)?.len() as u32)
    }

    /// Cell `index` of indexed counter `x`.
    pub fn read_counter(&self, x: ExternId, index: u32) -> ControlResult<CounterData> {
        let cells = self.counter_cells(x)?;
        let c = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "counter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        let (packets, bytes) = c.read();
        Ok(CounterData { packets, bytes })
    }

    /// The direct counter of table `t`'s entry with this key.
    pub fn read_direct_counter(&self, t: TableId, key: &EntryKey) -> ControlResult<CounterData> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        if td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        Ok(self.direct_counter_of(td, v.id).unwrap_or_default())
    }

    /// Writes cell `index` of counter `x`, or every cell; returns the undo if asked.
    pub(super) fn write_counter(
        &self,
        x: ExternId,
        index: Option<u32>,
        d: Option<CounterData>,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let cells = self.counter_cells(x)?;
        let set = |c: &crate::state::CounterCell, d: CounterData| {
            c.reset();
            c.count(d.packets, d.bytes);
        };
        let saved = match index {
            Some(i) => {
                let old = self.read_counter(x, i)?;
                if let (Some(d), Some(c)) = (d, cells.get(i as usize)) {
                    set(c, d);
                }
                d.map(|_| Change::Counter {
                    counter: x,
                    index: Some(i),
                    data: Some(old),
                })
            }
            None => {
                let Some(d) = d else {
                    return Ok((self.applied(), None));
                };
                let old = undo.then(|| {
                    cells
                        .iter()
                        .map(|c| {
                            let (packets, bytes) = c.read();
                            CounterData { packets, bytes }
                        })
                        .collect()
                });
                for c in cells.iter() {
                    set(c, d);
                }
                old.map(|o| Change::Restore(SavedCells(Saved::Counter(x, o))))
            }
        };
        Ok((self.applied(), saved.filter(|_| undo)))
    }

    pub(super) fn write_direct_counter(
        &self,
        t: TableId,
        key: &EntryKey,
        d: Option<CounterData>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        let old = self.direct_counter_of(td, v.id).unwrap_or_default();
        if d.is_some() {
            self.write_direct(td, v.id, d, self.meta_of(rt, &v).meter, None);
        }
        Ok((
            self.applied(),
            Change::DirectCounter {
                table: t,
                key: key.clone(),
                data: d.map(|_| old),
            },
        ))
    }
}
