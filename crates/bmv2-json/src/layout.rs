//! Header types and instances, header stacks, unions and union stacks, laid out in the frame as
//! the P4 lowering lays out the same program (p4-ir's frame contract): a header is its validity
//! word then its fields; a stack is its `nextIndex` word then its elements; a union is its
//! member headers in order. Metadata instances (`"metadata": true`) take the same shape, but are
//! always valid (BMv2 never invalidates metadata).
//!
//! The regions follow the v1model blocks' parameters: the headers (non-metadata instances, in
//! the order of `headers`), then `standard_metadata` (with the instances `field_aliases` point
//! into, so that the aliases of older JSON resolve), then the user metadata (every other
//! metadata instance, p4c's `scalars` among them). PSA's `psa_*` metadata instances are
//! regions of their own instead of `standard_metadata` ([`crate::psa`]).

use crate::json::{Result, J};
use crate::Builder;
use p4_ir::*;
use std::collections::HashMap;

pub use p4_ir::{relocate, TEMP_BASE};

/// Largest frame accepted (words), as for source programs.
pub const MAX_FRAME_WORDS: u32 = 1 << 24;

/// A header type.
#[derive(Clone, Debug)]
pub struct HType {
    pub name: String,
    pub fields: Vec<HField>,
    pub ir: HeaderId,
    /// Words of an instance, validity word included.
    pub words: u32,
}

/// A field of a header type.
#[derive(Clone, Debug)]
pub struct HField {
    pub name: String,
    pub ty: Ty,
    /// `Some(max bits)` for a variable-length field (`"*"`).
    pub varbit: Option<u32>,
    /// Word offset from the validity word.
    pub off: u32,
}

/// A header (or metadata) instance.
#[derive(Clone, Debug)]
pub struct Inst {
    pub name: String,
    pub ty: usize,
    pub metadata: bool,
    /// Its validity word (set once laid out).
    pub loc: u32,
    /// The union it is a member of, and its position there.
    pub union: Option<(usize, usize)>,
    /// The stack it is an element of, and its index there.
    pub stack: Option<(usize, u32)>,
}

/// A header stack or a header union stack.
#[derive(Clone, Debug)]
pub struct Stack {
    pub name: String,
    /// The `nextIndex` word; element `i` starts at `loc + 1 + i * elem_words`.
    pub loc: u32,
    pub size: u32,
    pub elem_words: u32,
    pub elem: StackElem,
    /// Element instances (headers, or unions for a union stack), by index.
    pub members: Vec<usize>,
    /// The header type of a header stack's elements.
    pub hty: Option<usize>,
    /// The union type of a union stack's elements.
    pub uty: Option<usize>,
}

/// A header union type: member names and header types.
#[derive(Clone, Debug)]
pub struct UnionType {
    pub name: String,
    pub members: Vec<(String, usize)>,
}

/// A header union instance.
#[derive(Clone, Debug)]
pub struct Union {
    pub name: String,
    pub ty: usize,
    /// Member header instances, in the union type's order.
    pub members: Vec<usize>,
    /// The first member's validity word.
    pub loc: u32,
    /// The union stack it is an element of, and its index there.
    pub stack: Option<(usize, u32)>,
}

/// A frame region passed to the blocks: where it starts, its words and its layout.
#[derive(Clone, Debug, Default)]
pub struct Region {
    pub base: u32,
    pub layout: Option<Layout>,
}

/// What the document declares, and where it lies in the frame.
#[derive(Default)]
pub struct Layouts {
    pub types: Vec<HType>,
    pub type_by_name: HashMap<String, usize>,
    pub insts: Vec<Inst>,
    pub inst_by_name: HashMap<String, usize>,
    pub inst_by_id: HashMap<i64, usize>,
    pub stacks: Vec<Stack>,
    pub stack_by_name: HashMap<String, usize>,
    pub union_types: Vec<UnionType>,
    pub union_type_by_name: HashMap<String, usize>,
    pub unions: Vec<Union>,
    pub union_by_name: HashMap<String, usize>,
    pub union_by_id: HashMap<i64, usize>,
    /// The block parameter regions: headers, standard metadata, user metadata.
    pub hdr: Region,
    pub sm: Region,
    pub meta: Region,
    /// PSA: further metadata instances as their own regions, by instance name.
    pub regions: HashMap<String, Region>,
}

