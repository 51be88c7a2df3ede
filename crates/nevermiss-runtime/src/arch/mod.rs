//! The architectures: how a packet goes through the blocks of `main`, one file each —
//! `pna.rs`, `v1model.rs`, `psa.rs` — over the shared outputs ([`Outputs`]) and frame helpers
//! here. What each architecture's blocks and metadata fields are is resolved when the switch
//! is built (`crate::state::ArchInfo`).
//!
//! - PNA (both dialects, PNA spec §"Packet processing"): main parser → (old dialect: pre
//!   control) → main control → main deparser. The packet leaves by the port given to the last
//!   `send_to_port` call; `drop_packet()` or no call at all drops it (as PSA's `drop` default).
//!   A parser error does not drop the packet: the main control sees it in
//!   `istd.parser_error`. `mirror_packet(slot, session)` sends a copy of the deparsed packet to
//!   the session's port; `recirculate()` (old dialect) runs the deparsed packet again.
//! - v1model (BMv2 `simple_switch` semantics): parser → verifyChecksum → ingress → traffic
//!   manager (clone I2E, resubmit, multicast via `mcast_grp`, drop when `egress_spec` is the
//!   drop port 511, else unicast to `egress_spec`) → egress → computeChecksum → deparser
//!   (clone E2E, recirculate, truncate).

// unsafe: the PNA pass over the packet where it lies.
#[allow(unsafe_code)]
mod pna;
mod psa;
mod v1model;

pub use crate::state::{ArchInfo, Field, PnaInfo, PsaInfo, V1Info, PSA_PORT_RECIRCULATE};
pub use pna::{pna_finish, pna_parse, process_pna};
pub(crate) use pna::{pna_parse_in_place, PnaPass};
pub use psa::{process_psa, psa_finish, psa_parse_first};
pub use v1model::{process_v1, v1_finish, v1_parse_first, QueueMeta};
pub(crate) use v1model::{v1_dequeued, Deferred, EgressJob};

use crate::engine::exec::{Exec, Flow};
use crate::state::Switch;
use p4_ir::*;

/// `v.extend_from_slice(s)`, without a call for a slice of up to 128 bytes (a packet's payload
/// after its headers, or a whole small packet): two overlapping 16-, 32- or 64-byte copies.
#[inline(always)]
#[allow(unsafe_code)]
fn extend_small(v: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if !(16..=128).contains(&n) {
        return v.extend_from_slice(s);
    }
    v.reserve(n);
    let len = v.len();
    // SAFETY: `reserve` made room for `n` more bytes; every copy reads inside `s` (its blocks
    // are at most `n` bytes long, the second ending at `s`'s end) and writes inside the room;
    // `set_len` covers the `n` bytes they wrote.
    unsafe {
        let d = v.as_mut_ptr().add(len);
        let src = s.as_ptr();
        macro_rules! two {
            ($t:ty) => {{
                let k = std::mem::size_of::<$t>();
                let a = std::ptr::read_unaligned(src.cast::<$t>());
                let b = std::ptr::read_unaligned(src.add(n - k).cast::<$t>());
                std::ptr::write_unaligned(d.cast::<$t>(), a);
                std::ptr::write_unaligned(d.add(n - k).cast::<$t>(), b);
            }};
        }
        if n <= 32 {
            two!([u8; 16]);
        } else if n <= 64 {
            two!([u8; 32]);
        } else {
            two!([u8; 64]);
        }
        v.set_len(len + n);
    }
}

/// Output packets of one input packet (buffers reused between packets).
#[derive(Default, Debug)]
pub struct Outputs {
    bufs: Vec<(u32, Vec<u8>)>,
    n: usize,
    /// Copies bound for an egress queue (`crate::queues`): the run loop takes them after each
    /// packet. Empty unless the switch has queues (`Config::queues`).
    pub(crate) deferred: Vec<v1model::Deferred>,
}

impl Outputs {
    /// Forgets the packets (their buffers are kept for the next packet) and the deferred copies.
    pub fn clear(&mut self) {
        self.n = 0;
        self.deferred.clear();
    }

    /// Appends a packet for `port` made of `head` followed by `tail`, truncated to `limit`.
    pub fn push(&mut self, port: u32, head: &[u8], tail: &[u8], limit: Option<u64>) {
        if self.n == self.bufs.len() {
            self.bufs.push((0, Vec::new()));
        }
        let (p, b) = &mut self.bufs[self.n];
        *p = port;
        b.clear();
        extend_small(b, head);
        extend_small(b, tail);
        if let Some(l) = limit {
            b.truncate(l as usize);
        }
        self.n += 1;
    }

    /// Appends a packet for `port` made of `head` followed by `tail`, taking `head`'s buffer
    /// (what [`Outputs::push`] would copy) and leaving a reused one in its place: one copy
    /// fewer for the packet a pass sends. Always inlined: the packet path's call of it cost ~18
    /// instructions in its prologue and epilogue.
    #[inline(always)]
    pub fn push_taking(&mut self, port: u32, head: &mut Vec<u8>, tail: &[u8]) {
        if self.n == self.bufs.len() {
            self.bufs.push((0, Vec::new()));
        }
        let (p, b) = &mut self.bufs[self.n];
        *p = port;
        extend_small(head, tail);
        std::mem::swap(b, head);
        head.clear();
        self.n += 1;
    }

    /// The packets: (port, bytes).
    pub fn as_slice(&self) -> &[(u32, Vec<u8>)] {
        &self.bufs[..self.n]
    }

    /// The number of packets.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the input packet produced no packet (it was dropped).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether copies wait to be put on egress queues (`crate::queues`).
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }
}

#[inline]
fn set(ex: &mut Exec, f: Field, v: u64) {
    if let Some((o, t)) = f {
        if let Some(x) = ex.f.get_mut(o as usize) {
            *x = v & p4_ir::ops::mask(t.width.min(64));
        }
    }
}

#[inline]
fn set_rel(ex: &mut Exec, base: u32, rel: Option<u32>, v: u64) {
    if let Some(o) = rel {
        if let Some(x) = ex.f.get_mut((base + o) as usize) {
            *x = v;
        }
    }
}

#[inline]
fn get_rel(ex: &Exec, base: u32, rel: Option<u32>) -> u64 {
    rel.and_then(|o| ex.f.get((base + o) as usize).copied())
        .unwrap_or(0)
}

fn run_control(ex: &mut Exec, sw: &Switch, f: FnId) -> Flow {
    ex.call(sw, f, &[], &[])
}

#[cfg(test)]
mod tests {
    use super::extend_small;

    /// Every length around the block sizes, onto empty and non-empty vectors, with and without
    /// spare capacity: the bytes `extend_from_slice` would give.
    #[test]
    fn extend_small_is_extend_from_slice() {
        let src: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=160 {
            for pre in [0usize, 1, 5, 63] {
                for spare in [0usize, 200] {
                    let mut v: Vec<u8> = Vec::with_capacity(pre + spare);
                    v.extend((0..pre).map(|i| i as u8 ^ 0x5a));
                    let mut want = v.clone();
                    want.extend_from_slice(&src[3..3 + n]);
                    extend_small(&mut v, &src[3..3 + n]);
                    assert_eq!(v, want, "n {n}, pre {pre}, spare {spare}");
                }
            }
        }
    }
}
