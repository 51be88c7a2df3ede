//! The docs run: every command shown in a code block of README.md, ARCHITECTURE.md and
//! docs/*.md (and lab/README.md when it exists) runs as shown, on the small inputs of
//! `tests/docs/`, and this test fails when one no longer works.
//!
//! How a page is run: each page gets a fresh sandbox directory holding links to the
//! repository's `examples/`, `data/`, `scripts/`, `tests/`, `p4include/`, `docs/` and `lab/` and
//! the fixtures of `tests/docs/` (`prog.p4`, `in.pcap`, `entries.txt`, ...); nothing else (a
//! page that uses a trace makes it, as a reader would); `nevermiss` and `./target/release/nevermiss` are the binary
//! under test. Its command lines run in order, each with `bash -o pipefail -c`, and must exit 0
//! (or the code the block names) within the time limit and never print a panic.
//!
//! What is a command: a line of a code block whose first word (after `VAR=value` words) is a
//! program of [`PROGRAMS`]; `\` continues it; `# ...` at the end is a comment; optional parts
//! written `[...]` and a trailing `...` are dropped, so a synopsis runs in its shortest form.
//! Fenced blocks labelled with a language other than sh/bash/console/text are not scanned.
//!
//! Annotations (ARCHITECTURE.md, "Docs are tested"): an HTML comment on the lines just before a
//! block, `<!-- docs-test: DIRECTIVE; DIRECTIVE -->`, with directives
//! - `skip: REASON` — not run (the reason is printed);
//! - `needs: VAR` — run only when the environment variable VAR is set (else skipped, printed);
//! - `needs: root` — run only as root (a leading `sudo` is then dropped);
//! - `replace: FROM => TO` — replace text in every line of the block before running it (to
//!   scale a run down, or to point a placeholder at a fixture); several apply in order;
//! - `exit: N` — the exit code every line of the block must give;
//! - `timeout: SECS` — the time limit of each line (default 120).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// First words that make a line of a code block a command.
const PROGRAMS: &[&str] = &[
    "nevermiss",
    "nevermiss-lab",
    "./target/release/nevermiss",
    "target/release/nevermiss",
    "cargo",
    "bash",
    "python3",
    "mkdir",
    "git",
    "ip",
    "sudo",
    "time",
    "cd",
    "export",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

#[derive(Debug, Default, Clone)]
struct Directives {
    skip: Option<String>,
    needs: Vec<String>,
    replace: Vec<(String, String)>,
    exit: i32,
    timeout: u64,
}

#[derive(Debug)]
struct Block {
    /// 1-based line of the block's first line.
    line: usize,
    commands: Vec<(usize, String)>,
    directives: Directives,
}

fn parse_directives(comment: &str, page: &str, line: usize) -> Directives {
    let mut d = Directives {
        exit: 0,
        timeout: 120,
        ..Directives::default()
    };
    for part in comment.split(';') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (k, v) = part.split_once(':').unwrap_or_else(|| {
            panic!("{page}:{line}: docs-test directive `{part}` is not KEY: VALUE")
        });
        let v = v.trim();
        match k.trim() {
            "skip" => d.skip = Some(v.to_string()),
            "needs" => d.needs.push(v.to_string()),
            "replace" => {
                let (a, b) = v
                    .split_once("=>")
                    .unwrap_or_else(|| panic!("{page}:{line}: replace needs `FROM => TO`"));
                d.replace.push((a.trim().to_string(), b.trim().to_string()));
            }
            "exit" => {
                d.exit = v
                    .parse()
                    .unwrap_or_else(|_| panic!("{page}:{line}: exit `{v}`"))
            }
            "timeout" => {
                d.timeout = v
                    .parse()
                    .unwrap_or_else(|_| panic!("{page}:{line}: timeout `{v}`"))
            }
            other => panic!("{page}:{line}: unknown docs-test directive `{other}`"),
        }
    }
    d
}

