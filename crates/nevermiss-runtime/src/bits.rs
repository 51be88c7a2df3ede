//! Reading and writing big-endian bit strings: header fields in packets (P4_16 §12.8 extract,
//! §15.2 emit), packed table keys and action parameters.

/// Reads `w ≤ 64` bits starting at bit `off` (most significant bit first). The caller checks
/// that `off + w ≤ 8 * data.len()`.
#[inline]
pub fn read_bits(data: &[u8], off: usize, w: u32) -> u64 {
    if w == 0 {
        return 0;
    }
    let start = off / 8;
    let shift = (off % 8) as u32;
    if let Some(chunk) = data.get(start..start + 16) {
        // Fast path: one 16-byte big-endian load (shift + w ≤ 71 bits).
        let mut b = [0u8; 16];
        b.copy_from_slice(chunk);
        let x = u128::from_be_bytes(b);
        return ((x << shift) >> (128 - w)) as u64;
    }
    let nbytes = (shift + w).div_ceil(8) as usize;
    let mut acc: u128 = 0;
    for i in 0..nbytes {
        acc = (acc << 8) | u128::from(*data.get(start + i).unwrap_or(&0));
    }
    let extra = nbytes as u32 * 8 - shift - w;
    let v = acc >> extra;
    if w >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << w) - 1)
    }
}

/// Reads `w` bits (any width) into words, least significant first (`out.len()` words).
pub fn read_wide(data: &[u8], off: usize, w: u32, out: &mut [u64]) {
    let n = out.len();
    if n == 0 {
        return;
    }
    let top = w.saturating_sub(64 * (n as u32 - 1));
    let mut pos = off;
    for (k, limb) in out.iter_mut().enumerate().rev() {
        let cw = if k == n - 1 { top } else { 64 };
        *limb = read_bits(data, pos, cw);
        pos += cw as usize;
    }
}

/// A growable big-endian bit string (the deparser's output, hash and checksum inputs).
///
/// Bits are gathered in a 128-bit accumulator and written out eight bytes at a time;
/// [`BitWriter::finish`] writes what is pending. `bytes` holds the whole string only after
/// `finish` (a last partial byte is padded with zeros).
#[derive(Clone, Debug, Default)]
pub struct BitWriter {
    /// The bytes written so far; whole only after [`BitWriter::finish`].
    pub bytes: Vec<u8>,
    /// Bits written (pending ones included).
    pub bits: usize,
    acc: u128,
    n: u32,
}

impl BitWriter {
    /// Empties the writer, keeping its buffer.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.bits = 0;
        self.acc = 0;
        self.n = 0;
    }

    /// Appends the low `w ≤ 64` bits of `v`, most significant first.
    #[inline]
    pub fn put(&mut self, v: u64, w: u32) {
        if w == 0 {
            return;
        }
        let v = if w >= 64 { v } else { v & ((1u64 << w) - 1) };
        self.acc = (self.acc << w) | u128::from(v);
        self.n += w;
        self.bits += w as usize;
        if self.n >= 64 {
            self.n -= 64;
            let word = (self.acc >> self.n) as u64;
            self.bytes.extend_from_slice(&word.to_be_bytes());
            self.acc &= (1u128 << self.n) - 1;
        }
    }

    /// Appends `w` bits held in words (least significant word first).
    pub fn put_wide(&mut self, limbs: &[u64], w: u32) {
        let n = limbs.len();
        if n == 0 {
            return;
        }
        let top = w.saturating_sub(64 * (n as u32 - 1));
        for k in (0..n).rev() {
            let cw = if k == n - 1 { top } else { 64 };
            self.put(limbs[k], cw);
        }
    }

    /// Writes out the pending bits (a last partial byte padded with zeros). Inline, and nothing
    /// to do with none pending (`acc` holds only the `n` pending bits, so it is 0 then): what
    /// the compiled engine's deparser leaves, which writes whole bytes (`append_raw`).
    #[inline]
    pub fn finish(&mut self) {
        if self.n != 0 {
            self.finish_pending();
        }
    }

    #[inline(never)]
    fn finish_pending(&mut self) {
        while self.n >= 8 {
            self.n -= 8;
            self.bytes.push((self.acc >> self.n) as u8);
        }
        if self.n > 0 {
            self.bytes.push((self.acc << (8 - self.n)) as u8);
            // The padding is now part of `bytes`; later bits start a new byte.
            self.bits = self.bits.div_ceil(8) * 8;
        }
        self.acc = 0;
        self.n = 0;
    }

    /// Makes room for `n` whole bytes at the end, for a caller that writes them itself, and
    /// returns where they start: `None` unless the writer is at a byte boundary. The caller
    /// must write every one of the `n` bytes before the string is read (generated code's `emit`
    /// stores whole 8-byte words over them); the 8 bytes of capacity beyond them may be written
    /// too, they are not part of the string.
    #[inline]
    pub fn append_raw(&mut self, n: usize) -> Option<*mut u8> {
        let len = self.bytes.len();
        if self.n != 0 || self.bytes.capacity() - len < n.saturating_add(8) {
            return self.append_raw_slow(n);
        }
        // SAFETY: the capacity holds `len + n + 8` bytes; the caller writes the `n` new ones
        // before anything reads them (see above).
        unsafe {
            let p = self.bytes.as_mut_ptr().add(len);
            self.bytes.set_len(len + n);
            self.bits += 8 * n;
            Some(p)
        }
    }

    /// [`BitWriter::append_raw`] with bits pending or too little capacity.
    #[inline(never)]
    fn append_raw_slow(&mut self, n: usize) -> Option<*mut u8> {
        if self.n != 0 {
            if !self.n.is_multiple_of(8) {
                return None;
            }
            self.finish();
        }
        let len = self.bytes.len();
        if self.bytes.capacity() - len < n + 8 {
            self.bytes.reserve(n + 8);
        }
        // SAFETY: the capacity holds `len + n + 8` bytes; the caller writes the `n` new ones
        // before anything reads them (see above).
        unsafe {
            let p = self.bytes.as_mut_ptr().add(len);
            self.bytes.set_len(len + n);
            self.bits += 8 * n;
            Some(p)
        }
    }

    /// Appends whole bytes.
    pub fn put_bytes(&mut self, b: &[u8]) {
        if self.n.is_multiple_of(8) {
            self.finish();
            self.bytes.extend_from_slice(b);
            self.bits += 8 * b.len();
        } else {
            for x in b {
                self.put(u64::from(*x), 8);
            }
        }
    }
}

