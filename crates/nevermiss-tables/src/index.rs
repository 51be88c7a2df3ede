//! The match index: which slot (if any) a key selects. Mutated only under the table's write lock,
//! read under its read lock.
//!
//! One structure serves every match kind, a tuple-space search (Srinivasan, Suri, Varghese,
//! SIGCOMM'99): entries are grouped into *tuples* by their mask (per-field value/prefix/ternary
//! masks; range fields are masked out and checked afterwards); one open-addressing hash table
//! (linear probing, backward-shift deletion, 32-bit tags) maps `(tuple, key & mask)` to a chain of
//! entries sorted by (priority descending, insertion order ascending). A lookup visits tuples in
//! order of their highest priority and stops as soon as no remaining tuple can beat the best match.
//!
//! Exact tables do not use this index: they have the lock-free engine of [`crate::exact`].
//!
//! - lpm tables: one tuple per prefix length, priority = prefix length, so the first hit in
//!   longest-first order wins and at most `width + 1` probes are made;
//! - ternary/range/optional tables: one tuple per distinct mask, priority given by the user.
//!
//! The bucket array holds at least `4/3 * size` buckets, so every table accepts inserts up to 100%
//! of its declared size and probe sequences stay short (load factor ≤ 0.75).

use std::collections::{BTreeMap, HashMap};

use crate::cell::alloc_slice;
use crate::error::TableError;
use crate::hash::{hash, hash_small, load_small, masked_eq};
use crate::spec::{Compiled, Layout};
use crate::wheel::NIL;

struct Tuple {
    mask: Box<[u8]>,
    /// Mask is all ones: compare keys without masking.
    full: bool,
    /// `load_small(mask)` for keys of at most 8 bytes.
    mask_word: u64,
    seed: u64,
    count: usize,
    prios: BTreeMap<u32, u32>,
    max_prio: u32,
}

pub(crate) struct Index {
    key_len: usize,
    range_len: usize,
    /// (key offset, bytes) of each range field.
    range_fields: Vec<(usize, usize)>,
    seed: u64,
    keys: Box<[u8]>,
    used: Box<[bool]>,
    // Tuple-space state (empty slices for exact tables).
    ranges: Box<[u8]>,
    tuple_of: Box<[u32]>,
    prio: Box<[u32]>,
    seq: Box<[u64]>,
    next: Box<[u32]>,
    tuples: Vec<Option<Tuple>>,
    free_tuples: Vec<u32>,
    order: Vec<u32>,
    by_mask: HashMap<Box<[u8]>, u32>,
    next_seq: u64,
    // Hash table: (tag << 32) | (slot + 1), 0 = empty.
    buckets: Box<[u64]>,
    bmask: usize,
    free: Vec<u32>,
    len: usize,
}

