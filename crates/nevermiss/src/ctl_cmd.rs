//! `nevermiss ctl`: look at a running switch over P4Runtime (Read and
//! GetForwardingPipelineConfig, which need no arbitration, so a controller keeps its primary
//! role), with the commands and output of BMv2's `simple_switch_CLI` (docs/p4runtime.md):
//! `show-tables`, `table-dump`, `table-num-entries`, `counter-read`, `register-read`,
//! `mc-dump`; and sets the egress queues' depths and rates as simple_switch_CLI does
//! (`set-queue-depth`, `set-queue-rate`, `show-queues`), over nevermiss's own
//! `nevermiss.v1.EgressQueues` service (`nevermiss_p4rt::queues`: P4Runtime has no queue
//! entity).
//!
//! Exit codes: 0 done, 2 bad usage, an unknown name, or a switch that cannot be reached.

use clap::{Args, Subcommand};
use nevermiss_p4rt::pb::p4::config::v1 as pi;
use nevermiss_p4rt::pb::p4::v1 as p4;
use nevermiss_p4rt::pb::p4::v1::p4_runtime_client::P4RuntimeClient;
use nevermiss_p4rt::queues::QueueRequest;
use std::fmt::Write;
use tonic::transport::Channel;

#[derive(Args, Debug)]
pub struct CtlArgs {
    #[command(subcommand)]
    pub command: CtlCommand,
    /// The switch's P4Runtime server.
    #[arg(
        long,
        default_value = "127.0.0.1:9559",
        value_name = "ADDR:PORT",
        global = true
    )]
    pub grpc_addr: String,
    /// The P4Runtime device id.
    #[arg(long, default_value = "1", global = true)]
    pub device_id: u64,
}

#[derive(Subcommand, Debug)]
pub enum CtlCommand {
    /// Every table: its name, implementation and match key (simple_switch_CLI show_tables).
    ShowTables,
    /// A table's entries and default entry (simple_switch_CLI table_dump).
    TableDump {
        /// The table (its P4Info name or alias).
        table: String,
    },
    /// How many entries a table holds (simple_switch_CLI table_num_entries).
    TableNumEntries { table: String },
    /// A counter cell's packets and bytes (simple_switch_CLI counter_read).
    CounterRead { counter: String, index: u32 },
    /// A register's cells, or one (simple_switch_CLI register_read).
    RegisterRead {
        register: String,
        index: Option<u32>,
    },
    /// Multicast groups and their replicas (simple_switch_CLI mc_dump).
    McDump,
    /// The egress queues' depth in packets, of every queue, a port's or one (simple_switch_CLI
    /// set_queue_depth; `nevermiss_p4rt::queues`, not P4Runtime, which has no queue entity).
    SetQueueDepth {
        depth: u64,
        port: Option<u32>,
        priority: Option<u32>,
    },
    /// The egress queues' rate in packets per second (0: no limit), of every queue, a port's or
    /// one (simple_switch_CLI set_queue_rate).
    SetQueueRate {
        rate_pps: u64,
        port: Option<u32>,
        priority: Option<u32>,
    },
    /// The egress queues' depths and rates.
    ShowQueues,
}

impl CtlCommand {
    /// The egress-queue request of a queue command (`show`: only look), none for the others.
    fn queue_request(&self) -> Option<(bool, QueueRequest)> {
        let (depth, rate_pps, port, priority) = match *self {
            CtlCommand::SetQueueDepth {
                depth,
                port,
                priority,
            } => (Some(depth), None, port, priority),
            CtlCommand::SetQueueRate {
                rate_pps,
                port,
                priority,
            } => (None, Some(rate_pps), port, priority),
            CtlCommand::ShowQueues => return Some((true, QueueRequest::default())),
            _ => return None,
        };
        Some((
            false,
            QueueRequest {
                port,
                priority,
                depth,
                rate_pps,
            },
        ))
    }
}