/// Drops `[...]` groups (nested), a trailing `...`, and a trailing `# comment`.
fn shortest_form(cmd: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut quote = None;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                if depth == 0 {
                    out.push(c)
                }
            }
            (Some(_), c) => {
                if depth == 0 {
                    out.push(c)
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                if depth == 0 {
                    out.push(c)
                }
            }
            (None, '#') if depth == 0 && (out.is_empty() || out.ends_with(' ')) => break,
            (None, '[') => depth += 1,
            (None, ']') if depth > 0 => depth -= 1,
            (None, c) => {
                if depth == 0 {
                    out.push(c)
                }
            }
        }
    }
    let mut s = out.split_whitespace().collect::<Vec<_>>().join(" ");
    while s.ends_with("...") {
        s.truncate(s.len() - 3);
        s = s.trim_end().to_string();
    }
    s
}

/// The words of a command line, quotes kept inside words (`A="x y"` is one word).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The program a command line runs: its first word after `VAR=value` words.
fn program(line: &str) -> Option<String> {
    words(line)
        .into_iter()
        .find(|w| !(w.contains('=') && w.chars().next().is_some_and(|c| c.is_ascii_uppercase())))
}

fn is_command(line: &str) -> bool {
    let Some(first) = program(line) else {
        return false;
    };
    PROGRAMS.contains(&first.as_str())
        || first.starts_with("./scripts/")
        || first.starts_with("scripts/")
        || first.starts_with(".venv/")
        || first.starts_with("./.venv/")
}

/// The code blocks of a page with the commands they show.
fn blocks(page: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut prev_blank = true;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_start();
        let fence = t.starts_with("```") || t.starts_with("~~~");
        let indented =
            (l.starts_with("    ") || l.starts_with('\t')) && prev_blank && !t.is_empty();
        if !fence && !indented {
            prev_blank = t.is_empty();
            i += 1;
            continue;
        }
        // The annotation: an HTML comment just above (blank lines allowed).
        let mut j = i;
        let mut comment = None;
        while j > 0 {
            j -= 1;
            let p = lines[j].trim();
            if p.is_empty() {
                continue;
            }
            if let Some(c) = p.strip_prefix("<!-- docs-test:") {
                comment = Some(c.trim_end_matches("-->").to_string());
            }
            break;
        }
        let directives = match &comment {
            Some(c) => parse_directives(c, page, i + 1),
            None => parse_directives("", page, i + 1),
        };
        let start = i;
        let mut body = Vec::new();
        if fence {
            let lang = t.trim_start_matches(['`', '~']).trim().to_lowercase();
            let scan = matches!(
                lang.as_str(),
                "" | "sh" | "bash" | "console" | "text" | "shell"
            );
            i += 1;
            while i < lines.len() {
                let u = lines[i].trim_start();
                if u.starts_with("```") || u.starts_with("~~~") {
                    break;
                }
                if scan {
                    body.push((i + 1, lines[i].trim().to_string()));
                }
                i += 1;
            }
            i += 1;
        } else {
            while i < lines.len()
                && (lines[i].starts_with("    ")
                    || lines[i].starts_with('\t')
                    || lines[i].trim().is_empty())
            {
                body.push((i + 1, lines[i].trim().to_string()));
                i += 1;
            }
        }
        prev_blank = true;
        // Join continuation lines, keep commands.
        let mut commands = Vec::new();
        let mut k = 0;
        while k < body.len() {
            let (n, mut cmd) = body[k].clone();
            while cmd.ends_with('\\') && k + 1 < body.len() {
                cmd.pop();
                k += 1;
                cmd.push(' ');
                cmd.push_str(&body[k].1);
            }
            let cmd = cmd.trim_start_matches("$ ").to_string();
            if is_command(&cmd) {
                commands.push((n, cmd));
            }
            k += 1;
        }
        if !commands.is_empty() {
            out.push(Block {
                line: start + 1,
                commands,
                directives,
            });
        }
    }
    out
}

