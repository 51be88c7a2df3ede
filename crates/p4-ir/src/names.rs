//! Control-plane ids and aliases, allocated as p4c allocates them, so that a controller written
//! against p4c's P4Info of a program works unchanged against nevermiss (P4Runtime spec v1.5
//! §"P4Info objects": an id's top byte is the object type, the low 24 bits identify it).
//!
//! p4c's rule (`control-plane/p4RuntimeSymbolTable.cpp`, facts only): ids given by `@id` are
//! taken first (their type prefix added when missing); then, type by type, the remaining names
//! in sorted order get `prefix << 24 | (jenkins_one_at_a_time(name) & 0xffffff)`, probing to
//! the next free value on a collision. The alias of a name is its shortest suffix of
//! dot-separated components that no other name (of any type) shares.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// P4Info object types (`p4.config.v1.P4Ids.Prefix`): the top byte of their ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// An action.
    Action = 0x01,
    /// A table.
    Table = 0x02,
    /// A parser value set.
    ValueSet = 0x03,
    /// A controller header (`@controller_header`: `packet_in`, `packet_out`).
    ControllerHeader = 0x04,
    /// An action profile or selector.
    ActionProfile = 0x11,
    /// An indexed counter.
    Counter = 0x12,
    /// A direct counter.
    DirectCounter = 0x13,
    /// An indexed meter.
    Meter = 0x14,
    /// A direct meter.
    DirectMeter = 0x15,
    /// A register.
    Register = 0x16,
    /// A digest.
    Digest = 0x17,
}

impl Kind {
    /// The kind an id's top byte names, if any.
    pub fn of_id(id: u32) -> Option<Kind> {
        Some(match id >> 24 {
            0x01 => Kind::Action,
            0x02 => Kind::Table,
            0x03 => Kind::ValueSet,
            0x04 => Kind::ControllerHeader,
            0x11 => Kind::ActionProfile,
            0x12 => Kind::Counter,
            0x13 => Kind::DirectCounter,
            0x14 => Kind::Meter,
            0x15 => Kind::DirectMeter,
            0x16 => Kind::Register,
            0x17 => Kind::Digest,
            _ => return None,
        })
    }
}

/// Bob Jenkins' one-at-a-time hash of the bytes of `s` (the hash p4c uses for ids).
pub fn jenkins_one_at_a_time(s: &str) -> u32 {
    let mut h: u32 = 0;
    for &b in s.as_bytes() {
        h = h.wrapping_add(u32::from(b));
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

/// Why ids cannot be given as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdError {
    /// The `@id` of `name` cannot be used.
    AtId {
        /// The declaration's control-plane name.
        name: String,
        /// What is wrong with its `@id`.
        fault: AtIdFault,
    },
    /// Two names were given the same `@id`.
    Repeated(u32),
    /// Every id of the name's kind is taken.
    Exhausted(String),
}

/// What is wrong with an `@id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtIdFault {
    /// Beyond 32 bits.
    Wide(u64),
    /// Its top byte names another kind of object.
    Prefix(u32),
    /// 0 (below the kind's prefix).
    Zero,
}

impl std::fmt::Display for IdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdError::AtId { name, fault } => match fault {
                AtIdFault::Wide(v) => write!(f, "{name}: @id {v} does not fit 32 bits"),
                AtIdFault::Prefix(v) => write!(f, "{name}: @id {v:#x} has the wrong 8-bit prefix"),
                AtIdFault::Zero => write!(f, "{name}: @id 0 is not a valid id"),
            },
            IdError::Repeated(id) => write!(f, "@id {id} is assigned to multiple declarations"),
            IdError::Exhausted(name) => write!(f, "no id left for {name}"),
        }
    }
}

impl std::error::Error for IdError {}

/// Collects the control-plane names of a program and allocates their ids and aliases.
#[derive(Default, Debug)]
pub struct Symbols {
    /// Per kind: name → `@id` (prefix added) if one was given.
    names: BTreeMap<Kind, BTreeMap<String, Option<u32>>>,
}

/// The result of [`Symbols::allocate`].
#[derive(Default, Debug, Clone)]
pub struct Allocation {
    ids: HashMap<(Kind, String), u32>,
    aliases: HashMap<String, String>,
}

impl Symbols {
    /// Adds a name of a kind, with its `@id` if it has one. A name added twice keeps its first
    /// id (p4c deduplicates the same way). Errors for an `@id` whose top byte names another
    /// kind, or an `@id` of 0.
    pub fn add(&mut self, kind: Kind, name: &str, at_id: Option<u64>) -> Result<(), IdError> {
        let id = match at_id {
            None => None,
            Some(v) => {
                let fault = |fault| IdError::AtId {
                    name: name.to_string(),
                    fault,
                };
                let v = u32::try_from(v).map_err(|_| fault(AtIdFault::Wide(v)))?;
                let prefix = (kind as u32) << 24;
                if v & 0xff00_0000 != 0 && v & 0xff00_0000 != prefix {
                    return Err(fault(AtIdFault::Prefix(v)));
                }
                if v & 0x00ff_ffff == 0 {
                    return Err(fault(AtIdFault::Zero));
                }
                Some(v | prefix)
            }
        };
        self.names
            .entry(kind)
            .or_default()
            .entry(name.to_string())
            .or_insert(id);
        Ok(())
    }

