//! Runs random packets through every program of a directory that compiles and lowers for PNA
//! or v1model, reporting panics: `cargo run --release -p nevermiss-runtime --example fuzz_dir -- DIR [PACKETS]`.

use nevermiss_runtime::{Config, Switch, Worker};
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: fuzz_dir DIR [PACKETS]");
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut ran, mut panics) = (0, 0);
    for f in files {
        let Ok(prog) = p4_ir::lower::source::compile_file(&f, &Default::default()) else {
            continue;
        };
        let Ok(sw) = Switch::new(prog, Config::default()) else {
            continue;
        };
        let sw = Arc::new(sw);
        ran += 1;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut w = Worker::new(sw.clone(), 1);
            let mut x: u64 = 0x9e3779b97f4a7c15;
            let mut buf = Vec::new();
            for i in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let len = (x % 200) as usize;
                buf.clear();
                let mut y = x;
                for _ in 0..len {
                    y = y
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    buf.push((y >> 56) as u8);
                }
                // Often an Ethernet/IPv4 start so that parsers get further.
                if i % 2 == 0 && buf.len() > 24 {
                    buf[12] = 0x08;
                    buf[13] = 0x00;
                    buf[14] = 0x45;
                }
                w.process(&buf, (x >> 8) as u32 % 8, i * 1000);
            }
        }));
        if let Err(e) = r {
            panics += 1;
            let m = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            println!("PANIC {}: {m}", f.display());
        }
    }
    println!("ran {ran} programs, {panics} panicked");
}