/// A sandbox for one page: links to the repository's folders, the fixtures, generated traces
/// and the binary at both names the docs use.
fn sandbox(page: &str) -> PathBuf {
    let root = root();
    let dir = std::env::temp_dir().join(format!(
        "nevermiss-docs-{}-{}",
        std::process::id(),
        page.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("target/release")).unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    for d in [
        "examples",
        "data",
        "scripts",
        "tests",
        "p4include",
        "docs",
        "lab",
        "crates",
    ] {
        if root.join(d).exists() {
            std::os::unix::fs::symlink(root.join(d), dir.join(d)).unwrap();
        }
    }
    for e in std::fs::read_dir(root.join("tests/docs")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        if name != "README.md" {
            std::fs::copy(&p, dir.join(name)).unwrap();
        }
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_nevermiss"));
    std::os::unix::fs::symlink(&bin, dir.join("target/release/nevermiss")).unwrap();
    std::os::unix::fs::symlink(&bin, dir.join("bin/nevermiss")).unwrap();
    // No traces are made here: a page that uses one shows how it is made (`nevermiss sim gen`).
    dir
}

fn run_line(dir: &Path, cmd: &str, timeout: u64) -> (Option<i32>, String, bool) {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-o", "pipefail", "-c", cmd])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let reader = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let (ho, he) = (reader(Box::new(out)), reader(Box::new(err)));
    let start = Instant::now();
    let mut timed_out = false;
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if start.elapsed() > Duration::from_secs(timeout) {
            let _ = child.kill();
            let _ = child.wait();
            timed_out = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!("{}{}", ho.join().unwrap(), he.join().unwrap());
    (code, text, timed_out)
}

/// The files of the folders a sandbox links to (the repository's own, `crates/` aside), to
/// catch a documented command that writes into them.
fn repo_files(root: &Path) -> std::collections::BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeSet<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for d in [
        "examples",
        "data",
        "scripts",
        "tests",
        "p4include",
        "docs",
        "lab",
    ] {
        walk(root, &root.join(d), &mut out);
    }
    out
}

fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut v = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    if root.join("lab/README.md").exists() {
        v.push(root.join("lab/README.md"));
    }
    v
}

#[test]
fn every_command_in_the_docs_runs_as_shown() {
    let root = root();
    let mut failures = Vec::new();
    let (mut ran, mut skipped) = (0, 0);
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    for page in pages() {
        let rel = page.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        let blocks = blocks(&rel, &text);
        if blocks.is_empty() {
            continue;
        }
        let dir = sandbox(&rel);
        for b in &blocks {
            let d = &b.directives;
            let missing: Vec<&String> = d
                .needs
                .iter()
                .filter(|n| {
                    if n.as_str() == "root" {
                        !is_root
                    } else {
                        std::env::var_os(n).is_none()
                    }
                })
                .collect();
            if let Some(why) = &d.skip {
                eprintln!("docs: {rel}:{}: skipped ({why})", b.line);
                skipped += b.commands.len();
                continue;
            }
            if !missing.is_empty() {
                eprintln!("docs: {rel}:{}: skipped (needs {missing:?})", b.line);
                skipped += b.commands.len();
                continue;
            }
            for (n, cmd) in &b.commands {
                let mut line = shortest_form(cmd);
                // Root needs no sudo (which root-only machines often lack).
                if is_root {
                    if let Some(rest) = line.strip_prefix("sudo ") {
                        line = rest.to_string();
                    }
                }
                for (a, z) in &d.replace {
                    line = line.replace(a.as_str(), z);
                }
                if program(&line).as_deref() == Some("cargo") {
                    failures.push(format!(
                        "{rel}:{n}: `{cmd}` runs cargo, which the docs test cannot do inside \
                         `cargo test`: annotate its block with `<!-- docs-test: skip: REASON -->`"
                    ));
                    continue;
                }
                let before = repo_files(&root);
                let (code, out, timed_out) = run_line(&dir, &line, d.timeout);
                ran += 1;
                let written: Vec<String> = repo_files(&root).difference(&before).cloned().collect();
                if !written.is_empty() {
                    failures.push(format!(
                        "{rel}:{n}: `{line}` wrote into the repository (the sandbox links to it): \
                         {written:?}; name outputs in the sandbox's top directory"
                    ));
                    for w in &written {
                        let _ = std::fs::remove_file(root.join(w));
                    }
                }
                let panicked = out.contains("panicked at") || code == Some(101);
                if timed_out || panicked || code != Some(d.exit) {
                    let why = if timed_out {
                        format!("did not finish in {} s", d.timeout)
                    } else if panicked {
                        "panicked".into()
                    } else {
                        format!("exit {code:?}, expected {}", d.exit)
                    };
                    let tail: String = out
                        .lines()
                        .rev()
                        .take(12)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n");
                    failures.push(format!("{rel}:{n}: `{line}` {why}\n{tail}"));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("docs: {ran} commands run, {skipped} skipped");
    assert!(ran > 20, "only {ran} commands found in the docs");
    assert!(
        failures.is_empty(),
        "{} doc commands fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn synopses_run_in_their_shortest_form() {
    assert_eq!(
        shortest_form("nevermiss check prog.p4 [-I dir]... [-D NAME[=VAL]]... [--dump-ir]"),
        "nevermiss check prog.p4"
    );
    assert_eq!(
        shortest_form("nevermiss sim hazards --trace t.pcap   # FDH for N = 1..30"),
        "nevermiss sim hazards --trace t.pcap"
    );
    assert_eq!(
        shortest_form(r#"nevermiss run x.p4 --port "0=gen:a,b#c" --entries FILE..."#),
        r#"nevermiss run x.p4 --port "0=gen:a,b#c" --entries FILE"#
    );
    assert!(is_command("P4C_DIR=/x ./scripts/test.sh"));
    assert_eq!(
        program(r#"RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=t cargo test"#).as_deref(),
        Some("cargo")
    );
    assert!(!is_command("fn id(&self) -> u32;"));
    let b = blocks(
        "t.md",
        "text\n\n<!-- docs-test: replace: a => b; exit: 2 -->\n\n    nevermiss run a\n    port 0: in 3\n\nmore\n",
    );
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].commands, vec![(5, "nevermiss run a".to_string())]);
    assert_eq!(b[0].directives.exit, 2);
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The docs describe a clone: every relative link of every page (and its `#anchor`, for a
/// page) is a file of the repository, and no page names places outside it (the papers, which
/// docs/papers.md cites, and the project's notes).
#[test]
fn every_link_in_the_docs_points_into_the_repository() {
    let root = root();
    let mut bad = Vec::new();
    for page in pages() {
        let rel = page.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, line) in text.lines().enumerate() {
            for outside in ["papers/0", "shared/reference", "../shared", "/work/"] {
                if line.contains(outside) {
                    bad.push(format!(
                        "{rel}:{}: names `{outside}`, outside a clone",
                        i + 1
                    ));
                }
            }
            // Links outside code spans (`[a](b)` in backquotes is code, not a link).
            let prose: String = line
                .split('`')
                .enumerate()
                .filter(|(k, _)| k % 2 == 0)
                .map(|(_, t)| t)
                .collect::<Vec<_>>()
                .join(" ");
            let mut rest = prose.as_str();
            while let Some(at) = rest.find("](") {
                let tail = &rest[at + 2..];
                let Some(end) = tail.find(')') else { break };
                let target = &tail[..end];
                rest = &tail[end..];
                if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let inside = path
                    .canonicalize()
                    .is_ok_and(|p| p.starts_with(&root) && !p.starts_with(root.join("target")));
                if !inside {
                    bad.push(format!(
                        "{rel}:{}: link `{target}`: no such file in the repository",
                        i + 1
                    ));
                    continue;
                }
                if !anchor.is_empty() && path.extension().is_some_and(|x| x == "md") {
                    let linked = std::fs::read_to_string(&path).unwrap();
                    let found = linked
                        .lines()
                        .filter_map(|l| l.strip_prefix('#'))
                        .any(|h| slug(h.trim_start_matches('#')) == anchor);
                    if !found {
                        bad.push(format!(
                            "{rel}:{}: link `{target}`: no heading `#{anchor}` there",
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
