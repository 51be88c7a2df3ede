//! `nevermiss simple-switch-grpc` (also `nevermiss-simple-switch-grpc`, and any name of the
//! executable that contains `simple_switch_grpc`): BMv2's `simple_switch_grpc` command line,
//! as p4lang/tutorials' `utils/p4runtime_switch.py`, p4-utils and p4c's runners pass it,
//! mapped onto `nevermiss serve` (docs/drop-in.md says what maps to what).
//!
//! Guarantees: every flag BMv2 documents is accepted, before or after the `--` that separates
//! BMv2's target options (the tutorials put `--cpu-port` and `--priority-queues` after it);
//! a flag that means nothing here (`--thrift-port`, `--nanolog`, `--debugger`, ...) is
//! accepted with a notice on stderr saying what to use instead; a flag BMv2 does not have, a
//! missing value or a bad one is an error (exit 2), as BMv2 rejects them. Interfaces send
//! through their qdisc (tc shaping holds them back, as it holds back BMv2's `pcap_inject`)
//! and every port has an egress queue (BMv2's 64 packets deep), so v1model's queueing
//! metadata is real.

use std::ffi::OsString;

/// What the command line became: `nevermiss serve`'s arguments and the notices to print.
#[derive(Debug, PartialEq, Eq)]
pub struct Mapped {
    pub serve: Vec<String>,
    pub notices: Vec<String>,
    /// `--help` or `--version`: print this and exit 0.
    pub print: Option<String>,
}

/// BMv2's flags that take no value and mean nothing here: (flag, why).
const IGNORED_SWITCHES: &[(&str, &str)] = &[
    ("--debugger", "the BMv2 debugger is not served"),
    ("--log-flush", "logs are written as they come"),
    (
        "--dump-packet-data",
        "--log-level debug traces each packet's path instead",
    ),
    (
        "--enable-swap",
        "a new pipeline always takes over between two batches",
    ),
    (
        "--grpc-server-ssl",
        "TLS is on when --grpc-server-cert and --grpc-server-key are given",
    ),
    (
        "--grpc-server-with-client-auth",
        "clients are authenticated when --grpc-server-cacert is given",
    ),
];

/// BMv2's flags that take a value and mean nothing here: (flag, why).
const IGNORED_VALUES: &[(&str, &str)] = &[
    (
        "--thrift-port",
        "the Thrift server (simple_switch_CLI) is not served: the switch is driven over \
         P4Runtime (nevermiss ctl, p4runtime-shell)",
    ),
    (
        "--nanolog",
        "the nanomsg event log is not served; --log-console logs each packet",
    ),
    ("--debugger-addr", "the BMv2 debugger is not served"),
    (
        "--notifications-addr",
        "nanomsg notifications are not served; P4Runtime streams digests",
    ),
    ("--restore-state", "state is not restored from a BMv2 dump"),
    ("--max-port-count", "ports are not limited in number"),
    ("--json-version", "the JSON's own __meta__ version is read"),
    ("--packet-in", "PacketIn goes over P4Runtime's stream"),
    (
        "--use-files",
        "use nevermiss run --port N=pcap:IN,OUT for files",
    ),
    ("--load-modules", "BMv2 modules are not loaded"),
    (
        "--dp-grpc-server-addr",
        "the data-plane gRPC service is not served",
    ),
    ("--drop-port", "the drop port is v1model's (511)"),
];

/// BMv2's own flags that nevermiss maps (for the error that lists them).
const MAPPED: &str = "-i/--interface N@IFACE, --pcap [DIR], --device-id N, --no-p4, JSON, \
     --log-console, --log-level/-L LEVEL, --log-file FILE, --thrift-port P (ignored), \
     --priority-queues N, -- --grpc-server-addr ADDR:PORT, --cpu-port N, \
     --grpc-server-cert/--grpc-server-key/--grpc-server-cacert FILE";

