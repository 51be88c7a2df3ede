//! The P4Runtime server driven by a gRPC client (tonic's generated one) over TCP on
//! 127.0.0.1: arbitration, pipeline config, writes and reads of every match kind, default
//! entries, error codes and per-update details, counters, PRE, digests config, PacketOut.

use nevermiss_p4rt::pb::google::rpc;
use nevermiss_p4rt::pb::p4::config::v1 as pi;
use nevermiss_p4rt::pb::p4::v1 as p4;
use nevermiss_p4rt::pb::p4::v1::p4_runtime_client::P4RuntimeClient;
use nevermiss_p4rt::server::{self, Device, ServeOptions};
use prost::Message;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Status};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn device_config(name: &str) -> Vec<u8> {
    let Ok(c) = p4_front::driver::compile_file(&example(name), &Default::default()) else {
        panic!("{name} does not compile")
    };
    nevermiss_p4rt::device_config::encode(&c, name)
}

async fn start(dev: Arc<Device>) -> P4RuntimeClient<Channel> {
    start_with(dev, None).await
}

/// Serves `dev` on 127.0.0.1 and connects a client that accepts `header_limit` bytes of
/// received metadata (`None`: tonic's default, 16 KiB).
async fn start_with(dev: Arc<Device>, header_limit: Option<u32>) -> P4RuntimeClient<Channel> {
    let (incoming, addr) = server::listen(([127, 0, 0, 1], 0).into()).unwrap();
    tokio::spawn(server::housekeeping(dev.clone()));
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(server::grpc_service(dev))
            .serve_with_incoming(incoming),
    );
    let mut ep = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
    if let Some(n) = header_limit {
        ep = ep.http2_max_header_list_size(n);
    }
    P4RuntimeClient::new(ep.connect().await.unwrap())
}

struct Stream {
    tx: mpsc::Sender<p4::StreamMessageRequest>,
    rx: tonic::Streaming<p4::StreamMessageResponse>,
}

impl Stream {
    async fn open(c: &mut P4RuntimeClient<Channel>) -> Stream {
        let (tx, rx) = mpsc::channel(16);
        let rx = c
            .stream_channel(ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        Stream { tx, rx }
    }

    async fn arbitrate(&mut self, device_id: u64, election: u64) {
        self.tx
            .send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::Arbitration(
                    p4::MasterArbitrationUpdate {
                        device_id,
                        election_id: Some(p4::Uint128 {
                            high: 0,
                            low: election,
                        }),
                        ..Default::default()
                    },
                )),
            })
            .await
            .unwrap();
    }

    /// The next message, or the status that ended the stream.
    async fn next(&mut self) -> Result<p4::stream_message_response::Update, Status> {
        match tokio::time::timeout(Duration::from_secs(5), self.rx.next()).await {
            Ok(Some(Ok(m))) => Ok(m.update.unwrap()),
            Ok(Some(Err(s))) => Err(s),
            Ok(None) => Err(Status::unknown("stream ended")),
            Err(_) => Err(Status::deadline_exceeded("no message in 5 s")),
        }
    }

    async fn arbitration(&mut self) -> p4::MasterArbitrationUpdate {
        loop {
            if let p4::stream_message_response::Update::Arbitration(a) = self.next().await.unwrap()
            {
                return a;
            }
        }
    }
}

fn election(low: u64) -> Option<p4::Uint128> {
    Some(p4::Uint128 { high: 0, low })
}

/// Name → id of the P4Info's tables, actions and other objects.
fn id(p: &pi::P4Info, name: &str) -> u32 {
    let pres = p
        .tables
        .iter()
        .filter_map(|t| t.preamble.as_ref())
        .chain(p.actions.iter().filter_map(|a| a.preamble.as_ref()))
        .chain(p.counters.iter().filter_map(|a| a.preamble.as_ref()))
        .chain(p.digests.iter().filter_map(|a| a.preamble.as_ref()));
    for pre in pres {
        if pre.name == name || pre.alias == name {
            return pre.id;
        }
    }
    panic!("no {name} in the P4Info")
}

fn update(t: p4::update::Type, e: p4::entity::Entity) -> p4::Update {
    p4::Update {
        r#type: t as i32,
        entity: Some(p4::Entity { entity: Some(e) }),
    }
}

fn write_req(updates: Vec<p4::Update>, election_low: u64) -> p4::WriteRequest {
    p4::WriteRequest {
        device_id: 1,
        election_id: election(election_low),
        updates,
        ..Default::default()
    }
}

/// The per-update errors of a failed Write.
fn details(s: &Status) -> Vec<p4::Error> {
    assert_eq!(s.code(), Code::Unknown, "{s:?}");
    let st = rpc::Status::decode(s.details()).expect("google.rpc.Status in the details");
    assert_eq!(st.code, Code::Unknown as i32);
    st.details
        .iter()
        .map(|a| {
            assert_eq!(a.type_url, "type.googleapis.com/p4.v1.Error");
            p4::Error::decode(a.value.as_slice()).unwrap()
        })
        .collect()
}

fn lpm_entry(
    p: &pi::P4Info,
    dst: [u8; 4],
    len: i32,
    next_hop: &[u8],
    port: &[u8],
) -> p4::TableEntry {
    p4::TableEntry {
        table_id: id(p, "ipv4_lpm"),
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Lpm(p4::field_match::Lpm {
                value: dst.to_vec().into(),
                prefix_len: len,
            })),
        }],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: id(p, "set_next_hop"),
                params: vec![
                    p4::action::Param {
                        param_id: 1,
                        value: next_hop.to_vec().into(),
                    },
                    p4::action::Param {
                        param_id: 2,
                        value: port.to_vec().into(),
                    },
                ],
            })),
        }),
        ..Default::default()
    }
}

