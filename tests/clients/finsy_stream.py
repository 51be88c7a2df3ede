"""finsy against `nevermiss serve` on the stream channel, with tests/clients/l2-cpu.p4: enables
the learning digest, sends a PacketOut, receives the PacketIn and the DigestList (and acks it),
adds the learnt address with an idle timeout and receives the idle-timeout notification. Run by
crates/nevermiss/tests/clients.rs with the interpreter of .venv/finsy.

Usage: python finsy_stream.py ADDR P4INFO.txtpb DEVICE_CONFIG
"""

import asyncio
import os
import sys
from pathlib import Path

import finsy as fy

from checks import check


async def first(it, timeout=5):
    return await asyncio.wait_for(it.__anext__(), timeout)


async def main(addr, p4info, devcfg):
    opts = fy.SwitchOptions(p4info=Path(p4info), p4blob=Path(devcfg))
    async with fy.Switch("nevermiss", addr, opts) as sw:
        await sw.write([+fy.P4DigestEntry("learn_t", max_list_size=1, max_timeout_ns=0,
                                          ack_timeout_ns=1_000_000_000)])
        packets = sw.read_packets()
        digests = sw.read_digests("learn_t")
        got_packet = asyncio.create_task(first(packets))
        got_digest = asyncio.create_task(first(digests))
        await asyncio.sleep(0.2)  # the queues are open

        src = bytes([2, 0, 0, 0, 0, 9])
        frame = bytes([2, 0, 0, 0, 0, 1]) + src + b"\x08\x00" + b"\xab" * 20
        await sw.write([fy.P4PacketOut(frame, egress_port=0, pad=0)])

        pin = await got_packet
        check(pin.payload == frame, "the PacketIn carries the frame")
        check(pin["ingress_port"] == 510, "its ingress_port is the CPU port: %r" % pin.metadata)
        dl = await got_digest
        check(len(dl) == 1, "one digest in the list")
        check(dl[0]["src_addr"] == int.from_bytes(src, "big") and dl[0]["port"] == 510,
              "the digest names the source address and port: %r" % dl[0])
        await sw.write([dl.ack()])

        idle = sw.read_idle_timeouts()
        got_idle = asyncio.create_task(first(idle))
        await asyncio.sleep(0.2)
        await sw.write([+fy.P4TableEntry(
            "smac",
            match=fy.Match(**{"hdr.eth.src_addr": "02:00:00:00:00:09"}),
            action=fy.Action("known"),
            idle_timeout_ns=100_000_000,
        )])
        note = await got_idle
        e = note.table_entry[0]
        check(e.table_id.endswith("smac") and e.idle_timeout_ns == 100_000_000,
              "the idle-timeout notification names the entry: %r" % e)


if __name__ == "__main__":
    try:
        asyncio.run(main(*sys.argv[1:4]))
    except Exception as e:  # noqa: BLE001 - any failure is the test's failure
        print("FAILED:", type(e).__name__, e, file=sys.stderr, flush=True)
        os._exit(1)
    os._exit(0)