    /// Allocates every id and alias. Errors when two names were given the same `@id`.
    pub fn allocate(&self) -> Result<Allocation, IdError> {
        let mut assigned: BTreeSet<u32> = BTreeSet::new();
        let mut ids = HashMap::new();
        for (kind, names) in &self.names {
            for (name, id) in names {
                if let Some(id) = id {
                    if !assigned.insert(*id) {
                        return Err(IdError::Repeated(*id));
                    }
                    ids.insert((*kind, name.clone()), *id);
                }
            }
        }
        for (kind, names) in &self.names {
            let prefix = (*kind as u32) << 24;
            // Sorted (BTreeMap): the id a name gets depends on the names probed before it.
            for (name, id) in names {
                if id.is_some() {
                    continue;
                }
                let start = jenkins_one_at_a_time(name);
                let mut v = start;
                let id = loop {
                    let id = prefix | (v & 0x00ff_ffff);
                    if !assigned.contains(&id) {
                        break id;
                    }
                    v = v.wrapping_add(1);
                    if v == start {
                        return Err(IdError::Exhausted(name.clone()));
                    }
                };
                assigned.insert(id);
                ids.insert((*kind, name.clone()), id);
            }
        }
        let all: BTreeSet<&str> = self
            .names
            .values()
            .flat_map(|m| m.keys().map(String::as_str))
            .collect();
        Ok(Allocation {
            ids,
            aliases: shortest_unique_suffixes(&all),
        })
    }
}

impl Allocation {
    /// The id of a name of a kind.
    pub fn id(&self, kind: Kind, name: &str) -> Option<u32> {
        self.ids.get(&(kind, name.to_string())).copied()
    }

    /// The alias of a name (its shortest unique dot-separated suffix).
    pub fn alias(&self, name: &str) -> String {
        self.aliases
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }
}

/// For every name, the fewest trailing dot-separated components that no other name ends with.
fn shortest_unique_suffixes(names: &BTreeSet<&str>) -> HashMap<String, String> {
    // How many names end with each suffix (components from the right).
    let mut count: HashMap<Vec<&str>, u32> = HashMap::new();
    for n in names {
        let comps: Vec<&str> = n.split('.').rev().collect();
        for k in 1..=comps.len() {
            *count.entry(comps[..k].to_vec()).or_default() += 1;
        }
    }
    let mut out = HashMap::new();
    for n in names {
        let comps: Vec<&str> = n.split('.').rev().collect();
        let mut k = 1;
        while k < comps.len() && count.get(&comps[..k]).copied().unwrap_or(0) >= 2 {
            k += 1;
        }
        let mut suffix: Vec<&str> = comps[..k].to_vec();
        suffix.reverse();
        out.insert(n.to_string(), suffix.join("."));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids and aliases of p4c's P4Info of its sample action_profile-bmv2.p4 (read from
    /// p4c's expected output; facts, not code).
    #[test]
    fn ids_as_p4c_allocates_them() {
        let mut s = Symbols::default();
        s.add(Kind::Table, "IngressI.indirect", None).unwrap();
        s.add(Kind::Table, "IngressI.indirect_ws", None).unwrap();
        s.add(Kind::Action, "NoAction", None).unwrap();
        s.add(Kind::ActionProfile, "ap", None).unwrap();
        s.add(Kind::ActionProfile, "ap_ws", None).unwrap();
        let a = s.allocate().unwrap();
        assert_eq!(a.id(Kind::Table, "IngressI.indirect"), Some(46872340));
        assert_eq!(a.id(Kind::Table, "IngressI.indirect_ws"), Some(38116258));
        assert_eq!(a.id(Kind::Action, "NoAction"), Some(21257015));
        assert_eq!(a.id(Kind::ActionProfile, "ap"), Some(294074782));
        assert_eq!(a.id(Kind::ActionProfile, "ap_ws"), Some(300324846));
        assert_eq!(a.alias("IngressI.indirect"), "indirect");
    }

    #[test]
    fn at_id_and_collisions() {
        let mut s = Symbols::default();
        s.add(Kind::Table, "a", Some(5)).unwrap();
        assert!(s.add(Kind::Table, "b", Some(0x0100_0001)).is_err());
        let a = s.allocate().unwrap();
        assert_eq!(a.id(Kind::Table, "a"), Some(0x0200_0005));
        let mut s = Symbols::default();
        s.add(Kind::Table, "a", Some(5)).unwrap();
        s.add(Kind::Table, "b", Some(5)).unwrap();
        assert!(s.allocate().is_err());
        // A name whose hash lands on a taken id probes to the next one.
        let h = jenkins_one_at_a_time("x") & 0xff_ffff;
        let mut s = Symbols::default();
        s.add(Kind::Table, "y", Some(u64::from(h))).unwrap();
        s.add(Kind::Table, "x", None).unwrap();
        let a = s.allocate().unwrap();
        assert_eq!(a.id(Kind::Table, "x"), Some(0x0200_0000 | (h + 1)));
    }

    #[test]
    fn aliases_are_shortest_unique_suffixes() {
        let names: BTreeSet<&str> = ["d.a.c", "e.b.c", "c.x", "top"].into_iter().collect();
        let a = shortest_unique_suffixes(&names);
        assert_eq!(a["d.a.c"], "a.c");
        assert_eq!(a["e.b.c"], "b.c");
        assert_eq!(a["c.x"], "x");
        assert_eq!(a["top"], "top");
    }
}