async fn read(
    c: &mut P4RuntimeClient<Channel>,
    e: p4::entity::Entity,
) -> Result<Vec<p4::Entity>, Status> {
    let mut s = c
        .read(p4::ReadRequest {
            device_id: 1,
            entities: vec![p4::Entity { entity: Some(e) }],
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = s.next().await {
        out.extend(r?.entities);
    }
    Ok(out)
}

fn table_entries(v: Vec<p4::Entity>) -> Vec<p4::TableEntry> {
    v.into_iter()
        .filter_map(|e| match e.entity {
            Some(p4::entity::Entity::TableEntry(t)) => Some(*t),
            _ => None,
        })
        .collect()
}

/// A device serving `config` (a device config) with a primary client (election id 1)
/// connected: the device, the client and the primary's stream.
async fn primary_with(config: Vec<u8>) -> (Arc<Device>, P4RuntimeClient<Channel>, Stream) {
    primary_limited(config, None).await
}

/// [`primary_with`] whose client accepts `header_limit` bytes of received metadata.
async fn primary_limited(
    config: Vec<u8>,
    header_limit: Option<u32>,
) -> (Arc<Device>, P4RuntimeClient<Channel>, Stream) {
    let dev = Device::new(ServeOptions::default());
    let mut c = start_with(dev.clone(), header_limit).await;
    let mut s = Stream::open(&mut c).await;
    s.arbitrate(1, 1).await;
    s.arbitration().await;
    c.set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(1),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4_device_config: config.into(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    (dev, c, s)
}

/// The device config of one of this crate's test programs (`tests/p4/NAME`).
fn test_program(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/p4")
        .join(name);
    let Ok(compiled) = p4_front::driver::compile_file(&path, &Default::default()) else {
        panic!("{name} does not compile")
    };
    nevermiss_p4rt::device_config::encode(&compiled, name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_programs_the_v1model_router() {
    let dev = Device::new(ServeOptions::default());
    let mut c = start(dev.clone()).await;

    // Capabilities.
    let caps = c
        .capabilities(p4::CapabilitiesRequest { device_id: 1 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(caps.p4runtime_api_version, server::API_VERSION);

    // No pipeline yet: PI's status and wording.
    let e = c
        .get_forwarding_pipeline_config(p4::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_eq!(e.message(), server::NO_PIPELINE);

    // Arbitration: the first client is primary; a second one with the same id is refused; a
    // lower one is a backup that is told the primary's id.
    let mut s1 = Stream::open(&mut c).await;
    s1.arbitrate(1, 10).await;
    let a = s1.arbitration().await;
    assert_eq!(a.status.unwrap().code, Code::Ok as i32);
    assert_eq!(a.election_id, election(10));
    let mut s2 = Stream::open(&mut c).await;
    s2.arbitrate(1, 10).await;
    let e = s2.next().await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("Election id already exists"));
    let mut s3 = Stream::open(&mut c).await;
    s3.arbitrate(1, 5).await;
    let a = s3.arbitration().await;
    assert_eq!(a.status.unwrap().code, Code::AlreadyExists as i32);
    assert_eq!(a.election_id, election(10));
    // An unknown device ends the stream with NOT_FOUND.
    let mut s4 = Stream::open(&mut c).await;
    s4.arbitrate(7, 1).await;
    assert_eq!(s4.next().await.unwrap_err().code(), Code::NotFound);

    // Writes before a pipeline: FAILED_PRECONDITION; from a backup: PERMISSION_DENIED.
    let e = c.write(write_req(vec![], 10)).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_eq!(e.message(), server::NO_PIPELINE);

    // Set the pipeline with a cookie; a backup cannot.
    let cfg = device_config("v1model-router.p4");
    let set = |el: u64, cookie: u64| p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(el),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4info: None,
            p4_device_config: cfg.clone().into(),
            cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie }),
        }),
        ..Default::default()
    };
    let e = c
        .set_forwarding_pipeline_config(set(5, 1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    c.set_forwarding_pipeline_config(set(10, 0xc00c1e))
        .await
        .unwrap();
    let got = c
        .get_forwarding_pipeline_config(p4::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: p4::get_forwarding_pipeline_config_request::ResponseType::CookieOnly
                as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .config
        .unwrap();
    assert_eq!(got.cookie.unwrap().cookie, 0xc00c1e);
    assert!(got.p4info.is_none());
    let p4info = c
        .get_forwarding_pipeline_config(p4::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: p4::get_forwarding_pipeline_config_request::ResponseType::P4infoAndCookie
                as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .config
        .unwrap()
        .p4info
        .unwrap();
    use p4::entity::Entity as E;
    use p4::update::Type::{Delete, Insert, Modify};

    // Insert with padded bytestrings; read back canonical.
    let e1 = lpm_entry(&p4info, [10, 0, 1, 0], 24, &[0, 0, 0, 7], &[0, 2]);
    c.write(write_req(
        vec![update(Insert, E::TableEntry(Box::new(e1.clone())))],
        10,
    ))
    .await
    .unwrap();
    let got = table_entries(
        read(
            &mut c,
            E::TableEntry(Box::new(p4::TableEntry {
                table_id: id(&p4info, "ipv4_lpm"),
                ..Default::default()
            })),
        )
        .await
        .unwrap(),
    );
    assert_eq!(got, vec![lpm_entry(&p4info, [10, 0, 1, 0], 24, &[7], &[2])]);

    // A backup's write is refused before any update is tried.
    let e = c
        .write(write_req(
            vec![update(Insert, E::TableEntry(Box::new(e1.clone())))],
            5,
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);

    // A batch with good and bad updates: one error per update, in order, OK ones included.
    let dup = e1.clone();
    let wide = lpm_entry(&p4info, [10, 0, 2, 0], 24, &[1], &[0x02, 0x00]); // 512 > 9 bits
    let host_bits = lpm_entry(&p4info, [10, 0, 3, 1], 24, &[1], &[1]);
    let good = lpm_entry(&p4info, [10, 0, 4, 0], 24, &[4], &[4]);
    let mut unknown_table = good.clone();
    unknown_table.table_id = 0x0200_0001;
    let e = c
        .write(write_req(
            vec![
                update(Insert, E::TableEntry(Box::new(dup))),
                update(Insert, E::TableEntry(Box::new(wide))),
                update(Insert, E::TableEntry(Box::new(host_bits))),
                update(Insert, E::TableEntry(Box::new(good.clone()))),
                update(Insert, E::TableEntry(Box::new(unknown_table))),
            ],
            10,
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&e).iter().map(|e| e.canonical_code).collect();
    assert_eq!(
        codes,
        vec![
            Code::AlreadyExists as i32,
            Code::OutOfRange as i32,
            Code::InvalidArgument as i32,
            Code::Ok as i32,
            Code::NotFound as i32
        ]
    );
    // Modify, then read by key.
    let m = lpm_entry(&p4info, [10, 0, 4, 0], 24, &[9], &[3]);
    c.write(write_req(
        vec![update(Modify, E::TableEntry(Box::new(m.clone())))],
        10,
    ))
    .await
    .unwrap();
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(good.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![m.clone()]);

    // Rollback: a batch with one bad update changes nothing.
    let fresh = lpm_entry(&p4info, [10, 0, 5, 0], 24, &[5], &[5]);
    let mut req = write_req(
        vec![
            update(Insert, E::TableEntry(Box::new(fresh.clone()))),
            update(
                Delete,
                E::TableEntry(Box::new(lpm_entry(&p4info, [10, 9, 9, 0], 24, &[1], &[1]))),
            ),
        ],
        10,
    );
    req.atomicity = p4::write_request::Atomicity::RollbackOnError as i32;
    let e = c.write(req).await.unwrap_err();
    let codes: Vec<i32> = details(&e).iter().map(|e| e.canonical_code).collect();
    assert_eq!(codes, vec![Code::Aborted as i32, Code::NotFound as i32]);
    assert!(table_entries(
        read(&mut c, E::TableEntry(Box::new(fresh.clone())))
            .await
            .unwrap()
    )
    .is_empty());

    // Default entry: set, read, reset with no action.
    let t = id(&p4info, "next_hop_mac");
    let set_default = p4::TableEntry {
        table_id: t,
        is_default_action: true,
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: id(&p4info, "set_dmac"),
                params: vec![p4::action::Param {
                    param_id: 1,
                    value: vec![0xaa, 0, 0, 0, 0, 1].into(),
                }],
            })),
        }),
        ..Default::default()
    };
    c.write(write_req(
        vec![update(Modify, E::TableEntry(Box::new(set_default.clone())))],
        10,
    ))
    .await
    .unwrap();
    let default_read = p4::TableEntry {
        table_id: t,
        is_default_action: true,
        ..Default::default()
    };
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(default_read.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![set_default]);
    c.write(write_req(
        vec![update(
            Modify,
            E::TableEntry(Box::new(default_read.clone())),
        )],
        10,
    ))
    .await
    .unwrap();
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(default_read.clone())))
            .await
            .unwrap(),
    );
    let drop_id = id(&p4info, "IngressImpl.drop");
    match &got[0].action.as_ref().unwrap().r#type {
        Some(p4::table_action::Type::Action(a)) => assert_eq!(a.action_id, drop_id),
        other => panic!("{other:?}"),
    }
    // INSERT of a default entry is invalid.
    let e = c
        .write(write_req(
            vec![update(Insert, E::TableEntry(Box::new(default_read)))],
            10,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);

    // Ternary entries need a priority; a wildcard read of every table sees them all.
    let acl = p4::TableEntry {
        table_id: id(&p4info, "acl"),
        r#match: vec![p4::FieldMatch {
            field_id: 3,
            field_match_type: Some(p4::field_match::FieldMatchType::Ternary(
                p4::field_match::Ternary {
                    value: vec![17].into(),
                    mask: vec![0xff].into(),
                },
            )),
        }],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: drop_id,
                params: vec![],
            })),
        }),
        priority: 0,
        ..Default::default()
    };
    let e = c
        .write(write_req(
            vec![update(Insert, E::TableEntry(Box::new(acl.clone())))],
            10,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);
    let acl = p4::TableEntry {
        priority: 10,
        ..acl
    };
    c.write(write_req(
        vec![update(Insert, E::TableEntry(Box::new(acl.clone())))],
        10,
    ))
    .await
    .unwrap();
    let all = table_entries(read(&mut c, E::TableEntry(Box::default())).await.unwrap());
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all.contains(&acl));

    // Delete ignores the action; deleting twice is NOT_FOUND.
    let mut del = m.clone();
    del.action = None;
    c.write(write_req(
        vec![update(Delete, E::TableEntry(Box::new(del.clone())))],
        10,
    ))
    .await
    .unwrap();
    let e = c
        .write(write_req(
            vec![update(Delete, E::TableEntry(Box::new(del)))],
            10,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::NotFound as i32);

    // Multicast groups: insert, read back, delete.
    let mc = p4::PacketReplicationEngineEntry {
        r#type: Some(
            p4::packet_replication_engine_entry::Type::MulticastGroupEntry(
                p4::MulticastGroupEntry {
                    multicast_group_id: 3,
                    replicas: vec![p4::Replica {
                        instance: 1,
                        backup_replicas: vec![],
                        port_kind: Some(p4::replica::PortKind::Port(vec![0, 4].into())),
                    }],
                    metadata: vec![].into(),
                },
            ),
        ),
    };
    c.write(write_req(
        vec![update(Insert, E::PacketReplicationEngineEntry(mc.clone()))],
        10,
    ))
    .await
    .unwrap();
    let got = read(
        &mut c,
        E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
            r#type: Some(
                p4::packet_replication_engine_entry::Type::MulticastGroupEntry(Default::default()),
            ),
        }),
    )
    .await
    .unwrap();
    assert_eq!(got.len(), 1);

    // The primary leaves: the backup is told there is no primary, then takes over with the
    // highest id.
    drop(s1);
    let a = s3.arbitration().await;
    assert_eq!(a.status.unwrap().code, Code::NotFound as i32);
    s3.arbitrate(1, 10).await;
    let a = s3.arbitration().await;
    assert_eq!(a.status.unwrap().code, Code::Ok as i32);
}

fn l2_cpu_config() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients/l2-cpu.p4");
    let Ok(c) = p4_front::driver::compile_file(&path, &Default::default()) else {
        panic!("l2-cpu.p4 does not compile")
    };
    nevermiss_p4rt::device_config::encode(&c, "l2-cpu.p4")
}

fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend(src);
    f.extend([0x08, 0x00]);
    f.extend([0xab; 20]);
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packets_digests_and_idle_timeouts_reach_the_primary() {
    let dev = Device::new(ServeOptions::default());
    let mut c = start(dev.clone()).await;
    let mut s = Stream::open(&mut c).await;
    s.arbitrate(1, 1).await;
    assert_eq!(s.arbitration().await.status.unwrap().code, 0);
    c.set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(1),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4_device_config: l2_cpu_config().into(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    let p4info = dev.pipeline().unwrap().p4info.clone();
    let smac = id(&p4info, "smac");
    let digest = id(&p4info, "learn_t");
    use p4::entity::Entity as E;
    use p4::update::Type::Insert;

    // Digests are off until configured.
    c.write(write_req(
        vec![update(
            Insert,
            E::DigestEntry(p4::DigestEntry {
                digest_id: digest,
                config: Some(p4::digest_entry::Config {
                    max_timeout_ns: 0,
                    max_list_size: 1,
                    ack_timeout_ns: 1_000_000_000,
                }),
            }),
        )],
        1,
    ))
    .await
    .unwrap();

    // A PacketOut through the tables: the unknown source is learnt (digest), the unknown
    // destination goes to the CPU (PacketIn with the ingress port as metadata).
    let src = [2, 0, 0, 0, 0, 9];
    let f = frame([2, 0, 0, 0, 0, 1], src);
    let po = |egress: u8, f: &[u8]| p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
            payload: f.to_vec().into(),
            metadata: vec![
                p4::PacketMetadata {
                    metadata_id: 1,
                    value: vec![egress].into(),
                },
                p4::PacketMetadata {
                    metadata_id: 2,
                    value: vec![0].into(),
                },
            ],
        })),
    };
    s.tx.send(po(0, &f)).await.unwrap();
    let (mut pin, mut dl) = (None, None);
    while pin.is_none() || dl.is_none() {
        match s.next().await.unwrap() {
            p4::stream_message_response::Update::Packet(p) => pin = Some(p),
            p4::stream_message_response::Update::Digest(d) => dl = Some(d),
            other => panic!("unexpected {other:?}"),
        }
    }
    let pin = pin.unwrap();
    assert_eq!(pin.payload, f);
    assert_eq!(
        pin.metadata,
        vec![
            p4::PacketMetadata {
                metadata_id: 1,
                value: vec![0x01, 0xfe].into()
            },
            p4::PacketMetadata {
                metadata_id: 2,
                value: vec![0].into()
            }
        ]
    );
    let dl = dl.unwrap();
    assert_eq!(dl.digest_id, digest);
    assert_eq!(
        dl.data,
        vec![p4::P4Data {
            data: Some(p4::p4_data::Data::Struct(p4::P4StructLike {
                members: vec![
                    p4::P4Data {
                        data: Some(p4::p4_data::Data::Bitstring(src.to_vec().into()))
                    },
                    p4::P4Data {
                        data: Some(p4::p4_data::Data::Bitstring(vec![0x01, 0xfe].into()))
                    },
                ]
            }))
        }]
    );

    // The controller learns the address with an idle timeout of 50 ms; nothing hits it, so a
    // notification comes, carrying the key and the timeout.
    let learnt = p4::TableEntry {
        table_id: smac,
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact {
                    value: src.to_vec().into(),
                },
            )),
        }],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: id(&p4info, "known"),
                params: vec![],
            })),
        }),
        idle_timeout_ns: 50_000_000,
        ..Default::default()
    };
    c.write(write_req(
        vec![update(Insert, E::TableEntry(Box::new(learnt.clone())))],
        1,
    ))
    .await
    .unwrap();
    let got = table_entries(
        read(
            &mut c,
            E::TableEntry(Box::new(p4::TableEntry {
                table_id: smac,
                time_since_last_hit: Some(p4::table_entry::IdleTimeout { elapsed_ns: 0 }),
                ..Default::default()
            })),
        )
        .await
        .unwrap(),
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].idle_timeout_ns, 50_000_000);
    assert!(got[0].time_since_last_hit.is_some());
    let note = loop {
        match s.next().await.unwrap() {
            p4::stream_message_response::Update::IdleTimeoutNotification(n) => break n,
            _ => continue,
        }
    };
    assert_eq!(note.table_entry.len(), 1);
    assert_eq!(note.table_entry[0].table_id, smac);
    assert_eq!(note.table_entry[0].r#match, learnt.r#match);
    assert_eq!(note.table_entry[0].idle_timeout_ns, 50_000_000);

    // A PacketOut with an egress port leaves there (no port attached: counted, not a PacketIn).
    s.tx.send(po(3, &f)).await.unwrap();
    // A table without an idle timeout rejects an entry's timeout.
    let mut bad = learnt.clone();
    bad.table_id = id(&p4info, "dmac");
    bad.action = Some(p4::TableAction {
        r#type: Some(p4::table_action::Type::Action(p4::Action {
            action_id: id(&p4info, "to_cpu"),
            params: vec![],
        })),
    });
    let e = c
        .write(write_req(
            vec![update(Insert, E::TableEntry(Box::new(bad)))],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let st = dev.stats.lock().unwrap();
    assert_eq!(st.packet_outs, 2);
    assert_eq!(st.unsent, 1);
}

/// An eth/IPv4/UDP frame of the add-on-miss example with a 5-byte result header.
fn aom_frame(src: u32, dst: u32) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend([0x45, 0, 0, 33, 0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend(src.to_be_bytes());
    f.extend(dst.to_be_bytes());
    f.extend([0x04, 0xd2, 0x16, 0x2e, 0, 13, 0, 0]);
    f.extend([0, 0, 0, 0, 0]);
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_the_data_plane_added_are_read_modified_notified_and_deleted() {
    let config = nevermiss_runtime::Config {
        expire_profiles_ns: Some(vec![100_000_000]),
        ..Default::default()
    };
    let dev = Device::new(ServeOptions {
        config,
        ..ServeOptions::default()
    });
    let mut c = start(dev.clone()).await;
    let mut s = Stream::open(&mut c).await;
    s.arbitrate(1, 1).await;
    assert_eq!(s.arbitration().await.status.unwrap().code, 0);
    let opts = p4_front::driver::Options {
        defines: vec![("FLOW_IDLE_NOTIFY".into(), "1".into())],
        ..Default::default()
    };
    let Ok(compiled) = p4_front::driver::compile_file(&example("pna-add-on-miss.p4"), &opts) else {
        panic!("pna-add-on-miss.p4 does not compile")
    };
    c.set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(1),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4_device_config: nevermiss_p4rt::device_config::encode(&compiled, "aom").into(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    let p4info = dev.pipeline().unwrap().p4info.clone();
    let flows = id(&p4info, "flows");
    let hit = id(&p4info, "flow_hit");
    use p4::entity::Entity as E;

    // A packet misses and the data plane adds its key with add_entry.
    s.tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
            payload: aom_frame(0x0a00_0001, 0x0a00_0063).into(),
            metadata: vec![],
        })),
    })
    .await
    .unwrap();
    let flows_read = E::TableEntry(Box::new(p4::TableEntry {
        table_id: flows,
        ..Default::default()
    }));
    let mut got = Vec::new();
    for _ in 0..100 {
        got = table_entries(read(&mut c, flows_read.clone()).await.unwrap());
        if !got.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(got.len(), 1, "the data-plane entry is read");
    let e = &got[0];
    assert_eq!(e.idle_timeout_ns, 100_000_000, "its expire profile's time");
    let param = |e: &p4::TableEntry| match &e.action.as_ref().unwrap().r#type {
        Some(p4::table_action::Type::Action(a)) => (a.action_id, a.params[0].value.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(param(e), (hit, vec![0x0a, 0, 0, 1].into()));

    // The controller modifies it.
    let mut m = e.clone();
    m.action = Some(p4::TableAction {
        r#type: Some(p4::table_action::Type::Action(p4::Action {
            action_id: hit,
            params: vec![p4::action::Param {
                param_id: 1,
                value: vec![7].into(),
            }],
        })),
    });
    m.idle_timeout_ns = 0;
    c.write(write_req(
        vec![update(p4::update::Type::Modify, E::TableEntry(Box::new(m)))],
        1,
    ))
    .await
    .unwrap();
    let got = table_entries(read(&mut c, flows_read.clone()).await.unwrap());
    assert_eq!(param(&got[0]), (hit, vec![7].into()));

    // Idle for its profile's time: the controller is told.
    let note = loop {
        match s.next().await.unwrap() {
            p4::stream_message_response::Update::IdleTimeoutNotification(n) => break n,
            _ => continue,
        }
    };
    assert_eq!(note.table_entry[0].table_id, flows);
    assert_eq!(note.table_entry[0].r#match, e.r#match);

    // And deletes it.
    let mut d = e.clone();
    d.action = None;
    c.write(write_req(
        vec![update(p4::update::Type::Delete, E::TableEntry(Box::new(d)))],
        1,
    ))
    .await
    .unwrap();
    assert!(table_entries(read(&mut c, flows_read).await.unwrap()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_that_close_early_and_oversized_requests_are_survived() {
    let dev = Device::new(ServeOptions {
        max_message_bytes: 1 << 20,
        ..ServeOptions::default()
    });
    let mut c = start(dev.clone()).await;
    // A stream that closes before arbitrating, and one that closes right after.
    drop(Stream::open(&mut c).await);
    let mut s = Stream::open(&mut c).await;
    s.arbitrate(1, 4).await;
    drop(s);
    // The next client becomes primary: the highest id seen (4) left, and 4 is reached again.
    let mut s = Stream::open(&mut c).await;
    s.arbitrate(1, 4).await;
    assert_eq!(s.arbitration().await.status.unwrap().code, Code::Ok as i32);
    // A request larger than the limit: RESOURCE_EXHAUSTED, and the server goes on.
    let big = p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(4),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4_device_config: vec![b' '; 3 << 19].into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = c.set_forwarding_pipeline_config(big).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    // A device config that is not a program: INVALID_ARGUMENT with the reason.
    let bad = p4::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(4),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4_device_config: b"control c() { apply { x = ; } }".to_vec().into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = c.set_forwarding_pipeline_config(bad).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    let caps = c
        .capabilities(p4::CapabilitiesRequest { device_id: 0 })
        .await
        .unwrap();
    assert_eq!(caps.into_inner().p4runtime_api_version, server::API_VERSION);
}

/// A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with the
/// `openssl` command (scripts/setup.sh installs it) in `dir`.
fn make_certs(dir: &std::path::Path) -> bool {
    let sh = |cmd: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(dir)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
        -subj /CN=nevermiss-test-ca")
        && sh("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext")
        && ["server", "client"].iter().all(|n| {
            sh(&format!(
                "openssl req -newkey rsa:2048 -nodes -keyout {n}.key -out {n}.csr -subj /CN=localhost \
                 && openssl x509 -req -in {n}.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
                 -out {n}.crt -days 2 -extfile san.ext"
            ))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_admits_only_clients_the_ca_signed() {
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
    let dir = std::env::temp_dir().join(format!("nevermiss-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if !make_certs(&dir) {
        panic!("openssl could not make the test certificates (scripts/setup.sh installs openssl)");
    }
    let dev = Device::new(ServeOptions::default());
    let tls = server::tls_config(
        &dir.join("server.crt"),
        &dir.join("server.key"),
        Some(&dir.join("ca.crt")),
    )
    .unwrap();
    let (incoming, addr) = server::listen(([127, 0, 0, 1], 0).into()).unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .tls_config(tls)
            .unwrap()
            .add_service(server::grpc_service(dev))
            .serve_with_incoming(incoming),
    );
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    let ca = Certificate::from_pem(read("ca.crt"));
    let endpoint = |client_cert: bool| {
        let mut cfg = ClientTlsConfig::new()
            .ca_certificate(ca.clone())
            .domain_name("localhost");
        if client_cert {
            cfg = cfg.identity(Identity::from_pem(read("client.crt"), read("client.key")));
        }
        Endpoint::from_shared(format!("https://{addr}"))
            .unwrap()
            .tls_config(cfg)
            .unwrap()
    };
    // With the client certificate: served.
    let ch = endpoint(true).connect().await.unwrap();
    let caps = P4RuntimeClient::new(ch)
        .capabilities(p4::CapabilitiesRequest { device_id: 0 })
        .await
        .unwrap();
    assert_eq!(caps.into_inner().p4runtime_api_version, server::API_VERSION);
    // Without: the handshake or the first call fails.
    let refused = match endpoint(false).connect().await {
        Err(_) => true,
        Ok(ch) => P4RuntimeClient::new(ch)
            .capabilities(p4::CapabilitiesRequest { device_id: 0 })
            .await
            .is_err(),
    };
    assert!(refused, "a client without a certificate was served");
    // Plain text to a TLS server fails too.
    let plain = P4RuntimeClient::connect(format!("http://{addr}")).await;
    let refused = match plain {
        Err(_) => true,
        Ok(mut c) => c
            .capabilities(p4::CapabilitiesRequest { device_id: 0 })
            .await
            .is_err(),
    };
    assert!(refused);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registers_and_meters_are_written_and_read() {
    let (dev, mut c, s) = primary_with(test_program("externs.p4")).await;
    let p4info = dev.pipeline().unwrap().p4info.clone();
    let pid = |v: &[pi::Preamble], name: &str| {
        v.iter()
            .find(|p| p.name.ends_with(name))
            .map(|p| p.id)
            .unwrap()
    };
    let regs: Vec<pi::Preamble> = p4info
        .registers
        .iter()
        .filter_map(|r| r.preamble.clone())
        .collect();
    let meters: Vec<pi::Preamble> = p4info
        .meters
        .iter()
        .filter_map(|r| r.preamble.clone())
        .collect();
    let (r, m) = (pid(&regs, ".r"), pid(&meters, ".m"));
    use p4::entity::Entity as E;
    use p4::update::Type::{Insert, Modify};

    // A register cell written by the controller, then incremented by a packet.
    let cell = |i: i64, v: Vec<u8>| p4::RegisterEntry {
        register_id: r,
        index: Some(p4::Index { index: i }),
        data: Some(p4::P4Data {
            data: Some(p4::p4_data::Data::Bitstring(v.into())),
        }),
    };
    c.write(write_req(
        vec![update(Modify, E::RegisterEntry(cell(3, vec![0x12, 0x34])))],
        1,
    ))
    .await
    .unwrap();
    s.tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
            payload: vec![3].into(),
            metadata: vec![],
        })),
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let got = read(
        &mut c,
        E::RegisterEntry(p4::RegisterEntry {
            register_id: r,
            ..Default::default()
        }),
    )
    .await
    .unwrap();
    assert_eq!(got.len(), 8, "every cell of the register");
    assert_eq!(
        got[3].entity,
        Some(E::RegisterEntry(cell(3, vec![0x12, 0x35]))),
        "the packet incremented the controller's value"
    );
    // INSERT is not a register operation; a value wider than the cell is out of range.
    let e = c
        .write(write_req(
            vec![update(Insert, E::RegisterEntry(cell(1, vec![1])))],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);
    let e = c
        .write(write_req(
            vec![update(Modify, E::RegisterEntry(cell(9, vec![1])))],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::OutOfRange as i32);

    // A meter cell configured, read back, then reset.
    let cfg = p4::MeterConfig {
        cir: 1000,
        cburst: 10,
        pir: 2000,
        pburst: 20,
        eburst: 0,
    };
    let meter = |config: Option<p4::MeterConfig>| p4::MeterEntry {
        meter_id: m,
        index: Some(p4::Index { index: 1 }),
        config,
        counter_data: None,
    };
    c.write(write_req(
        vec![update(Modify, E::MeterEntry(Box::new(meter(Some(cfg)))))],
        1,
    ))
    .await
    .unwrap();
    let got = read(&mut c, E::MeterEntry(Box::new(meter(None))))
        .await
        .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::MeterEntry(Box::new(meter(Some(cfg)))))
    );
    c.write(write_req(
        vec![update(Modify, E::MeterEntry(Box::new(meter(None))))],
        1,
    ))
    .await
    .unwrap();
    let got = read(&mut c, E::MeterEntry(Box::new(meter(None))))
        .await
        .unwrap();
    assert_eq!(got[0].entity, Some(E::MeterEntry(Box::new(meter(None)))));
    let bad = p4::MeterConfig { pir: 10, ..cfg };
    let e = c
        .write(write_req(
            vec![update(Modify, E::MeterEntry(Box::new(meter(Some(bad)))))],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);
}

/// P4Runtime §9.4, §9.5, §9.8: a CounterEntry, MeterEntry or RegisterEntry written without an
/// index sets every cell of the array (a counter's data unset: nothing changes; a meter's
/// config unset: every cell back to the default); a negative index is INVALID_ARGUMENT, one
/// past the size OUT_OF_RANGE; a batch that fails under ROLLBACK_ON_ERROR or DATAPLANE_ATOMIC
/// leaves every cell as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cell_of_a_counter_meter_or_register_is_written_at_once() {
    let (dev, mut c, _s) = primary_with(test_program("externs.p4")).await;
    let p4info = dev.pipeline().unwrap().p4info.clone();
    let pid = |v: Vec<Option<&pi::Preamble>>, name: &str| {
        v.into_iter()
            .flatten()
            .find(|p| p.name.ends_with(name))
            .map(|p| p.id)
            .unwrap()
    };
    let r = pid(
        p4info
            .registers
            .iter()
            .map(|x| x.preamble.as_ref())
            .collect(),
        ".r",
    );
    let ctr = pid(
        p4info
            .counters
            .iter()
            .map(|x| x.preamble.as_ref())
            .collect(),
        ".c",
    );
    let m = pid(
        p4info.meters.iter().map(|x| x.preamble.as_ref()).collect(),
        ".m",
    );
    use p4::entity::Entity as E;
    use p4::update::Type::Modify;
    let index = |i: Option<i64>| i.map(|index| p4::Index { index });
    let register = |i: Option<i64>, v: &[u8]| {
        E::RegisterEntry(p4::RegisterEntry {
            register_id: r,
            index: index(i),
            data: Some(p4::P4Data {
                data: Some(p4::p4_data::Data::Bitstring(v.to_vec().into())),
            }),
        })
    };
    let counter = |i: Option<i64>, d: Option<(i64, i64)>| {
        E::CounterEntry(p4::CounterEntry {
            counter_id: ctr,
            index: index(i),
            data: d.map(|(packet_count, byte_count)| p4::CounterData {
                packet_count,
                byte_count,
            }),
        })
    };
    let meter = |i: Option<i64>, config: Option<p4::MeterConfig>| {
        E::MeterEntry(Box::new(p4::MeterEntry {
            meter_id: m,
            index: index(i),
            config,
            counter_data: None,
        }))
    };
    let cfg = |cir: i64| p4::MeterConfig {
        cir,
        cburst: 10,
        pir: 2 * cir,
        pburst: 20,
        eburst: 0,
    };
    let write = |c: &mut P4RuntimeClient<Channel>, atomicity: i32, es: Vec<E>| {
        let mut req = write_req(es.into_iter().map(|e| update(Modify, e)).collect(), 1);
        req.atomicity = atomicity;
        let mut c = c.clone();
        async move { c.write(req).await.map(|_| ()) }
    };
    // What a wildcard read returns of each array, cell by cell.
    async fn cells(c: &mut P4RuntimeClient<Channel>, e: E) -> Vec<E> {
        read(c, e)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.entity.unwrap())
            .collect()
    }
    let registers = |v: &[u8]| (0..8).map(|i| register(Some(i), v)).collect::<Vec<_>>();
    let counters = |d: (i64, i64)| {
        (0..4)
            .map(|i| counter(Some(i), Some(d)))
            .collect::<Vec<_>>()
    };
    let meters = |config: Option<p4::MeterConfig>| {
        (0..4).map(|i| meter(Some(i), config)).collect::<Vec<_>>()
    };
    let all_registers = || {
        E::RegisterEntry(p4::RegisterEntry {
            register_id: r,
            ..Default::default()
        })
    };
    let all_counters = || counter(None, None);
    let all_meters = || meter(None, None);

    // Every cell written by one update each, under each atomicity mode.
    for (atomicity, v) in [(0, 0x77u8), (1, 0x78), (2, 0x79)] {
        let n = i64::from(v);
        write(
            &mut c,
            atomicity,
            vec![
                register(None, &[v]),
                counter(None, Some((n, 10 * n))),
                meter(None, Some(cfg(n))),
            ],
        )
        .await
        .unwrap();
        assert_eq!(cells(&mut c, all_registers()).await, registers(&[v]));
        assert_eq!(cells(&mut c, all_counters()).await, counters((n, 10 * n)));
        assert_eq!(cells(&mut c, all_meters()).await, meters(Some(cfg(n))));
    }
    // A counter written without data is left as it is, every cell or one.
    write(&mut c, 0, vec![counter(None, None), counter(Some(2), None)])
        .await
        .unwrap();
    assert_eq!(
        cells(&mut c, all_counters()).await,
        counters((0x79, 0x79 * 10))
    );

    // A batch whose last update fails changes no cell under ROLLBACK_ON_ERROR and
    // DATAPLANE_ATOMIC; the others report ABORTED.
    for atomicity in [1, 2] {
        let e = write(
            &mut c,
            atomicity,
            vec![
                register(None, &[1]),
                counter(None, Some((1, 1))),
                meter(None, None),
                register(Some(8), &[1]),
            ],
        )
        .await
        .unwrap_err();
        let codes: Vec<i32> = details(&e).iter().map(|d| d.canonical_code).collect();
        let aborted = Code::Aborted as i32;
        assert_eq!(
            codes,
            [aborted, aborted, aborted, Code::OutOfRange as i32],
            "atomicity {atomicity}"
        );
        assert_eq!(cells(&mut c, all_registers()).await, registers(&[0x79]));
        assert_eq!(
            cells(&mut c, all_counters()).await,
            counters((0x79, 0x79 * 10))
        );
        assert_eq!(cells(&mut c, all_meters()).await, meters(Some(cfg(0x79))));
    }
    // Under CONTINUE_ON_ERROR the others are applied.
    let e = write(&mut c, 0, vec![meter(None, None), meter(Some(4), None)])
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&e).iter().map(|d| d.canonical_code).collect();
    assert_eq!(codes, [Code::Ok as i32, Code::OutOfRange as i32]);
    assert_eq!(cells(&mut c, all_meters()).await, meters(None));

    // Indices: negative is INVALID_ARGUMENT, past the size OUT_OF_RANGE.
    for (e, code) in [
        (register(Some(-1), &[1]), Code::InvalidArgument),
        (counter(Some(-1), Some((1, 1))), Code::InvalidArgument),
        (meter(Some(-2), None), Code::InvalidArgument),
        (register(Some(8), &[1]), Code::OutOfRange),
        (counter(Some(4), Some((1, 1))), Code::OutOfRange),
        (counter(Some(4), None), Code::OutOfRange),
    ] {
        let err = write(&mut c, 0, vec![e.clone()]).await.unwrap_err();
        assert_eq!(details(&err)[0].canonical_code, code as i32, "{e:?}");
    }
    // A value wider than the register's cells is refused for every cell at once too.
    let err = write(&mut c, 0, vec![register(None, &[1, 0, 0, 0, 0])])
        .await
        .unwrap_err();
    assert_eq!(details(&err)[0].canonical_code, Code::OutOfRange as i32);
    assert_eq!(cells(&mut c, all_registers()).await, registers(&[0x79]));
}

/// The PacketIn of one PacketOut through the primary's stream.
async fn round_trip(s: &mut Stream, payload: Vec<u8>) -> Vec<u8> {
    s.tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
            payload: payload.into(),
            metadata: vec![],
        })),
    })
    .await
    .unwrap();
    loop {
        if let p4::stream_message_response::Update::Packet(p) = s.next().await.unwrap() {
            return p.payload.to_vec();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_profiles_selectors_and_value_sets_are_programmed_and_read() {
    let (dev, mut c, mut s) = primary_with(test_program("profiles.p4")).await;
    let info = dev.pipeline().unwrap().p4info.clone();
    let profile = |alias: &str| {
        info.action_profiles
            .iter()
            .filter_map(|a| a.preamble.as_ref())
            .find(|p| p.alias == alias)
            .map(|p| p.id)
            .unwrap()
    };
    let (ap, sel) = (
        profile("direct_members.implementation"),
        profile("grouped.implementation"),
    );
    let kinds = info.value_sets[0].preamble.as_ref().unwrap().id;
    let (set_out, add_out) = (id(&info, "set_out"), id(&info, "add_out"));
    let (members_t, grouped_t) = (id(&info, "direct_members"), id(&info, "grouped"));
    use p4::entity::Entity as E;
    use p4::update::Type::{Delete, Insert, Modify};
    let member = |prof: u32, id: u32, action: u32, v: u8| p4::ActionProfileMember {
        action_profile_id: prof,
        member_id: id,
        action: Some(p4::Action {
            action_id: action,
            params: vec![p4::action::Param {
                param_id: 1,
                value: vec![v].into(),
            }],
        }),
    };
    let group = |id: u32, members: &[(u32, i32)]| p4::ActionProfileGroup {
        action_profile_id: sel,
        group_id: id,
        members: members
            .iter()
            .map(|(m, w)| p4::action_profile_group::Member {
                member_id: *m,
                weight: *w,
                ..Default::default()
            })
            .collect(),
        max_size: 0,
    };
    let entry = |table: u32, key: u8, a: p4::table_action::Type| p4::TableEntry {
        table_id: table,
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact {
                    value: vec![key].into(),
                },
            )),
        }],
        action: Some(p4::TableAction { r#type: Some(a) }),
        ..Default::default()
    };
    use p4::table_action::Type::{ActionProfileGroupId, ActionProfileMemberId};
    c.write(write_req(
        vec![
            update(Insert, E::ActionProfileMember(member(ap, 1, set_out, 5))),
            update(Insert, E::ActionProfileMember(member(sel, 10, add_out, 1))),
            update(Insert, E::ActionProfileMember(member(sel, 11, add_out, 1))),
            update(
                Insert,
                E::ActionProfileGroup(group(100, &[(10, 1), (11, 2)])),
            ),
            update(
                Insert,
                E::TableEntry(Box::new(entry(members_t, 1, ActionProfileMemberId(1)))),
            ),
            update(
                Insert,
                E::TableEntry(Box::new(entry(grouped_t, 1, ActionProfileGroupId(100)))),
            ),
        ],
        1,
    ))
    .await
    .unwrap();
    // The member sets 5, either group member adds 1; kind 7 is not in the value set yet.
    assert_eq!(round_trip(&mut s, vec![7, 1, 0]).await, vec![7, 1, 6]);
    // Key 2 has no entries: nothing changes.
    assert_eq!(round_trip(&mut s, vec![7, 2, 0]).await, vec![7, 2, 0]);

    // The value set takes kind 7: the parser marks the packet.
    let vs_member = |v: u8| p4::ValueSetMember {
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact {
                    value: vec![v].into(),
                },
            )),
        }],
    };
    let vs = |vals: &[u8]| p4::ValueSetEntry {
        value_set_id: kinds,
        members: vals.iter().map(|v| vs_member(*v)).collect(),
    };
    c.write(write_req(
        vec![update(Modify, E::ValueSetEntry(vs(&[7])))],
        1,
    ))
    .await
    .unwrap();
    assert_eq!(round_trip(&mut s, vec![7, 1, 0]).await, vec![7, 1, 0x86]);
    assert_eq!(round_trip(&mut s, vec![8, 1, 0]).await, vec![8, 1, 6]);

    // A member modified: every entry that points at it runs the new action.
    c.write(write_req(
        vec![update(
            Modify,
            E::ActionProfileMember(member(ap, 1, set_out, 9)),
        )],
        1,
    ))
    .await
    .unwrap();
    assert_eq!(round_trip(&mut s, vec![8, 1, 0]).await, vec![8, 1, 10]);

    // Reads: every profile's members (id 0), the selector's groups, the value set.
    let got = read(
        &mut c,
        E::ActionProfileMember(p4::ActionProfileMember::default()),
    )
    .await
    .unwrap();
    let mut want = vec![
        member(ap, 1, set_out, 9),
        member(sel, 10, add_out, 1),
        member(sel, 11, add_out, 1),
    ];
    let mut got: Vec<p4::ActionProfileMember> = got
        .into_iter()
        .map(|e| match e.entity {
            Some(E::ActionProfileMember(m)) => m,
            other => panic!("{other:?}"),
        })
        .collect();
    got.sort_by_key(|m| m.member_id);
    want.sort_by_key(|m| m.member_id);
    assert_eq!(got, want);
    let got = read(
        &mut c,
        E::ActionProfileGroup(p4::ActionProfileGroup::default()),
    )
    .await
    .unwrap();
    assert_eq!(
        got,
        vec![p4::Entity {
            entity: Some(E::ActionProfileGroup(group(100, &[(10, 1), (11, 2)])))
        }]
    );
    let got = read(&mut c, E::ValueSetEntry(p4::ValueSetEntry::default()))
        .await
        .unwrap();
    assert_eq!(
        got,
        vec![p4::Entity {
            entity: Some(E::ValueSetEntry(vs(&[7])))
        }]
    );

    // Refusals, each with its code, none of which changes anything.
    let code = |e: Status| details(&e)[0].canonical_code;
    let refused = [
        (
            update(Delete, E::ActionProfileMember(member(sel, 10, add_out, 1))),
            Code::FailedPrecondition,
        ),
        (
            update(Insert, E::ActionProfileMember(member(ap, 1, set_out, 1))),
            Code::AlreadyExists,
        ),
        (
            update(Insert, E::ActionProfileMember(member(12345, 2, set_out, 1))),
            Code::NotFound,
        ),
        (
            update(Insert, E::ActionProfileMember(member(ap, 2, add_out, 1))),
            Code::InvalidArgument,
        ),
        (
            update(Insert, E::ActionProfileGroup(group(101, &[(99, 1)]))),
            Code::NotFound,
        ),
        (
            update(Insert, E::ActionProfileGroup(group(101, &[(10, 0)]))),
            Code::InvalidArgument,
        ),
        (
            update(
                Insert,
                E::TableEntry(Box::new(entry(members_t, 3, ActionProfileMemberId(77)))),
            ),
            Code::NotFound,
        ),
        (
            update(Insert, E::ValueSetEntry(vs(&[1]))),
            Code::InvalidArgument,
        ),
        (
            update(Modify, E::ValueSetEntry(vs(&[1, 2, 3, 4, 5]))),
            Code::ResourceExhausted,
        ),
    ];
    for (u, want) in refused {
        let what = format!("{u:?}");
        let e = c.write(write_req(vec![u], 1)).await.unwrap_err();
        assert_eq!(code(e), want as i32, "{what}");
    }
    assert_eq!(round_trip(&mut s, vec![7, 1, 0]).await, vec![7, 1, 0x8a]);

    // Everything deleted in dependency order; the reads are empty again.
    c.write(write_req(
        vec![
            update(
                Delete,
                E::TableEntry(Box::new(entry(grouped_t, 1, ActionProfileGroupId(100)))),
            ),
            update(Delete, E::ActionProfileGroup(group(100, &[]))),
            update(
                Delete,
                E::TableEntry(Box::new(entry(members_t, 1, ActionProfileMemberId(1)))),
            ),
            update(Delete, E::ActionProfileMember(member(ap, 1, set_out, 9))),
            update(Delete, E::ActionProfileMember(member(sel, 10, add_out, 1))),
            update(Delete, E::ActionProfileMember(member(sel, 11, add_out, 1))),
            update(Modify, E::ValueSetEntry(vs(&[]))),
        ],
        1,
    ))
    .await
    .unwrap();
    for e in [
        E::ActionProfileMember(p4::ActionProfileMember::default()),
        E::ActionProfileGroup(p4::ActionProfileGroup::default()),
    ] {
        assert!(read(&mut c, e).await.unwrap().is_empty());
    }
    assert_eq!(round_trip(&mut s, vec![7, 1, 0]).await, vec![7, 1, 0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packets_from_traffic_ports_to_the_cpu_port_become_packet_ins() {
    use nevermiss_io::Packet;
    use nevermiss_io::{Port, QueuePort};
    use nevermiss_runtime::workers::{run_parallel, ParallelOptions};
    let (dev, _c, mut s) = primary_with(l2_cpu_config()).await;
    // Unknown destinations: l2-cpu sends every frame to the CPU with its ingress port.
    for (cores, port) in [(None, 3u32), (Some(2), 4u32)] {
        let p = dev.pipeline().unwrap();
        let frames: Vec<Vec<u8>> = (0..20u8)
            .map(|i| frame([2, 0, 0, 0, 1, i], [2, 0, 0, 0, 0, i]))
            .collect();
        let (q, _h) =
            QueuePort::with_input(port, frames.iter().map(|f| Packet::from_bytes(f, port, 0)));
        let ports: Vec<Box<dyn Port>> = vec![Box::new(q), dev.cpu_port(false)];
        let sw = p.sw.clone();
        let report = tokio::task::spawn_blocking(move || match cores {
            None => nevermiss_runtime::run::run(sw, ports, &Default::default()),
            Some(n) => run_parallel(
                sw,
                ports,
                &Default::default(),
                &ParallelOptions {
                    cores: n,
                    pin: false,
                    ..Default::default()
                },
            ),
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(report.unknown_ports.total(), 0, "{cores:?}");
        let mut got = Vec::new();
        while got.len() < frames.len() {
            match s.next().await.unwrap() {
                p4::stream_message_response::Update::Packet(p) => {
                    assert_eq!(p.metadata[0].value, vec![port as u8], "ingress port");
                    got.push(p.payload);
                }
                p4::stream_message_response::Update::Digest(_) => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        got.sort();
        let mut want = frames.clone();
        want.sort();
        assert_eq!(got, want, "{cores:?}: every frame, once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_is_not_sent_again_until_its_list_is_acknowledged() {
    let (dev, mut c, mut s) = primary_with(l2_cpu_config()).await;
    let digest = id(&dev.pipeline().unwrap().p4info, "learn_t");
    use p4::entity::Entity as E;
    c.write(write_req(
        vec![update(
            p4::update::Type::Insert,
            E::DigestEntry(p4::DigestEntry {
                digest_id: digest,
                config: Some(p4::digest_entry::Config {
                    max_timeout_ns: 0,
                    max_list_size: 1,
                    ack_timeout_ns: 60_000_000_000,
                }),
            }),
        )],
        1,
    ))
    .await
    .unwrap();
    // Sends frames from `src` and returns the digest lists and packet-ins that arrive.
    async fn send(s: &mut Stream, srcs: &[u8]) -> Vec<p4::DigestList> {
        for &src in srcs {
            s.tx.send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                    payload: frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, src]).into(),
                    metadata: vec![
                        p4::PacketMetadata {
                            metadata_id: 1,
                            value: vec![0].into(),
                        },
                        p4::PacketMetadata {
                            metadata_id: 2,
                            value: vec![0].into(),
                        },
                    ],
                })),
            })
            .await
            .unwrap();
        }
        // Every frame comes back as a PacketIn; digests come within a tick (10 ms).
        let (mut pins, mut lists) = (0, Vec::new());
        let deadline = tokio::time::Instant::now() + Duration::from_millis(300);
        while pins < srcs.len() || tokio::time::Instant::now() < deadline {
            match tokio::time::timeout_at(deadline, s.rx.next()).await {
                Ok(Some(Ok(m))) => match m.update.unwrap() {
                    p4::stream_message_response::Update::Packet(_) => pins += 1,
                    p4::stream_message_response::Update::Digest(d) => lists.push(d),
                    other => panic!("unexpected {other:?}"),
                },
                Ok(other) => panic!("stream: {other:?}"),
                Err(_) => break,
            }
        }
        lists
    }
    // Two sources: two lists (max_list_size 1), one message each.
    let first = send(&mut s, &[9, 10]).await;
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(first.iter().all(|l| l.data.len() == 1));
    // The same sources again, unacknowledged: nothing new.
    assert!(send(&mut s, &[9, 10]).await.is_empty());
    // Source 9's list acknowledged: 9 is reported again, 10 is still held back.
    let nine = first
        .iter()
        .find(|l| {
            // A member of the digest's data is the source MAC 02:00:00:00:00:09.
            l.data.iter().any(|d| match &d.data {
                Some(p4::p4_data::Data::Struct(st)) => st.members.iter().any(|m| {
                    matches!(&m.data, Some(p4::p4_data::Data::Bitstring(b)) if b[..] == [2, 0, 0, 0, 0, 9])
                }),
                _ => false,
            })
        })
        .unwrap();
    s.tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::DigestAck(
            p4::DigestListAck {
                digest_id: digest,
                list_id: nine.list_id,
            },
        )),
    })
    .await
    .unwrap();
    let again = send(&mut s, &[9, 10]).await;
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].data, nine.data);
    assert_ne!(again[0].list_id, nine.list_id, "a fresh list id");
    // An ack of an unknown digest is answered with a stream error.
    s.tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::DigestAck(
            p4::DigestListAck {
                digest_id: 12345,
                list_id: 1,
            },
        )),
    })
    .await
    .unwrap();
    match s.next().await.unwrap() {
        p4::stream_message_response::Update::Error(e) => {
            assert_eq!(e.canonical_code, Code::NotFound as i32)
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// A batch of `n` updates of the v1model router's `ipv4_lpm`: update `i` fails with the code
/// `want(i)` gives (an existing entry: ALREADY_EXISTS; an unknown table: NOT_FOUND; a port too
/// wide: OUT_OF_RANGE; host bits set: INVALID_ARGUMENT) or succeeds (OK).
fn mixed_batch(p4info: &pi::P4Info, n: usize) -> (Vec<p4::Update>, Vec<i32>) {
    use p4::entity::Entity as E;
    use p4::update::Type::Insert;
    let mut updates = Vec::with_capacity(n);
    let mut want = Vec::with_capacity(n);
    for i in 0..n {
        let dst = [10, (i >> 8) as u8, i as u8, 0];
        let (e, code) = match i % 5 {
            0 => (
                lpm_entry(p4info, [10, 255, 255, 0], 24, &[1], &[1]),
                Code::AlreadyExists,
            ),
            1 => {
                let mut e = lpm_entry(p4info, dst, 24, &[1], &[1]);
                e.table_id = 0x0200_0001;
                (e, Code::NotFound)
            }
            2 => (
                lpm_entry(p4info, dst, 24, &[1], &[0x02, 0x00]),
                Code::OutOfRange,
            ),
            3 => (
                lpm_entry(p4info, [10, (i >> 8) as u8, i as u8, 1], 24, &[1], &[1]),
                Code::InvalidArgument,
            ),
            _ => (lpm_entry(p4info, dst, 24, &[1], &[1]), Code::Ok),
        };
        updates.push(update(Insert, E::TableEntry(Box::new(e))));
        want.push(code as i32);
    }
    (updates, want)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_update_of_a_large_failed_batch_gets_its_code_in_a_bounded_trailer() {
    use p4::entity::Entity as E;
    use p4::update::Type::Insert;
    let (dev, mut c, _s) = primary_with(device_config("v1model-router.p4")).await;
    let p4info = dev.pipeline().unwrap().p4info.clone();
    // The entry every ALREADY_EXISTS update repeats.
    c.write(write_req(
        vec![update(
            Insert,
            E::TableEntry(Box::new(lpm_entry(
                &p4info,
                [10, 255, 255, 0],
                24,
                &[1],
                &[1],
            ))),
        )],
        1,
    ))
    .await
    .unwrap();

    // 100 updates (80 failures): the trailer fits the default limits, messages of the later
    // failures are left out, every code is there.
    let (updates, want) = mixed_batch(&p4info, 100);
    let e = c.write(write_req(updates, 1)).await.unwrap_err();
    assert!(
        e.details().len() <= server::DETAILS_BUDGET,
        "{}",
        e.details().len()
    );
    let got = details(&e);
    assert_eq!(
        got.iter().map(|e| e.canonical_code).collect::<Vec<_>>(),
        want
    );
    assert!(
        !got[0].message.is_empty(),
        "the first failures keep messages"
    );
    assert!(got[1].message.contains("table"), "{:?}", got[1]);
    assert!(got.last().unwrap().message.is_empty());
    assert!(
        e.message()
            .starts_with("80 of 100 updates failed; first (update 1): ")
            && e.message().contains("without messages"),
        "{}",
        e.message()
    );
    assert!(got
        .iter()
        .filter(|e| e.canonical_code == 0)
        .all(|e| *e == p4::Error::default()));

    // 2000 updates (1600 failures): the codes of all would not fit gRPC's default 8 KiB of
    // metadata; the details hold the first updates' and the message names every failure.
    let (updates, want) = mixed_batch(&p4info, 2000);
    let (_dev2, mut c, _s2) =
        primary_limited(device_config("v1model-router.p4"), Some(8192 + 100 * 2000)).await;
    c.write(write_req(
        vec![update(
            Insert,
            E::TableEntry(Box::new(lpm_entry(
                &p4info,
                [10, 255, 255, 0],
                24,
                &[1],
                &[1],
            ))),
        )],
        1,
    ))
    .await
    .unwrap();
    let e = c.write(write_req(updates, 1)).await.unwrap_err();
    let got = details(&e);
    assert!(got.len() > 100 && got.len() < 2000, "{}", got.len());
    assert!(e.details().len() <= server::DETAILS_BUDGET + 16);
    assert_eq!(
        got.iter().map(|e| e.canonical_code).collect::<Vec<_>>(),
        want[..got.len()]
    );
    assert!(
        e.message().starts_with("1600 of 2000 updates failed")
            && e.message()
                .contains(&format!("the details hold updates 1-{} of 2000", got.len())),
        "{}",
        e.message()
    );
    // The OK updates were applied, the others not: 400 + the repeated entry.
    let n = table_entries(
        read(
            &mut c,
            E::TableEntry(Box::new(p4::TableEntry {
                table_id: id(&p4info, "ipv4_lpm"),
                ..Default::default()
            })),
        )
        .await
        .unwrap(),
    )
    .len();
    assert_eq!(n, 1 + 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meters_count_the_packets_and_bytes_of_each_color() {
    let (dev, mut c, s) = primary_with(test_program("externs.p4")).await;
    let p4info = dev.pipeline().unwrap().p4info.clone();
    let m = p4info.meters[0].preamble.as_ref().unwrap().id;
    let t = p4info.tables[0].preamble.as_ref().unwrap().id;
    let mark = p4info
        .actions
        .iter()
        .filter_map(|a| a.preamble.as_ref())
        .find(|p| p.name.ends_with(".mark"))
        .unwrap()
        .id;
    use p4::entity::Entity as E;
    use p4::update::Type::{Insert, Modify};
    let send = |key: u8| {
        let tx = s.tx.clone();
        async move {
            tx.send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                    payload: vec![key].into(),
                    metadata: vec![],
                })),
            })
            .await
            .unwrap();
        }
    };
    // One packet (or byte) per µs refills nothing between these packets: with bursts 1 and 2
    // the first packet is green, the second yellow, the rest red.
    let cfg = p4::MeterConfig {
        cir: 1,
        cburst: 1,
        pir: 1,
        pburst: 2,
        eburst: 0,
    };
    let counts = |g: i64, y: i64, r: i64| p4::MeterCounterData {
        green: Some(p4::CounterData {
            byte_count: g,
            packet_count: g,
        }),
        yellow: Some(p4::CounterData {
            byte_count: y,
            packet_count: y,
        }),
        red: Some(p4::CounterData {
            byte_count: r,
            packet_count: r,
        }),
    };
    let zero = Some(p4::MeterCounterData::default());
    let cell = |i: i64, config: Option<p4::MeterConfig>, counter_data| p4::MeterEntry {
        meter_id: m,
        index: Some(p4::Index { index: i }),
        config,
        counter_data,
    };
    let entry = |meter_config, meter_counter_data| p4::TableEntry {
        table_id: t,
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact {
                    value: vec![5].into(),
                },
            )),
        }],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: mark,
                params: vec![],
            })),
        }),
        meter_config,
        meter_counter_data,
        ..Default::default()
    };
    c.write(write_req(
        vec![
            update(Modify, E::MeterEntry(Box::new(cell(2, Some(cfg), None)))),
            update(Insert, E::TableEntry(Box::new(entry(Some(cfg), zero)))),
        ],
        1,
    ))
    .await
    .unwrap();
    for key in [2, 2, 2, 2, 2, 0, 0, 5, 5, 5, 5] {
        send(key).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Indexed meter: cell 2 marked 1 green, 1 yellow, 3 red (packets of 1 byte); cell 0 is
    // unconfigured: all green. Counters come back only when the read asks for them.
    let got = read(&mut c, E::MeterEntry(Box::new(cell(2, None, zero))))
        .await
        .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::MeterEntry(Box::new(cell(
            2,
            Some(cfg),
            Some(counts(1, 1, 3))
        ))))
    );
    let got = read(&mut c, E::MeterEntry(Box::new(cell(0, None, None))))
        .await
        .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::MeterEntry(Box::new(cell(0, None, None))))
    );
    let all = read(
        &mut c,
        E::MeterEntry(Box::new(p4::MeterEntry {
            meter_id: m,
            counter_data: zero,
            ..Default::default()
        })),
    )
    .await
    .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(
        all[0].entity,
        Some(E::MeterEntry(Box::new(cell(
            0,
            None,
            Some(counts(2, 0, 0))
        ))))
    );
    // The direct meter (bytes; the packets key 5 are 1 byte): as a DirectMeterEntry and in
    // the table entry (with its configuration), when asked for.
    let key_only = || {
        let mut e = entry(None, None);
        e.action = None;
        e
    };
    let got = read(
        &mut c,
        E::DirectMeterEntry(Box::new(p4::DirectMeterEntry {
            table_entry: Some(key_only()),
            config: None,
            counter_data: zero,
        })),
    )
    .await
    .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::DirectMeterEntry(Box::new(p4::DirectMeterEntry {
            table_entry: Some(key_only()),
            config: Some(cfg),
            counter_data: Some(counts(1, 1, 2)),
        })))
    );
    let mut want_all = key_only();
    want_all.meter_config = Some(p4::MeterConfig::default());
    want_all.meter_counter_data = zero;
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(want_all)))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![entry(Some(cfg), Some(counts(1, 1, 2)))]);
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(key_only())))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![entry(None, None)], "not asked for: not returned");

    // A new configuration keeps the counts; counter_data in a write resets them; a non-zero
    // count in it is INVALID_ARGUMENT and changes nothing.
    c.write(write_req(
        vec![update(
            Modify,
            E::MeterEntry(Box::new(cell(2, Some(cfg), None))),
        )],
        1,
    ))
    .await
    .unwrap();
    let got = read(&mut c, E::MeterEntry(Box::new(cell(2, None, zero))))
        .await
        .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::MeterEntry(Box::new(cell(
            2,
            Some(cfg),
            Some(counts(1, 1, 3))
        ))))
    );
    let e = c
        .write(write_req(
            vec![update(
                Modify,
                E::MeterEntry(Box::new(cell(2, Some(cfg), Some(counts(0, 0, 1))))),
            )],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&e)[0].canonical_code, Code::InvalidArgument as i32);
    c.write(write_req(
        vec![
            update(Modify, E::MeterEntry(Box::new(cell(2, Some(cfg), zero)))),
            update(
                Modify,
                E::DirectMeterEntry(Box::new(p4::DirectMeterEntry {
                    table_entry: Some(key_only()),
                    config: Some(cfg),
                    counter_data: zero,
                })),
            ),
        ],
        1,
    ))
    .await
    .unwrap();
    let got = read(&mut c, E::MeterEntry(Box::new(cell(2, None, zero))))
        .await
        .unwrap();
    assert_eq!(
        got[0].entity,
        Some(E::MeterEntry(Box::new(cell(
            2,
            Some(cfg),
            Some(counts(0, 0, 0))
        ))))
    );
    send(5).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(entry(None, zero))))
            .await
            .unwrap(),
    );
    assert_eq!(
        got[0].meter_counter_data,
        Some(counts(1, 0, 0)),
        "green again after reset"
    );
    // A table entry MODIFY with meter_counter_data resets the direct meter's counts too.
    c.write(write_req(
        vec![update(
            Modify,
            E::TableEntry(Box::new(entry(Some(cfg), zero))),
        )],
        1,
    ))
    .await
    .unwrap();
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(entry(None, zero))))
            .await
            .unwrap(),
    );
    assert_eq!(got[0].meter_counter_data, Some(counts(0, 0, 0)));
}

