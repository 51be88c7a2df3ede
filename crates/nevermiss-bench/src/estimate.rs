//! Estimators that resolve less than one step of the counter, with confidence intervals.
//!
//! This machine's TSC advances in steps of ~24 ticks (10 ns), so the median of a class's
//! per-packet ticks lies on that grid and jumps a whole step between runs, and a class whose
//! packets fall in two modes (a random line in the L3 or in DRAM) has a median that jumps between
//! the modes. A trimmed mean moves smoothly in both cases: the timed region starts at a random
//! phase of the counter's step, so the grid's rounding is unbiased dither that averages out over
//! many packets, and a mixture's mean follows the mixing proportion. Trimming `TRIM` of each tail
//! removes what does not belong to the operation (interrupts, page faults, the scheduler).
//!
//! The intervals are Student-t intervals: over the runs' trimmed means when there are two runs or
//! more (each run builds its table anew, so allocation and cache placement vary between them as
//! between processes), and Tukey–McLaughlin's winsorized standard error within one run otherwise.
//! Differences (Eq. 4) add the variances with Welch–Satterthwaite degrees of freedom; ratios use
//! the delta method (ignoring the positive covariance two deltas share through the baseline, which
//! makes the interval wider, not narrower).

use hdrhistogram::Histogram;
use serde::Serialize;

/// The fraction trimmed from each tail (20 %, the usual robust choice: the middle 60 % of the
/// packets are averaged).
pub const TRIM: f64 = 0.2;

/// Coverage of every interval this module makes.
pub const CONFIDENCE: f64 = 0.95;

/// A point estimate with its standard error and its 95 % confidence interval `[lo, hi]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Its standard error.
    pub se: f64,
    /// Degrees of freedom of the t-interval (`f64::INFINITY` serialises as null).
    pub df: f64,
    /// Lower end of the 95 % interval.
    pub lo: f64,
    /// Upper end of the 95 % interval.
    pub hi: f64,
}

impl Estimate {
    /// `value ± t(df)·se`.
    pub fn new(value: f64, se: f64, df: f64) -> Estimate {
        let half = t975(df) * se;
        Estimate {
            value,
            se,
            df,
            lo: value - half,
            hi: value + half,
        }
    }

    /// Every figure scaled by `k > 0` (ticks to ns).
    pub fn scale(self, k: f64) -> Estimate {
        Estimate::new(self.value * k, self.se * k, self.df)
    }

    /// `self − other`, independent: variances add, Welch–Satterthwaite degrees of freedom.
    pub fn minus(self, other: Estimate) -> Estimate {
        let (a, b) = (self.se * self.se, other.se * other.se);
        let var = a + b;
        let df = welch_df(a, self.df, b, other.df);
        Estimate::new(self.value - other.value, var.sqrt(), df)
    }

    /// `self / other` by the delta method; `None` when `other` is not clearly above zero (its
    /// interval reaches 0), where a ratio has no meaning.
    pub fn ratio(self, other: Estimate) -> Option<Estimate> {
        if other.value <= 0.0 || other.lo <= 0.0 || !self.value.is_finite() {
            return None;
        }
        let r = self.value / other.value;
        let rel = (self.se / other.value).powi(2) + (r * other.se / other.value).powi(2);
        Some(Estimate::new(r, rel.sqrt(), self.df.min(other.df)))
    }

    /// Half the interval's width relative to the value (`±x` as a fraction).
    pub fn rel_half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0 / self.value.abs()
    }
}

fn welch_df(a: f64, df_a: f64, b: f64, df_b: f64) -> f64 {
    let num = (a + b) * (a + b);
    let den = a * a / df_a + b * b / df_b;
    if den > 0.0 {
        num / den
    } else {
        df_a.min(df_b)
    }
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %); linear in
/// `1/df` between tabulated points, which is exact to 3 decimals here.
pub fn t975(df: f64) -> f64 {
    // Standard table values (df = 1..30, then 40, 60, 120, ∞).
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    const TAIL: [(f64, f64); 5] = [
        (30.0, 2.042),
        (40.0, 2.021),
        (60.0, 2.000),
        (120.0, 1.980),
        (f64::INFINITY, 1.960),
    ];
    if df.is_nan() || df < 1.0 {
        return T[0];
    }
    if df <= 30.0 {
        let lo = df.floor() as usize;
        let hi = df.ceil() as usize;
        if lo == hi {
            return T[lo - 1];
        }
        // Interpolate in 1/df.
        let (x0, x1) = (1.0 / lo as f64, 1.0 / hi as f64);
        let w = (1.0 / df - x1) / (x0 - x1);
        return T[hi - 1] + w * (T[lo - 1] - T[hi - 1]);
    }
    for pair in TAIL.windows(2) {
        let ((d0, t0), (d1, t1)) = (pair[0], pair[1]);
        if df <= d1 {
            let (x0, x1) = (1.0 / d0, if d1.is_infinite() { 0.0 } else { 1.0 / d1 });
            let w = (1.0 / df - x1) / (x0 - x1);
            return t1 + w * (t0 - t1);
        }
    }
    1.960
}

