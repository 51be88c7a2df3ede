//! Per-port packet counters.
//!
//! [`PortStats`] holds atomic counters that any thread may bump and read at any time (relaxed
//! ordering: each counter is exact, a snapshot of several is not taken atomically).
//! [`StatsSnapshot`] and [`StatsTable`] print them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counters of one port.
#[derive(Debug, Default)]
pub struct PortStats {
    /// The port's number.
    pub port: u32,
    /// Packets received (read from the port).
    pub rx_packets: AtomicU64,
    /// Bytes received.
    pub rx_bytes: AtomicU64,
    /// Packets transmitted (written to the port).
    pub tx_packets: AtomicU64,
    /// Bytes transmitted.
    pub tx_bytes: AtomicU64,
    /// Packets dropped: by the program, or because the port could not take them.
    pub dropped: AtomicU64,
}

/// A copy of a port's counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// The port's number.
    pub port: u32,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped.
    pub dropped: u64,
}

impl PortStats {
    /// Zeroed counters for `port`, shareable between threads.
    pub fn new(port: u32) -> Arc<PortStats> {
        Arc::new(PortStats {
            port,
            ..PortStats::default()
        })
    }

    /// Counts `packets` packets of `bytes` bytes in total received.
    #[inline]
    pub fn add_rx(&self, packets: u64, bytes: u64) {
        self.rx_packets.fetch_add(packets, Ordering::Relaxed);
        self.rx_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts packets transmitted.
    #[inline]
    pub fn add_tx(&self, packets: u64, bytes: u64) {
        self.tx_packets.fetch_add(packets, Ordering::Relaxed);
        self.tx_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts dropped packets.
    #[inline]
    pub fn add_dropped(&self, packets: u64) {
        self.dropped.fetch_add(packets, Ordering::Relaxed);
    }

    /// Reads every counter.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            port: self.port,
            rx_packets: self.rx_packets.load(Ordering::Relaxed),
            rx_bytes: self.rx_bytes.load(Ordering::Relaxed),
            tx_packets: self.tx_packets.load(Ordering::Relaxed),
            tx_bytes: self.tx_bytes.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
        }
    }
}

impl fmt::Display for StatsSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "port {}: rx {} pkts ({} B), tx {} pkts ({} B), dropped {}",
            self.port, self.rx_packets, self.rx_bytes, self.tx_packets, self.tx_bytes, self.dropped
        )
    }
}

impl fmt::Display for PortStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.snapshot().fmt(f)
    }
}

/// Snapshots of several ports, printed as an aligned table with a total row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsTable(pub Vec<StatsSnapshot>);

impl StatsTable {
    /// Snapshots of the given ports, in the order given.
    pub fn collect<'a>(ports: impl IntoIterator<Item = &'a PortStats>) -> StatsTable {
        StatsTable(ports.into_iter().map(PortStats::snapshot).collect())
    }

    /// Sum of all rows (port field 0).
    pub fn total(&self) -> StatsSnapshot {
        self.0
            .iter()
            .fold(StatsSnapshot::default(), |a, s| StatsSnapshot {
                port: 0,
                rx_packets: a.rx_packets + s.rx_packets,
                rx_bytes: a.rx_bytes + s.rx_bytes,
                tx_packets: a.tx_packets + s.tx_packets,
                tx_bytes: a.tx_bytes + s.tx_bytes,
                dropped: a.dropped + s.dropped,
            })
    }
}

impl fmt::Display for StatsTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>6} {:>12} {:>14} {:>12} {:>14} {:>12}",
            "port", "rx pkts", "rx bytes", "tx pkts", "tx bytes", "dropped"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, s: &StatsSnapshot| {
            writeln!(
                f,
                "{:>6} {:>12} {:>14} {:>12} {:>14} {:>12}",
                name, s.rx_packets, s.rx_bytes, s.tx_packets, s.tx_bytes, s.dropped
            )
        };
        for s in &self.0 {
            row(f, &s.port.to_string(), s)?;
        }
        row(f, "total", &self.total())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_prints() {
        let a = PortStats::new(0);
        let b = PortStats::new(3);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let a = Arc::clone(&a);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        a.add_rx(1, 64);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        b.add_tx(2, 128);
        b.add_dropped(5);
        assert_eq!(a.snapshot().rx_packets, 4000);
        assert_eq!(a.snapshot().rx_bytes, 256_000);
        assert_eq!(
            b.to_string(),
            "port 3: rx 0 pkts (0 B), tx 2 pkts (128 B), dropped 5"
        );
        let t = StatsTable::collect([&*a, &*b]);
        assert_eq!(t.total().rx_packets, 4000);
        assert_eq!(t.total().dropped, 5);
        let s = t.to_string();
        assert_eq!(s.lines().count(), 4);
        assert!(s.lines().last().unwrap().trim_start().starts_with("total"));
    }
}
