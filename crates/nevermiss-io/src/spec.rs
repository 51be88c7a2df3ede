//! The command line's `--port` arguments: [`PortSpec`] parses `N=pcap:IN[,OUT]`,
//! `N=gen:two-phase,...`, `N=if:NAME[,backend=...]` and `N=null` (errors with the column they
//! refer to) and opens the port it names, choosing an interface's back end. It sits above every
//! kind of port; no port imports it.

use std::fmt;
use std::path::PathBuf;

use crate::afpacket::AfPacketPort;
use crate::afxdp::AfXdpPort;
use crate::gen::{parse_gen_spec_at, TwoPhaseConfig};
use crate::iface::rx_queues;
use crate::local::{GenPort, NullPort, PcapPort};
use crate::port::{Port, PortError};

/// An error in a `--port` specification: the message and the 1-based column it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// 1-based character column in the spec string.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "port spec, column {}: {}", self.col, self.message)
    }
}

impl std::error::Error for SpecError {}

/// What a port is, as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortKind {
    /// `pcap:IN`, `pcap:IN,OUT` or `pcap:,OUT` (an empty input means none).
    Pcap {
        /// Input capture file.
        input: Option<PathBuf>,
        /// Output capture file.
        output: Option<PathBuf>,
    },
    /// `gen:two-phase,...`.
    Gen(TwoPhaseConfig),
    /// `null`.
    Null,
    /// `if:NAME[,backend=af_packet|af_xdp][,qdisc]`: a network interface.
    Interface {
        /// The interface's name.
        name: String,
        /// The kernel interface it is driven through.
        backend: Backend,
        /// Send through the interface's qdisc (AF_PACKET; [`crate::afpacket`]), so tc
        /// shaping limits and backs up what the port sends.
        qdisc: bool,
    },
}

/// How an interface port reaches the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The best available: AF_XDP where the kernel, libxdp and the interface allow it (a
    /// receive queue per worker), else AF_PACKET; the port's description says which.
    Auto,
    /// An AF_PACKET socket with TPACKET_V3 rings ([`crate::afpacket`]).
    AfPacket,
    /// An AF_XDP socket set up by libxdp ([`crate::afxdp`]).
    AfXdp,
}

/// A parsed `--port` argument: `N=pcap:IN[,OUT]`, `N=gen:two-phase,KEY=VALUE,...`,
/// `N=if:NAME[,backend=...]` or `N=null`.
/// File names cannot contain `,`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSpec {
    /// The port number.
    pub id: u32,
    /// What the port is.
    pub kind: PortKind,
}

