//! Parser value sets (P4Runtime §9.8 "ValueSetEntry").

use super::*;

impl Switch {
    /// The members of parser value set `vs`: per member one `Ternary(value, mask)` per
    /// component.
    pub fn read_value_set(&self, vs: ValueSetId) -> ControlResult<Vec<Vec<FieldMatch>>> {
        let (def, set) = self.value_set_of(vs)?;
        let m = set.read().unwrap_or_else(PoisonError::into_inner);
        Ok(m.iter()
            .map(|member| {
                member
                    .iter()
                    .zip(&def.widths)
                    .map(|((v, mask), w)| {
                        let n = (*w as usize).div_ceil(8);
                        let b = |x: u64| x.to_be_bytes()[8 - n.min(8)..].to_vec();
                        FieldMatch::Ternary(b(*v), b(*mask))
                    })
                    .collect()
            })
            .collect())
    }

    pub(super) fn value_set_of(
        &self,
        vs: ValueSetId,
    ) -> ControlResult<(&p4_ir::ir::ValueSet, &RwLock<crate::state::ValueSetMembers>)> {
        match (self.prog().value_sets.get(vs as usize), self.value_set(vs)) {
            (Some(d), Some(s)) => Ok((d, s)),
            _ => Err(ControlError::NotFound(format!("unknown value set {vs}"))),
        }
    }

    pub(super) fn write_value_set(
        &self,
        vs: ValueSetId,
        members: &[Vec<FieldMatch>],
    ) -> ControlResult<(Applied, Change)> {
        let old = self.read_value_set(vs)?;
        let (def, set) = self.value_set_of(vs)?;
        if members.len() > def.size as usize {
            return Err(ControlError::ResourceExhausted(format!(
                "value set {} holds at most {} members",
                def.name, def.size
            )));
        }
        let mut new = Vec::with_capacity(members.len());
        for m in members {
            if m.len() != def.widths.len() {
                return Err(invalid(format!(
                    "value set {} has {} components, {} matches given",
                    def.name,
                    def.widths.len(),
                    m.len()
                )));
            }
            let mut comps = Vec::with_capacity(m.len());
            for (f, &w) in m.iter().zip(&def.widths) {
                if w > 64 {
                    return Err(ControlError::Unimplemented(format!(
                        "value set {}: components wider than 64 bits",
                        def.name
                    )));
                }
                let full = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                let val = |v: &[u8]| -> ControlResult<u64> {
                    if !fits(v, w) {
                        return Err(ControlError::OutOfRange(format!(
                            "value set {}: value does not fit {w} bits",
                            def.name
                        )));
                    }
                    Ok(v.iter()
                        .fold(0u64, |a, b| a.wrapping_shl(8) | u64::from(*b)))
                };
                comps.push(match f {
                    FieldMatch::Exact(v) => (val(v)?, full),
                    FieldMatch::Ternary(v, m) => {
                        let (v, m) = (val(v)?, val(m)?);
                        if v & !m != 0 {
                            return Err(invalid(format!(
                                "value set {}: value has bits outside the mask",
                                def.name
                            )));
                        }
                        (v, m)
                    }
                    _ => {
                        return Err(invalid(format!(
                            "value set {}: members are exact or ternary matches",
                            def.name
                        )))
                    }
                });
            }
            new.push(comps);
        }
        *set.write().unwrap_or_else(PoisonError::into_inner) = new;
        Ok((
            self.applied(),
            Change::ValueSet {
                set: vs,
                members: old,
            },
        ))
    }
}
