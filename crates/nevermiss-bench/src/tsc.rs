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

/// The counter's granularity in ticks: the smallest non-zero step between consecutive reads
/// that makes up at least 5% of the steps (a KVM guest's TSC may advance in steps of many
/// ticks, with rare odd steps; this bounds what Eq. 4 can resolve, like the timestamper's
/// 12.5 ns in papers/000 Table IIIa).
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
    let total: u64 = steps.values().sum();
    steps
        .iter()
        .find(|&(_, &n)| n * 20 >= total)
        .map_or(1, |(&step, _)| step)
}

#[cfg(test)]
mod tests {
    use super::*;

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