impl Layouts {
    pub fn inst(&self, name: &str) -> Option<&Inst> {
        self.inst_by_name.get(name).map(|i| &self.insts[*i])
    }

    /// The header reference of an instance.
    pub fn hdr_ref(&self, i: usize) -> HdrRef {
        let inst = &self.insts[i];
        HdrRef {
            loc: Loc::at(inst.loc),
            layout: self.types[inst.ty].ir,
        }
    }

    /// The validity words of the other members of an instance's union, relative to its own.
    pub fn union_others(&self, i: usize) -> Vec<i32> {
        let inst = &self.insts[i];
        match inst.union {
            Some((u, _)) => self.unions[u]
                .members
                .iter()
                .filter(|m| **m != i)
                .map(|m| self.insts[*m].loc as i32 - inst.loc as i32)
                .collect(),
            None => Vec::new(),
        }
    }
}

impl<'a> Builder<'a> {
    /// `header_types`: one IR header layout per type.
    pub(crate) fn header_types(&mut self, root: &J<'a>) -> Result<()> {
        for t in root.list("header_types")? {
            let name = t.str_of("name")?.to_string();
            if self.lay.type_by_name.contains_key(&name) {
                return Err(t.err(format!("header type {name} is declared twice")));
            }
            let mut fields = Vec::new();
            let mut irf = Vec::new();
            let mut off = 1u32;
            let mut bits = 0u64;
            let fl = t.get("fields")?.arr()?;
            let mut vl_seen = false;
            for f in &fl {
                let fname = f.at(0)?.str()?.to_string();
                let wj = f.at(1)?;
                // BMv2 reads the flag with jsoncpp's asBool: p4c writes `0` for bool fields.
                let signed = match f.at(2) {
                    Ok(s) => match s.v.as_i64() {
                        Some(n) => n != 0,
                        None => s.bool()?,
                    },
                    Err(_) => false,
                };
                if let Ok(sat) = f.at(3) {
                    if sat.bool()? {
                        return Err(sat.unsupported("saturating fields"));
                    }
                }
                if wj.v.as_str() == Some("*") {
                    if vl_seen {
                        return Err(wj.err("a header type has at most one variable-length field"));
                    }
                    vl_seen = true;
                    let Some(ml) = t.opt("max_length") else {
                        return Err(t.unsupported(
                            "a variable-length field without the header's \"max_length\"",
                        ));
                    };
                    let max_bytes = ml.u32()?;
                    // max_length counts the whole header; the field gets what the fixed fields
                    // leave (computed once all fields are known).
                    fields.push(HField {
                        name: fname.clone(),
                        ty: Ty::bits(max_bytes.saturating_mul(8)),
                        varbit: Some(max_bytes.saturating_mul(8)),
                        off,
                    });
                    irf.push(FieldLayout {
                        name: fname,
                        off,
                        ty: Ty::bits(0),
                        varbit: Some(0),
                    });
                    off += 1;
                    continue;
                }
                let w = wj.u32()?;
                if w == 0 || w > 65_536 {
                    return Err(wj.unsupported(format!("a field of {w} bits")));
                }
                let ty = Ty { width: w, signed };
                fields.push(HField {
                    name: fname.clone(),
                    ty,
                    varbit: None,
                    off,
                });
                irf.push(FieldLayout {
                    name: fname,
                    off,
                    ty,
                    varbit: None,
                });
                off += ty.words();
                bits += u64::from(w);
            }
            // Give the variable-length field its maximum, and the words it takes.
            if let Some(vi) = fields.iter().position(|f| f.varbit.is_some()) {
                let total = fields[vi].varbit.unwrap_or(0);
                let max = u64::from(total).saturating_sub(bits);
                if max == 0 || max % 8 != 0 {
                    return Err(t.err(format!(
                        "max_length leaves {max} bits for the variable-length field"
                    )));
                }
                let max = max as u32;
                let extra = max.div_ceil(64).max(1);
                fields[vi].ty = Ty::bits(max);
                fields[vi].varbit = Some(max);
                irf[vi].ty = Ty::bits(max);
                irf[vi].varbit = Some(max);
                for f in fields.iter_mut().skip(vi + 1) {
                    f.off += extra;
                }
                for f in irf.iter_mut().skip(vi + 1) {
                    f.off += extra;
                }
                off += extra;
            }
            let ir = self.p.headers.len() as HeaderId;
            self.p.headers.push(HeaderLayout {
                name: name.clone(),
                fields: irf,
                words: off,
                fixed_bits: bits,
            });
            self.lay
                .type_by_name
                .insert(name.clone(), self.lay.types.len());
            self.lay.types.push(HType {
                name,
                fields,
                ir,
                words: off,
            });
        }
        Ok(())
    }

