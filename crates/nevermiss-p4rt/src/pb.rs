//! The P4Runtime protocol's generated types: the only place they are reached from (messages of
//! `p4.v1`, `p4.config.v1`, `google.rpc`; the `P4Runtime` service's client and server).
#![allow(clippy::all, missing_docs, rustdoc::all)]

pub mod p4 {
    pub mod v1 {
        include!(concat!(env!("OUT_DIR"), "/p4.v1.rs"));
    }
    pub mod config {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/p4.config.v1.rs"));
        }
    }
}

pub mod google {
    pub mod rpc {
        include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
    }
}

/// The serialized descriptors of every message (for text and JSON formats, and reflection).
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/p4runtime.fds"));
