//! Random WriteRequests against the server (v1model router loaded): the server never panics,
//! every answer is a status the spec uses, and a rejected update changes nothing — a rejected
//! single update or a rejected ROLLBACK_ON_ERROR / DATAPLANE_ATOMIC batch leaves every table
//! (entries and default actions) as it was.

use nevermiss_p4rt::pb::p4::config::v1 as pi;
use nevermiss_p4rt::pb::p4::v1 as p4;
use nevermiss_p4rt::pb::p4::v1::p4_runtime_client::P4RuntimeClient;
use nevermiss_p4rt::server::{self, Device, ServeOptions};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::Code;

struct Fixture {
    rt: tokio::runtime::Runtime,
    client: P4RuntimeClient<Channel>,
    p4info: pi::P4Info,
    _stream: mpsc::Sender<p4::StreamMessageRequest>,
    _dev: Arc<Device>,
}

fn fixture() -> Fixture {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dev = Device::new(ServeOptions::default());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/v1model-router.p4");
    let Ok(c) = p4_front::driver::compile_file(&path, &Default::default()) else {
        panic!("the router does not compile")
    };
    let cfg = nevermiss_p4rt::device_config::encode(&c, "router");
    let (client, tx) = rt.block_on(async {
        let (incoming, addr) = server::listen(([127, 0, 0, 1], 0).into()).unwrap();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(server::grpc_service(dev.clone()))
                .serve_with_incoming(incoming),
        );
        let mut client = P4RuntimeClient::connect(format!("http://{addr}"))
            .await
            .unwrap();
        let (tx, rx) = mpsc::channel(4);
        tx.send(p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Arbitration(
                p4::MasterArbitrationUpdate {
                    device_id: 1,
                    election_id: Some(p4::Uint128 { high: 0, low: 9 }),
                    ..Default::default()
                },
            )),
        })
        .await
        .unwrap();
        let mut s = client
            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        s.next().await.unwrap().unwrap();
        tokio::spawn(async move { while s.next().await.is_some() {} });
        client
            .set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
                device_id: 1,
                election_id: Some(p4::Uint128 { high: 0, low: 9 }),
                action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
                config: Some(p4::ForwardingPipelineConfig {
                    p4_device_config: cfg.into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap();
        (client, tx)
    });
    let p4info = dev.pipeline().unwrap().p4info.clone();
    Fixture {
        rt,
        client,
        p4info,
        _stream: tx,
        _dev: dev,
    }
}

/// Every table's entries and default entry, sorted.
fn state(f: &mut Fixture) -> Vec<String> {
    let tables: Vec<u32> = f
        .p4info
        .tables
        .iter()
        .filter_map(|t| t.preamble.as_ref().map(|p| p.id))
        .collect();
    let mut entities = vec![p4::Entity {
        entity: Some(p4::entity::Entity::TableEntry(Box::default())),
    }];
    for t in tables {
        entities.push(p4::Entity {
            entity: Some(p4::entity::Entity::TableEntry(Box::new(p4::TableEntry {
                table_id: t,
                is_default_action: true,
                ..Default::default()
            }))),
        });
    }
    let client = &mut f.client;
    let mut out: Vec<String> = f.rt.block_on(async {
        let mut s = client
            .read(p4::ReadRequest {
                device_id: 1,
                entities,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut v = Vec::new();
        while let Some(r) = s.next().await {
            v.extend(r.unwrap().entities.into_iter().map(|e| format!("{e:?}")));
        }
        v
    });
    out.sort();
    out
}

/// Ids a request may use: the P4Info's and a few that are wrong.
fn ids(p: &pi::P4Info) -> (Vec<u32>, Vec<u32>) {
    let mut tables: Vec<u32> = p
        .tables
        .iter()
        .filter_map(|t| t.preamble.as_ref().map(|p| p.id))
        .collect();
    let mut actions: Vec<u32> = p
        .actions
        .iter()
        .filter_map(|a| a.preamble.as_ref().map(|p| p.id))
        .collect();
    tables.extend([0, 0x0200_0001, 0x0100_0000 | 77]);
    actions.extend([0, 0x0100_0001, tables[0]]);
    (tables, actions)
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..6),
        Just(vec![10, 0, 1, 0]),
        Just(vec![0, 0, 0, 7]),
        Just(vec![1]),
    ]
}