    /// `headers`, `header_stacks`, `header_union_types`, `header_unions`, `header_union_stacks`:
    /// the instances, then their places in the frame.
    pub(crate) fn instances(&mut self, root: &J<'a>) -> Result<()> {
        let hs = root.list("headers")?;
        for h in &hs {
            let name = h.str_of("name")?.to_string();
            let tn = h.str_of("header_type")?;
            let Some(&ty) = self.lay.type_by_name.get(tn) else {
                return Err(h
                    .get("header_type")?
                    .err(format!("unknown header type {tn}")));
            };
            let id = h.int_of("id")?;
            let metadata = h.bool_or("metadata", false)?;
            let idx = self.lay.insts.len();
            if self.lay.inst_by_name.insert(name.clone(), idx).is_some() {
                return Err(h.err(format!("header {name} is declared twice")));
            }
            if self.lay.inst_by_id.insert(id, idx).is_some() {
                return Err(h.err(format!("two headers have the id {id}")));
            }
            self.lay.insts.push(Inst {
                name,
                ty,
                metadata,
                loc: 0,
                union: None,
                stack: None,
            });
        }
        // Union types and unions.
        for u in root.list("header_union_types")? {
            let name = u.str_of("name")?.to_string();
            let mut members = Vec::new();
            for m in u.list("headers")? {
                let mn = m.at(0)?.str()?.to_string();
                let tn = m.at(1)?.str()?;
                let Some(&ty) = self.lay.type_by_name.get(tn) else {
                    return Err(m.err(format!("unknown header type {tn}")));
                };
                members.push((mn, ty));
            }
            self.lay
                .union_type_by_name
                .insert(name.clone(), self.lay.union_types.len());
            self.lay.union_types.push(UnionType { name, members });
        }
        for u in root.list("header_unions")? {
            let name = u.str_of("name")?.to_string();
            let tn = u.str_of("union_type")?;
            let Some(&ty) = self.lay.union_type_by_name.get(tn) else {
                return Err(u.err(format!("unknown header union type {tn}")));
            };
            let ui = self.lay.unions.len();
            let mut members = Vec::new();
            for (k, hid) in u.list("header_ids")?.iter().enumerate() {
                let i = self.inst_of_id(hid)?;
                if self.lay.insts[i].union.is_some() {
                    return Err(hid.err("a header is a member of two unions"));
                }
                self.lay.insts[i].union = Some((ui, k));
                members.push(i);
            }
            if members.len() != self.lay.union_types[ty].members.len() {
                return Err(u.err("the union's headers do not match its type"));
            }
            self.lay.union_by_name.insert(name.clone(), ui);
            self.lay.union_by_id.insert(u.int_of("id")?, ui);
            self.lay.unions.push(Union {
                name,
                ty,
                members,
                loc: 0,
                stack: None,
            });
        }
        // Stacks.
        for s in root.list("header_stacks")? {
            let name = s.str_of("name")?.to_string();
            let tn = s.str_of("header_type")?;
            let Some(&ty) = self.lay.type_by_name.get(tn) else {
                return Err(s.err(format!("unknown header type {tn}")));
            };
            let si = self.lay.stacks.len();
            let mut members = Vec::new();
            for (k, hid) in s.list("header_ids")?.iter().enumerate() {
                let i = self.inst_of_id(hid)?;
                if self.lay.insts[i].ty != ty {
                    return Err(hid.err("a stack element of another header type"));
                }
                if self.lay.insts[i].stack.is_some() || self.lay.insts[i].union.is_some() {
                    return Err(hid.err("a header in two stacks or unions"));
                }
                self.lay.insts[i].stack = Some((si, k as u32));
                members.push(i);
            }
            if members.is_empty() {
                return Err(s.unsupported("an empty header stack"));
            }
            let ew = self.lay.types[ty].words;
            self.lay.stack_by_name.insert(name.clone(), si);
            self.lay.stacks.push(Stack {
                name,
                loc: 0,
                size: members.len() as u32,
                elem_words: ew,
                elem: StackElem::Header(self.lay.types[ty].ir),
                members,
                hty: Some(ty),
                uty: None,
            });
        }
        for s in root.list("header_union_stacks")? {
            let name = s.str_of("name")?.to_string();
            let tn = s.str_of("union_type")?;
            let Some(&uty) = self.lay.union_type_by_name.get(tn) else {
                return Err(s.err(format!("unknown header union type {tn}")));
            };
            let si = self.lay.stacks.len();
            let mut members = Vec::new();
            for (k, uid) in s.list("header_union_ids")?.iter().enumerate() {
                let id = uid.int()?;
                let Some(&u) = self.lay.union_by_id.get(&id) else {
                    return Err(uid.err(format!("no header union has the id {id}")));
                };
                if self.lay.unions[u].stack.is_some() || self.lay.unions[u].ty != uty {
                    return Err(uid.err("a union in two stacks, or of another type"));
                }
                self.lay.unions[u].stack = Some((si, k as u32));
                members.push(u);
            }
            if members.is_empty() {
                return Err(s.unsupported("an empty header union stack"));
            }
            let mut offs = Vec::new();
            let mut ew = 0;
            for (_, ht) in &self.lay.union_types[uty].members {
                offs.push((ew, self.lay.types[*ht].ir));
                ew += self.lay.types[*ht].words;
            }
            self.lay.stack_by_name.insert(name.clone(), si);
            self.lay.stacks.push(Stack {
                name,
                loc: 0,
                size: members.len() as u32,
                elem_words: ew,
                elem: StackElem::Union(offs),
                members,
                hty: None,
                uty: Some(uty),
            });
        }
        self.place_instances(root)
    }