pub fn run(args: CtlArgs) -> u8 {
    crate::usage_result(run_inner(args))
}

fn run_inner(args: CtlArgs) -> Result<(), String> {
    let addr = crate::flags::socket_addr(&args.grpc_addr)
        .map_err(|e| format!("--grpc-addr {}: {e}", args.grpc_addr))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let text = rt.block_on(async {
        let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| e.to_string())?
            .connect_timeout(std::time::Duration::from_secs(3))
            .connect()
            .await
            .map_err(|e| format!("cannot reach a P4Runtime server at {addr}: {e}"))?;
        if let Some((show, r)) = args.command.queue_request() {
            let reply = nevermiss_p4rt::queues::call(ch, show, r)
                .await
                .map_err(status)?;
            return Ok(format!("{}\n", reply.text));
        }
        let mut c = Ctl {
            c: P4RuntimeClient::new(ch).max_decoding_message_size(256 << 20),
            device_id: args.device_id,
            p4info: pi::P4Info::default(),
        };
        c.load().await?;
        c.command(&args.command).await
    })?;
    out!("{text}");
    Ok(())
}

struct Ctl {
    c: P4RuntimeClient<Channel>,
    device_id: u64,
    p4info: pi::P4Info,
}

fn status(s: tonic::Status) -> String {
    format!(
        "{}: {}",
        nevermiss_p4rt::server::code_name(s.code() as i32),
        s.message()
    )
}

/// Whether `pre` is called `name` (its name, or its alias).
/// A read of a table's entries, or of its default entry.
fn table_entries(table_id: u32, is_default_action: bool) -> p4::entity::Entity {
    p4::entity::Entity::TableEntry(Box::new(p4::TableEntry {
        table_id,
        is_default_action,
        ..Default::default()
    }))
}

fn named(pre: Option<&pi::Preamble>, name: &str) -> bool {
    pre.is_some_and(|p| p.name == name || p.alias == name)
}

/// Hex of a bytestring padded to `bits` (as simple_switch_CLI prints keys and data).
fn hex(v: &[u8], bits: i32) -> String {
    let want = if bits <= 0 {
        v.len()
    } else {
        (bits as usize).div_ceil(8)
    };
    let mut s = String::new();
    for _ in v.len()..want {
        s.push_str("00");
    }
    let skip = v.len().saturating_sub(want);
    for b in &v[skip..] {
        let _ = write!(s, "{b:02x}");
    }
    s
}

impl Ctl {
    async fn load(&mut self) -> Result<(), String> {
        let r =
            self.c
                .get_forwarding_pipeline_config(p4::GetForwardingPipelineConfigRequest {
                    device_id: self.device_id,
                    response_type:
                        p4::get_forwarding_pipeline_config_request::ResponseType::P4infoAndCookie
                            as i32,
                })
                .await
                .map_err(status)?;
        self.p4info = r
            .into_inner()
            .config
            .and_then(|c| c.p4info)
            .ok_or("the switch sent no P4Info")?;
        Ok(())
    }

    async fn read(&mut self, e: p4::entity::Entity) -> Result<Vec<p4::entity::Entity>, String> {
        let mut s = self
            .c
            .read(p4::ReadRequest {
                device_id: self.device_id,
                entities: vec![p4::Entity { entity: Some(e) }],
                ..Default::default()
            })
            .await
            .map_err(status)?
            .into_inner();
        let mut out = Vec::new();
        while let Some(r) = s.message().await.map_err(status)? {
            out.extend(r.entities.into_iter().filter_map(|e| e.entity));
        }
        Ok(out)
    }

    fn table(&self, name: &str) -> Result<&pi::Table, String> {
        self.p4info
            .tables
            .iter()
            .find(|t| named(t.preamble.as_ref(), name))
            .ok_or_else(|| format!("no table {name} (ctl show-tables lists them)"))
    }

    fn action(&self, id: u32) -> Option<&pi::Action> {
        self.p4info
            .actions
            .iter()
            .find(|a| a.preamble.as_ref().is_some_and(|p| p.id == id))
    }