/// Maps BMv2's command line (without the program name) onto `nevermiss serve`'s.
pub fn map(args: &[String]) -> Result<Mapped, String> {
    let mut m = Mapped {
        serve: vec!["serve".into()],
        notices: Vec::new(),
        print: None,
    };
    let (mut program, mut no_p4) = (None::<String>, false);
    let (mut addr, mut device) = ("0.0.0.0:9559".to_string(), "0".to_string());
    let mut priorities = None::<String>;
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        if a == "--" {
            continue;
        }
        // `--flag=value` is `--flag value`.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        macro_rules! value {
            ($name:expr) => {
                match inline.clone().or_else(|| it.next().cloned()) {
                    Some(v) => v,
                    None => return Err(format!("{} needs a value", $name)),
                }
            };
        }
        match flag.as_str() {
            "-h" | "--help" => {
                m.print = Some(format!(
                    "nevermiss simple-switch-grpc: BMv2's simple_switch_grpc command line, \
                     served by nevermiss serve (docs/drop-in.md).\n\nusage: \
                     nevermiss-simple-switch-grpc [-i N@IFACE]... [--device-id N] \
                     [--log-console] [--log-level LEVEL] [--pcap DIR] (JSON | --no-p4) \
                     [-- --grpc-server-addr ADDR:PORT --cpu-port N --priority-queues N]\n\n\
                     flags: {MAPPED}\n"
                ));
                return Ok(m);
            }
            "-v" | "--version" => {
                m.print = Some(format!(
                    "{} (nevermiss, as simple_switch_grpc)\n",
                    env!("CARGO_PKG_VERSION")
                ));
                return Ok(m);
            }
            "-i" | "--interface" => {
                let v = value!(flag);
                let Some((n, iface)) = v.split_once('@') else {
                    return Err(format!("{flag} {v}: expected N@IFACE (e.g. 1@s1-eth1)"));
                };
                if n.parse::<u32>().is_err() || iface.is_empty() {
                    return Err(format!("{flag} {v}: expected N@IFACE (e.g. 1@s1-eth1)"));
                }
                // Through the qdisc: tc shaping on the interface limits what the switch sends.
                m.serve
                    .extend(["--port".into(), format!("{n}=if:{iface},qdisc")]);
            }
            "--pcap" => {
                // BMv2's value is optional (the current directory without one).
                let dir = match inline.clone() {
                    Some(d) => d,
                    None => match it.peek() {
                        Some(d) if !d.starts_with('-') && !d.ends_with(".json") => {
                            it.next().cloned().unwrap_or_default()
                        }
                        _ => ".".into(),
                    },
                };
                m.serve
                    .extend(["--pcap-dir".into(), dir, "--pcap-by-interface".into()]);
            }
            "--device-id" => {
                let v = value!(flag);
                v.parse::<u64>()
                    .map_err(|_| format!("--device-id {v}: not a number"))?;
                device = v;
            }
            "--no-p4" => no_p4 = true,
            "--log-console" => m.serve.push("--log-console".into()),
            "-L" | "--log-level" => {
                let v = value!(flag);
                m.serve.extend(["--log-level".into(), v]);
            }
            "--log-file" => {
                let v = value!(flag);
                m.serve.extend(["--log-file".into(), v]);
            }
            "--grpc-server-addr" => addr = value!(flag),
            "--cpu-port" => {
                let v = value!(flag);
                v.parse::<u32>()
                    .map_err(|_| format!("--cpu-port {v}: not a port number"))?;
                m.serve.extend(["--cpu-port".into(), v]);
            }
            "--priority-queues" => priorities = Some(value!(flag)),
            "--grpc-server-cert" => {
                let v = value!(flag);
                m.serve.extend(["--tls-cert".into(), v]);
            }
            "--grpc-server-key" => {
                let v = value!(flag);
                m.serve.extend(["--tls-key".into(), v]);
            }
            "--grpc-server-cacert" => {
                let v = value!(flag);
                m.serve.extend(["--tls-ca".into(), v]);
            }
            f => {
                if let Some((_, why)) = IGNORED_SWITCHES.iter().find(|(s, _)| *s == f) {
                    m.notices.push(format!("{f}: accepted and ignored: {why}"));
                } else if let Some((_, why)) = IGNORED_VALUES.iter().find(|(s, _)| *s == f) {
                    let v = value!(f);
                    m.notices
                        .push(format!("{f} {v}: accepted and ignored: {why}"));
                } else if f.starts_with('-') {
                    // Issue 27: an unknown flag warns and never aborts (scripts pass flags of
                    // other BMv2 versions). A value that follows it (not a flag, not the JSON
                    // program) is taken as its value and ignored with it.
                    let v = inline.clone().or_else(|| {
                        it.next_if(|n| !n.starts_with('-') && !n.ends_with(".json"))
                            .cloned()
                    });
                    m.notices.push(match v {
                        Some(v) => format!(
                            "unknown flag `{f} {v}`: ignored (simple_switch_grpc's flags \
                             here: {MAPPED})"
                        ),
                        None => format!(
                            "unknown flag `{f}`: ignored (simple_switch_grpc's flags here: \
                             {MAPPED})"
                        ),
                    });
                } else if let Some(p) = &program {
                    return Err(format!(
                        "two programs: `{p}` and `{f}` (simple_switch_grpc takes one JSON file)"
                    ));
                } else {
                    program = Some(f.to_string());
                }
            }
        }
    }
    match (&program, no_p4) {
        (Some(p), true) => {
            return Err(format!(
                "--no-p4 and the program {p}: give one (--no-p4 waits for a controller's \
                 SetForwardingPipelineConfig)"
            ))
        }
        (Some(p), false) => m.serve.push(p.clone()),
        (None, _) => {}
    }
    m.serve.extend([
        "--grpc-addr".into(),
        addr,
        "--device-id".into(),
        device,
        "--egress-queues".into(),
        "all".into(),
    ]);
    if let Some(n) = priorities {
        m.serve.extend(["--priority-queues".into(), n]);
    }
    Ok(m)
}