fn field_match() -> impl Strategy<Value = p4::FieldMatch> {
    use p4::field_match::{self as fm, FieldMatchType as F};
    (
        0u32..5,
        prop_oneof![
            bytes().prop_map(|value| Some(F::Exact(fm::Exact {
                value: value.into()
            }))),
            (bytes(), -2i32..40).prop_map(|(value, prefix_len)| Some(F::Lpm(fm::Lpm {
                value: value.into(),
                prefix_len
            }))),
            (bytes(), bytes()).prop_map(|(value, mask)| Some(F::Ternary(fm::Ternary {
                value: value.into(),
                mask: mask.into()
            }))),
            (bytes(), bytes()).prop_map(|(low, high)| Some(F::Range(fm::Range {
                low: low.into(),
                high: high.into()
            }))),
            bytes().prop_map(|value| Some(F::Optional(fm::Optional {
                value: value.into()
            }))),
            Just(None),
        ],
    )
        .prop_map(|(field_id, field_match_type)| p4::FieldMatch {
            field_id,
            field_match_type,
        })
}

fn entry(tables: Vec<u32>, actions: Vec<u32>) -> impl Strategy<Value = p4::TableEntry> {
    (
        prop::sample::select(tables),
        prop::collection::vec(field_match(), 0..4),
        prop::option::of((
            prop::sample::select(actions),
            prop::collection::vec((0u32..4, bytes()), 0..3),
        )),
        -1i32..3,
        any::<bool>(),
        prop_oneof![Just(0i64), Just(-5), Just(1_000_000)],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(table_id, r#match, action, priority, is_default_action, idle, is_const, meta)| {
                p4::TableEntry {
                    table_id,
                    r#match,
                    action: action.map(|(action_id, params)| p4::TableAction {
                        r#type: Some(p4::table_action::Type::Action(p4::Action {
                            action_id,
                            params: params
                                .into_iter()
                                .map(|(param_id, value)| p4::action::Param {
                                    param_id,
                                    value: value.into(),
                                })
                                .collect(),
                        })),
                    }),
                    priority,
                    is_default_action,
                    idle_timeout_ns: idle,
                    is_const,
                    metadata: if meta {
                        vec![1, 2, 3].into()
                    } else {
                        vec![].into()
                    },
                    ..Default::default()
                }
            },
        )
}

fn id_of(p: &pi::P4Info, name: &str) -> u32 {
    p.tables
        .iter()
        .filter_map(|t| t.preamble.as_ref())
        .chain(p.actions.iter().filter_map(|a| a.preamble.as_ref()))
        .find(|pre| pre.alias == name)
        .map(|pre| pre.id)
        .unwrap()
}

/// Well-formed entries of the router's tables (a few keys, so inserts, modifies and deletes
/// meet existing entries).
fn valid_entry(p: &pi::P4Info) -> impl Strategy<Value = p4::TableEntry> {
    use p4::field_match::{self as fm, FieldMatchType as F};
    let (lpm, nh, mac, dmac, acl, drop) = (
        id_of(p, "ipv4_lpm"),
        id_of(p, "set_next_hop"),
        id_of(p, "next_hop_mac"),
        id_of(p, "set_dmac"),
        id_of(p, "acl"),
        id_of(p, "drop"),
    );
    let act = |id: u32, params: Vec<Vec<u8>>| {
        Some(p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: id,
                params: params
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| p4::action::Param {
                        param_id: i as u32 + 1,
                        value: value.into(),
                    })
                    .collect(),
            })),
        })
    };
    (0u8..4, 0u8..3, 1u8..200, any::<bool>()).prop_map(move |(table, key, v, default)| {
        let mut e = match table {
            0 => p4::TableEntry {
                table_id: lpm,
                r#match: vec![p4::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(F::Lpm(fm::Lpm {
                        value: vec![10, key, 0, 0].into(),
                        prefix_len: 16,
                    })),
                }],
                action: act(nh, vec![vec![v], vec![v]]),
                ..Default::default()
            },
            1 => p4::TableEntry {
                table_id: mac,
                r#match: vec![p4::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(F::Exact(fm::Exact {
                        value: vec![key].into(),
                    })),
                }],
                action: act(dmac, vec![vec![2, 0, 0, 0, 0, v]]),
                ..Default::default()
            },
            _ => p4::TableEntry {
                table_id: acl,
                r#match: vec![p4::FieldMatch {
                    field_id: 3,
                    field_match_type: Some(F::Ternary(fm::Ternary {
                        value: vec![key].into(),
                        mask: vec![0xff].into(),
                    })),
                }],
                priority: 1 + i32::from(key),
                action: act(drop, vec![]),
                ..Default::default()
            },
        };
        if default && table == 1 {
            e.r#match.clear();
            e.is_default_action = true;
        }
        e
    })
}