    /// One command's output, in simple_switch_CLI's format: each command by its method below.
    async fn command(&mut self, cmd: &CtlCommand) -> Result<String, String> {
        match cmd {
            CtlCommand::ShowTables => Ok(self.show_tables()),
            CtlCommand::TableDump { table } => self.table_dump(table).await,
            CtlCommand::TableNumEntries { table } => self.table_num_entries(table).await,
            CtlCommand::CounterRead { counter, index } => self.counter_read(counter, *index).await,
            CtlCommand::RegisterRead { register, index } => {
                self.register_read(register, *index).await
            }
            CtlCommand::McDump => self.mc_dump().await,
            // `run_inner` sends these to the EgressQueues service, before any read.
            CtlCommand::SetQueueDepth { .. }
            | CtlCommand::SetQueueRate { .. }
            | CtlCommand::ShowQueues => Err("a queue command is not a P4Runtime read".into()),
        }
    }

    /// `show_tables`: each table's name, implementation, match fields and size.
    fn show_tables(&self) -> String {
        let mut s = String::new();
        for t in &self.p4info.tables {
            let name = t.preamble.as_ref().map_or("", |p| p.name.as_str());
            let keys: Vec<String> = t
                .match_fields
                .iter()
                .map(|f| format!("{}({}, {})", f.name, match_kind(f), f.bitwidth))
                .collect();
            let imp = self
                .p4info
                .action_profiles
                .iter()
                .find(|a| {
                    a.preamble
                        .as_ref()
                        .is_some_and(|p| p.id == t.implementation_id)
                })
                .and_then(|a| a.preamble.as_ref())
                .map_or("None".to_string(), |p| p.name.clone());
            let _ = writeln!(
                s,
                "{name:<25} [implementation={imp}, mk={}, size={}]",
                keys.join(",\t"),
                t.size
            );
        }
        s
    }

    /// `table_dump`: the table's entries (match key, priority, action) and its default entry.
    async fn table_dump(&mut self, table: &str) -> Result<String, String> {
        let mut s = String::new();
        let t = self.table(table)?.clone();
        let id = t.preamble.as_ref().map_or(0, |p| p.id);
        let entries = self.read(table_entries(id, false)).await?;
        let default = self.read(table_entries(id, true)).await?;
        let _ = writeln!(s, "==========\nTABLE ENTRIES");
        let w = t
            .match_fields
            .iter()
            .map(|f| f.name.len())
            .max()
            .unwrap_or(0)
            .max(20);
        for (i, e) in entries.iter().enumerate() {
            let p4::entity::Entity::TableEntry(e) = e else {
                continue;
            };
            let _ = writeln!(s, "**********\nDumping entry {i:#x}\nMatch key:");
            for f in &t.match_fields {
                let m = e.r#match.iter().find(|m| m.field_id == f.id);
                let _ = writeln!(
                    s,
                    "* {:w$}: {:10}{}",
                    f.name,
                    match_kind(f).to_uppercase(),
                    field_value(m, f)
                );
            }
            if e.priority != 0 {
                let _ = writeln!(s, "Priority: {}", e.priority);
            }
            let _ = writeln!(s, "{}", self.action_line(e.action.as_ref()));
        }
        let _ = writeln!(s, "==========\nDumping default entry");
        match default.first() {
            Some(p4::entity::Entity::TableEntry(d)) => {
                let _ = writeln!(s, "{}", self.action_line(d.action.as_ref()));
            }
            _ => {
                let _ = writeln!(s, "EMPTY");
            }
        }
        let _ = writeln!(s, "==========");
        Ok(s)
    }

    /// `table_num_entries`.
    async fn table_num_entries(&mut self, table: &str) -> Result<String, String> {
        let id = self.table(table)?.preamble.as_ref().map_or(0, |p| p.id);
        let n = self.read(table_entries(id, false)).await?.len();
        Ok(format!("{n}\n"))
    }

