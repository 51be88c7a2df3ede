//! Time-stamp counter reads for per-packet latency (papers/000 §IV-c, Eq. 4).
//!
//! On x86_64 a timed region is `lfence; rdtsc; lfence` … `rdtscp; lfence`: the first read waits
//! for earlier instructions and keeps later ones from starting before it; `rdtscp` waits for the
//! timed code to finish and the last fence keeps later code out of the region. Ticks are TSC
//! ticks (invariant TSC, `shared/reference/machine.md`), never core cycles. On other
//! architectures a tick is one nanosecond of [`std::time::Instant`].

use std::time::{Duration, Instant};

/// Where ticks come from.
pub fn source() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "rdtsc"
    } else {
        "instant-ns"
    }
}

/// Reads the counter at the start of a timed region.
#[inline(always)]
pub fn start() -> u64 {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)]
    // SAFETY: lfence and rdtsc have no preconditions on x86_64 (SSE2 is baseline).
    unsafe {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        fallback_ns()
    }
}

/// Reads the counter at the end of a timed region.
#[inline(always)]
pub fn stop() -> u64 {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)]
    // SAFETY: rdtscp exists on every CPU this targets (machine.md lists it); lfence as above.
    unsafe {
        use core::arch::x86_64::{__rdtscp, _mm_lfence};
        let mut aux = 0u32;
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        fallback_ns()
    }
}

/// An unordered read (no fences): consecutive reads are as close together as possible.
#[inline(always)]
fn raw() -> u64 {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)]
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        fallback_ns()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn fallback_ns() -> u64 {
    use std::sync::OnceLock;
    static BASE: OnceLock<Instant> = OnceLock::new();
    BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Ticks per second, measured against the monotonic clock over `over` (50–100 ms is enough for
/// four significant digits). On non-x86_64 targets this is 1e9.
pub fn calibrate(over: Duration) -> f64 {
    if !cfg!(target_arch = "x86_64") {
        return 1e9;
    }
    let mut best = Vec::new();
    for _ in 0..3 {
        let i0 = Instant::now();
        let t0 = start();
        while i0.elapsed() < over / 3 {
            std::hint::spin_loop();
        }
        let t1 = stop();
        let ns = i0.elapsed().as_nanos() as f64;
        if ns > 0.0 && t1 > t0 {
            best.push((t1 - t0) as f64 * 1e9 / ns);
        }
    }
    best.sort_by(f64::total_cmp);
    best.get(best.len() / 2).copied().unwrap_or(1e9)
}

/// The median cost in ticks of an empty timed region (`start(); stop()`), over `n` reads. It
/// cancels out of Eq. 4 (both terms carry it) and is reported for reference.
pub fn overhead(n: usize) -> u64 {
    let mut v: Vec<u64> = (0..n.max(1))
        .map(|_| {
            let a = start();
            let b = stop();
            b.saturating_sub(a)
        })
        .collect();
    v.sort_unstable();
    v[v.len() / 2]
}

/// The counter's granularity in ticks: the greatest common divisor of the non-zero steps between
/// consecutive reads that make up at least 10% of the steps each. The TSC of this project's VMs
/// advances in steps of 26 ticks (a 100 MHz reference × 26 = 2.6 GHz): consecutive reads differ
/// by 26, 52 or 78 ticks, with a few odd steps of 1 and 25 (phase corrections); the smallest
/// step seen is not the granularity, the divisor of the common ones is. A fine-grained counter
/// gives steps of many neighbouring values, whose divisor is 1. This bounds what Eq. 4 can
/// resolve, like the timestamper's 12.5 ns in papers/000 Table IIIa.
pub fn resolution(reads: usize) -> u64 {
    let mut steps = std::collections::BTreeMap::<u64, u64>::new();
    let mut prev = raw();
    for _ in 0..reads.max(2) {
        let t = raw();
        if t > prev {
            *steps.entry(t - prev).or_default() += 1;
            prev = t;
        }
    }
    step_of(&steps)
}

/// The granularity of a histogram of steps (see [`resolution`]).
fn step_of(steps: &std::collections::BTreeMap<u64, u64>) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let total: u64 = steps.values().sum();
    steps
        .iter()
        .filter(|&(_, &n)| n * 10 >= total)
        .map(|(&s, _)| s)
        .fold(0, gcd)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_is_the_divisor_of_the_common_steps() {
        let h = |v: &[(u64, u64)]| {
            v.iter()
                .copied()
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        // This VM's counter, measured: steps of 26 ticks and their multiples, some odd ones.
        assert_eq!(step_of(&h(&[(52, 187), (78, 683), (104, 128), (7, 2)])), 26);
        let vm = [
            (1, 6080),
            (25, 1493),
            (26, 76725),
            (52, 6000),
            (77, 4586),
            (78, 5076),
        ];
        assert_eq!(step_of(&h(&vm)), 26);
        // A fine-grained counter: reads differ by neighbouring values.
        assert_eq!(step_of(&h(&[(30, 50), (31, 50), (32, 10)])), 1);
        assert_eq!(step_of(&h(&[(40, 100)])), 40);
        assert_eq!(step_of(&h(&[])), 1);
    }

    #[test]
    fn counter_advances_and_calibrates() {
        let a = start();
        std::thread::sleep(Duration::from_millis(2));
        let b = stop();
        assert!(b > a);
        let hz = calibrate(Duration::from_millis(15));
        // Any real TSC or the ns fallback is between 100 MHz and 10 GHz.
        assert!((1e8..1e10).contains(&hz), "{hz}");
        let o = overhead(100);
        assert!(o < 1_000_000);
        let r = resolution(10_000);
        assert!((1..1_000_000).contains(&r), "{r}");
    }
}
