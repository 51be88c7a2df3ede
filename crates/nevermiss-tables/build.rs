fn main() {
    // `--cfg loom` selects the loom model-checking build (tests/loom.rs).
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
