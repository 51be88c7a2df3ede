//! Registers (P4Runtime §9.6 "RegisterEntry"): cells read and written as the bytes of their
//! value type.

use super::*;

impl Switch {
    pub(super) fn register(
        &self,
        x: ExternId,
    ) -> ControlResult<(&crate::state::RegisterStore, &Layout)> {
        match (self.externs().get(x), self.prog().externs.get(x as usize)) {
            (Some(RtExtern::Register(r)), Some(def)) => match &def.kind {
                ExternKind::Register { layout, .. } => Ok((r, layout)),
                _ => Err(ControlError::NotFound(format!("{x} is not a register"))),
            },
            _ => Err(ControlError::NotFound(format!("{x} is not a register"))),
        }
    }

    /// The scalar fields of register `x`'s cell type, in order (one for a `bit<W>` register),
    /// with their word offsets in a cell.
    pub fn register_fields(&self, x: ExternId) -> ControlResult<Vec<(u32, Ty)>> {
        let (_, layout) = self.register(x)?;
        let mut out = Vec::new();
        scalars(layout, 0, &mut out)?;
        Ok(out)
    }

    /// Number of cells of register `x`.
    pub fn register_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.register(x)?.0.size)
    }

    /// Cell `index` of register `x`: one big-endian value per field (`ceil(w/8)` bytes).
    pub fn read_register(&self, x: ExternId, index: u32) -> ControlResult<Vec<Vec<u8>>> {
        let (r, _) = self.register(x)?;
        if index >= r.size {
            return Err(ControlError::OutOfRange(format!(
                "register index {index} is past its size {}",
                r.size
            )));
        }
        let fields = self.register_fields(x)?;
        let mut words = vec![0u64; r.words as usize];
        r.read(u64::from(index), &mut words);
        Ok(fields
            .iter()
            .map(|(off, ty)| words_to_bytes(&words[*off as usize..], ty.width))
            .collect())
    }

    /// Writes cell `index` of register `x`, or every cell; returns the undo if asked.
    pub(super) fn write_register(
        &self,
        x: ExternId,
        index: Option<u32>,
        value: &[Vec<u8>],
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (r, _) = self.register(x)?;
        let fields = self.register_fields(x)?;
        if let Some(i) = index {
            if i >= r.size {
                return Err(ControlError::OutOfRange(format!(
                    "register index {i} is past its size {}",
                    r.size
                )));
            }
        }
        if value.len() != fields.len() {
            return Err(invalid(format!(
                "register cell has {} fields, {} values given",
                fields.len(),
                value.len()
            )));
        }
        let mut words = vec![0u64; r.words as usize];
        for ((off, ty), v) in fields.iter().zip(value) {
            if !fits(v, ty.width) {
                return Err(ControlError::OutOfRange(format!(
                    "register value does not fit {} bits",
                    ty.width
                )));
            }
            bytes_to_words(v, &mut words[*off as usize..]);
        }
        let saved = match index {
            Some(i) => {
                let old = self.read_register(x, i)?;
                r.write(u64::from(i), &words);
                Change::Register {
                    register: x,
                    index: Some(i),
                    value: old,
                }
            }
            None => {
                let n = r.words as usize;
                let mut old = vec![0u64; if undo { n * r.size as usize } else { 0 }];
                for i in 0..r.size {
                    if undo {
                        let at = i as usize * n;
                        r.read(u64::from(i), &mut old[at..at + n]);
                    }
                    r.write(u64::from(i), &words);
                }
                Change::Restore(SavedCells(Saved::Register(x, old)))
            }
        };
        Ok((self.applied(), undo.then_some(saved)))
    }

    /// Puts back the cells a write of every cell saved.
    pub(super) fn restore(&self, s: &SavedCells) -> ControlResult<(Applied, Option<Change>)> {
        match &s.0 {
            Saved::Counter(x, cells) => {
                for (c, d) in self.counter_cells(*x)?.iter().zip(cells) {
                    c.reset();
                    c.count(d.packets, d.bytes);
                }
            }
            Saved::Meter(x, cells) => {
                for (m, (config, counters)) in self.meter_cells(*x)?.iter().zip(cells) {
                    let mut m = m.lock().unwrap_or_else(PoisonError::into_inner);
                    configure_meter(&mut m, *config);
                    if let Some(n) = counters {
                        set_meter_counts(&mut m, *n);
                    }
                }
            }
            Saved::Register(x, words) => {
                let (r, _) = self.register(*x)?;
                let n = r.words as usize;
                if n > 0 {
                    for (i, w) in words.chunks(n).enumerate() {
                        r.write(i as u64, w);
                    }
                }
            }
        }
        Ok((self.applied(), None))
    }
}

/// The scalar fields of a register layout with their word offsets.
pub(super) fn scalars(l: &Layout, base: u32, out: &mut Vec<(u32, Ty)>) -> ControlResult<()> {
    match l {
        Layout::Scalar(t) => {
            out.push((base, *t));
            Ok(())
        }
        Layout::Struct(fs) => {
            for (_, off, f) in fs {
                scalars(f, base + off, out)?;
            }
            Ok(())
        }
        _ => Err(ControlError::Unimplemented(
            "registers of headers, unions, stacks or varbits".into(),
        )),
    }
}

/// A value of `width` bits stored in words (least significant first) as big-endian bytes.
pub(super) fn words_to_bytes(words: &[u64], width: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    let mut out = vec![0u8; n];
    for (i, b) in out.iter_mut().rev().enumerate() {
        let w = words.get(i / 8).copied().unwrap_or(0);
        *b = (w >> (8 * (i % 8))) as u8;
    }
    if !width.is_multiple_of(8) && n > 0 {
        out[0] &= (1u8 << (width % 8)) - 1;
    }
    out
}

/// Big-endian bytes into words (least significant first).
pub(super) fn bytes_to_words(v: &[u8], words: &mut [u64]) {
    for (i, b) in v.iter().rev().enumerate() {
        if let Some(w) = words.get_mut(i / 8) {
            *w |= u64::from(*b) << (8 * (i % 8));
        }
    }
}
