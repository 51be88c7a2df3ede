//! nevermiss's P4Runtime (spec v1.5, github p4lang/p4runtime docs/v1): the generated protocol
//! types ([`pb`]), and — built on the runtime's control API — the P4Info of a program, the
//! device config of `SetForwardingPipelineConfig`, and the gRPC server. This crate only
//! translates between protobuf and the runtime; the runtime never sees protobuf types.

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod arbitration;
pub mod codec;
pub mod device_config;
mod entities;
pub mod format;
pub mod p4info;
pub mod pb;
pub mod pipeline;
pub mod profiles;
pub mod queues;
pub mod server;
pub mod wire;
