//! The data-hazard detector (opp-sim `HazardDetector`, reference A.5).
//!
//! opp-sim keeps a deque of the digests pushed in the last N cycles; each cycle it pops the
//! oldest, and a packet arriving in that cycle is a HAZARD when its digest is among the N-1
//! remaining, i.e. when another packet with the same digest arrived fewer than N cycles earlier.
//! That is equivalent to `t - last[digest] < N` with `last` the arrival cycle of the previous
//! packet of that digest, so one pass over the trace gives the hazard count of every N at once:
//! count packets by their distance `d` to the previous same-digest arrival, then
//! `hazards(N) = #{d < N}`. No packet is ever stalled or dropped.

use crate::model::Schedule;
use serde::Serialize;

/// Hazard counts of one batch for N = 1..=max_n.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HazardBatch {
    /// Packets in the batch.
    pub packets: u64,
    /// Clock cycles of the batch.
    pub cycles: u64,
    /// Cycles spent reading packets.
    pub read_cycles: u64,
    /// `hazards[n-1]` is the number of hazard cycles (= hazardous packets) for N = n.
    pub hazards: Vec<u64>,
}

impl HazardBatch {
    /// Fraction of data hazards as the paper defines it: hazard cycles over the batch's clock
    /// cycles (opp-sim `sched_quota_hazard`, reference A.5).
    pub fn fdh(&self, n: u32) -> f64 {
        self.hazards[n as usize - 1] as f64 / self.cycles as f64
    }

    /// Hazardous packets over packets (a variant the paper does not use).
    pub fn fdh_packets(&self, n: u32) -> f64 {
        self.hazards[n as usize - 1] as f64 / self.packets as f64
    }
}

/// A digest usable as a table index.
pub trait Digest: Copy {
    /// The table slot of this digest.
    fn index(self) -> usize;
}

impl Digest for u16 {
    #[inline(always)]
    fn index(self) -> usize {
        self as usize
    }
}

impl Digest for u32 {
    #[inline(always)]
    fn index(self) -> usize {
        self as usize
    }
}

/// Runs the detector over the batches of `sched`, for N = 1..=max_n. `space` bounds the digest
/// values (65536 for CRC-16 digests, the distinct count for exact ids).
pub fn detect<D: Digest>(
    digests: &[D],
    sched: &Schedule,
    max_n: u32,
    space: usize,
    progress: &dyn Fn(u64),
) -> Vec<HazardBatch> {
    let max_n = max_n.max(1);
    let cap = max_n as u64;
    // Cycle numbers start far from 0 so that a never-seen digest (last = 0) is at a distance
    // larger than any N.
    let mut t: u64 = 1 << 40;
    let mut last = vec![0u64; space.max(1)];
    let mut out = Vec::with_capacity(sched.batches.len());
    let mut counts = vec![0u64; max_n as usize + 1];
    for b in &sched.batches {
        counts.iter_mut().for_each(|c| *c = 0);
        let ks = &digests[b.start..b.end];
        let ds = &sched.deltas[b.start..b.end];
        for (&k, &d) in ks.iter().zip(ds) {
            t += u64::from(d);
            let slot = &mut last[k.index()];
            let dist = t - *slot;
            *slot = t;
            counts[dist.min(cap) as usize] += 1;
        }
        let mut hazards = Vec::with_capacity(max_n as usize);
        let mut acc = 0u64;
        for n in 1..=max_n as usize {
            // hazards(N) counts distances 1..=N-1
            acc += if n >= 2 { counts[n - 1] } else { 0 };
            hazards.push(acc);
        }
        out.push(HazardBatch {
            packets: (b.end - b.start) as u64,
            cycles: b.cycles,
            read_cycles: b.read_cycles,
            hazards,
        });
        progress((b.end - b.start) as u64);
    }
    out
}

/// A literal transcription of opp-sim's deque algorithm for one N, used to check [`detect`].
pub fn detect_reference(digests: &[u32], sched: &Schedule, n: u32) -> Vec<u64> {
    use std::collections::VecDeque;
    let mut dq: VecDeque<Option<u32>> = (0..n).map(|_| None).collect();
    let mut out = Vec::new();
    for b in &sched.batches {
        let mut hz = 0;
        let range = b.start..b.end;
        for (&k, &delta) in digests[range.clone()].iter().zip(&sched.deltas[range]) {
            // idle cycles before the arrival
            for _ in 1..delta {
                dq.pop_back();
                dq.push_front(None);
            }
            dq.pop_back();
            if dq.contains(&Some(k)) {
                hz += 1;
            }
            dq.push_front(Some(k));
        }
        out.push(hz);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_schedule as sched;

    #[test]
    fn hand_computed() {
        // keys A B A A, deltas 1 1 1 3 (arrival cycles 1 2 3 6)
        // A@3: distance 2 -> hazard for N >= 3; A@6: distance 3 -> hazard for N >= 4
        let s = sched(vec![1, 1, 1, 3], 4);
        let r = detect(&[0u32, 1, 0, 0], &s, 5, 2, &|_| {});
        assert_eq!(r[0].hazards, vec![0, 0, 1, 2, 2]);
        assert_eq!(r[0].cycles, 6);
        assert_eq!(r[0].fdh(5), 2.0 / 6.0);
        assert_eq!(r[0].fdh_packets(5), 0.5);
    }

    #[test]
    fn matches_deque_transcription() {
        let mut x: u64 = 12345;
        let mut keys = Vec::new();
        let mut deltas = Vec::new();
        for _ in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            keys.push(((x >> 33) % 7) as u32);
            deltas.push(((x >> 20) % 19 + 1) as u32);
        }
        let s = sched(deltas, 500);
        let fast = detect(&keys, &s, 30, 7, &|_| {});
        for n in [1u32, 2, 3, 5, 10, 19, 20, 30] {
            let slow = detect_reference(&keys, &s, n);
            let f: Vec<u64> = fast.iter().map(|b| b.hazards[n as usize - 1]).collect();
            assert_eq!(f, slow, "N={n}");
        }
    }
}
