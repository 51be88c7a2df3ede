//! Port liveness for P4Runtime watch ports: the run loop asks its ports whether their link is
//! up (`Port::link_up`, every `run::LINK_POLL`) and tells the switch (`Switch::port_up`), which
//! selector groups consult.

mod common;
use common::build;

use nevermiss_io::{Batch, Packet, Port, PortError, PortStats};
use nevermiss_runtime::run::{run, RunOptions, LINK_POLL};
use nevermiss_runtime::Config;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A port with no traffic whose link state the test sets.
struct Link {
    id: u32,
    up: Arc<AtomicBool>,
    stats: Arc<PortStats>,
}

impl Port for Link {
    fn id(&self) -> u32 {
        self.id
    }
    fn rx_burst(&mut self, _batch: &mut Batch) -> Result<usize, PortError> {
        Ok(0)
    }
    fn rx_done(&self) -> bool {
        false
    }
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        Ok(pkts.len())
    }
    fn flush(&mut self) -> Result<(), PortError> {
        Ok(())
    }
    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }
    fn describe(&self) -> String {
        format!("{}=link", self.id)
    }
    fn link_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }
}

#[test]
fn the_run_loop_reports_each_ports_link_state_to_the_switch() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/p4/two-actions.p4");
    let sw = build(&path, &Default::default(), Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let up = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let ports: Vec<Box<dyn Port>> = vec![Box::new(Link {
        id: 5,
        up: up.clone(),
        stats: Arc::new(PortStats::default()),
    })];
    let opts = RunOptions {
        stop: Some(stop.clone()),
        ..RunOptions::default()
    };
    let (sw2, handle) = (sw.clone(), {
        let sw = sw.clone();
        std::thread::spawn(move || run(sw, ports, &opts))
    });
    let wait = |want: bool| {
        let end = Instant::now() + LINK_POLL * 20;
        while Instant::now() < end {
            if sw2.port_up(5) == want {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    };
    assert!(wait(false), "port 5 reported down");
    assert_eq!(sw.ports_down(), vec![5]);
    up.store(true, Ordering::Relaxed);
    assert!(wait(true), "port 5 reported up again");
    assert!(sw.ports_down().is_empty());
    assert!(sw.port_up(6), "a port no loop reports on is up");
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap().unwrap();
}
