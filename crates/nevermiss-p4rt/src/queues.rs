//! The egress queues' depths and rates at run time: BMv2's `set_queue_depth` and
//! `set_queue_rate` (simple_switch_CLI, over its Thrift server), served as a small gRPC service
//! of nevermiss's own, `nevermiss.v1.EgressQueues`, beside P4Runtime on the same address (and
//! the same TLS). `nevermiss ctl set-queue-depth|set-queue-rate|show-queues` is its client.
//!
//! Why not P4Runtime: its entities (v1.4/v1.5 `Entity`: tables, action profiles, counters,
//! meters, registers, value sets, digests, the packet replication engine and P4Info-declared
//! externs) have none for a queue, and v1model declares no queue extern for `ExternEntry` to
//! name; BMv2 itself sets queues over Thrift only. Like BMv2's Thrift CLI, the service needs no
//! arbitration (a controller holding the primary role is not disturbed).
//!
//! Methods (protobuf messages defined here, field numbers fixed):
//! - `Set(QueueRequest) → QueueReply`: sets `depth` and/or `rate_pps` (0: no limit) of every
//!   queue (no `port`), of a port's queues (no `priority`) or of one; a port without a queue or
//!   a priority the ports do not have is `INVALID_ARGUMENT`, a request setting nothing too; a
//!   switch started without `--egress-queues` is `FAILED_PRECONDITION`. The reply describes the
//!   settings afterwards. A change reaches the run loop at its next round
//!   (`nevermiss_runtime::queues`): copies already queued keep their departure times.
//! - `Show(QueueRequest) → QueueReply`: the settings (the request's fields are ignored).

use crate::codec::Codec;
use nevermiss_runtime::queues::QueueSettings;
use std::sync::Arc;
use tonic::codegen::{http, BoxFuture};
use tonic::{Request, Response, Status};

/// The service's gRPC name.
pub const SERVICE: &str = "nevermiss.v1.EgressQueues";
const SET: &str = "/nevermiss.v1.EgressQueues/Set";
const SHOW: &str = "/nevermiss.v1.EgressQueues/Show";

/// What to change (or, for `Show`, nothing).
#[derive(Clone, PartialEq, prost::Message)]
pub struct QueueRequest {
    /// The port whose queues change; none: every queue.
    #[prost(uint32, optional, tag = "1")]
    pub port: Option<u32>,
    /// The priority (with a port) whose queue changes; none: every priority of the port.
    #[prost(uint32, optional, tag = "2")]
    pub priority: Option<u32>,
    /// The new depth in packets.
    #[prost(uint64, optional, tag = "3")]
    pub depth: Option<u64>,
    /// The new rate in packets per second (0: no limit).
    #[prost(uint64, optional, tag = "4")]
    pub rate_pps: Option<u64>,
}

/// The queues' settings, described.
#[derive(Clone, PartialEq, prost::Message)]
pub struct QueueReply {
    /// The egress queues' settings after the call, in words (`egress queues on every port, 1
    /// priority each: depth 64, no rate limit` …, `QueueSettings::describe`), as `nevermiss ctl` prints it.
    #[prost(string, tag = "1")]
    pub text: String,
}

/// Applies `r` to `s` (the `Set` method), returning the settings afterwards.
pub fn apply(s: &QueueSettings, r: &QueueRequest) -> Result<String, Status> {
    if r.depth.is_none() && r.rate_pps.is_none() {
        return Err(Status::invalid_argument(
            "nothing to set: give a depth or a rate",
        ));
    }
    let priority = r.priority.map(|p| p as usize);
    if let Some(d) = r.depth {
        let d = usize::try_from(d)
            .ok()
            .filter(|d| *d > 0)
            .ok_or_else(|| Status::invalid_argument(format!("depth {d}: from 1 packet up")))?;
        s.set_depth(r.port, priority, d)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
    }
    if let Some(pps) = r.rate_pps {
        s.set_rate(r.port, priority, pps)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
    }
    Ok(s.describe())
}

