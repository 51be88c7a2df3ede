//! Prints the IR of a P4 program: `cargo run -p p4-ir --example dump_ir -- prog.p4`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump_ir PROG.p4");
        std::process::exit(2);
    };
    let c = match p4_front::driver::compile_file(path.as_ref(), &Default::default()) {
        Ok(c) => c,
        Err(f) => {
            eprint!("{}", f.render());
            std::process::exit(1);
        }
    };
    match p4_ir::lower(&c) {
        Ok(p) => print!("{}", p4_ir::dump::dump(&p)),
        Err(d) => {
            eprint!("{}", p4_front::diag::render(&c.unit, &d));
            std::process::exit(1);
        }
    }
}
