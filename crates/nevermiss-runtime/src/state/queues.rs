//! What waits for the control plane: digests the data plane packed and idle-timeout
//! notifications of the tables' timers; and the timers' run ([`Switch::expire`]).

use super::Switch;
use crate::types::DigestMsg;
use nevermiss_tables::EntryView;
use p4_ir::ir::TableId;
use p4_ir::IdleTimeout;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// An idle-timeout notification for the control plane (NOTIFY_CONTROL): the entry as it was
/// when its idle time ran out. The control plane turns it into a typed entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The table.
    pub table: TableId,
    /// The entry.
    pub entry: EntryView,
}

/// The queues to the control plane, each bounded by `Config::digest_queue`.
#[derive(Default)]
pub(crate) struct Queues {
    digests: Mutex<Vec<DigestMsg>>,
    notifications: Mutex<Vec<Notification>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Switch {
    /// Queues a digest message, dropping it (and counting) when the queue is full.
    pub fn push_digest(&self, msg: DigestMsg) {
        let mut q = lock(&self.queues.digests);
        if q.len() >= self.config.digest_queue {
            self.stats.digests_dropped.fetch_add(1, Relaxed);
            return;
        }
        q.push(msg);
    }

    /// Takes the queued digests.
    pub fn take_digests(&self) -> Vec<DigestMsg> {
        std::mem::take(&mut *lock(&self.queues.digests))
    }

    /// Number of digest messages waiting for the control plane.
    pub fn pending_digests(&self) -> usize {
        lock(&self.queues.digests).len()
    }

    /// Number of idle-timeout notifications waiting for the control plane.
    pub fn pending_notifications(&self) -> usize {
        lock(&self.queues.notifications).len()
    }

    /// Takes the waiting idle-timeout notifications (oldest first).
    pub fn take_notifications(&self) -> Vec<Notification> {
        std::mem::take(&mut *lock(&self.queues.notifications))
    }

    /// Runs the idle timers of every table up to `now_ns`: AUTO_DELETE entries are removed,
    /// NOTIFY_CONTROL entries produce notifications. Returns the number of entries affected.
    pub fn expire(&self, now_ns: u64) -> usize {
        let mut n = 0;
        for (ti, (td, rt)) in self.prog.tables.iter().zip(&self.tables).enumerate() {
            if td.idle_timeout == IdleTimeout::None {
                continue;
            }
            let ex = rt.table().expire(now_ns);
            n += ex.len();
            let ti = ti as TableId;
            let notes: Vec<Notification> = ex
                .into_iter()
                .filter(|e| e.notify)
                .map(|e| Notification {
                    table: ti,
                    entry: e.entry,
                })
                .collect();
            if !notes.is_empty() {
                let mut q = lock(&self.queues.notifications);
                if q.len() < self.config.digest_queue {
                    q.extend(notes);
                }
            }
        }
        n
    }
}
