//! A worker: one thread's interpreter, running packets to completion one after the other.

use crate::arch::{process_pna, process_psa, process_v1, Outputs};
use crate::exec::Exec;
use crate::switch::Switch;
use std::sync::Arc;

/// One worker thread's state. The switch is shared (`Arc`), everything else is owned and
/// reused from packet to packet.
pub struct Worker {
    pub sw: Arc<Switch>,
    pub ex: Exec,
    pub out: Outputs,
}

impl Worker {
    /// A worker for `sw`; `id` seeds its random generator.
    pub fn new(sw: Arc<Switch>, id: u64) -> Worker {
        let ex = Exec::new(&sw, id);
        Worker {
            sw,
            ex,
            out: Outputs::default(),
        }
    }

    /// Runs one packet that arrived on `port` at `now_ns`; the packets it produces are in
    /// [`Worker::outputs`] until the next call. Never panics on any input bytes.
    pub fn process(&mut self, data: &[u8], port: u32, now_ns: u64) -> &Outputs {
        self.out.clear();
        self.ex.now_ns = now_ns;
        let sw = &*self.sw;
        if let Some(pi) = &sw.arch.pna {
            process_pna(&mut self.ex, sw, pi, data, port, &mut self.out);
        } else if let Some(vi) = &sw.arch.v1 {
            process_v1(&mut self.ex, sw, vi, data, port, &mut self.out);
        } else if let Some(pi) = &sw.arch.psa {
            process_psa(&mut self.ex, sw, pi, data, port, &mut self.out);
        }
        &self.out
    }

    /// The packets produced by the last [`Worker::process`].
    pub fn outputs(&self) -> &Outputs {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The switch is shared by workers and the control plane; a worker moves to its thread.
    #[test]
    fn switch_is_sync_and_worker_is_send() {
        fn sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        sync::<Switch>();
        sync::<p4_ir::Program>();
        send::<Worker>();
    }
}
