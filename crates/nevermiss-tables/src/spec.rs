//! Table descriptions, the packed key layout, and match specifications.
//!
//! Key layout (the contract with the interpreter): every key field of width `w` bits occupies
//! `ceil(w / 8)` bytes holding the value big-endian and right-aligned (the unused high bits of the
//! first byte are zero); the fields are concatenated in the order of the table's `key` property
//! (P4_16 §14.2.1.1). A 9-bit field holding 0x1ab followed by a 16-bit field holding 0x0800 is the
//! key `[0x01, 0xab, 0x08, 0x00]`.

use crate::action::ActionData;
use crate::error::TableError;

/// Match kind of one key field (P4_16 §14.2.1.1, plus PNA/PSA `range` and `optional`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// The field must equal the entry's value.
    Exact,
    /// Longest prefix match.
    Lpm,
    /// Value and mask: `key & mask == value & mask`.
    Ternary,
    /// Inclusive range `lo <= key <= hi`.
    Range,
    /// Either exact or wildcard (P4Runtime `optional`).
    Optional,
}

/// One key field.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeySpec {
    /// Name, for messages and control-plane views.
    pub name: String,
    /// Width in bits.
    pub width_bits: u32,
    /// Match kind.
    pub kind: MatchKind,
}

impl KeySpec {
    /// Field `name` of `width_bits` bits matched with `kind`.
    pub fn new(name: impl Into<String>, width_bits: u32, kind: MatchKind) -> Self {
        KeySpec {
            name: name.into(),
            width_bits,
            kind,
        }
    }

    /// Bytes the field takes in a packed key: `ceil(width_bits / 8)`.
    pub fn byte_len(&self) -> usize {
        (self.width_bits as usize).div_ceil(8)
    }
}

/// Idle-timeout mode of a table (PNA `pna_idle_timeout`, PNA §"Table entry idle timeout").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IdleTimeout {
    /// No per-entry idle time is kept; lookups pay nothing for expiry.
    #[default]
    NoTimeout,
    /// Idle entries are reported once per idle period by [`crate::Table::expire`] and kept.
    NotifyControl,
    /// Idle entries are removed silently; a data-plane lookup misses an entry once its deadline
    /// has passed, even before [`crate::Table::expire`] reclaims it.
    AutoDelete,
}

/// Which structure a table whose fields are all exact uses (docs/tables.md, "Structures").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ExactEngine {
    /// A direct array indexed by the key for keys of 1 or 2 bytes, the cuckoo hash otherwise.
    #[default]
    Auto,
    /// The cuckoo hash whatever the key (to compare the engines in tests and benchmarks).
    Hash,
    /// The direct array; a `BadSpec` error for a key of more than 2 bytes (or none).
    Direct,
}

/// Description of a table, as the compiler derives it from the P4 program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSpec {
    /// Fully qualified table name.
    pub name: String,
    /// Key fields in key order. An empty key makes a table that always misses (P4_16 §14.2.1.1).
    pub keys: Vec<KeySpec>,
    /// Maximum number of entries (`size` property). Memory for all of them is allocated once.
    pub size: usize,
    /// PNA `add_on_miss`: the data plane may insert entries. Requires all key fields `exact`.
    pub add_on_miss: bool,
    /// PNA `pna_idle_timeout`.
    pub idle_timeout: IdleTimeout,
    /// Largest parameter block (bytes) of any action of the table; entries are sized for it.
    pub max_params_bytes: usize,
    /// The structure of an exact table ([`ExactEngine::Auto`] unless a test or benchmark
    /// wants a particular one); ignored by other tables.
    pub exact_engine: ExactEngine,
    /// The data plane writes entries (PNA `@__ref` write-backs,
    /// [`crate::Table::update_params`]; timer restarts, [`crate::Table::restart_timer`]):
    /// updates of one word of parameters and restarts then skip the cell lock, and what must
    /// exclude them (a modify, a delete; a batch of expiries, once) waits for a process-wide
    /// barrier instead (`hazard.rs`, docs/tables.md "Data-plane updates without a lock"). Not
    /// for ternary or LPM tables with an idle timeout. Off: every update takes the lock;
    /// modifies and deletes never wait.
    pub data_plane_updates: bool,
}

