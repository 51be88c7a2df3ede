//! Packets and batches.
//!
//! A [`Packet`] owns one growable buffer with *headroom* in front of the data, so that a pipeline
//! can push headers (encapsulation) without moving the payload. A [`Batch`] holds up to
//! [`BATCH_MAX`] packets and keeps every packet's buffer when it is cleared: in steady state,
//! receiving into a reused batch allocates nothing.

use std::fmt;

/// Bytes reserved in front of the data of a fresh packet (the same as DPDK's default mbuf headroom).
pub const DEFAULT_HEADROOM: usize = 128;

/// Largest number of packets in a [`Batch`].
pub const BATCH_MAX: usize = 256;

/// One packet: its bytes (starting at the Ethernet header), the port it arrived on or leaves by,
/// and a timestamp in nanoseconds.
///
/// Guarantees: the buffer behind [`Packet::data`] is kept across [`Packet::set_data`],
/// [`Packet::reset`] and shrinking, so a reused packet allocates only when it must grow.
#[derive(Clone, Default)]
pub struct Packet {
    /// Headroom followed by data; `buf[start..]` is the packet.
    buf: Vec<u8>,
    start: usize,
    /// Ingress port on receive, egress port on transmit.
    pub port: u32,
    /// Timestamp in nanoseconds (capture time for pcap input, generation time for the generator).
    pub ts_ns: u64,
}

impl Packet {
    /// An empty packet with [`DEFAULT_HEADROOM`] bytes of headroom.
    pub fn new() -> Packet {
        Packet {
            buf: vec![0; DEFAULT_HEADROOM],
            start: DEFAULT_HEADROOM,
            port: 0,
            ts_ns: 0,
        }
    }

    /// A packet holding a copy of `data`.
    pub fn from_bytes(data: &[u8], port: u32, ts_ns: u64) -> Packet {
        let mut p = Packet::new();
        p.set_data(data);
        p.port = port;
        p.ts_ns = ts_ns;
        p
    }

    /// Hint that the packet is about to be parsed: starts fetching the cache lines that hold
    /// its first [`HEADER_BYTES`] bytes (at most three lines). Reads the descriptor, never the
    /// data; changes nothing. For packets that wait in memory (a generated or read-in workload)
    /// rather than in a NIC's ring, whose bytes are otherwise fetched from DRAM when the parser
    /// first reads them (DPDK's l3fwd prefetches the same way, a few packets ahead).
    #[inline(always)]
    pub fn prefetch_headers(&self) {
        let d = self.data();
        let n = d.len().min(HEADER_BYTES);
        if n == 0 {
            return;
        }
        let last = d.as_ptr() as usize + n - 1;
        let mut a = d.as_ptr() as usize & !(LINE - 1);
        while a <= last {
            prefetch(a);
            a += LINE;
        }
    }

    /// The packet's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The packet's bytes, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }

    /// Length of the data in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// True when the packet holds no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes available in front of the data for [`Packet::push_front`] without moving the data.
    #[inline]
    pub fn headroom(&self) -> usize {
        self.start
    }

    /// Empties the packet, restores the default headroom and zeroes port and timestamp;
    /// keeps the allocation.
    #[inline]
    pub fn reset(&mut self) {
        self.restore_headroom();
        self.port = 0;
        self.ts_ns = 0;
    }

    #[inline]
    fn restore_headroom(&mut self) {
        if self.buf.len() < DEFAULT_HEADROOM {
            self.buf.resize(DEFAULT_HEADROOM, 0);
        } else {
            self.buf.truncate(DEFAULT_HEADROOM);
        }
        self.start = DEFAULT_HEADROOM;
    }

    /// Replaces the data by a copy of `data` (with the default headroom in front).
    #[inline]
    pub fn set_data(&mut self, data: &[u8]) {
        self.restore_headroom();
        self.buf.extend_from_slice(data);
    }

    /// Makes the data `len` bytes long (default headroom in front) and returns it for writing.
    /// Bytes that were not part of the old data are zero.
    #[inline]
    pub fn reset_len(&mut self, len: usize) -> &mut [u8] {
        self.restore_headroom();
        self.buf.resize(DEFAULT_HEADROOM + len, 0);
        self.data_mut()
    }

    /// Grows or shrinks the data at its end; new bytes are zero.
    pub fn resize(&mut self, len: usize) {
        self.buf.resize(self.start + len, 0);
    }

