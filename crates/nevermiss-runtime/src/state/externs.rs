//! Extern state shared by all workers (counters, meters, registers, action profiles) and the
//! hash and checksum algorithms (as BMv2 defines `crc16`, `crc32`, `csum16`, `xor16`,
//! `identity`).
//!
//! Everything here is `Send + Sync`: counters and register cells are atomics, meters are
//! small mutex-protected token buckets.

use super::profiles::ActionProfile;
use p4_ir::HashAlgo;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// State of an extern instance.
pub(crate) enum RtExtern {
    Counter(Box<[CounterCell]>),
    /// Indexed by the entry's slot; the last cell counts nothing (misses).
    DirectCounter(Box<[CounterCell]>),
    Meter(Box<[Mutex<Meter>]>),
    DirectMeter(Box<[Mutex<Meter>]>),
    Register(RegisterStore),
    /// Stateless at switch level (hash, checksums, random, digests, profiles).
    None,
}

/// The state of a program's extern instances, by extern index (`Program::externs`).
pub(crate) struct Externs {
    cells: Vec<RtExtern>,
    /// Action profiles and selectors (`None` for other externs).
    profiles: Vec<Option<ActionProfile>>,
    /// The next id of PNA's `allocate_flow_id`.
    flow_ids: AtomicU32,
}

impl Externs {
    /// The externs' cells and profiles, in extern order.
    pub(crate) fn new(cells: Vec<RtExtern>, profiles: Vec<Option<ActionProfile>>) -> Externs {
        Externs {
            cells,
            profiles,
            flow_ids: AtomicU32::new(1),
        }
    }

    /// The state of extern `x`.
    #[inline]
    pub(crate) fn get(&self, x: u32) -> Option<&RtExtern> {
        self.cells.get(x as usize)
    }

    /// The cells of direct counter `x`, by entry slot.
    #[inline]
    pub(crate) fn direct_counter(&self, x: u32) -> Option<&[CounterCell]> {
        match self.get(x)? {
            RtExtern::DirectCounter(c) => Some(c),
            _ => None,
        }
    }

    /// The cells of direct meter `x`, by entry slot.
    #[inline]
    pub(crate) fn direct_meter(&self, x: u32) -> Option<&[Mutex<Meter>]> {
        match self.get(x)? {
            RtExtern::DirectMeter(c) => Some(c),
            _ => None,
        }
    }

    /// Action profile or selector `x`.
    #[inline]
    pub(crate) fn profile(&self, x: u32) -> Option<&ActionProfile> {
        self.profiles.get(x as usize)?.as_ref()
    }

    /// PNA's `allocate_flow_id`: a new id, counting from 1.
    #[inline]
    pub(crate) fn next_flow_id(&self) -> u32 {
        self.flow_ids.fetch_add(1, Relaxed)
    }
}

/// One counter cell: packets and bytes.
#[derive(Default, Debug)]
pub struct CounterCell {
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
}

impl CounterCell {
    #[inline]
    pub fn count(&self, packets: u64, bytes: u64) {
        self.packets.fetch_add(packets, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
    }

    pub fn reset(&self) {
        self.packets.store(0, Relaxed);
        self.bytes.store(0, Relaxed);
    }

    /// (packets, bytes).
    pub fn read(&self) -> (u64, u64) {
        (self.packets.load(Relaxed), self.bytes.load(Relaxed))
    }
}

/// Allocates `n` counter cells (zeroed).
pub fn counters(n: usize) -> Box<[CounterCell]> {
    (0..n).map(|_| CounterCell::default()).collect()
}

/// Meter colors, in the canonical order used between the interpreter and the meters.
pub const GREEN: usize = 0;
pub const YELLOW: usize = 1;
pub const RED: usize = 2;

/// A two-rate three-color marker (RFC 2698), rates in units per microsecond (as BMv2's
/// `meter_set_rates`). Unconfigured meters mark everything green. It counts the packets and
/// bytes it marks with each color (P4Runtime §9.5 "MeterCounterData": "whenever a meter is
/// executed and returns a color, the corresponding color counter is updated").
#[derive(Debug, Default, Clone)]
pub struct Meter {
    /// (committed rate, committed burst, peak rate, peak burst), or `None`.
    pub rates: Option<(f64, u64, f64, u64)>,
    /// The configuration as the control plane wrote it, in its own units (P4Runtime
    /// `MeterConfig`: cir, cburst, pir, pburst), for reading back exactly.
    pub config: Option<[u64; 4]>,
    /// Per color (`GREEN`, `YELLOW`, `RED`): packets and bytes marked with it.
    pub counts: [[u64; 2]; 3],
    tc: f64,
    tp: f64,
    last_ns: u64,
}

impl Meter {
    /// Sets the rates; buckets start full. The color counts are kept.
    pub fn configure(&mut self, cir: f64, cbs: u64, pir: f64, pbs: u64) {
        self.rates = Some((cir, cbs, pir, pbs));
        self.tc = cbs as f64;
        self.tp = pbs as f64;
        self.last_ns = 0;
    }