/// Largest table accepted (entries); protects against absurd `size` values.
pub const MAX_TABLE_SIZE: usize = 1 << 28;

impl TableSpec {
    /// A table without add-on-miss and idle timeout, with room for 64 bytes of parameters.
    pub fn new(name: impl Into<String>, keys: Vec<KeySpec>, size: usize) -> Self {
        TableSpec {
            name: name.into(),
            keys,
            size,
            add_on_miss: false,
            idle_timeout: IdleTimeout::NoTimeout,
            max_params_bytes: 64,
            exact_engine: ExactEngine::Auto,
            data_plane_updates: false,
        }
    }

    /// Sets `add_on_miss`.
    pub fn with_add_on_miss(mut self, on: bool) -> Self {
        self.add_on_miss = on;
        self
    }

    /// Sets the idle-timeout mode.
    pub fn with_idle_timeout(mut self, t: IdleTimeout) -> Self {
        self.idle_timeout = t;
        self
    }

    /// Sets the structure of an exact table (see [`ExactEngine`]).
    pub fn with_exact_engine(mut self, e: ExactEngine) -> Self {
        self.exact_engine = e;
        self
    }

    /// Sets `data_plane_updates`.
    pub fn with_data_plane_updates(mut self, on: bool) -> Self {
        self.data_plane_updates = on;
        self
    }

    /// Sets the largest action-parameter block.
    pub fn with_max_params_bytes(mut self, n: usize) -> Self {
        self.max_params_bytes = n;
        self
    }