    /// Shortens the data to `len` bytes; does nothing when it is already shorter.
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(self.start.saturating_add(len));
    }

    /// Appends bytes at the end of the data.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Adds `n` zero bytes in front of the data and returns them for writing. Uses the headroom;
    /// when that is too small the data is moved once to make room (with fresh default headroom).
    pub fn push_front(&mut self, n: usize) -> &mut [u8] {
        if n > self.start {
            let grow = n - self.start + DEFAULT_HEADROOM;
            self.buf.splice(0..0, std::iter::repeat_n(0u8, grow));
            self.start += grow;
        }
        self.start -= n;
        let s = self.start;
        let front = &mut self.buf[s..s + n];
        front.fill(0);
        front
    }

    /// Removes `n` bytes from the front of the data (they become headroom).
    /// Returns false, and changes nothing, when the packet is shorter than `n`.
    #[must_use]
    pub fn pull_front(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        self.start += n;
        true
    }
}

/// Bytes at the front of a packet that [`Packet::prefetch_headers`] fetches: Ethernet, a VLAN tag or
/// two, IPv4 or IPv6 and a TCP header with options fit.
pub const HEADER_BYTES: usize = 128;

/// Hint that `pkts` are about to be parsed: [`Packet::prefetch_headers`] of each.
pub fn prefetch_headers(pkts: &[Packet]) {
    for p in pkts {
        p.prefetch_headers();
    }
}

/// A cache line's bytes (x86-64, most ARM cores).
const LINE: usize = 64;

/// Hint that the line holding address `a` is about to be read. Never faults, whatever `a` is.
#[inline(always)]
fn prefetch(a: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults or changes memory, for any address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(a as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = a;
}

impl PartialEq for Packet {
    fn eq(&self, other: &Packet) -> bool {
        self.data() == other.data() && self.port == other.port && self.ts_ns == other.ts_ns
    }
}

impl Eq for Packet {}

impl fmt::Debug for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOW: usize = 32;
        write!(
            f,
            "Packet {{ port: {}, ts_ns: {}, len: {}, data: ",
            self.port,
            self.ts_ns,
            self.len()
        )?;
        for b in self.data().iter().take(SHOW) {
            write!(f, "{b:02x}")?;
        }
        if self.len() > SHOW {
            write!(f, "..")?;
        }
        write!(f, " }}")
    }
}

/// Up to [`BATCH_MAX`] packets, reused from burst to burst.
///
/// Guarantees: [`Batch::clear`], [`Batch::truncate`] and [`Batch::retain`] keep the buffers of the
/// packets they remove, and [`Batch::push_slot`] hands them out again; a batch that has once been
/// full allocates nothing more as long as its packets do not grow.
pub struct Batch {
    slots: Vec<Packet>,
    len: usize,
    cap: usize,
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

impl Batch {
    /// A batch of [`BATCH_MAX`] packets.
    pub fn new() -> Batch {
        Batch::with_capacity(BATCH_MAX)
    }

    /// A batch of `cap` packets (clamped to `1..=BATCH_MAX`).
    pub fn with_capacity(cap: usize) -> Batch {
        let cap = cap.clamp(1, BATCH_MAX);
        Batch {
            slots: Vec::with_capacity(cap),
            len: 0,
            cap,
        }
    }

    /// The most packets this batch holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Changes how many packets the batch holds (clamped to `len()..=BATCH_MAX`, at least 1), so
    /// a burst receives no more than a run still wants (`--max-packets`).
    pub fn set_capacity(&mut self, cap: usize) {
        self.cap = cap.clamp(self.len.max(1), BATCH_MAX);
    }

    /// Number of packets in the batch.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when no more packets fit.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.cap
    }

    /// How many more packets fit.
    #[inline]
    pub fn free(&self) -> usize {
        self.cap - self.len
    }

    /// Removes every packet, keeping their buffers for reuse.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the first `len` packets.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Appends a packet slot and returns it, emptied by [`Packet::reset`]; `None` when full.
    #[inline]
    pub fn push_slot(&mut self) -> Option<&mut Packet> {
        let p = self.push_slot_raw()?;
        p.reset();
        Some(p)
    }

    /// Appends a packet slot without resetting it (its old data, port and timestamp remain);
    /// for producers that overwrite every field anyway. `None` when full.
    #[inline]
    pub fn push_slot_raw(&mut self) -> Option<&mut Packet> {
        if self.len == self.cap {
            return None;
        }
        if self.len == self.slots.len() {
            self.slots.push(Packet::new());
        }
        let i = self.len;
        self.len += 1;
        Some(&mut self.slots[i])
    }