/// Runs the command: maps `args` and runs `nevermiss serve` with them.
pub fn run(args: &[OsString]) -> u8 {
    let args: Vec<String> = match args
        .iter()
        .map(|a| a.clone().into_string())
        .collect::<Result<_, _>>()
    {
        Ok(a) => a,
        Err(a) => {
            eprintln!("error: simple-switch-grpc: argument {a:?} is not UTF-8");
            return 2;
        }
    };
    let m = match map(&args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: simple-switch-grpc: {e}");
            return 2;
        }
    };
    if let Some(text) = m.print {
        print!("{text}");
        return 0;
    }
    for n in &m.notices {
        eprintln!("simple-switch-grpc: {n}");
    }
    eprintln!(
        "simple-switch-grpc: running nevermiss {}",
        m.serve.join(" ")
    );
    crate::serve_from(&m.serve)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_tutorials_command_line() {
        // As utils/p4runtime_switch.py builds it (joined, then split by the shell).
        let m = map(&v("-i 1@s1-eth1 -i 2@s1-eth2 --pcap /tmp/pcaps --nanolog \
             ipc:///tmp/bm-0-log.ipc --device-id 0 build/basic.json --log-console \
             --thrift-port 9090 -- --grpc-server-addr 0.0.0.0:50051 --cpu-port 255 \
             --priority-queues 8"))
        .unwrap();
        assert_eq!(
            m.serve,
            v(
                "serve --port 1=if:s1-eth1,qdisc --port 2=if:s1-eth2,qdisc --pcap-dir \
               /tmp/pcaps --pcap-by-interface --log-console --cpu-port 255 build/basic.json --grpc-addr \
               0.0.0.0:50051 --device-id 0 --egress-queues all --priority-queues 8"
            )
        );
        assert_eq!(m.notices.len(), 2, "{:?}", m.notices);
        assert!(m.notices[1].starts_with("--thrift-port 9090: accepted and ignored"));
        assert!(m.notices[1].contains("P4Runtime"));
    }

    #[test]
    fn defaults_and_forms() {
        let m = map(&v("--no-p4 --pcap --log-level=debug")).unwrap();
        assert_eq!(
            m.serve,
            v(
                "serve --pcap-dir . --pcap-by-interface --log-level debug --grpc-addr \
               0.0.0.0:9559 --device-id 0 --egress-queues all"
            )
        );
        let m = map(&v("--pcap prog.json")).unwrap();
        assert!(m.serve.contains(&"prog.json".to_string()), "{:?}", m.serve);
        assert!(map(&v("--help")).unwrap().print.is_some());
        assert!(map(&v("--version")).unwrap().print.is_some());
    }

    #[test]
    fn unknown_flags_warn_and_never_abort() {
        let m = map(&v("--frobnicate --knob 3 --no-p4 --flag=x")).unwrap();
        assert_eq!(m.notices.len(), 3, "{:?}", m.notices);
        assert!(m.notices[0].contains("unknown flag `--frobnicate`: ignored"));
        assert!(m.notices[1].contains("unknown flag `--knob 3`: ignored"));
        assert!(m.notices[2].contains("unknown flag `--flag x`: ignored"));
        // The JSON program after an unknown switch stays the program.
        let m = map(&v("--frobnicate prog.json")).unwrap();
        assert!(m.serve.contains(&"prog.json".to_string()), "{:?}", m.serve);
    }

    #[test]
    fn bad_flags_are_errors() {
        for (args, want) in [
            ("-i eth0", "-i eth0: expected N@IFACE"),
            ("-i x@eth0", "expected N@IFACE"),
            ("--device-id", "--device-id needs a value"),
            ("--device-id one", "--device-id one: not a number"),
            ("-- --cpu-port x", "--cpu-port x: not a port number"),
            ("a.json b.json", "two programs"),
            ("--no-p4 a.json", "--no-p4 and the program a.json"),
            ("--thrift-port", "--thrift-port needs a value"),
        ] {
            let e = map(&v(args)).unwrap_err();
            assert!(e.contains(want), "{args}: {e}");
        }
    }
}