impl Index {
    pub fn new(size: usize, layout: &Layout, seed: u64) -> Result<Index, TableError> {
        let key_len = layout.key_len;
        let nb = (size + size / 3 + 1).max(8).next_power_of_two();
        let tsize = size;
        let mut free = Vec::new();
        free.try_reserve_exact(size)
            .map_err(|_| TableError::OutOfMemory)?;
        free.extend((0..size as u32).rev());
        Ok(Index {
            key_len,
            range_len: layout.range_len,
            range_fields: layout
                .range_fields
                .iter()
                .map(|&i| (layout.fields[i].0, layout.fields[i].1))
                .collect(),
            seed,
            keys: alloc_slice(
                size.checked_mul(key_len).ok_or(TableError::OutOfMemory)?,
                || 0,
            )?,
            used: alloc_slice(size, || false)?,
            ranges: alloc_slice(
                tsize
                    .checked_mul(layout.range_len)
                    .ok_or(TableError::OutOfMemory)?,
                || 0,
            )?,
            tuple_of: alloc_slice(tsize, || NIL)?,
            prio: alloc_slice(tsize, || 0)?,
            seq: alloc_slice(tsize, || 0)?,
            next: alloc_slice(tsize, || NIL)?,
            tuples: Vec::new(),
            free_tuples: Vec::new(),
            order: Vec::new(),
            by_mask: HashMap::new(),
            next_seq: 0,
            buckets: alloc_slice(nb, || 0)?,
            bmask: nb - 1,
            free,
            len: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held by the index (arrays and tuple metadata, approximately for the maps).
    pub fn bytes(&self) -> usize {
        self.keys.len()
            + self.used.len()
            + self.ranges.len()
            + 4 * (self.tuple_of.len() + self.prio.len() + self.next.len())
            + 8 * (self.seq.len() + self.buckets.len())
            + 4 * self.free.capacity()
            + self
                .tuples
                .iter()
                .flatten()
                .map(|t| std::mem::size_of::<Tuple>() + 2 * t.mask.len() + 32 * t.prios.len())
                .sum::<usize>()
    }

    #[inline]
    pub fn key(&self, s: u32) -> &[u8] {
        let o = s as usize * self.key_len;
        &self.keys[o..o + self.key_len]
    }

    pub fn ranges(&self, s: u32) -> &[u8] {
        let o = s as usize * self.range_len;
        &self.ranges[o..o + self.range_len]
    }

    /// Mask of the entry's tuple; `None` for exact tables.
    pub fn mask(&self, s: u32) -> Option<&[u8]> {
        self.tuples[self.tuple_of[s as usize] as usize]
            .as_ref()
            .map(|t| &*t.mask)
    }

    /// Stored priority (prefix length for lpm tables, 0 for exact tables).
    pub fn prio(&self, s: u32) -> u32 {
        self.prio[s as usize]
    }

    pub fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.used
            .iter()
            .enumerate()
            .filter(|(_, &u)| u)
            .map(|(i, _)| i as u32)
    }

    pub fn is_used(&self, s: u32) -> bool {
        self.used.get(s as usize).copied().unwrap_or(false)
    }

    // ----- hash table -----

    #[inline]
    fn probe(&self, h: u64, mut eq: impl FnMut(u32) -> bool) -> Option<(usize, u32)> {
        let tag = h >> 32;
        let mut i = tag as usize & self.bmask;
        loop {
            let e = self.buckets[i];
            if e == 0 {
                return None;
            }
            if e >> 32 == tag {
                let s = (e as u32).wrapping_sub(1);
                if eq(s) {
                    return Some((i, s));
                }
            }
            i = (i + 1) & self.bmask;
        }
    }

    fn bucket_insert(&mut self, h: u64, s: u32) {
        let tag = h >> 32;
        let mut i = tag as usize & self.bmask;
        while self.buckets[i] != 0 {
            i = (i + 1) & self.bmask;
        }
        self.buckets[i] = (tag << 32) | (s as u64 + 1);
    }

    fn bucket_set(&mut self, pos: usize, s: u32) {
        self.buckets[pos] = (self.buckets[pos] & !0xffff_ffff) | (s as u64 + 1);
    }

    /// Backward-shift deletion: keeps every probe sequence gap-free without tombstones.
    fn bucket_remove(&mut self, mut i: usize) {
        let m = self.bmask;
        loop {
            self.buckets[i] = 0;
            let mut j = i;
            loop {
                j = (j + 1) & m;
                let e = self.buckets[j];
                if e == 0 {
                    return;
                }
                let home = (e >> 32) as usize & m;
                // e may move to i iff its home is not cyclically within (i, j].
                let movable = if i <= j {
                    home <= i || home > j
                } else {
                    home <= i && home > j
                };
                if movable {
                    self.buckets[i] = e;
                    i = j;
                    break;
                }
            }
        }
    }

    // ----- lookups -----

    /// Best-matching slot for a packed key of the right length.
    #[inline]
    pub fn lookup(&self, key: &[u8]) -> Option<u32> {
        if (1..=8).contains(&self.key_len) {
            return self.lookup_small(key);
        }
        let mut best: Option<(u32, u64, u32)> = None;
        for &tid in &self.order {
            let Some(t) = &self.tuples[tid as usize] else {
                continue;
            };
            if best.is_some_and(|(bp, _, _)| t.max_prio < bp) {
                break;
            }
            let m = if t.full { None } else { Some(&*t.mask) };
            let h = hash(key, m, t.seed);
            let Some((_, mut s)) = self.probe(h, |s| {
                self.tuple_of[s as usize] == tid && masked_eq(self.key(s), key, m)
            }) else {
                continue;
            };
            loop {
                let (p, q) = (self.prio[s as usize], self.seq[s as usize]);
                if best.is_some_and(|(bp, bq, _)| p < bp || (p == bp && q > bq)) {
                    break;
                }
                if self.range_ok(s, key) {
                    best = Some((p, q, s));
                    break;
                }
                s = self.next[s as usize];
                if s == NIL {
                    break;
                }
            }
        }
        best.map(|b| b.2)
    }

    /// [`Index::lookup`] for keys of at most 8 bytes: the key is loaded into one word once, and
    /// each tuple costs a mask, a two-multiply hash and the probe.
    #[inline]
    fn lookup_small(&self, key: &[u8]) -> Option<u32> {
        let kw = load_small(key);
        let n = self.key_len;
        let mut best: Option<(u32, u64, u32)> = None;
        for &tid in &self.order {
            let Some(t) = &self.tuples[tid as usize] else {
                continue;
            };
            if best.is_some_and(|(bp, _, _)| t.max_prio < bp) {
                break;
            }
            let w = kw & t.mask_word;
            let h = hash_small(w, n, t.seed);
            let Some((_, mut s)) = self.probe(h, |s| {
                self.tuple_of[s as usize] == tid && load_small(self.key(s)) == w
            }) else {
                continue;
            };
            loop {
                let (p, q) = (self.prio[s as usize], self.seq[s as usize]);
                if best.is_some_and(|(bp, bq, _)| p < bp || (p == bp && q > bq)) {
                    break;
                }
                if self.range_ok(s, key) {
                    best = Some((p, q, s));
                    break;
                }
                s = self.next[s as usize];
                if s == NIL {
                    break;
                }
            }
        }
        best.map(|b| b.2)
    }

    #[inline]
    fn range_ok(&self, s: u32, key: &[u8]) -> bool {
        let r = self.ranges(s);
        let mut o = 0;
        for &(off, n) in &self.range_fields {
            let k = &key[off..off + n];
            if k < &r[o..o + n] || k > &r[o + n..o + 2 * n] {
                return false;
            }
            o += 2 * n;
        }
        true
    }

    /// The slot holding exactly this match spec and priority.
    pub fn find_entry(&self, c: &Compiled, prio: u32) -> Option<u32> {
        let tid = *self.by_mask.get(&c.mask[..])?;
        let t = self.tuples[tid as usize].as_ref()?;
        let h = hash(&c.key, None, t.seed);
        let (_, mut s) = self.probe(h, |s| {
            self.tuple_of[s as usize] == tid && self.key(s) == &c.key[..]
        })?;
        loop {
            if self.prio[s as usize] == prio && self.ranges(s) == &c.ranges[..] {
                return Some(s);
            }
            s = self.next[s as usize];
            if s == NIL {
                return None;
            }
        }
    }

    // ----- mutation -----

    pub fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }

    fn write_key(&mut self, s: u32, key: &[u8]) {
        let o = s as usize * self.key_len;
        self.keys[o..o + self.key_len].copy_from_slice(key);
        self.used[s as usize] = true;
        self.len += 1;
    }

    /// Links allocated slot `s` for a compiled match known to be absent (see `find_entry`).
    pub fn insert(&mut self, s: u32, c: &Compiled, prio: u32) {
        let tid = self.tuple_for(&c.mask);
        self.write_key(s, &c.key);
        let si = s as usize;
        let ro = si * self.range_len;
        self.ranges[ro..ro + self.range_len].copy_from_slice(&c.ranges);
        self.tuple_of[si] = tid;
        self.prio[si] = prio;
        self.seq[si] = self.next_seq;
        self.next_seq += 1;
        let seed = self.tuples[tid as usize].as_ref().map_or(0, |t| t.seed);
        let h = hash(&c.key, None, seed);
        match self.probe(h, |x| {
            self.tuple_of[x as usize] == tid && self.key(x) == &c.key[..]
        }) {
            None => {
                self.next[si] = NIL;
                self.bucket_insert(h, s);
            }
            Some((pos, head)) => {
                if prio > self.prio[head as usize] {
                    self.next[si] = head;
                    self.bucket_set(pos, s);
                } else {
                    let mut p = head;
                    loop {
                        let n = self.next[p as usize];
                        if n == NIL || self.prio[n as usize] < prio {
                            break;
                        }
                        p = n;
                    }
                    self.next[si] = self.next[p as usize];
                    self.next[p as usize] = s;
                }
            }
        }
        if let Some(t) = self.tuples[tid as usize].as_mut() {
            t.count += 1;
            *t.prios.entry(prio).or_insert(0) += 1;
            if t.count == 1 || prio > t.max_prio {
                t.max_prio = prio;
                self.sort_order();
            }
        }
    }

    fn tuple_for(&mut self, mask: &[u8]) -> u32 {
        if let Some(&t) = self.by_mask.get(mask) {
            return t;
        }
        let tid = match self.free_tuples.pop() {
            Some(t) => t,
            None => {
                self.tuples.push(None);
                (self.tuples.len() - 1) as u32
            }
        };
        let seed = self.seed ^ (tid as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.tuples[tid as usize] = Some(Tuple {
            mask: mask.into(),
            full: self.range_fields.is_empty() && mask.iter().all(|&b| b == 0xff),
            mask_word: if mask.len() <= 8 { load_small(mask) } else { 0 },
            seed,
            count: 0,
            prios: BTreeMap::new(),
            max_prio: 0,
        });
        self.by_mask.insert(mask.into(), tid);
        self.order.push(tid);
        tid
    }

    fn sort_order(&mut self) {
        let tuples = &self.tuples;
        self.order.sort_by_key(|&t| {
            std::cmp::Reverse(tuples[t as usize].as_ref().map_or(0, |t| t.max_prio))
        });
    }

    /// Unlinks live slot `s` and returns it to the free list.
    pub fn remove(&mut self, s: u32) {
        if !self.is_used(s) {
            return;
        }
        let si = s as usize;
        {
            let tid = self.tuple_of[si];
            let seed = self.tuples[tid as usize].as_ref().map_or(0, |t| t.seed);
            let h = hash(self.key(s), None, seed);
            let key = self.key(s);
            if let Some((pos, head)) = self.probe(h, |x| {
                self.tuple_of[x as usize] == tid && self.key(x) == key
            }) {
                if head == s {
                    let n = self.next[si];
                    if n == NIL {
                        self.bucket_remove(pos);
                    } else {
                        self.bucket_set(pos, n);
                    }
                } else {
                    let mut p = head;
                    while self.next[p as usize] != s && self.next[p as usize] != NIL {
                        p = self.next[p as usize];
                    }
                    if self.next[p as usize] == s {
                        self.next[p as usize] = self.next[si];
                    }
                }
            }
            self.next[si] = NIL;
            self.tuple_of[si] = NIL;
            let prio = self.prio[si];
            let mut drop_tuple = false;
            if let Some(t) = self.tuples[tid as usize].as_mut() {
                t.count -= 1;
                if let Some(c) = t.prios.get_mut(&prio) {
                    *c -= 1;
                    if *c == 0 {
                        t.prios.remove(&prio);
                    }
                }
                if t.count == 0 {
                    drop_tuple = true;
                } else {
                    let m = t.prios.keys().next_back().copied().unwrap_or(0);
                    if m != t.max_prio {
                        t.max_prio = m;
                        self.sort_order();
                    }
                }
            }
            if drop_tuple {
                if let Some(t) = self.tuples[tid as usize].take() {
                    self.by_mask.remove(&t.mask);
                }
                self.order.retain(|&x| x != tid);
                self.free_tuples.push(tid);
            }
        }
        self.used[si] = false;
        self.len -= 1;
        self.free.push(s);
    }

    /// Number of tuples a lookup may visit.
    pub fn tuple_count(&self) -> usize {
        self.order.len()
    }
}