impl PortSpec {
    /// Parses one `--port` argument.
    pub fn parse(s: &str) -> Result<PortSpec, SpecError> {
        let err = |col: usize, m: String| SpecError { col, message: m };
        let Some((num, rest)) = s.split_once('=') else {
            return Err(err(
                1,
                format!("expected N=pcap:IN[,OUT], N=gen:..., N=if:NAME or N=null, found `{s}`"),
            ));
        };
        let id: u32 = num.trim().parse().map_err(|_| {
            err(
                1,
                format!("port number `{num}` is not a number from 0 to 2^32-1"),
            )
        })?;
        let body_col = num.chars().count() + 2;
        let (kind, args) = match rest.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (rest, None),
        };
        let args_col = body_col + kind.chars().count() + 1;
        let kind = match (kind, args) {
            ("null", None) => PortKind::Null,
            ("null", Some(_)) => return Err(err(args_col - 1, "`null` takes no arguments".into())),
            ("pcap", Some(a)) => {
                let mut files = a.split(',');
                let input = files.next().unwrap_or("");
                let output = files.next();
                if files.next().is_some() {
                    return Err(err(
                        args_col,
                        "expected pcap:IN or pcap:IN,OUT (file names cannot contain `,`)".into(),
                    ));
                }
                let input = (!input.is_empty()).then(|| PathBuf::from(input));
                let output = match output {
                    Some("") => {
                        return Err(err(
                            args_col + a.chars().count(),
                            "empty output file name after `,`".into(),
                        ))
                    }
                    Some(o) => Some(PathBuf::from(o)),
                    None => None,
                };
                if input.is_none() && output.is_none() {
                    return Err(err(
                        args_col,
                        "pcap port needs an input or an output file".into(),
                    ));
                }
                PortKind::Pcap { input, output }
            }
            ("gen", Some(a)) => PortKind::Gen(
                parse_gen_spec_at(a, id).map_err(|(at, e)| err(args_col + at, e.to_string()))?,
            ),
            ("if", Some(a)) => {
                let mut parts = a.split(',');
                let name = parts.next().unwrap_or("").to_string();
                if name.is_empty() {
                    return Err(err(
                        args_col,
                        "expected an interface name after `if:`".into(),
                    ));
                }
                let mut backend = Backend::Auto;
                let mut qdisc = false;
                for p in parts {
                    backend = match p {
                        "backend=af_packet" => Backend::AfPacket,
                        "backend=af_xdp" => Backend::AfXdp,
                        "backend=auto" => Backend::Auto,
                        "qdisc" => {
                            qdisc = true;
                            backend
                        }
                        other => {
                            return Err(err(
                                args_col,
                                format!(
                                    "unknown interface option `{other}`: expected \
                                     backend=af_packet, backend=af_xdp, backend=auto or qdisc"
                                ),
                            ))
                        }
                    };
                }
                if qdisc && backend == Backend::AfXdp {
                    return Err(err(
                        args_col,
                        "`qdisc` sends through the interface's queueing discipline, which \
                         AF_XDP bypasses: use backend=af_packet (or leave the backend out)"
                            .into(),
                    ));
                }
                PortKind::Interface {
                    name,
                    backend,
                    qdisc,
                }
            }
            ("pcap" | "gen" | "if", None) => {
                return Err(err(
                    args_col - 1,
                    format!("expected `:` and arguments after `{kind}`"),
                ))
            }
            _ => {
                return Err(err(
                    body_col,
                    format!("unknown port kind `{kind}`: expected pcap, gen, if or null"),
                ))
            }
        };
        Ok(PortSpec { id, kind })
    }

    /// Opens the port.
    pub fn open(&self) -> Result<Box<dyn Port>, PortError> {
        Ok(match &self.kind {
            PortKind::Pcap { input, output } => {
                Box::new(PcapPort::open(self.id, input.clone(), output.clone())?)
            }
            PortKind::Gen(cfg) => Box::new(GenPort::new(self.id, cfg.clone())?),
            PortKind::Null => Box::new(NullPort::new(self.id)),
            PortKind::Interface { .. } => self.open_worker(0, 1, None)?.0,
        })
    }

    /// Opens an interface port as worker `worker`'s of `workers` (`--cores`), with the back end
    /// it got. AF_XDP: the worker's own sockets on its receive queues (`q mod workers =
    /// worker`, [`crate::afxdp`]); AF_PACKET: with `Some(group)`, a socket in fanout group
    /// `group`, over which the kernel spreads packets by flow. `Auto` takes AF_XDP when the
    /// interface has at least `workers` receive queues and libxdp can set the sockets up, else
    /// AF_PACKET, and says why on stderr (worker 0). Other kinds of port are opened as by
    /// [`PortSpec::open`] and reported as `Auto`.
    pub fn open_worker(
        &self,
        worker: usize,
        workers: usize,
        group: Option<u16>,
    ) -> Result<(Box<dyn Port>, Backend), PortError> {
        let PortKind::Interface {
            name,
            backend,
            qdisc,
        } = &self.kind
        else {
            return Ok((self.open()?, Backend::Auto));
        };
        if *qdisc {
            if workers > 1 {
                return Err(PortError::Other(format!(
                    "port {} (interface {name}): `qdisc` ports run on one loop (leave out \
                     --cores)",
                    self.id
                )));
            }
            return Ok((
                Box::new(AfPacketPort::open_qdisc(self.id, name)?),
                Backend::AfPacket,
            ));
        }
        let packet = || -> Result<(Box<dyn Port>, Backend), PortError> {
            Ok((
                Box::new(AfPacketPort::open_fanout(self.id, name, group)?),
                Backend::AfPacket,
            ))
        };
        match backend {
            Backend::AfXdp => Ok((
                Box::new(AfXdpPort::open_worker(self.id, name, worker, workers)?),
                Backend::AfXdp,
            )),
            Backend::AfPacket => packet(),
            Backend::Auto => {
                let nq = rx_queues(name);
                if nq == 0 {
                    // No such interface: AF_PACKET's error names it.
                    return packet();
                }
                let why = if nq < workers {
                    format!("AF_XDP needs a receive queue per worker ({workers}), and it has {nq}")
                } else {
                    match AfXdpPort::open_worker(self.id, name, worker, workers) {
                        Ok(p) => return Ok((Box::new(p), Backend::AfXdp)),
                        Err(e) => format!("AF_XDP could not be set up: {e}"),
                    }
                };
                if worker == 0 {
                    eprintln!(
                        "port {} (interface {name}): {why}; using AF_PACKET",
                        self.id
                    );
                }
                packet()
            }
        }
    }

    /// This spec with back end `backend` (interfaces; other kinds unchanged).
    pub fn with_backend(&self, backend: Backend) -> PortSpec {
        let mut s = self.clone();
        if let PortKind::Interface { backend: b, .. } = &mut s.kind {
            *b = backend;
        }
        s
    }

    /// Whether the port's input never ends by itself (an interface).
    pub fn is_live(&self) -> bool {
        matches!(self.kind, PortKind::Interface { .. })
    }
}

impl std::str::FromStr for PortSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<PortSpec, SpecError> {
        PortSpec::parse(s)
    }
}

/// Parses several `--port` arguments and checks that no port number repeats.
pub fn parse_port_specs<S: AsRef<str>>(args: &[S]) -> Result<Vec<PortSpec>, SpecError> {
    let mut out: Vec<PortSpec> = Vec::with_capacity(args.len());
    for a in args {
        let spec = PortSpec::parse(a.as_ref())?;
        if out.iter().any(|s| s.id == spec.id) {
            return Err(SpecError {
                col: 1,
                message: format!("port {} is given twice", spec.id),
            });
        }
        // Two ports on one interface would each take a share of its frames.
        if let PortKind::Interface { name, .. } = &spec.kind {
            let twice = out
                .iter()
                .find(|s| matches!(&s.kind, PortKind::Interface { name: n, .. } if n == name));
            if let Some(other) = twice {
                return Err(SpecError {
                    col: 1,
                    message: format!(
                        "interface {name} is given to port {} and to port {}: an interface \
                         is one port",
                        other.id, spec.id
                    ),
                });
            }
        }
        out.push(spec);
    }
    Ok(out)
}