    /// `counter_read`: one cell's packets and bytes.
    async fn counter_read(&mut self, counter: &str, index: u32) -> Result<String, String> {
        use p4::entity::Entity as E;
        let mut s = String::new();
        let c = self
            .p4info
            .counters
            .iter()
            .find(|c| named(c.preamble.as_ref(), counter))
            .ok_or_else(|| format!("no counter {counter}"))?;
        let name = c
            .preamble
            .as_ref()
            .map_or("", |p| p.name.as_str())
            .to_string();
        let id = c.preamble.as_ref().map_or(0, |p| p.id);
        let got = self
            .read(E::CounterEntry(p4::CounterEntry {
                counter_id: id,
                index: Some(p4::Index {
                    index: i64::from(index),
                }),
                data: None,
            }))
            .await?;
        for e in got {
            if let E::CounterEntry(c) = e {
                let d = c.data.unwrap_or_default();
                let _ = writeln!(
                    s,
                    "{name}[{index}]=  BmCounterValue(packets={}, bytes={})",
                    d.packet_count, d.byte_count
                );
            }
        }
        Ok(s)
    }

    /// `register_read`: one cell, or every cell.
    async fn register_read(
        &mut self,
        register: &str,
        index: Option<u32>,
    ) -> Result<String, String> {
        use p4::entity::Entity as E;
        let r = self
            .p4info
            .registers
            .iter()
            .find(|r| named(r.preamble.as_ref(), register))
            .ok_or_else(|| format!("no register {register}"))?;
        let name = r
            .preamble
            .as_ref()
            .map_or("", |p| p.name.as_str())
            .to_string();
        let id = r.preamble.as_ref().map_or(0, |p| p.id);
        let got = self
            .read(E::RegisterEntry(p4::RegisterEntry {
                register_id: id,
                index: index.map(|i| p4::Index {
                    index: i64::from(i),
                }),
                data: None,
            }))
            .await?;
        let cells: Vec<(i64, String)> = got
            .into_iter()
            .filter_map(|e| match e {
                E::RegisterEntry(r) => Some((
                    r.index.map_or(0, |i| i.index),
                    r.data.as_ref().map_or("0".into(), data_value),
                )),
                _ => None,
            })
            .collect();
        Ok(match index {
            Some(i) => {
                let v = cells.first().map_or("0".into(), |c| c.1.clone());
                format!("{name}[{i}]= {v}\n")
            }
            None => {
                let v: Vec<String> = cells.into_iter().map(|c| c.1).collect();
                format!("{name}= {}\n", v.join(", "))
            }
        })
    }