/// The `trim`-trimmed mean of values given as `(value, count)` in ascending order, with its
/// Tukey–McLaughlin standard error (from the winsorized variance) and `n − 2g − 1` degrees of
/// freedom, `g = ⌊trim·n⌋`. `None` for fewer than 2 values kept.
pub fn trimmed_mean(sorted: &[(f64, u64)], trim: f64) -> Option<Estimate> {
    let n: u64 = sorted.iter().map(|&(_, c)| c).sum();
    let g = (trim * n as f64).floor() as u64;
    let kept = n.checked_sub(2 * g)?;
    if kept < 2 {
        return None;
    }
    // Ranks [g, n − g) are kept; the winsorized sample clamps the ranks below to rank g's value
    // and the ranks above to rank n − g − 1's.
    let (lo_v, hi_v) = (value_at_rank(sorted, g), value_at_rank(sorted, n - g - 1));
    let mut sum = 0.0;
    let mut rank = 0u64;
    for &(v, c) in sorted {
        let start = rank.max(g);
        let end = (rank + c).min(n - g);
        if end > start {
            sum += v * (end - start) as f64;
        }
        rank += c;
    }
    let mean = sum / kept as f64;
    let wmean = (sum + g as f64 * (lo_v + hi_v)) / n as f64;
    let mut ss = 0.0;
    for &(v, c) in sorted {
        let w = v.clamp(lo_v, hi_v) - wmean;
        ss += w * w * c as f64;
    }
    let var_w = ss / (n - 1) as f64;
    let se = var_w.sqrt() / ((1.0 - 2.0 * g as f64 / n as f64) * (n as f64).sqrt());
    Some(Estimate::new(mean, se, (kept - 1) as f64))
}

fn value_at_rank(sorted: &[(f64, u64)], r: u64) -> f64 {
    let mut rank = 0u64;
    for &(v, c) in sorted {
        rank += c;
        if r < rank {
            return v;
        }
    }
    sorted.last().map_or(f64::NAN, |&(v, _)| v)
}

/// The values a histogram recorded, ascending, each as its bucket's middle value (exact below
/// 2048 at 3 significant digits).
pub fn hist_values(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    h.iter_recorded()
        .map(|v| {
            (
                h.median_equivalent(v.value_iterated_to()) as f64,
                v.count_at_value(),
            )
        })
        .collect()
}