fn entity(
    p: &pi::P4Info,
    tables: Vec<u32>,
    actions: Vec<u32>,
) -> impl Strategy<Value = Option<p4::entity::Entity>> {
    use p4::entity::Entity as E;
    prop_oneof![
        8 => valid_entry(p).prop_map(|e| Some(E::TableEntry(Box::new(e)))),
        6 => entry(tables, actions).prop_map(|e| Some(E::TableEntry(Box::new(e)))),
        1 => (any::<u32>(), prop::collection::vec((bytes(), any::<u32>()), 0..3)).prop_map(|(id, rs)| {
            Some(E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
                r#type: Some(p4::packet_replication_engine_entry::Type::MulticastGroupEntry(
                    p4::MulticastGroupEntry {
                        multicast_group_id: id % 4,
                        replicas: rs
                            .into_iter()
                            .map(|(port, instance)| p4::Replica {
                                instance,
                                backup_replicas: vec![],
                                port_kind: Some(p4::replica::PortKind::Port(port.into())),
                            })
                            .collect(),
                        metadata: vec![].into(),
                    },
                )),
            }))
        }),
        1 => (any::<u32>(), -3i64..5).prop_map(|(id, idx)| Some(E::CounterEntry(p4::CounterEntry {
            counter_id: id % 3,
            index: Some(p4::Index { index: idx }),
            data: None,
        }))),
        1 => any::<u32>().prop_map(|id| Some(E::DigestEntry(p4::DigestEntry {
            digest_id: id % 3,
            config: None,
        }))),
        1 => Just(None),
    ]
}

fn request(p: &pi::P4Info) -> impl Strategy<Value = p4::WriteRequest> {
    let (tables, actions) = ids(p);
    (
        prop_oneof![8 => Just(1u64), 1 => Just(2u64)],
        prop_oneof![8 => Just(9u64), 1 => Just(3u64)],
        0i32..4,
        prop::collection::vec(
            (
                prop_oneof![1 => Just(0i32), 5 => 1i32..4, 1 => Just(4)],
                entity(p, tables, actions),
            ),
            1..4,
        ),
    )
        .prop_map(
            |(device_id, election, atomicity, updates)| p4::WriteRequest {
                device_id,
                election_id: Some(p4::Uint128 {
                    high: 0,
                    low: election,
                }),
                atomicity,
                updates: updates
                    .into_iter()
                    .map(|(t, e)| p4::Update {
                        r#type: t,
                        entity: Some(p4::Entity { entity: e }),
                    })
                    .collect(),
                ..Default::default()
            },
        )
}

#[test]
fn random_writes_never_panic_and_rejections_change_nothing() {
    let mut f = fixture();
    let strategy = request(&f.p4info);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 1000,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let f = std::cell::RefCell::new(&mut f);
    let outcomes = std::cell::RefCell::new(std::collections::BTreeMap::<String, u32>::new());
    runner
        .run(&strategy, |req| {
            let mut guard = f.borrow_mut();
            let f: &mut Fixture = &mut guard;
            let before = state(f);
            let whole_batch = req.updates.len() == 1 || req.atomicity == 1 || req.atomicity == 2;
            let client = &mut f.client;
            let r = f.rt.block_on(async { client.write(req.clone()).await });
            *outcomes
                .borrow_mut()
                .entry(match &r {
                    Ok(_) => "ok".to_string(),
                    Err(s) => format!("{:?}", s.code()),
                })
                .or_default() += 1;
            match r {
                Ok(_) => {}
                Err(s) => {
                    prop_assert!(
                        matches!(
                            s.code(),
                            Code::Unknown
                                | Code::InvalidArgument
                                | Code::NotFound
                                | Code::PermissionDenied
                                | Code::FailedPrecondition
                                | Code::Unimplemented
                        ),
                        "unexpected status {s:?} for {req:?}"
                    );
                    if whole_batch {
                        let after = state(f);
                        prop_assert_eq!(
                            &before,
                            &after,
                            "a rejected write changed the tables: {:?}",
                            req
                        );
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let outcomes = outcomes.into_inner();
    eprintln!("outcomes: {outcomes:?}");
    // The strategies reach both accepted and rejected writes.
    assert!(outcomes.get("ok").copied().unwrap_or(0) > 0, "{outcomes:?}");
    assert!(
        outcomes.get("Unknown").copied().unwrap_or(0) > 0,
        "{outcomes:?}"
    );
}
