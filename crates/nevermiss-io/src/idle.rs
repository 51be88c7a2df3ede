//! What a run loop does when its ports have nothing: adaptive polling, as OVS's PMD threads
//! (`pmd-sleep-max`) and DPDK's power management (empty-poll thresholds, then monitor/pause)
//! do it. After [`SPIN`] of empty rounds the loop waits: in `poll(2)` on the ports' file
//! descriptors ([`Port::wait_fds`]: the kernel wakes it when a frame arrives), for at most
//! [`WAIT_MAX`] so that it still sees a stop request, statistics and link changes; or, when a
//! port cannot be waited on (an in-memory queue), in sleeps that double from [`SLEEP_MIN`] to
//! [`SLEEP_MAX`]. Any received packet ends the wait and resets the spin. [`Polling::Busy`]
//! never waits (the lowest latency, a whole core).
//!
//! Guarantees: a port that is done ([`Port::rx_done`]) is not waited on; a wait never lasts
//! longer than [`WAIT_MAX`]; [`IdleWait::idle`] never fails (a `poll` error is a short sleep).

use crate::port::Port;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// How long a loop keeps polling after its last packet before it waits.
pub const SPIN: Duration = Duration::from_micros(200);
/// The longest wait in `poll(2)`: how late a stop request or a statistics line may be seen.
pub const WAIT_MAX: Duration = Duration::from_millis(10);
/// The first sleep when a port cannot be waited on.
pub const SLEEP_MIN: Duration = Duration::from_micros(20);
/// The longest such sleep: the most an in-memory queue's packet waits when the loop was idle.
pub const SLEEP_MAX: Duration = Duration::from_millis(1);

/// How a run loop polls its ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Polling {
    /// Spin while packets come, wait when they stop (the default).
    #[default]
    Adaptive,
    /// Poll without pause, whatever comes (a core at 100 %).
    Busy,
}

/// The idle state of one run loop (one per worker).
#[derive(Debug)]
pub struct IdleWait {
    polling: Polling,
    /// When the current run of empty rounds began.
    empty_since: Option<Instant>,
    sleep: Duration,
    fds: Vec<RawFd>,
    pollfds: Vec<libc::pollfd>,
    waits: u64,
}

impl IdleWait {
    /// A loop's idle waiting with `polling`, starting busy (no empty round yet).
    pub fn new(polling: Polling) -> IdleWait {
        IdleWait {
            polling,
            empty_since: None,
            sleep: SLEEP_MIN,
            fds: Vec::new(),
            pollfds: Vec::new(),
            waits: 0,
        }
    }

    /// A round received packets: poll on.
    pub fn busy(&mut self) {
        self.empty_since = None;
        self.sleep = SLEEP_MIN;
    }

    /// How often this loop waited (in `poll` or asleep).
    pub fn waits(&self) -> u64 {
        self.waits
    }