/// One class's trimmed mean over runs: with two runs or more, the mean of the runs' trimmed
/// means and the t-interval over them (`k − 1` degrees of freedom); with one run, that run's
/// trimmed mean and within-run interval. Runs without packets of the class are skipped.
pub fn over_runs(runs: &[&Histogram<u64>], trim: f64) -> Option<Estimate> {
    let per_run: Vec<Estimate> = runs
        .iter()
        .filter(|h| !h.is_empty())
        .filter_map(|h| trimmed_mean(&hist_values(h), trim))
        .collect();
    match per_run.len() {
        0 => None,
        1 => Some(per_run[0]),
        k => {
            let mean = per_run.iter().map(|e| e.value).sum::<f64>() / k as f64;
            let var = per_run
                .iter()
                .map(|e| (e.value - mean).powi(2))
                .sum::<f64>()
                / (k - 1) as f64;
            // Never claim more precision than one run's own interval gives.
            let within = per_run.iter().map(|e| e.se).fold(0.0, f64::max) / (k as f64).sqrt();
            let se = (var / k as f64).sqrt().max(within);
            Some(Estimate::new(mean, se, (k - 1) as f64))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(v: &[u64]) -> Vec<(f64, u64)> {
        let mut s = v.to_vec();
        s.sort_unstable();
        let mut out: Vec<(f64, u64)> = Vec::new();
        for x in s {
            match out.last_mut() {
                Some((y, c)) if *y == x as f64 => *c += 1,
                _ => out.push((x as f64, 1)),
            }
        }
        out
    }

    #[test]
    fn trimmed_mean_drops_the_tails() {
        // 10 values, g = 2: the two smallest and two largest go; mean of 3..=8 (the outliers
        // 1000 and 5000 have no weight).
        let e = trimmed_mean(&sorted(&[1, 2, 3, 4, 5, 6, 7, 8, 1000, 5000]), 0.2).unwrap();
        assert!((e.value - 5.5).abs() < 1e-12, "{e:?}");
        assert_eq!(e.df, 5.0);
        assert!(e.lo < 5.5 && e.hi > 5.5 && e.se > 0.0);
        // Winsorized: 3,3,3..8,8,8 → variance of that sample; SE = sd_w / (0.6·√10).
        let w = [3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 8.0];
        let m = w.iter().sum::<f64>() / 10.0;
        let var = w.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 9.0;
        assert!((e.se - var.sqrt() / (0.6 * 10f64.sqrt())).abs() < 1e-12);
        assert!(trimmed_mean(&sorted(&[5]), 0.2).is_none());
        assert!(trimmed_mean(&[], 0.2).is_none());
    }

    /// Costs spread evenly over 110.3 ± 20 ticks, read on a counter that steps by 10 from a
    /// random phase: every reading is a multiple of 10, the median is stuck on that grid, and the
    /// trimmed mean recovers the centre to a small fraction of a step, its interval covering it.
    #[test]
    fn trimmed_mean_resolves_below_the_counter_step() {
        let step = 10.0;
        let centre = 110.3;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut ticks = Vec::new();
        for _ in 0..400_000 {
            let cost = centre - 20.0 + 40.0 * uniform();
            let phase = uniform() * step;
            let t0 = (phase / step).floor() * step;
            let t1 = ((phase + cost) / step).floor() * step;
            ticks.push((t1 - t0) as u64);
        }
        let s = sorted(&ticks);
        assert!(s.iter().all(|&(v, _)| v % step == 0.0), "{s:?}");
        let e = trimmed_mean(&s, TRIM).unwrap();
        assert!((e.value - centre).abs() < 0.5, "{e:?}");
        assert!(e.hi - e.lo < 0.5, "{e:?}");
        let median = value_at_rank(&s, ticks.len() as u64 / 2);
        assert_eq!(median % step, 0.0);
    }

    /// A two-mode class (L3 or DRAM): the median jumps from one mode to the other when the
    /// proportion crosses one half; the trimmed mean moves a little.
    #[test]
    fn trimmed_mean_follows_a_mixture_smoothly() {
        let mix = |fast: u64, slow: u64| {
            let mut v = vec![(200.0, fast), (500.0, slow)];
            v.retain(|&(_, c)| c > 0);
            trimmed_mean(&v, 0.2).unwrap().value
        };
        let (a, b) = (mix(5100, 4900), mix(4900, 5100));
        assert!((b - a).abs() < 20.0, "{a} {b}");
        assert!(a > 200.0 && b < 500.0);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1.0), 12.706);
        assert_eq!(t975(2.0), 4.303);
        assert_eq!(t975(30.0), 2.042);
        assert!((t975(1e9) - 1.96).abs() < 1e-3);
        assert!(t975(2.5) < 4.303 && t975(2.5) > 3.182);
        assert!(t975(45.0) < 2.021 && t975(45.0) > 2.000);
        assert_eq!(t975(f64::INFINITY), 1.96);
        assert_eq!(t975(0.5), 12.706);
    }

    #[test]
    fn differences_and_ratios() {
        let a = Estimate::new(300.0, 3.0, 1e6);
        let b = Estimate::new(100.0, 4.0, 1e6);
        let d = a.minus(b);
        assert_eq!(d.value, 200.0);
        assert!((d.se - 5.0).abs() < 1e-12);
        let r = a.ratio(b).unwrap();
        assert_eq!(r.value, 3.0);
        // se = 3·√((3/300)² + (4/100)²)
        let want = 3.0 * ((0.01f64).powi(2) + (0.04f64).powi(2)).sqrt();
        assert!((r.se - want).abs() < 1e-12);
        assert!(r.lo < 3.0 && r.hi > 3.0);
        // A denominator whose interval reaches zero gives no ratio.
        assert!(a.ratio(Estimate::new(1.0, 5.0, 10.0)).is_none());
        let ns = a.scale(0.5);
        assert_eq!((ns.value, ns.se), (150.0, 1.5));
    }

    #[test]
    fn runs_combine_by_their_spread() {
        let mut hs = Vec::new();
        for base in [100u64, 104, 98] {
            let mut h = Histogram::<u64>::new(3).unwrap();
            for i in 0..1000 {
                h.record(base + i % 5).unwrap();
            }
            hs.push(h);
        }
        let refs: Vec<&Histogram<u64>> = hs.iter().collect();
        let e = over_runs(&refs, 0.2).unwrap();
        assert!((e.value - 102.6666).abs() < 0.01, "{e:?}");
        assert_eq!(e.df, 2.0);
        // The runs differ by ~3: the interval is as wide as that spread says, not the tiny
        // within-run one.
        let sd = {
            let v = [102.0, 106.0, 100.0];
            let m = v.iter().sum::<f64>() / 3.0;
            (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 2.0).sqrt()
        };
        assert!((e.se - sd / 3f64.sqrt()).abs() < 0.01, "{e:?}");
        let empty = Histogram::<u64>::new(3).unwrap();
        let one = over_runs(&[&empty, &hs[0]], 0.2).unwrap();
        assert_eq!(one.value, 102.0);
        assert!(over_runs(&[&empty], 0.2).is_none());
    }
}
