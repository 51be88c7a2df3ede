//! Lowers every program of a directory, reporting errors and panics:
//! `cargo run -p p4-ir --example lower_all -- DIR`.

fn main() {
    let dir = std::env::args().nth(1).expect("usage: lower_all DIR");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    files.sort();
    let (mut ok, mut err, mut panics, mut skipped) = (0, 0, 0, 0);
    std::panic::set_hook(Box::new(|_| {}));
    for f in files {
        let Ok(c) = p4_front::driver::compile_file(&f, &Default::default()) else {
            skipped += 1;
            continue;
        };
        if c.checked.main.is_none() {
            skipped += 1;
            continue;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p4_ir::lower(&c).map(|p| p.functions.len())
        }));
        match r {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(d)) => {
                err += 1;
                println!("ERR {}: {}", f.display(), d.message);
            }
            Err(e) => {
                panics += 1;
                let m = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                println!("PANIC {}: {m}", f.display());
            }
        }
    }
    println!("lowered {ok}, errors {err}, panics {panics}, not compiled/no main {skipped}");
}