    /// Back to the unconfigured meter (everything green); the color counts are kept.
    pub fn unconfigure(&mut self) {
        *self = Meter {
            counts: self.counts,
            ..Meter::default()
        };
    }

    /// Marks `amount` units (1 packet, or bytes) of a packet of `bytes` bytes at `now_ns`
    /// (`color_in` for color-aware use) and counts the packet under the color returned.
    pub fn execute(&mut self, amount: u64, bytes: u64, now_ns: u64, color_in: usize) -> usize {
        let c = self.mark(amount, now_ns, color_in);
        let n = &mut self.counts[c];
        n[0] = n[0].wrapping_add(1);
        n[1] = n[1].wrapping_add(bytes);
        c
    }

    fn mark(&mut self, amount: u64, now_ns: u64, color_in: usize) -> usize {
        let Some((cir, cbs, pir, pbs)) = self.rates else {
            return GREEN;
        };
        if self.last_ns != 0 && now_ns > self.last_ns {
            let us = (now_ns - self.last_ns) as f64 / 1000.0;
            self.tc = (self.tc + us * cir).min(cbs as f64);
            self.tp = (self.tp + us * pir).min(pbs as f64);
        }
        self.last_ns = now_ns.max(1);
        let a = amount as f64;
        if color_in == RED || self.tp < a {
            return RED;
        }
        if color_in == YELLOW || self.tc < a {
            self.tp -= a;
            return YELLOW;
        }
        self.tp -= a;
        self.tc -= a;
        GREEN
    }
}

/// Allocates `n` meters.
pub fn meters(n: usize) -> Box<[Mutex<Meter>]> {
    (0..n).map(|_| Mutex::new(Meter::default())).collect()
}

/// Register cells: `size` cells of `words` words each.
#[derive(Debug)]
pub struct RegisterStore {
    pub size: u32,
    pub words: u32,
    pub cells: Box<[AtomicU64]>,
    pub init: Vec<u64>,
}

impl RegisterStore {
    pub fn new(size: u32, words: u32, init: &[u64]) -> RegisterStore {
        let words = words.max(1);
        let n = size as usize * words as usize;
        let cells: Box<[AtomicU64]> = (0..n)
            .map(|i| AtomicU64::new(init.get(i % words as usize).copied().unwrap_or(0)))
            .collect();
        RegisterStore {
            size,
            words,
            cells,
            init: init.to_vec(),
        }
    }

    /// Copies cell `i` into `out` (zeros when out of range, as BMv2 reads out-of-range
    /// indices as 0).
    pub fn read(&self, i: u64, out: &mut [u64]) {
        if i >= u64::from(self.size) {
            out.fill(0);
            return;
        }
        let base = i as usize * self.words as usize;
        for (k, o) in out.iter_mut().enumerate().take(self.words as usize) {
            *o = self.cells[base + k].load(Relaxed);
        }
    }

    /// Writes cell `i` (ignored when out of range).
    pub fn write(&self, i: u64, v: &[u64]) {
        if i >= u64::from(self.size) {
            return;
        }
        let base = i as usize * self.words as usize;
        for (k, x) in v.iter().enumerate().take(self.words as usize) {
            self.cells[base + k].store(*x, Relaxed);
        }
    }

