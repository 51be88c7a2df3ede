//! The externs the engine runs, one file per family; [`Exec::extern_call`] only dispatches.

mod checksums;
mod counters;
mod digests;
mod forwarding;
mod hashes;
mod meters;
mod random;
mod registers;
mod table_ops;

use super::*;

impl Exec {
    /// Runs one extern call: the family's code, given the instance's state (`inst`) and kind.
    pub(super) fn extern_call(&mut self, sw: &Switch, x: &ExternCall) -> Flow {
        let inst = x.inst.and_then(|i| sw.externs().get(i));
        let xk = x
            .inst
            .and_then(|i| sw.prog().externs.get(i as usize))
            .map(|e| &e.kind);
        match &x.op {
            XOp::CounterCount | XOp::DirectCounterCount => self.counters(x, inst),
            XOp::MeterExecute { .. }
            | XOp::DirectMeterExecute { .. }
            | XOp::DirectMeterRead { .. } => self.meters(x, inst, xk),
            XOp::RegisterRead | XOp::RegisterWrite => self.registers(sw, x, inst),
            XOp::HashGet | XOp::V1Hash(_) => self.hashes(x, xk),
            XOp::ChecksumClear
            | XOp::ChecksumUpdate
            | XOp::ChecksumGet
            | XOp::CsumAdd
            | XOp::CsumSubtract
            | XOp::CsumGetState
            | XOp::CsumSetState
            | XOp::VerifyChecksum { .. }
            | XOp::UpdateChecksum { .. } => self.checksums(sw, x, xk),
            XOp::RandomRead | XOp::V1Random => self.random(x, xk),
            XOp::DigestPack | XOp::V1Digest => self.digests(sw, x),
            XOp::MarkToDrop
            | XOp::Resubmit
            | XOp::Recirculate
            | XOp::Clone
            | XOp::Truncate
            | XOp::Assert
            | XOp::Assume
            | XOp::Log
            | XOp::SendToPort
            | XOp::DropPacket
            | XOp::MirrorPacket
            | XOp::PnaRecirculate
            | XOp::IsNetPort
            | XOp::IsHostPort
            | XOp::PacketLength => self.forwarding(sw, x),
            XOp::AddEntry { .. }
            | XOp::SetEntryExpireTime { .. }
            | XOp::RestartExpireTimer
            | XOp::UpdateExpireInfo
            | XOp::AllocateFlowId => self.table_ops(sw, x),
        }
    }
}