/// The results (third byte) the `grouped` table of profiles.p4 gives packets of key 1 and
/// kinds 0..64 (the selector hashes the kind).
async fn results(s: &mut Stream) -> std::collections::BTreeSet<u8> {
    let mut out = std::collections::BTreeSet::new();
    for kind in 0..64u8 {
        out.insert(round_trip(s, vec![kind, 1, 0]).await[2]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_action_sets_and_watch_ports_choose_among_live_members() {
    let (dev, mut c, mut s) = primary_with(test_program("profiles.p4")).await;
    let info = dev.pipeline().unwrap().p4info.clone();
    let sw = dev.pipeline().unwrap().sw.clone();
    let sel = info
        .action_profiles
        .iter()
        .filter_map(|a| a.preamble.as_ref())
        .find(|p| p.alias == "grouped.implementation")
        .unwrap()
        .id;
    let (set_out, add_out) = (id(&info, "set_out"), id(&info, "add_out"));
    let (members_t, grouped_t) = (id(&info, "direct_members"), id(&info, "grouped"));
    use p4::entity::Entity as E;
    use p4::update::Type::{Delete, Insert, Modify};
    use std::collections::BTreeSet;
    let act = |a: u32, v: u8| p4::Action {
        action_id: a,
        params: vec![p4::action::Param {
            param_id: 1,
            value: vec![v].into(),
        }],
    };
    let one = |a: u32, v: u8, weight: i32, watch: Option<u8>| p4::ActionProfileAction {
        action: Some(act(a, v)),
        weight,
        watch_kind: watch.map(|p| p4::action_profile_action::WatchKind::WatchPort(vec![p].into())),
    };
    let set_entry = |table: u32, actions: Vec<p4::ActionProfileAction>| p4::TableEntry {
        table_id: table,
        r#match: vec![p4::FieldMatch {
            field_id: 1,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact {
                    value: vec![1].into(),
                },
            )),
        }],
        action: Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::ActionProfileActionSet(
                p4::ActionProfileActionSet {
                    action_profile_actions: actions,
                    ..Default::default()
                },
            )),
        }),
        ..Default::default()
    };
    let code = |e: Status| details(&e)[0].canonical_code;

    // A one-shot set of three actions, two of them watching ports 1 and 2.
    let written = set_entry(
        grouped_t,
        vec![
            one(add_out, 1, 1, Some(1)),
            one(add_out, 2, 1, Some(2)),
            one(add_out, 4, 2, None),
        ],
    );
    c.write(write_req(
        vec![update(Insert, E::TableEntry(Box::new(written.clone())))],
        1,
    ))
    .await
    .unwrap();
    // Read back as written; the hidden members and group are not the profile's.
    let got = table_entries(
        read(
            &mut c,
            E::TableEntry(Box::new(p4::TableEntry {
                table_id: grouped_t,
                ..Default::default()
            })),
        )
        .await
        .unwrap(),
    );
    assert_eq!(got, vec![written.clone()]);
    for e in [
        E::ActionProfileMember(p4::ActionProfileMember::default()),
        E::ActionProfileGroup(p4::ActionProfileGroup::default()),
    ] {
        assert!(read(&mut c, e).await.unwrap().is_empty());
    }
    assert_eq!(results(&mut s).await, BTreeSet::from([1, 2, 4]));
    // Port 2 down: its action is never chosen; port 1 down too: only the unwatched one.
    sw.set_port_up(2, false);
    assert_eq!(results(&mut s).await, BTreeSet::from([1, 4]));
    sw.set_port_up(1, false);
    assert_eq!(results(&mut s).await, BTreeSet::from([4]));
    // Modified (in place) to one action watching port 1, which is down: the set is empty for
    // the packets (the entry hits, no action runs); port 1 up again: it runs.
    let modified = set_entry(grouped_t, vec![one(add_out, 8, 3, Some(1))]);
    c.write(write_req(
        vec![update(Modify, E::TableEntry(Box::new(modified.clone())))],
        1,
    ))
    .await
    .unwrap();
    assert_eq!(results(&mut s).await, BTreeSet::from([0]));
    sw.set_port_up(1, true);
    sw.set_port_up(2, true);
    assert_eq!(results(&mut s).await, BTreeSet::from([8]));
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(modified.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![modified.clone()]);

    // Refusals: members and groups on a selector programmed with one-shot sets; bad sets.
    let member = |id: u32, v: u8| p4::ActionProfileMember {
        action_profile_id: sel,
        member_id: id,
        action: Some(act(add_out, v)),
    };
    let mut random = set_entry(grouped_t, vec![one(add_out, 1, 1, None)]);
    if let Some(p4::table_action::Type::ActionProfileActionSet(a)) =
        random.action.as_mut().and_then(|a| a.r#type.as_mut())
    {
        a.action_selection_mode = 2;
    }
    let mut other_key = set_entry(grouped_t, vec![one(add_out, 1, 1, None)]);
    other_key.r#match[0].field_match_type = Some(p4::field_match::FieldMatchType::Exact(
        p4::field_match::Exact {
            value: vec![2].into(),
        },
    ));
    let refused = [
        (
            update(Insert, E::ActionProfileMember(member(10, 1))),
            Code::InvalidArgument,
        ),
        (
            update(
                Modify,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    vec![one(add_out, 1, 0, None)],
                ))),
            ),
            Code::InvalidArgument,
        ),
        (
            update(
                Modify,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    vec![one(set_out, 1, 1, None)],
                ))),
            ),
            Code::InvalidArgument,
        ),
        (
            update(
                Modify,
                E::TableEntry(Box::new(set_entry(grouped_t, vec![]))),
            ),
            Code::InvalidArgument,
        ),
        (
            update(
                Insert,
                E::TableEntry(Box::new(set_entry(
                    members_t,
                    vec![one(set_out, 1, 1, None)],
                ))),
            ),
            Code::InvalidArgument,
        ),
        (
            update(Modify, E::TableEntry(Box::new(random))),
            Code::Unimplemented,
        ),
        (
            update(
                Insert,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    vec![p4::ActionProfileAction {
                        watch_kind: Some(p4::action_profile_action::WatchKind::WatchPort(
                            vec![1, 0, 0, 0, 0].into(),
                        )),
                        ..one(add_out, 1, 1, None)
                    }],
                ))),
            ),
            Code::InvalidArgument,
        ),
        (
            update(
                Insert,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    (0..17).map(|v| one(add_out, v, 1, None)).collect(),
                ))),
            ),
            Code::ResourceExhausted,
        ),
    ];
    for (u, want) in refused {
        let what = format!("{u:?}");
        let e = c.write(write_req(vec![u], 1)).await.unwrap_err();
        assert_eq!(code(e), want as i32, "{what}");
    }
    let got = table_entries(
        read(&mut c, E::TableEntry(Box::new(modified.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(got, vec![modified.clone()], "refusals changed nothing");
    // A second entry's set, then a batch that fails after it is rolled back: the first
    // entry's set is back as it was.
    let ok = write_req(
        vec![update(Insert, E::TableEntry(Box::new(other_key.clone())))],
        1,
    );
    c.write(ok).await.unwrap();
    let mut rollback = write_req(
        vec![
            update(
                Modify,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    vec![one(add_out, 9, 1, None)],
                ))),
            ),
            update(Insert, E::TableEntry(Box::new(other_key.clone()))),
        ],
        1,
    );
    rollback.atomicity = p4::write_request::Atomicity::RollbackOnError as i32;
    c.write(rollback).await.unwrap_err();
    assert_eq!(results(&mut s).await, BTreeSet::from([8]));

    // Deleted: the selector takes members and groups again, whose watch ports count the same
    // way and read back in the field they were written in.
    c.write(write_req(
        vec![
            update(Delete, E::TableEntry(Box::new(modified))),
            update(Delete, E::TableEntry(Box::new(other_key))),
        ],
        1,
    ))
    .await
    .unwrap();
    assert!(read(
        &mut c,
        E::TableEntry(Box::new(p4::TableEntry {
            table_id: grouped_t,
            ..Default::default()
        }))
    )
    .await
    .unwrap()
    .is_empty());
    use p4::action_profile_group::member::WatchKind as W;
    #[allow(deprecated)]
    let group = p4::ActionProfileGroup {
        action_profile_id: sel,
        group_id: 7,
        members: vec![
            p4::action_profile_group::Member {
                member_id: 10,
                weight: 1,
                watch_kind: Some(W::WatchPort(vec![3].into())),
            },
            p4::action_profile_group::Member {
                member_id: 11,
                weight: 1,
                watch_kind: Some(W::Watch(4)),
            },
        ],
        max_size: 0,
    };
    c.write(write_req(
        vec![
            update(Insert, E::ActionProfileMember(member(10, 16))),
            update(Insert, E::ActionProfileMember(member(11, 32))),
            update(Insert, E::ActionProfileGroup(group.clone())),
            update(
                Insert,
                E::TableEntry(Box::new(p4::TableEntry {
                    action: Some(p4::TableAction {
                        r#type: Some(p4::table_action::Type::ActionProfileGroupId(7)),
                    }),
                    ..set_entry(grouped_t, vec![])
                })),
            ),
        ],
        1,
    ))
    .await
    .unwrap();
    let got = read(&mut c, E::ActionProfileGroup(group.clone()))
        .await
        .unwrap();
    assert_eq!(got[0].entity, Some(E::ActionProfileGroup(group)));
    assert_eq!(results(&mut s).await, BTreeSet::from([16, 32]));
    sw.set_port_up(3, false);
    assert_eq!(results(&mut s).await, BTreeSet::from([32]));
    sw.set_port_up(4, false);
    assert_eq!(results(&mut s).await, BTreeSet::from([0]));
    // A one-shot set is refused now that members and groups are there.
    let e = c
        .write(write_req(
            vec![update(
                Insert,
                E::TableEntry(Box::new(set_entry(
                    grouped_t,
                    vec![one(add_out, 1, 1, None)],
                ))),
            )],
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(code(e), Code::InvalidArgument as i32);
}
