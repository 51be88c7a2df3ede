//! Percentiles and summaries, computed as opp-sim does (reference A.7, `misc.percentile`):
//! on sorted values, `k = (n-1)·p`; if `k` is whole the value at `k`, otherwise the linear
//! interpolation `v[floor k]·(ceil k - k) + v[ceil k]·(k - floor k)`.

use serde::Serialize;

/// opp-sim's percentile of sorted `v` (`p` in 0..=1); `None` when `v` is empty.
pub fn percentile_sorted(v: &[f64], p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let k = (v.len() - 1) as f64 * p;
    let f = k.floor();
    let c = k.ceil();
    if f == c {
        return Some(v[k as usize]);
    }
    Some(v[f as usize] * (c - k) + v[c as usize] * (k - f))
}

/// opp-sim's percentile of unsorted values.
pub fn percentile(v: &[f64], p: f64) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    percentile_sorted(&s, p)
}

/// Max, mean, median, 95th and 99th percentile of a sample set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Largest sample.
    pub max: f64,
    /// The true mean (opp-sim's Python 2 code floors it for integer samples).
    pub avg: f64,
    /// 50th percentile.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

const HIST: usize = 4096;

/// Collects non-negative integer samples (latencies, occupancies) cheaply: a histogram for small
/// values, a list for the rest. Percentiles are exact.
#[derive(Clone, Debug)]
pub struct IntSamples {
    hist: Vec<u32>,
    /// Highest histogram index used + 1.
    used: usize,
    big: Vec<u64>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for IntSamples {
    fn default() -> Self {
        IntSamples {
            hist: vec![0; HIST],
            used: 0,
            big: Vec::new(),
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl IntSamples {
    /// Adds a sample.
    #[inline]
    pub fn push(&mut self, v: u64) {
        if (v as usize) < HIST && v < HIST as u64 {
            self.hist[v as usize] += 1;
            self.used = self.used.max(v as usize + 1);
        } else {
            self.big.push(v);
        }
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The value of rank `r` (0-based) in sorted order; `big` must be sorted.
    fn rank_values(&self, ranks: &[u64]) -> Vec<u64> {
        // ranks ascending
        let mut out = Vec::with_capacity(ranks.len());
        let mut ri = 0;
        let mut cum = 0u64;
        for (v, &c) in self.hist[..self.used].iter().enumerate() {
            cum += u64::from(c);
            while ri < ranks.len() && ranks[ri] < cum {
                out.push(v as u64);
                ri += 1;
            }
        }
        while ri < ranks.len() {
            let idx = (ranks[ri] - cum) as usize;
            out.push(self.big[idx]);
            ri += 1;
        }
        out
    }

    /// Summarises and clears the samples; `None` when there were none.
    pub fn take_summary(&mut self) -> Option<Summary> {
        if self.count == 0 {
            return None;
        }
        self.big.sort_unstable();
        let n = self.count;
        let ps = [0.5, 0.95, 0.99];
        let mut ranks = Vec::new();
        let mut ks = Vec::new();
        for p in ps {
            let k = (n - 1) as f64 * p;
            ks.push(k);
            ranks.push(k.floor() as u64);
            ranks.push(k.ceil() as u64);
        }
        let mut order: Vec<usize> = (0..ranks.len()).collect();
        order.sort_by_key(|&i| ranks[i]);
        let sorted: Vec<u64> = order.iter().map(|&i| ranks[i]).collect();
        let vals_sorted = self.rank_values(&sorted);
        let mut vals = vec![0u64; ranks.len()];
        for (j, &i) in order.iter().enumerate() {
            vals[i] = vals_sorted[j];
        }
        let pct = |i: usize| -> f64 {
            let k = ks[i];
            let (f, c) = (k.floor(), k.ceil());
            let (vf, vc) = (vals[2 * i] as f64, vals[2 * i + 1] as f64);
            if f == c {
                vf
            } else {
                vf * (c - k) + vc * (k - f)
            }
        };
        let s = Summary {
            count: n,
            max: self.max as f64,
            avg: self.sum as f64 / n as f64,
            median: pct(0),
            p95: pct(1),
            p99: pct(2),
        };
        self.hist[..self.used].iter_mut().for_each(|c| *c = 0);
        self.used = 0;
        self.big.clear();
        self.count = 0;
        self.sum = 0;
        self.max = 0;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opp_sim_percentile() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 0.5), Some(2.5));
        assert_eq!(percentile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&v, 1.0), Some(4.0));
        // k = 3 * 0.99 = 2.97 -> 3*0.03 + 4*0.97
        let p = percentile_sorted(&v, 0.99).unwrap();
        assert!((p - 3.97).abs() < 1e-12);
        assert_eq!(percentile_sorted(&[], 0.5), None);
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 0.5), Some(2.0));
    }

    #[test]
    fn int_samples_match_sorting() {
        let mut s = IntSamples::default();
        let vals: Vec<u64> = (0..1000u64)
            .map(|i| (i * 7919) % 10007 + (i % 3) * 2)
            .collect();
        for &v in &vals {
            s.push(v);
        }
        let sum = s.take_summary().unwrap();
        let mut f: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        f.sort_by(f64::total_cmp);
        assert_eq!(sum.median, percentile_sorted(&f, 0.5).unwrap());
        assert_eq!(sum.p95, percentile_sorted(&f, 0.95).unwrap());
        assert_eq!(sum.p99, percentile_sorted(&f, 0.99).unwrap());
        assert_eq!(sum.max, *f.last().unwrap());
        assert_eq!(sum.count, 1000);
        assert!(s.take_summary().is_none());
        s.push(5);
        assert_eq!(s.take_summary().unwrap().p99, 5.0);
    }
}