    /// Appends a copy of `data`; returns false when the batch is full.
    pub fn push(&mut self, data: &[u8], port: u32, ts_ns: u64) -> bool {
        match self.push_slot_raw() {
            Some(p) => {
                p.set_data(data);
                p.port = port;
                p.ts_ns = ts_ns;
                true
            }
            None => false,
        }
    }

    /// Removes the last packet (its buffer stays for reuse).
    pub fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// Keeps the packets for which `keep` returns true, in order; the others' buffers are kept for reuse.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut Packet) -> bool) {
        let mut w = 0;
        for r in 0..self.len {
            if keep(&mut self.slots[r]) {
                if w != r {
                    self.slots.swap(w, r);
                }
                w += 1;
            }
        }
        self.len = w;
    }

    /// The packets.
    #[inline]
    pub fn as_slice(&self) -> &[Packet] {
        &self.slots[..self.len]
    }

    /// The packets, writable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Packet] {
        &mut self.slots[..self.len]
    }

    /// Iterates over the packets.
    pub fn iter(&self) -> std::slice::Iter<'_, Packet> {
        self.as_slice().iter()
    }

    /// Iterates over the packets, writable.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Packet> {
        self.as_mut_slice().iter_mut()
    }
}

impl std::ops::Index<usize> for Batch {
    type Output = Packet;
    fn index(&self, i: usize) -> &Packet {
        &self.as_slice()[i]
    }
}

impl std::ops::IndexMut<usize> for Batch {
    fn index_mut(&mut self, i: usize) -> &mut Packet {
        &mut self.as_mut_slice()[i]
    }
}

impl<'a> IntoIterator for &'a Batch {
    type Item = &'a Packet;
    type IntoIter = std::slice::Iter<'a, Packet>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_headers_changes_no_packet() {
        let mut short = Packet::from_bytes(&[9], 1, 2);
        assert!(short.pull_front(1));
        let pkts = vec![
            Packet::new(),
            short,
            Packet::from_bytes(&[7; 60], 3, 4),
            Packet::from_bytes(&[5; 1500], 5, 6),
        ];
        let before = pkts.clone();
        prefetch_headers(&pkts);
        prefetch_headers(&[]);
        assert!(pkts == before);
    }

    #[test]
    fn headroom_push_pull() {
        let mut p = Packet::from_bytes(&[1, 2, 3], 7, 9);
        assert_eq!(p.headroom(), DEFAULT_HEADROOM);
        p.push_front(2).copy_from_slice(&[8, 9]);
        assert_eq!(p.data(), &[8, 9, 1, 2, 3]);
        assert!(p.pull_front(3));
        assert_eq!(p.data(), &[2, 3]);
        assert!(!p.pull_front(3));
        // Larger than the headroom: data moves once.
        let big = p.push_front(DEFAULT_HEADROOM + 10 + 3);
        assert!(big.iter().all(|&b| b == 0));
        assert_eq!(p.len(), DEFAULT_HEADROOM + 15);
        assert_eq!(&p.data()[DEFAULT_HEADROOM + 13..], &[2, 3]);
        assert_eq!(p.headroom(), DEFAULT_HEADROOM);
        p.truncate(1);
        assert_eq!(p.len(), 1);
        p.resize(4);
        assert_eq!(p.data(), &[0, 0, 0, 0]);
        p.reset();
        assert!(p.is_empty());
        assert_eq!(p.port, 0);
    }

    #[test]
    fn batch_reuses_buffers() {
        let mut b = Batch::with_capacity(4);
        for i in 0..4u8 {
            assert!(b.push(&[i; 100], u32::from(i), 0));
        }
        assert!(b.is_full());
        assert!(!b.push(&[0], 0, 0));
        let ptrs: Vec<*const u8> = b.iter().map(|p| p.data().as_ptr()).collect();
        b.clear();
        for i in 0..4u8 {
            assert!(b.push(&[i; 50], 0, 0));
        }
        let again: Vec<*const u8> = b.iter().map(|p| p.data().as_ptr()).collect();
        assert_eq!(ptrs, again);
    }

    #[test]
    fn batch_retain_keeps_order() {
        let mut b = Batch::new();
        for i in 0..10u8 {
            b.push(&[i], 0, 0);
        }
        b.retain(|p| p.data()[0] % 3 != 0);
        let got: Vec<u8> = b.iter().map(|p| p.data()[0]).collect();
        assert_eq!(got, vec![1, 2, 4, 5, 7, 8]);
        // Removed slots are reused.
        assert!(b.push_slot().unwrap().is_empty());
        assert_eq!(b.len(), 7);
        b.truncate(2);
        b.pop();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].data(), &[1]);
    }
}