    fn inst_of_id(&self, j: &J<'a>) -> Result<usize> {
        let id = j.int()?;
        self.lay
            .inst_by_id
            .get(&id)
            .copied()
            .ok_or_else(|| j.err(format!("no header has the id {id}")))
    }

    /// Lays the instances out: headers, standard metadata, user metadata.
    fn place_instances(&mut self, root: &J<'a>) -> Result<()> {
        let n = self.lay.insts.len();
        let mut placed = vec![false; n];
        // Headers (with their stacks and unions).
        let hdr_base = self.state_words;
        let mut hdr_fields: Vec<(String, u32, Layout)> = Vec::new();
        for i in 0..n {
            if placed[i] || self.lay.insts[i].metadata {
                continue;
            }
            let inst = self.lay.insts[i].clone();
            let union_stack = inst.union.and_then(|(u, _)| self.lay.unions[u].stack);
            if let Some((s, _)) = union_stack.or(inst.stack) {
                let st = self.lay.stacks[s].clone();
                let loc = self.alloc_state(1 + st.size * st.elem_words, root)?;
                self.lay.stacks[s].loc = loc;
                for (k, m) in st.members.iter().enumerate() {
                    let at = loc + 1 + k as u32 * st.elem_words;
                    if st.uty.is_some() {
                        self.lay.unions[*m].loc = at;
                        let mut o = at;
                        for h in self.lay.unions[*m].members.clone() {
                            self.lay.insts[h].loc = o;
                            placed[h] = true;
                            o += self.lay.types[self.lay.insts[h].ty].words;
                        }
                    } else {
                        self.lay.insts[*m].loc = at;
                        placed[*m] = true;
                    }
                }
                let elem = match &st.elem {
                    StackElem::Union(ms) => Layout::Union(
                        ms.iter()
                            .zip(&self.lay.union_types[st.uty.unwrap_or(0)].members)
                            .map(|((o, h), (n, _))| (n.clone(), *o, *h))
                            .collect(),
                    ),
                    StackElem::Header(h) => Layout::Header(*h),
                    StackElem::Other => Layout::Struct(Vec::new()),
                };
                hdr_fields.push((
                    st.name.clone(),
                    loc - hdr_base,
                    Layout::Stack {
                        elem: Box::new(elem),
                        size: st.size,
                        elem_words: st.elem_words,
                    },
                ));
            } else if let Some((u, _)) = inst.union {
                let un = self.lay.unions[u].clone();
                let words: u32 = un
                    .members
                    .iter()
                    .map(|h| self.lay.types[self.lay.insts[*h].ty].words)
                    .sum();
                let loc = self.alloc_state(words, root)?;
                self.lay.unions[u].loc = loc;
                let mut o = loc;
                let mut ms = Vec::new();
                for (k, h) in un.members.iter().enumerate() {
                    self.lay.insts[*h].loc = o;
                    placed[*h] = true;
                    let t = &self.lay.types[self.lay.insts[*h].ty];
                    ms.push((
                        self.lay.union_types[un.ty].members[k].0.clone(),
                        o - loc,
                        t.ir,
                    ));
                    o += t.words;
                }
                hdr_fields.push((un.name.clone(), loc - hdr_base, Layout::Union(ms)));
            } else {
                let t = &self.lay.types[inst.ty];
                let (w, ir) = (t.words, t.ir);
                let loc = self.alloc_state(w, root)?;
                self.lay.insts[i].loc = loc;
                placed[i] = true;
                hdr_fields.push((inst.name.clone(), loc - hdr_base, Layout::Header(ir)));
            }
        }
        self.lay.hdr = Region {
            base: hdr_base,
            layout: Some(Layout::Struct(hdr_fields)),
        };
        // Metadata instances that are stack or union members are not supported.
        for i in 0..n {
            let inst = &self.lay.insts[i];
            if inst.metadata && (inst.union.is_some() || inst.stack.is_some()) {
                return Err(root.unsupported(format!(
                    "metadata instance {} in a stack or union",
                    inst.name
                )));
            }
        }
        self.place_metadata(root, &placed)
    }