    /// A round of `ports` received nothing: spin on for [`SPIN`], then wait until one of them
    /// may have a packet (or [`WAIT_MAX`] passed), or sleep when one cannot be waited on.
    pub fn idle(&mut self, ports: &[Box<dyn Port>]) {
        if self.polling == Polling::Busy {
            std::hint::spin_loop();
            return;
        }
        let now = Instant::now();
        let since = *self.empty_since.get_or_insert(now);
        if now.duration_since(since) < SPIN {
            std::hint::spin_loop();
            return;
        }
        self.waits += 1;
        self.fds.clear();
        let mut waitable = true;
        for p in ports.iter().filter(|p| !p.rx_done()) {
            waitable &= p.wait_fds(&mut self.fds);
        }
        if !waitable {
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(SLEEP_MAX);
            return;
        }
        if self.fds.is_empty() {
            // Nothing can ever arrive (null ports): the loop only watches its flags.
            std::thread::sleep(WAIT_MAX);
            return;
        }
        self.pollfds.clear();
        self.pollfds.extend(self.fds.iter().map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }));
        // SAFETY: `pollfds` is a valid array of `len` pollfd structures for the call's duration.
        let rc = unsafe {
            libc::poll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                WAIT_MAX.as_millis() as libc::c_int,
            )
        };
        if rc < 0 {
            // EINTR (a signal: the loop looks at its flags now) or a descriptor gone bad: no
            // busy loop either way.
            std::thread::sleep(SLEEP_MIN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::NullPort;
    use crate::packet::{Batch, Packet};
    use crate::port::PortError;
    use crate::stats::PortStats;
    use std::sync::Arc;

    /// A port that can be waited on through a pipe's read end.
    struct PipePort {
        fd: RawFd,
        stats: Arc<PortStats>,
    }

    impl Port for PipePort {
        fn id(&self) -> u32 {
            0
        }
        fn rx_burst(&mut self, _: &mut Batch) -> Result<usize, PortError> {
            Ok(0)
        }
        fn rx_done(&self) -> bool {
            false
        }
        fn tx(&mut self, p: &[Packet]) -> Result<usize, PortError> {
            Ok(p.len())
        }
        fn flush(&mut self) -> Result<(), PortError> {
            Ok(())
        }
        fn stats(&self) -> &Arc<PortStats> {
            &self.stats
        }
        fn describe(&self) -> String {
            "pipe".into()
        }
        fn wait_fds(&self, out: &mut Vec<RawFd>) -> bool {
            out.push(self.fd);
            true
        }
    }

    fn pipe() -> (RawFd, RawFd) {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    #[test]
    fn an_idle_loop_waits_in_poll_and_wakes_when_a_port_is_readable() {
        let (r, w) = pipe();
        let ports: Vec<Box<dyn Port>> = vec![Box::new(PipePort {
            fd: r,
            stats: PortStats::new(0),
        })];
        let mut idle = IdleWait::new(Polling::Adaptive);
        // Spinning first: no wait within SPIN.
        idle.idle(&ports);
        assert_eq!(idle.waits(), 0);
        std::thread::sleep(SPIN);
        // Nothing readable: the wait takes WAIT_MAX (and not much less).
        let t = Instant::now();
        idle.idle(&ports);
        assert!(
            t.elapsed() >= WAIT_MAX - Duration::from_millis(1),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(idle.waits(), 1);
        // Readable: the wait returns at once.
        // SAFETY: writing one byte from a valid buffer to the pipe's write end.
        assert_eq!(unsafe { libc::write(w, b"x".as_ptr().cast(), 1) }, 1);
        let t = Instant::now();
        idle.idle(&ports);
        assert!(t.elapsed() < WAIT_MAX / 2, "{:?}", t.elapsed());
        // A packet resets the spin.
        idle.busy();
        let before = idle.waits();
        idle.idle(&ports);
        assert_eq!(idle.waits(), before);
        // SAFETY: closing the pipe's descriptors, which nothing else uses.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }

    #[test]
    fn busy_polling_never_waits_and_unwaitable_ports_sleep_in_growing_steps() {
        let ports: Vec<Box<dyn Port>> = vec![Box::new(NullPort::new(0))];
        let mut busy = IdleWait::new(Polling::Busy);
        let t = Instant::now();
        for _ in 0..1000 {
            busy.idle(&ports);
        }
        assert_eq!(busy.waits(), 0);
        assert!(t.elapsed() < WAIT_MAX, "{:?}", t.elapsed());
        let q: Vec<Box<dyn Port>> = vec![Box::new(crate::local::QueuePort::new(0).0)];
        let mut idle = IdleWait::new(Polling::Adaptive);
        idle.idle(&q);
        std::thread::sleep(SPIN);
        for _ in 0..12 {
            idle.idle(&q);
        }
        assert_eq!(idle.sleep, SLEEP_MAX);
        assert_eq!(idle.waits(), 12);
    }
}
