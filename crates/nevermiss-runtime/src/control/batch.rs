//! Batches of changes and their atomicity (P4Runtime §12.2 "Batching and Ordering of Updates",
//! `WriteRequest.atomicity`).

use super::{Applied, Atomicity, Change, ControlError, ControlResult};
use crate::state::Switch;
use std::time::Duration;

/// How long a dataplane-atomic batch waits for the workers to reach their quiescent point.
const GATE_TIMEOUT: Duration = Duration::from_secs(2);

impl Switch {
    /// Applies a batch of changes, serialized with every other write and read. Returns one
    /// result per change, in order. Under `RollbackOnError` and `DataplaneAtomic`, a failed
    /// batch changes nothing: the failing change reports its own error, every other one
    /// `Aborted`.
    pub fn write(&self, changes: &[Change], atomicity: Atomicity) -> Vec<ControlResult<Applied>> {
        let _w = self.control_write();
        match atomicity {
            Atomicity::ContinueOnError => {
                let r = changes
                    .iter()
                    .map(|c| self.apply_change(c, false).map(|(a, _)| a))
                    .collect();
                self.settle_specs();
                r
            }
            Atomicity::RollbackOnError => {
                let r = self.write_all_or_none(changes);
                self.settle_specs();
                r
            }
            Atomicity::DataplaneAtomic => {
                let closed = match self.gate().close(GATE_TIMEOUT) {
                    Ok(c) => c,
                    Err(_) => {
                        return changes
                            .iter()
                            .map(|_| {
                                Err(ControlError::Unavailable(
                                    "the data plane did not reach a quiescent point".into(),
                                ))
                            })
                            .collect()
                    }
                };
                let r = self.write_all_or_none(changes);
                // No worker runs a retired table function now (`spec.rs`).
                self.reap_specs(true);
                drop(closed);
                // Compiled with the gate open: meanwhile packets take the general apply.
                self.settle_specs();
                r
            }
        }
    }

    /// Applies one change (a batch of one, `ContinueOnError`).
    pub fn write_one(&self, change: &Change) -> ControlResult<Applied> {
        let _w = self.control_write();
        let r = self.apply_change(change, false).map(|(a, _)| a);
        self.settle_specs();
        r
    }

    fn write_all_or_none(&self, changes: &[Change]) -> Vec<ControlResult<Applied>> {
        let mut undo: Vec<Change> = Vec::with_capacity(changes.len());
        let mut done: Vec<Applied> = Vec::with_capacity(changes.len());
        for (i, c) in changes.iter().enumerate() {
            match self.apply_change(c, true) {
                Ok((a, u)) => {
                    done.push(a);
                    undo.extend(u);
                }
                Err(e) => {
                    for u in undo.iter().rev() {
                        // Undoing a change that succeeded restores what it replaced; should it
                        // fail nonetheless, nothing better can be done than to go on.
                        let _ = self.apply_change(u, false);
                    }
                    return changes
                        .iter()
                        .enumerate()
                        .map(|(j, _)| {
                            if j == i {
                                Err(e.clone())
                            } else {
                                Err(ControlError::Aborted(format!(
                                    "update {} failed; the batch was rolled back",
                                    i + 1
                                )))
                            }
                        })
                        .collect();
                }
            }
        }
        done.into_iter().map(Ok).collect()
    }

    /// Runs `f` while holding the control plane's read lock: it sees all or none of any write.
    pub fn read_consistent<R>(&self, f: impl FnOnce(&Switch) -> R) -> R {
        let _r = self.control_read();
        f(self)
    }
}