    /// The standard metadata region (v1model; PSA's `psa_*` instances each get their own
    /// region, [`crate::psa`] binds them to the blocks) and the user metadata region.
    fn place_metadata(&mut self, root: &J<'a>, placed: &[bool]) -> Result<()> {
        let n = self.lay.insts.len();
        // The instances field aliases point into go with standard_metadata.
        let mut sm_insts: Vec<usize> = Vec::new();
        if let Some(i) = self.lay.inst_by_name.get("standard_metadata") {
            sm_insts.push(*i);
        }
        let mut aliases: Vec<(String, String, String)> = Vec::new();
        for a in root.list("field_aliases")? {
            let from = a.at(0)?.str()?.to_string();
            let to = a.at(1)?;
            let (h, f) = (to.at(0)?.str()?.to_string(), to.at(1)?.str()?.to_string());
            match self.lay.inst_by_name.get(&h) {
                Some(&i) if self.lay.insts[i].metadata => {
                    if !sm_insts.contains(&i) {
                        sm_insts.push(i);
                    }
                }
                _ => return Err(to.err(format!("a field alias to {h}.{f}, not a metadata field"))),
            }
            aliases.push((from, h, f));
        }
        let mut placed = placed.to_vec();
        if self.p.arch == Arch::Psa {
            // psa_switch's metadata instances (`psa_ingress_input_metadata`, ...): one region
            // each, bound to the blocks' standard metadata parameters ([`crate::psa`]).
            let psa: Vec<usize> = (0..n)
                .filter(|&i| !placed[i] && self.lay.insts[i].name.starts_with("psa_"))
                .collect();
            for i in psa {
                let (name, ty) = (self.lay.insts[i].name.clone(), self.lay.insts[i].ty);
                let loc = self.alloc_state(self.lay.types[ty].words, root)?;
                self.lay.insts[i].loc = loc;
                let layout = fields_layout(&self.lay.types[ty], 0);
                self.lay.regions.insert(
                    name,
                    Region {
                        base: loc,
                        layout: Some(layout),
                    },
                );
                placed[i] = true;
            }
        }
        let sm_base = self.state_words;
        let mut sm_placed: Vec<usize> = Vec::new();
        let mut sm_fields: Vec<(String, u32, Layout)> = Vec::new();
        for &i in &sm_insts {
            let ty = self.lay.insts[i].ty;
            let loc = self.alloc_state(self.lay.types[ty].words, root)?;
            self.lay.insts[i].loc = loc;
            sm_placed.push(i);
            if let Layout::Struct(fs) = fields_layout(&self.lay.types[ty], loc - sm_base) {
                sm_fields.extend(fs);
            }
        }
        // Aliases: BMv2's names for the fields (`intrinsic_metadata.mcast_grp` → the field the
        // program calls so), findable by the runtime under their last component.
        for (from, h, f) in &aliases {
            let Some(short) = from.rsplit('.').next() else {
                continue;
            };
            if sm_fields.iter().any(|x| x.0 == short) {
                continue;
            }
            if let Some((loc, ty)) = self.field_place(h, f) {
                if loc >= sm_base {
                    sm_fields.push((short.to_string(), loc - sm_base, Layout::Scalar(ty)));
                }
            }
        }
        self.lay.sm = Region {
            base: sm_base,
            layout: Some(Layout::Struct(sm_fields)),
        };
        let meta_base = self.state_words;
        let mut meta_fields = Vec::new();
        for i in (0..n).filter(|i| !placed[*i] && !sm_placed.contains(i)) {
            let ty = self.lay.insts[i].ty;
            let loc = self.alloc_state(self.lay.types[ty].words, root)?;
            self.lay.insts[i].loc = loc;
            meta_fields.push((
                self.lay.insts[i].name.clone(),
                loc - meta_base,
                fields_layout(&self.lay.types[ty], 0),
            ));
        }
        self.lay.meta = Region {
            base: meta_base,
            layout: Some(Layout::Struct(meta_fields)),
        };
        Ok(())
    }

    /// The word and type of a field of an instance (fixed-width fields).
    pub(crate) fn field_place(&self, h: &str, f: &str) -> Option<(u32, Ty)> {
        let inst = self.lay.inst(h)?;
        let t = &self.lay.types[inst.ty];
        let fl = t.fields.iter().find(|x| x.name == f)?;
        if fl.varbit.is_some() {
            return None;
        }
        Some((inst.loc + fl.off, fl.ty))
    }
}

/// The fields of a header type as a struct layout (offsets from the validity word, plus
/// `base`).
pub fn fields_layout(t: &HType, base: u32) -> Layout {
    Layout::Struct(
        t.fields
            .iter()
            .map(|f| {
                let l = match f.varbit {
                    Some(m) => Layout::Varbit(m),
                    None => Layout::Scalar(f.ty),
                };
                (f.name.clone(), base + f.off, l)
            })
            .collect(),
    )
}