    /// Whether entries carry an explicit priority: true iff some field is ternary, range or
    /// optional (P4Runtime spec §9.1, "priority"). LPM-only tables derive priority from the prefix.
    pub fn has_priority(&self) -> bool {
        self.keys.iter().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        })
    }

    /// Bytes of a packed key.
    pub fn key_len(&self) -> usize {
        self.keys.iter().map(KeySpec::byte_len).sum()
    }

    /// Whether every field is exact (the table uses the hash engine).
    pub fn is_exact(&self) -> bool {
        self.keys.iter().all(|k| k.kind == MatchKind::Exact)
    }

    pub(crate) fn validate(&self) -> Result<(), TableError> {
        if self.size > MAX_TABLE_SIZE {
            return Err(TableError::BadSpec(format!(
                "size {} exceeds the limit of {MAX_TABLE_SIZE} entries",
                self.size
            )));
        }
        if self.max_params_bytes > u32::MAX as usize / 2 {
            return Err(TableError::BadSpec("max_params_bytes is too large".into()));
        }
        if self.keys.iter().any(|k| k.width_bits > 1 << 16) {
            return Err(TableError::BadSpec(
                "key field wider than 65536 bits".into(),
            ));
        }
        if self.exact_engine == ExactEngine::Direct
            && !(self.is_exact() && (1..=2).contains(&self.key_len()))
        {
            return Err(TableError::BadSpec(
                "a direct table needs exact fields packed in 1 or 2 bytes".into(),
            ));
        }
        if self.add_on_miss && !self.is_exact() {
            return Err(TableError::BadSpec(
                "add_on_miss tables must have only exact key fields".into(),
            ));
        }
        if !self.has_priority()
            && self
                .keys
                .iter()
                .filter(|k| k.kind == MatchKind::Lpm)
                .count()
                > 1
        {
            return Err(TableError::BadSpec(
                "a table without ternary, range or optional fields may have at most one lpm field"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// Match of one key field in a control-plane entry. Values are big-endian, at most
/// `ceil(width/8)` bytes (shorter values are zero-extended on the left, as P4Runtime's
/// canonical byte strings are).
///
/// `Exact(v)` is accepted for fields of every kind and means "exactly v" (full prefix, full
/// mask, `v..=v`, or `Some(v)`), as P4_16 const entries allow plain values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldMatch {
    /// Exact value.
    Exact(Vec<u8>),
    /// Value and prefix length in bits; bits past the prefix are ignored.
    Lpm(Vec<u8>, u32),
    /// Value and mask; value bits outside the mask are ignored (P4_16 §14.2.1.4 `&&&`).
    Ternary(Vec<u8>, Vec<u8>),
    /// Inclusive bounds.
    Range(Vec<u8>, Vec<u8>),
    /// `Some(v)` matches exactly `v`, `None` matches anything.
    Optional(Option<Vec<u8>>),
}

/// Precomputed per-field offsets.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub key_len: usize,
    /// (offset, byte_len, top-byte mask) per field.
    pub fields: Vec<(usize, usize, u8)>,
    /// Indices of range fields.
    pub range_fields: Vec<usize>,
    /// Bytes of stored range bounds per entry: sum over range fields of 2 * byte_len.
    pub range_len: usize,
}

impl Layout {
    pub fn new(spec: &TableSpec) -> Layout {
        let mut off = 0;
        let mut fields = Vec::with_capacity(spec.keys.len());
        let mut range_fields = Vec::new();
        let mut range_len = 0;
        for (i, k) in spec.keys.iter().enumerate() {
            let n = k.byte_len();
            let rem = k.width_bits % 8;
            let top = if rem == 0 { 0xff } else { (1u8 << rem) - 1 };
            fields.push((off, n, top));
            if k.kind == MatchKind::Range {
                range_fields.push(i);
                range_len += 2 * n;
            }
            off += n;
        }
        Layout {
            key_len: off,
            fields,
            range_fields,
            range_len,
        }
    }
}

/// A match spec in the table's internal form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Compiled {
    /// Masked value bytes (range fields: the leading bits both bounds share).
    pub key: Vec<u8>,
    /// Mask bytes (range fields: a prefix mask of the bits both bounds share); all ones for
    /// exact fields.
    pub mask: Vec<u8>,
    /// lo, hi per range field, in field order.
    pub ranges: Vec<u8>,
    /// Total prefix length of lpm fields (the implicit priority of lpm tables).
    pub prefix_len: u32,
}

fn field_value((_, n, top): (usize, usize, u8), i: usize, v: &[u8]) -> Result<Vec<u8>, TableError> {
    let bad = |reason| TableError::BadKey {
        field: Some(i),
        reason,
    };
    if v.len() > n {
        // Accept redundant leading zero bytes, reject real overflow.
        let extra = v.len() - n;
        if v[..extra].iter().any(|&b| b != 0) {
            return Err(bad("value is wider than the field"));
        }
        return field_value((0, n, top), i, &v[extra..]);
    }
    let mut out = vec![0u8; n];
    out[n - v.len()..].copy_from_slice(v);
    if n > 0 && out[0] & !top != 0 {
        return Err(bad("value is wider than the field"));
    }
    Ok(out)
}

/// [`field_value`] appended to `out`.
fn push_field_value(
    out: &mut Vec<u8>,
    f: (usize, usize, u8),
    i: usize,
    v: &[u8],
) -> Result<(), TableError> {
    let (_, n, top) = f;
    let bad = || TableError::BadKey {
        field: Some(i),
        reason: "value is wider than the field",
    };
    // Redundant leading zero bytes are accepted, real overflow is not.
    let v = if v.len() > n {
        let extra = v.len() - n;
        if v[..extra].iter().any(|&b| b != 0) {
            return Err(bad());
        }
        &v[extra..]
    } else {
        v
    };
    let start = out.len();
    out.resize(start + n - v.len(), 0);
    out.extend_from_slice(v);
    if n > 0 && out[start] & !top != 0 {
        out.truncate(start);
        return Err(bad());
    }
    Ok(())
}

/// Mask bytes for a prefix of `plen` bits of a field of `width` bits in `n` bytes.
pub(crate) fn prefix_mask(width: u32, n: usize, plen: u32) -> Vec<u8> {
    let pad = n as u32 * 8 - width;
    let mut m = vec![0u8; n];
    for bit in pad..pad + plen {
        m[(bit / 8) as usize] |= 0x80 >> (bit % 8);
    }
    m
}

/// Number of leading bits (of a `width`-bit field stored right-aligned in `lo.len()` bytes) that
/// `lo` and `hi` share. Every value between them shares these bits too, so a range entry is
/// indexed under the prefix of its bounds (its tuple's mask on the field is that prefix): a lookup
/// meets only the ranges inside the key's prefix block, not all ranges of the table.
fn common_prefix(width: u32, lo: &[u8], hi: &[u8]) -> u32 {
    let pad = lo.len() as u32 * 8 - width;
    let mut bits = 0;
    for (a, b) in lo.iter().zip(hi) {
        let x = a ^ b;
        if x != 0 {
            bits += x.leading_zeros();
            return bits.saturating_sub(pad);
        }
        bits += 8;
    }
    width
}

/// Full mask of a field.
fn full_mask(n: usize, top: u8) -> Vec<u8> {
    let mut m = vec![0xffu8; n];
    if n > 0 {
        m[0] = top;
    }
    m
}

/// The key (and, `with_mask`, the mask: tables indexed by exact keys alone need none) of a
/// match spec.
pub(crate) fn compile(
    spec: &TableSpec,
    layout: &Layout,
    matches: &[FieldMatch],
    with_mask: bool,
) -> Result<Compiled, TableError> {
    if spec.keys.is_empty() {
        return Err(TableError::BadKey {
            field: None,
            reason: "table has no key",
        });
    }
    if matches.len() != spec.keys.len() {
        return Err(TableError::BadKey {
            field: None,
            reason: "number of field matches differs from the number of key fields",
        });
    }
    let mut c = Compiled {
        key: Vec::with_capacity(layout.key_len),
        mask: Vec::with_capacity(if with_mask { layout.key_len } else { 0 }),
        ranges: Vec::with_capacity(layout.range_len),
        prefix_len: 0,
    };
    for (i, ((ks, &f), m)) in spec
        .keys
        .iter()
        .zip(&layout.fields)
        .zip(matches)
        .enumerate()
    {
        let (_, n, top) = f;
        let bad = |reason| TableError::BadKey {
            field: Some(i),
            reason,
        };
        // A plain value (exact, or exactly `v` of another kind) is written straight into the
        // key: it needs no masking and no temporary.
        if let (MatchKind::Optional, FieldMatch::Optional(Some(v)))
        | (MatchKind::Exact | MatchKind::Ternary | MatchKind::Optional, FieldMatch::Exact(v)) =
            (ks.kind, m)
        {
            push_field_value(&mut c.key, f, i, v)?;
            if with_mask && n > 0 {
                c.mask.push(top);
                c.mask.resize(c.mask.len() + n - 1, 0xff);
            }
            continue;
        }
        let (value, mask) = match (ks.kind, m) {
            (MatchKind::Range, FieldMatch::Range(lo, hi)) => {
                let lo = field_value(f, i, lo)?;
                let hi = field_value(f, i, hi)?;
                if lo > hi {
                    return Err(bad("range low bound is above the high bound"));
                }
                c.ranges.extend_from_slice(&lo);
                c.ranges.extend_from_slice(&hi);
                let mask = prefix_mask(ks.width_bits, n, common_prefix(ks.width_bits, &lo, &hi));
                (lo, mask)
            }
            (MatchKind::Range, FieldMatch::Exact(v)) => {
                let v = field_value(f, i, v)?;
                c.ranges.extend_from_slice(&v);
                c.ranges.extend_from_slice(&v);
                (v, full_mask(n, top))
            }
            (MatchKind::Lpm, FieldMatch::Lpm(v, plen)) => {
                if *plen > ks.width_bits {
                    return Err(bad("prefix length exceeds the field width"));
                }
                c.prefix_len += plen;
                (field_value(f, i, v)?, prefix_mask(ks.width_bits, n, *plen))
            }
            (MatchKind::Lpm, FieldMatch::Exact(v)) => {
                c.prefix_len += ks.width_bits;
                (field_value(f, i, v)?, full_mask(n, top))
            }
            (MatchKind::Ternary, FieldMatch::Ternary(v, m)) => {
                (field_value(f, i, v)?, field_value(f, i, m)?)
            }
            (MatchKind::Optional, FieldMatch::Optional(None)) => (vec![0; n], vec![0; n]),
            (MatchKind::Optional, FieldMatch::Optional(Some(v))) | (_, FieldMatch::Exact(v)) => {
                (field_value(f, i, v)?, full_mask(n, top))
            }
            _ => return Err(bad("match kind differs from the field's match kind")),
        };
        c.key.extend(value.iter().zip(&mask).map(|(v, m)| v & m));
        if with_mask {
            c.mask.extend_from_slice(&mask);
        }
    }
    Ok(c)
}

/// Rebuilds the control-plane view of a stored entry's match.
pub(crate) fn decompile(
    spec: &TableSpec,
    layout: &Layout,
    key: &[u8],
    mask: Option<&[u8]>,
    ranges: &[u8],
) -> Vec<FieldMatch> {
    let mut out = Vec::with_capacity(spec.keys.len());
    let mut r = 0;
    for (ks, &(off, n, _)) in spec.keys.iter().zip(&layout.fields) {
        let v = key[off..off + n].to_vec();
        let m = mask.map(|m| &m[off..off + n]);
        out.push(match ks.kind {
            MatchKind::Exact => FieldMatch::Exact(v),
            MatchKind::Lpm => {
                let plen = m.map_or(ks.width_bits, |m| m.iter().map(|b| b.count_ones()).sum());
                FieldMatch::Lpm(v, plen)
            }
            MatchKind::Ternary => {
                FieldMatch::Ternary(v, m.map_or_else(|| vec![0xff; n], <[u8]>::to_vec))
            }
            MatchKind::Optional => {
                if m.is_some_and(|m| m.iter().all(|&b| b == 0)) {
                    FieldMatch::Optional(None)
                } else {
                    FieldMatch::Optional(Some(v))
                }
            }
            MatchKind::Range => {
                let lo = ranges[r..r + n].to_vec();
                let hi = ranges[r + n..r + 2 * n].to_vec();
                r += 2 * n;
                FieldMatch::Range(lo, hi)
            }
        });
    }
    out
}

/// Control-plane view of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView {
    /// Id of the entry (valid until it is deleted).
    pub id: crate::EntryHandle,
    /// Stored key bytes (values masked; range fields: the leading bits both bounds share, the
    /// rest zero).
    pub key: Vec<u8>,
    /// Match spec, in canonical form.
    pub matches: Vec<FieldMatch>,
    /// Priority (0 for tables without priority).
    pub priority: u32,
    /// Action and parameters.
    pub data: ActionData,
    /// Version: 0 when inserted, incremented by every control-plane modify (data-plane updates
    /// keep it).
    pub version: u64,
    /// Expire profile id, for tables with an idle timeout.
    pub expire_profile: Option<u8>,
    /// Deadline in ns of the caller's clock, if the entry has a running timer.
    pub deadline_ns: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kinds: &[(u32, MatchKind)]) -> TableSpec {
        TableSpec::new(
            "t",
            kinds
                .iter()
                .enumerate()
                .map(|(i, &(w, k))| KeySpec::new(format!("f{i}"), w, k))
                .collect(),
            16,
        )
    }

    #[test]
    fn layout_packs_big_endian_right_aligned() {
        let s = spec(&[(9, MatchKind::Exact), (16, MatchKind::Exact)]);
        let l = Layout::new(&s);
        assert_eq!(l.key_len, 4);
        assert_eq!(l.fields, vec![(0, 2, 0x01), (2, 2, 0xff)]);
        let c = compile(
            &s,
            &l,
            &[
                FieldMatch::Exact(vec![1, 0xab]),
                FieldMatch::Exact(vec![8, 0]),
            ],
            true,
        )
        .unwrap();
        assert_eq!(c.key, vec![0x01, 0xab, 0x08, 0x00]);
        assert!(compile(
            &s,
            &l,
            &[FieldMatch::Exact(vec![2, 0]), FieldMatch::Exact(vec![0])],
            true
        )
        .is_err());
        // short values are zero-extended, redundant leading zeros accepted
        let c2 = compile(
            &s,
            &l,
            &[
                FieldMatch::Exact(vec![0, 1, 0xab]),
                FieldMatch::Exact(vec![8, 0]),
            ],
            true,
        );
        assert_eq!(c2.unwrap().key, c.key);
    }

    #[test]
    fn range_bounds_share_a_prefix() {
        assert_eq!(common_prefix(16, &[0x12, 0x34], &[0x12, 0x34]), 16);
        assert_eq!(common_prefix(16, &[0x12, 0x00], &[0x12, 0xff]), 8);
        assert_eq!(common_prefix(16, &[0x00, 0x00], &[0xff, 0xff]), 0);
        assert_eq!(common_prefix(12, &[0x01, 0x00], &[0x01, 0x0f]), 8);
        assert_eq!(common_prefix(12, &[0x00, 0x00], &[0x08, 0x00]), 0);
        assert_eq!(common_prefix(12, &[0x00, 0x00], &[0x04, 0x00]), 1);
        assert_eq!(common_prefix(32, &[10, 0, 0, 0], &[10, 0, 1, 0]), 23);
    }

    #[test]
    fn prefix_masks() {
        assert_eq!(prefix_mask(32, 4, 8), vec![0xff, 0, 0, 0]);
        assert_eq!(prefix_mask(32, 4, 0), vec![0, 0, 0, 0]);
        assert_eq!(prefix_mask(12, 2, 4), vec![0x0f, 0]);
        assert_eq!(prefix_mask(12, 2, 12), vec![0x0f, 0xff]);
    }

    #[test]
    fn compile_rejects_bad_input() {
        let s = spec(&[(8, MatchKind::Lpm), (8, MatchKind::Range)]);
        let l = Layout::new(&s);
        let e = compile(
            &s,
            &l,
            &[FieldMatch::Lpm(vec![1], 9), FieldMatch::Exact(vec![1])],
            true,
        );
        assert!(matches!(e, Err(TableError::BadKey { field: Some(0), .. })));
        let e = compile(
            &s,
            &l,
            &[
                FieldMatch::Lpm(vec![1], 8),
                FieldMatch::Range(vec![5], vec![4]),
            ],
            true,
        );
        assert!(matches!(e, Err(TableError::BadKey { field: Some(1), .. })));
        let e = compile(
            &s,
            &l,
            &[
                FieldMatch::Ternary(vec![1], vec![1]),
                FieldMatch::Exact(vec![1]),
            ],
            true,
        );
        assert!(matches!(e, Err(TableError::BadKey { field: Some(0), .. })));
        assert!(compile(&s, &l, &[], true).is_err());
    }

    #[test]
    fn decompile_round_trips() {
        let s = spec(&[
            (8, MatchKind::Exact),
            (12, MatchKind::Lpm),
            (16, MatchKind::Ternary),
            (8, MatchKind::Range),
            (8, MatchKind::Optional),
            (8, MatchKind::Optional),
        ]);
        let l = Layout::new(&s);
        let m = vec![
            FieldMatch::Exact(vec![7]),
            FieldMatch::Lpm(vec![0x0a, 0x00], 5),
            FieldMatch::Ternary(vec![0x12, 0x30], vec![0xff, 0xf0]),
            FieldMatch::Range(vec![3], vec![9]),
            FieldMatch::Optional(None),
            FieldMatch::Optional(Some(vec![4])),
        ];
        let c = compile(&s, &l, &m, true).unwrap();
        assert_eq!(decompile(&s, &l, &c.key, Some(&c.mask), &c.ranges), m);
    }
}