    /// `mc_dump`: each multicast group and its replicas.
    async fn mc_dump(&mut self) -> Result<String, String> {
        use p4::entity::Entity as E;
        use p4::packet_replication_engine_entry::Type as T;
        let mut s = String::new();
        let got = self
            .read(E::PacketReplicationEngineEntry(
                p4::PacketReplicationEngineEntry {
                    r#type: Some(T::MulticastGroupEntry(Default::default())),
                },
            ))
            .await?;
        let _ = writeln!(s, "==========\nMC ENTRIES");
        for e in got {
            let E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
                r#type: Some(T::MulticastGroupEntry(g)),
            }) = e
            else {
                continue;
            };
            let _ = writeln!(s, "**********\nmgrp({})", g.multicast_group_id);
            for r in &g.replicas {
                #[allow(deprecated)]
                let port = match &r.port_kind {
                    Some(p4::replica::PortKind::Port(b)) => {
                        b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x))
                    }
                    Some(p4::replica::PortKind::EgressPort(p)) => u64::from(*p),
                    None => 0,
                };
                let _ = writeln!(s, "  -> (rid {}) port {port}", r.instance);
            }
        }
        let _ = writeln!(s, "==========");
        Ok(s)
    }

    /// `Action entry: NAME - PARAMS` (hex, comma-separated), or a profile member or group.
    fn action_line(&self, a: Option<&p4::TableAction>) -> String {
        use p4::table_action::Type as T;
        match a.and_then(|a| a.r#type.as_ref()) {
            Some(T::Action(a)) => {
                let info = self.action(a.action_id);
                let name = info
                    .and_then(|i| i.preamble.as_ref())
                    .map_or_else(|| format!("{:#x}", a.action_id), |p| p.name.clone());
                let params: Vec<String> = a
                    .params
                    .iter()
                    .map(|p| {
                        let bits = info
                            .and_then(|i| i.params.iter().find(|q| q.id == p.param_id))
                            .map_or(0, |q| q.bitwidth);
                        hex(&p.value, bits)
                    })
                    .collect();
                format!("Action entry: {name} - {}", params.join(", "))
            }
            Some(T::ActionProfileMemberId(m)) => format!("Index: member({m})"),
            Some(T::ActionProfileGroupId(g)) => format!("Index: group({g})"),
            Some(T::ActionProfileActionSet(set)) => {
                let v: Vec<String> = set
                    .action_profile_actions
                    .iter()
                    .map(|a| {
                        self.action_line(Some(&p4::TableAction {
                            r#type: a.action.clone().map(T::Action),
                        }))
                    })
                    .collect();
                format!("One-shot action set:\n  {}", v.join("\n  "))
            }
            None => "EMPTY".into(),
        }
    }
}

fn match_kind(f: &pi::MatchField) -> &'static str {
    use pi::match_field::{Match, MatchType};
    match &f.r#match {
        Some(Match::MatchType(t)) => match MatchType::try_from(*t) {
            Ok(MatchType::Exact) => "exact",
            Ok(MatchType::Lpm) => "lpm",
            Ok(MatchType::Ternary) => "ternary",
            Ok(MatchType::Range) => "range",
            Ok(MatchType::Optional) => "optional",
            _ => "unspecified",
        },
        Some(Match::OtherMatchType(_)) => "other",
        None => "unspecified",
    }
}

/// A key field as simple_switch_CLI prints it; an omitted field is the don't-care.
fn field_value(m: Option<&p4::FieldMatch>, f: &pi::MatchField) -> String {
    use p4::field_match::FieldMatchType as F;
    let b = f.bitwidth;
    match m.and_then(|m| m.field_match_type.as_ref()) {
        Some(F::Exact(e)) => hex(&e.value, b),
        Some(F::Lpm(l)) => format!("{}/{}", hex(&l.value, b), l.prefix_len),
        Some(F::Ternary(t)) => format!("{} &&& {}", hex(&t.value, b), hex(&t.mask, b)),
        Some(F::Range(r)) => format!("{} -> {}", hex(&r.low, b), hex(&r.high, b)),
        Some(F::Optional(o)) => hex(&o.value, b),
        Some(F::Other(_)) => "(other)".into(),
        None => match match_kind(f) {
            "lpm" => format!("{}/0", hex(&[], b)),
            "ternary" => format!("{} &&& {}", hex(&[], b), hex(&[], b)),
            "range" => format!("{} -> {}", hex(&[], b), hex(&[0xff; 32], b)),
            _ => "*".into(),
        },
    }
}

/// A register cell's value: a bit string as a number, a struct as its members.
fn data_value(d: &p4::P4Data) -> String {
    use p4::p4_data::Data;
    match &d.data {
        Some(Data::Bitstring(b)) => {
            if b.len() <= 16 {
                b.iter()
                    .fold(0u128, |a, x| (a << 8) | u128::from(*x))
                    .to_string()
            } else {
                format!("0x{}", hex(b, 0))
            }
        }
        Some(Data::Struct(s)) => {
            let v: Vec<String> = s.members.iter().map(data_value).collect();
            format!("({})", v.join(", "))
        }
        Some(Data::Bool(b)) => u8::from(*b).to_string(),
        _ => "?".into(),
    }
}