/// Writes the low `w` bits of `v` big-endian into `out` (`ceil(w/8)` bytes, right-aligned).
#[inline]
pub fn put_be(out: &mut Vec<u8>, v: u64, w: u32) {
    let n = (w as usize).div_ceil(8);
    let be = v.to_be_bytes();
    if n <= 8 {
        out.extend_from_slice(&be[8 - n..]);
    } else {
        out.resize(out.len() + n - 8, 0);
        out.extend_from_slice(&be);
    }
}

/// Reads a big-endian unsigned number of `bytes.len() ≤ 8` bytes.
#[inline]
pub fn get_be(bytes: &[u8]) -> u64 {
    if let Some(last) = bytes.last_chunk::<8>() {
        return u64::from_be_bytes(*last);
    }
    let mut v = 0u64;
    for &b in bytes {
        v = (v << 8) | u64::from(b);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_unaligned() {
        let d = [0b1010_1100, 0b0101_0011, 0xff];
        assert_eq!(read_bits(&d, 0, 4), 0b1010);
        assert_eq!(read_bits(&d, 4, 8), 0b1100_0101);
        assert_eq!(read_bits(&d, 3, 3), 0b011);
        assert_eq!(read_bits(&d, 0, 24), 0xac53ff);
    }

    proptest! {
        #[test]
        fn write_then_read(fields in proptest::collection::vec((any::<u64>(), 1u32..=64), 1..12)) {
            let mut w = BitWriter::default();
            for (v, n) in &fields {
                w.put(*v, *n);
            }
            w.finish();
            let mut off = 0usize;
            for (v, n) in &fields {
                let m = if *n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                prop_assert_eq!(read_bits(&w.bytes, off, *n), v & m);
                off += *n as usize;
            }
            prop_assert_eq!(w.bytes.len(), off.div_ceil(8));
        }

        /// `finish` twice is `finish` once, also after fields that end on a word boundary
        /// (nothing pending: its fast path), and bits put after it start on the next byte.
        #[test]
        fn finish_is_idempotent(
            a in proptest::collection::vec((any::<u64>(), 1u32..=64), 0..6),
            b in proptest::collection::vec((any::<u64>(), 1u32..=64), 1..6),
            whole_words: bool,
        ) {
            let mut w = BitWriter::default();
            let mut bits = 0u32;
            for (v, n) in &a {
                w.put(*v, *n);
                bits += n;
            }
            if whole_words {
                // Pad to a multiple of 64 bits: nothing left pending in the accumulator.
                w.put(0, (64 - bits % 64) % 64);
            }
            w.finish();
            let once = w.bytes.clone();
            w.finish();
            prop_assert_eq!(&w.bytes, &once);
            let start = 8 * once.len();
            for (v, n) in &b {
                w.put(*v, *n);
            }
            w.finish();
            prop_assert_eq!(&w.bytes[..once.len()], &once[..]);
            let mut off = start;
            for (v, n) in &b {
                let m = if *n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                prop_assert_eq!(read_bits(&w.bytes, off, *n), v & m);
                off += *n as usize;
            }
        }

        #[test]
        fn wide_round_trip(a: u64, b: u64, lead in 0usize..9, w in 65u32..=128) {
            let limbs = [a, if w == 128 { b } else { b & ((1u64 << (w - 64)) - 1) }];
            let mut wr = BitWriter::default();
            wr.put(0, lead as u32);
            wr.put_wide(&limbs, w);
            wr.finish();
            let mut out = [0u64; 2];
            read_wide(&wr.bytes, lead, w, &mut out);
            prop_assert_eq!(out, limbs);
        }
    }
}
