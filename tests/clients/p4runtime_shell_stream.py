"""p4runtime-shell against `nevermiss serve` on the stream channel, with tests/clients/l2-cpu.p4:
sends a PacketOut, receives the PacketIn and the learning digest it causes, adds the learnt
address with an idle timeout and receives the idle-timeout notification. Run by
crates/nevermiss/tests/clients.rs with the interpreter of .venv/p4runtime-shell.

Usage: python p4runtime_shell_stream.py ADDR P4INFO.txtpb DEVICE_CONFIG
"""

import os
import sys

import p4runtime_sh.shell as sh

from checks import check


def main():
    addr, p4info, devcfg = sys.argv[1:4]
    sh.setup(device_id=1, grpc_addr=addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info, devcfg), verbose=False)

    de = sh.DigestEntry("learn_t")
    de.max_timeout_ns = 0
    de.max_list_size = 1
    de.ack_timeout_ns = 1000000000
    de.insert()

    src = bytes([2, 0, 0, 0, 0, 9])
    frame = bytes([2, 0, 0, 0, 0, 1]) + src + b"\x08\x00" + b"\xab" * 20
    sh.PacketOut(frame, egress_port="0", pad="0").send()

    pins = list(sh.PacketIn().sniff(timeout=3))
    check(len(pins) == 1, "one PacketIn for a frame to an unknown destination (%d)" % len(pins))
    pin = pins[0].packet
    check(pin.payload == frame, "the PacketIn carries the frame")
    md = {m.metadata_id: m.value for m in pin.metadata}
    check(md.get(1) == b"\x01\xfe", "its ingress_port metadata is the CPU port 510: %r" % md)

    lists = list(sh.DigestList().sniff(timeout=3))
    check(len(lists) == 1, "one DigestList for the unknown source (%d)" % len(lists))
    members = lists[0].digest.data[0].struct.members
    check(members[0].bitstring == src and members[1].bitstring == b"\x01\xfe",
          "the digest names the source address and port: %s" % lists[0].digest.data[0])

    te = sh.TableEntry("IngressImpl.smac")(action="IngressImpl.known")
    te.match["hdr.eth.src_addr"] = "02:00:00:00:00:09"
    te.idle_timeout_ns = 100000000
    te.insert()
    notes = list(sh.IdleTimeoutNotification().sniff(timeout=3))
    check(len(notes) >= 1, "an idle-timeout notification for the entry nothing hits")
    e = notes[0].idle_timeout_notification.table_entry[0]
    check(e.match[0].exact.value == src and e.idle_timeout_ns == 100000000,
          "the notification carries the key and the timeout")
    sh.teardown()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any failure is the test's failure
        print("FAILED:", type(e).__name__, e, file=sys.stderr, flush=True)
        os._exit(1)
    os._exit(0)
