//! Checksums: the incremental `Checksum` and `InternetChecksum` of PNA/PSA, v1model's
//! `verify_checksum`/`update_checksum` (with payload).

use super::super::*;

impl Exec {
    /// The checksum family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn checksums(
        &mut self,
        sw: &Switch,
        x: &ExternCall,
        xk: Option<&ExternKind>,
    ) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::ChecksumClear => match xk {
                Some(ExternKind::Checksum { state, .. }) => {
                    let s = *state as usize;
                    self.st(s, 0);
                    self.st(s + 1, 0);
                }
                Some(ExternKind::InternetChecksum { state }) => self.st(*state as usize, 0),
                _ => {}
            },
            XOp::ChecksumUpdate => {
                if let (Some(ExternKind::Checksum { algo, state }), Some(XArg::Data(items))) =
                    (xk, args.first())
                {
                    self.serialize(items);
                    let s = *state as usize;
                    match algo {
                        HashAlgo::Csum16 | HashAlgo::Identity | HashAlgo::Xor16 => {
                            let add = if *algo == HashAlgo::Xor16 {
                                u64::from(state::xor16(&self.data.bytes))
                            } else {
                                u64::from(state::ones_sum16(&self.data.bytes))
                            };
                            let cur = self.ld(s);
                            let v = if *algo == HashAlgo::Xor16 {
                                cur ^ add
                            } else {
                                let t = cur + add;
                                (t & 0xffff) + (t >> 16)
                            };
                            self.st(s, v);
                        }
                        _ => {
                            // CRCs: accumulate the bytes (kept in a running CRC-32 register).
                            let mut c = if self.ld(s + 1) == 0 {
                                0xFFFF_FFFFu32
                            } else {
                                self.ld(s) as u32
                            };
                            for b in &self.data.bytes {
                                c = crc32_step(c, *b);
                            }
                            self.st(s, u64::from(c));
                            self.st(s + 1, 1);
                        }
                    }
                }
                if let (Some(ExternKind::InternetChecksum { .. }), Some(XArg::Data(_))) =
                    (xk, args.first())
                {
                    // (InternetChecksum uses add/subtract.)
                }
            }
            XOp::ChecksumGet => {
                let v = match xk {
                    Some(ExternKind::Checksum { algo, state }) => {
                        let s = *state as usize;
                        match algo {
                            HashAlgo::Csum16 | HashAlgo::Identity => !self.ld(s) & 0xffff,
                            HashAlgo::Xor16 => self.ld(s) & 0xffff,
                            _ => {
                                let c = if self.ld(s + 1) == 0 {
                                    0xFFFF_FFFFu32
                                } else {
                                    self.ld(s) as u32
                                };
                                u64::from(c ^ 0xFFFF_FFFF)
                            }
                        }
                    }
                    Some(ExternKind::InternetChecksum { state }) => {
                        !self.ld(*state as usize) & 0xffff
                    }
                    _ => 0,
                };
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, v);
                }
            }
            XOp::CsumAdd | XOp::CsumSubtract => {
                if let (Some(ExternKind::InternetChecksum { state }), Some(XArg::Data(items))) =
                    (xk, args.first())
                {
                    self.serialize(items);
                    let s = *state as usize;
                    let mut sum = u64::from(state::ones_sum16(&self.data.bytes));
                    if x.op == XOp::CsumSubtract {
                        sum = !sum & 0xffff;
                    }
                    let t = self.ld(s) + sum;
                    let t = (t & 0xffff) + (t >> 16);
                    self.st(s, (t & 0xffff) + (t >> 16));
                }
            }
            XOp::CsumGetState => {
                if let (Some(ExternKind::InternetChecksum { state }), Some((l, t))) = (xk, &x.ret) {
                    let v = self.ld(*state as usize);
                    self.xstore(l, *t, v);
                }
            }
            XOp::CsumSetState => {
                if let Some(ExternKind::InternetChecksum { state }) = xk {
                    let v = self.xval(args.first()).unwrap_or(0) & 0xffff;
                    self.st(*state as usize, v);
                }
            }
            XOp::VerifyChecksum { algo, with_payload }
            | XOp::UpdateChecksum { algo, with_payload } => {
                let cond = self.xval(args.first()).unwrap_or(1);
                if cond == 0 {
                    return Flow::Next;
                }
                if let Some(XArg::Data(items)) = args.get(1) {
                    self.serialize(items);
                }
                if *with_payload {
                    let start = self.cursor().div_ceil(8).min(self.input().len());
                    let payload = self.input()[start..].to_vec();
                    self.data.put_bytes(&payload);
                }
                // Only a random "checksum" draws from the packet's generator, so that generated
                // code computing csum16 itself leaves the sequence as the interpreter does.
                let r = if *algo == HashAlgo::Random {
                    self.next_rand()
                } else {
                    0
                };
                let h = state::hash(*algo, &self.data.bytes, r);
                if matches!(x.op, XOp::VerifyChecksum { .. }) {
                    let want = self.xval(args.get(2)).unwrap_or(0);
                    let w = match args.get(2) {
                        Some(XArg::Val(e)) => e.ty().width,
                        _ => 16,
                    };
                    if h & mask(w) != want {
                        if let Some(v1) = sw.arch().v1.as_ref() {
                            if let Some(o) = v1.checksum_error {
                                self.st(v1.sm as usize + o as usize, 1);
                            }
                        }
                    }
                } else if let Some(XArg::Out(l, t)) = args.get(2) {
                    self.xstore(l, *t, h);
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