/// The service, over the switch's queue settings (`None`: a switch without queues).
#[derive(Clone)]
pub struct QueueService {
    settings: Option<Arc<QueueSettings>>,
}

impl QueueService {
    /// Serves `settings` (the `Config::queues` every pipeline of the device shares).
    pub fn new(settings: Option<Arc<QueueSettings>>) -> QueueService {
        QueueService { settings }
    }

    fn answer(&self, show: bool, r: &QueueRequest) -> Result<QueueReply, Status> {
        let s = self.settings.as_deref().ok_or_else(|| {
            Status::failed_precondition(
                "this switch has no egress queues (start it with --egress-queues all|PORTS)",
            )
        })?;
        let text = if show { s.describe() } else { apply(s, r)? };
        if !show {
            tracing::info!("EgressQueues.Set {r:?}: {text}");
        }
        Ok(QueueReply { text })
    }
}

impl tonic::server::NamedService for QueueService {
    const NAME: &'static str = SERVICE;
}

/// One call of a method.
struct Method {
    svc: QueueService,
    show: bool,
}

impl tonic::server::UnaryService<QueueRequest> for Method {
    type Response = QueueReply;
    type Future = BoxFuture<Response<QueueReply>, Status>;

    fn call(&mut self, request: Request<QueueRequest>) -> Self::Future {
        let r = self.svc.answer(self.show, request.get_ref());
        Box::pin(async move { r.map(Response::new) })
    }
}

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for QueueService {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let show = match req.uri().path() {
            SET => false,
            SHOW => true,
            _ => {
                return Box::pin(async {
                    Ok(
                        Status::unimplemented("EgressQueues has the methods Set and Show")
                            .into_http(),
                    )
                })
            }
        };
        let method = Method {
            svc: self.clone(),
            show,
        };
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(Codec::<QueueReply, QueueRequest>::default());
            Ok(grpc.unary(method, req).await)
        })
    }
}

/// Calls `Set` (or, with `show`, `Show`) on the server at the other end of `ch`.
pub async fn call(
    ch: tonic::transport::Channel,
    show: bool,
    r: QueueRequest,
) -> Result<QueueReply, Status> {
    let mut g = tonic::client::Grpc::new(ch);
    g.ready()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let path = http::uri::PathAndQuery::from_static(if show { SHOW } else { SET });
    g.unary(
        Request::new(r),
        path,
        Codec::<QueueRequest, QueueReply>::default(),
    )
    .await
    .map(Response::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_checks_what_it_is_given() {
        let s = QueueSettings::new(Some(vec![1, 2]), 2, 64).unwrap();
        let req = |port, priority, depth, rate_pps| QueueRequest {
            port,
            priority,
            depth,
            rate_pps,
        };
        let t = apply(&s, &req(Some(1), None, Some(8), Some(100))).unwrap();
        assert_eq!(s.limits(1, 0), (8, 100));
        assert_eq!(s.limits(1, 1), (8, 100));
        assert_eq!(s.limits(2, 0), (64, 0));
        assert!(
            t.contains("port 1 priority 0: depth 8, rate 100 pps"),
            "{t}"
        );
        let e = apply(&s, &req(Some(3), None, Some(8), None)).unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().contains("port 3 has no egress queue"), "{e:?}");
        let e = apply(&s, &req(Some(1), Some(2), None, Some(5))).unwrap_err();
        assert!(e.message().contains("priority 2"), "{e:?}");
        let e = apply(&s, &req(None, None, None, None)).unwrap_err();
        assert!(e.message().contains("nothing to set"), "{e:?}");
        let e = apply(&s, &req(None, None, Some(0), None)).unwrap_err();
        assert!(e.message().contains("depth 0"), "{e:?}");
        let e = QueueService::new(None)
            .answer(true, &QueueRequest::default())
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition);
    }
}