    /// Resets every cell to its initial value.
    pub fn reset(&self) {
        for (i, c) in self.cells.iter().enumerate() {
            c.store(
                self.init.get(i % self.words as usize).copied().unwrap_or(0),
                Relaxed,
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hashes and checksums over byte strings.

const fn crc32_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

const fn crc16_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xA001 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC32: [u32; 256] = crc32_table();
static CRC16: [u16; 256] = crc16_table();

/// CRC-32 (IEEE 802.3: reflected, polynomial 0x04C11DB7, init and final xor 0xFFFFFFFF).
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for b in data {
        c = CRC32[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

/// CRC-16/ARC (reflected, polynomial 0x8005, init 0), BMv2's `crc16`.
pub fn crc16(data: &[u8]) -> u16 {
    let mut c = 0u16;
    for b in data {
        c = CRC16[((c ^ u16::from(*b)) & 0xff) as usize] ^ (c >> 8);
    }
    c
}

/// CRC-64/ECMA-182 (not reflected, polynomial 0x42F0E1EBA9EA3693, init 0).
pub fn crc64(data: &[u8]) -> u64 {
    let mut c = 0u64;
    for b in data {
        c ^= u64::from(*b) << 56;
        for _ in 0..8 {
            c = if c & (1 << 63) != 0 {
                (c << 1) ^ 0x42F0_E1EB_A9EA_3693
            } else {
                c << 1
            };
        }
    }
    c
}

/// The 16-bit one's-complement sum of `data` (odd length padded with a zero byte), folded.
pub fn ones_sum16(data: &[u8]) -> u32 {
    let mut sum = 0u32;
    let mut it = data.chunks(2);
    for w in &mut it {
        let v = if w.len() == 2 {
            u32::from(u16::from_be_bytes([w[0], w[1]]))
        } else {
            u32::from(w[0]) << 8
        };
        sum += v;
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}

/// Internet checksum (RFC 1071): the complement of the one's-complement sum.
pub fn csum16(data: &[u8]) -> u16 {
    !(ones_sum16(data) as u16)
}

/// XOR of the 16-bit words of `data`.
pub fn xor16(data: &[u8]) -> u16 {
    let mut x = 0u16;
    for w in data.chunks(2) {
        let v = if w.len() == 2 {
            u16::from_be_bytes([w[0], w[1]])
        } else {
            u16::from(w[0]) << 8
        };
        x ^= v;
    }
    x
}

/// The hash of `data` by `algo`, as a 64-bit number (callers truncate to the result width).
/// `rand` supplies the value of `random`.
pub fn hash(algo: HashAlgo, data: &[u8], rand: u64) -> u64 {
    match algo {
        HashAlgo::Crc16 | HashAlgo::Crc16Custom => u64::from(crc16(data)),
        HashAlgo::Crc32 | HashAlgo::Crc32Custom | HashAlgo::TargetDefault => u64::from(crc32(data)),
        HashAlgo::Crc64 => crc64(data),
        HashAlgo::Csum16 => u64::from(csum16(data)),
        HashAlgo::Xor16 => u64::from(xor16(data)),
        HashAlgo::Random => rand,
        HashAlgo::Identity => {
            let mut v = 0u64;
            for b in data.iter().rev().take(8).rev() {
                v = (v << 8) | u64::from(*b);
            }
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc16(b"123456789"), 0xBB3D);
        assert_eq!(crc64(b"123456789"), 0x6C40_DF5F_0B49_7347);
        // IPv4 header checksum example (RFC 1071 style).
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(csum16(&h), 0xb861);
    }

    #[test]
    fn meter_marks() {
        let mut m = Meter::default();
        assert_eq!(m.execute(1, 64, 10, GREEN), GREEN);
        m.configure(0.0, 1, 0.0, 2);
        assert_eq!(m.execute(1, 100, 1000, GREEN), GREEN);
        assert_eq!(m.execute(1, 200, 2000, GREEN), YELLOW);
        assert_eq!(m.execute(1, 300, 3000, GREEN), RED);
        assert_eq!(m.execute(1, 400, 4000, GREEN), RED);
        // Packets and bytes per color; a new configuration or none keeps them.
        assert_eq!(m.counts, [[2, 164], [1, 200], [2, 700]]);
        m.configure(1.0, 1, 1.0, 1);
        m.unconfigure();
        assert_eq!(m.counts, [[2, 164], [1, 200], [2, 700]]);
        assert!(m.rates.is_none());
    }

    #[test]
    fn registers_bounds() {
        let r = RegisterStore::new(4, 1, &[7]);
        let mut o = [0u64];
        r.read(3, &mut o);
        assert_eq!(o, [7]);
        r.write(9, &[1]);
        r.read(9, &mut o);
        assert_eq!(o, [0]);
    }
}
