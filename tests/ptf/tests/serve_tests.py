"""PTF tests of `nevermiss serve` as BMv2 users and p4c's PTF tests drive it (issue 26), over
P4Runtime and veths in a private network namespace (crates/nevermiss/tests/ptf.rs starts the
switch and runs these). Test parameters: grpcaddr, device_id, p4info_a/config_a and
p4info_b/config_b (tests/ptf/p4/ptf-switch.p4 built with DEFAULT_PORT 1 and 2), and
latency_log (a file for the commit-to-forwarding times)."""

import time

import grpc
import nm_p4rt
import ptf
from ptf import testutils
from ptf.base_tests import BaseTest

DST = "00:00:00:00:0a:01"


def frame(dst=DST, ether_type=0x88B5, payload=b"nevermiss-ptf"):
    from scapy.layers.l2 import Ether

    return bytes(Ether(dst=dst, src="00:00:00:00:0b:01", type=ether_type) / payload).ljust(60, b"\0")


def mac_int(mac):
    return int(mac.replace(":", ""), 16)


class ServeTest(BaseTest):
    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        p = testutils.test_params_get()
        self.params = p
        self.sw = nm_p4rt.Client(p["grpcaddr"], int(p["device_id"]))

    def tearDown(self):
        self.sw.close()
        BaseTest.tearDown(self)

    def commit(self, which, action="VERIFY_AND_COMMIT"):
        self.sw.set_pipeline(self.params["p4info_" + which], self.params["config_" + which], action)

    def poll(self, port, pkt, timeout=2):
        r = testutils.dp_poll(self, device_number=0, port_number=port, timeout=timeout, exp_pkt=pkt)
        self.assertIsInstance(
            r, self.dataplane.PollSuccess, f"the frame did not come out of port {port}"
        )
        return r


class CommitThenSend(ServeTest):
    """A frame sent 0 ms after each commit's reply leaves by the program just committed: none
    is lost to the change, none runs on the old program (A sends to port 1, B to port 2)."""

    def runTest(self):
        pkt = frame()
        times = []
        for i in range(40):
            which, port, other = ("a", 1, 2) if i % 2 == 0 else ("b", 2, 1)
            self.commit(which)
            t0 = time.time()
            testutils.send_packet(self, 0, pkt)
            r = self.poll(port, pkt)
            times.append(r.time - t0)
            testutils.verify_no_packet(self, pkt, other, timeout=0.01)
        log = self.params.get("latency_log")
        if log:
            with open(log, "w", encoding="utf-8") as f:
                f.write("".join(f"{t * 1e6:.0f}\n" for t in times))


class SecondCommitClearsEntries(ServeTest):
    """A second VERIFY_AND_COMMIT starts with empty tables: the frame an entry sent to port 3
    goes to the default port at once after the commit's reply; COMMIT of a saved config too."""

    def runTest(self):
        pkt = frame()
        entry = lambda: self.sw.table_entry(
            "IngressImpl.fwd", {"hdr.eth.dst_addr": mac_int(DST)}, "IngressImpl.forward", {"port": 3}
        )
        self.commit("a")
        self.sw.write([entry()])
        testutils.send_packet(self, 0, pkt)
        self.poll(3, pkt)
        self.commit("a")
        testutils.send_packet(self, 0, pkt)
        self.poll(1, pkt)
        testutils.verify_no_other_packets(self, timeout=0.2)
        self.assertEqual(self.sw.read_table("IngressImpl.fwd"), [])
        # VERIFY_AND_SAVE then COMMIT: the same.
        self.sw.write([entry()])
        self.commit("b", "VERIFY_AND_SAVE")
        testutils.send_packet(self, 0, pkt)
        self.poll(3, pkt)
        self._commit_saved()
        testutils.send_packet(self, 0, pkt)
        self.poll(2, pkt)
        testutils.verify_no_other_packets(self, timeout=0.2)

    def _commit_saved(self):
        from p4.v1 import p4runtime_pb2

        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.sw.device_id)
        req.election_id.low = self.sw.election_id
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.COMMIT
        self.sw.stub.SetForwardingPipelineConfig(req)


class ReconcileKeepsEntries(ServeTest):
    """RECONCILE_AND_COMMIT keeps the entries that fit the new program: B's table is A's, so
    the entry still sends the frame to port 3; a frame to another address takes B's default."""

    def runTest(self):
        pkt = frame()
        self.commit("a")
        self.sw.write(
            [self.sw.table_entry("IngressImpl.fwd", {"hdr.eth.dst_addr": mac_int(DST)}, "IngressImpl.forward", {"port": 3})]
        )
        self.commit("b", "RECONCILE_AND_COMMIT")
        testutils.send_packet(self, 0, pkt)
        self.poll(3, pkt)
        other = frame(dst="00:00:00:00:0a:02")
        testutils.send_packet(self, 0, other)
        self.poll(2, other)
        self.assertEqual(len(self.sw.read_table("IngressImpl.fwd")), 1)


class PacketOutToTrafficPorts(ServeTest):
    """A PacketOut runs the program from the CPU port and leaves where the program sends it: a
    traffic port named in the packet_out header, a multicast group's ports, or by the table; and
    a clone of it by its clone session's ports."""

    def runTest(self):
        self.commit("a")
        pkt = frame(payload=b"packet-out")
        self.sw.packet_out(pkt, egress_port=2)
        self.poll(2, pkt)
        self.sw.packet_out(pkt, egress_port=3)
        self.poll(3, pkt)
        self.sw.write([self.sw.multicast_group(7, [1, 3])])
        self.sw.packet_out(pkt, mcast_grp=7)
        self.poll(1, pkt)
        self.poll(3, pkt)
        self.sw.packet_out(pkt)
        self.poll(1, pkt)
        # A clone of a PacketOut (ingress to egress) leaves by its clone session's port too.
        self.sw.write([self.sw.clone_session(5, [3])])
        self.sw.packet_out(pkt, egress_port=2, clone_session=5)
        self.poll(2, pkt)
        self.poll(3, pkt)
        testutils.verify_no_other_packets(self, timeout=0.2)
        # PacketIn unchanged: a frame the program sends to the CPU port reaches the primary.
        to_cpu = frame(ether_type=0x9999)
        testutils.send_packet(self, 2, to_cpu)
        m = self.sw.stream_in.get(timeout=5)
        self.assertTrue(m.HasField("packet"), m)
        self.assertEqual(m.packet.payload, to_cpu)
        self.assertEqual(m.packet.metadata[0].value, b"\x02")


class WriteOf300FailedUpdates(ServeTest):
    """300 inserts into the 256-entry table, one Write: grpcio's default client reads the
    answer (UNKNOWN, per-update details within its 8 KiB metadata limit, a message naming the
    44 failures) and the 256 entries that fit are there."""

    def runTest(self):
        self.commit("a")
        entries = [
            self.sw.table_entry("IngressImpl.fwd", {"hdr.eth.dst_addr": 0x020000000000 + i}, "IngressImpl.forward", {"port": 1})
            for i in range(300)
        ]
        # grpcio refuses trailers over its soft limit only sometimes (more often the larger
        # they are): ten Writes, each must be read. The first fills the table; the others get
        # 256 ALREADY_EXISTS and the same 44 RESOURCE_EXHAUSTED.
        for attempt in range(10):
            try:
                self.sw.write(entries)
            except grpc.RpcError as e:
                self.assertEqual(e.code(), grpc.StatusCode.UNKNOWN, e.details())
                self.assertIn("of 300 updates failed", e.details())
                self.assertIn("257-300 RESOURCE_EXHAUSTED", e.details())
                d = nm_p4rt.details(e)
                self.assertTrue(d, "no per-update details")
                ok = 0 if attempt == 0 else 6
                self.assertTrue(all(x.canonical_code == ok for x in d[:256]), d[:3])
                self.assertTrue(all(x.canonical_code == 8 for x in d[256:]))
            else:
                self.fail("the Write succeeded")
        self.assertEqual(len(self.sw.read_table("IngressImpl.fwd")), 256)


class CtlTableDump(ServeTest):
    """`nevermiss ctl table-dump` shows the running switch's entries as simple_switch_CLI's
    table_dump does, while this controller stays primary."""

    def runTest(self):
        import subprocess

        self.commit("a")
        self.sw.write(
            [self.sw.table_entry("IngressImpl.fwd", {"hdr.eth.dst_addr": mac_int(DST)}, "IngressImpl.forward", {"port": 3})]
        )
        ctl = [self.params["nevermiss"], "ctl", "--grpc-addr", self.params["grpcaddr"], "--device-id", "0"]
        out = subprocess.run(ctl + ["table-dump", "fwd"], capture_output=True, text=True, check=True).stdout
        self.assertIn("Dumping entry 0x0\nMatch key:\n* hdr.eth.dst_addr    : EXACT     000000000a01\n", out)
        self.assertIn("Action entry: IngressImpl.forward - 0003\n==========\nDumping default entry\n", out)
        self.assertIn("Action entry: IngressImpl.forward - 0001\n==========\n", out)
        n = subprocess.run(ctl + ["table-num-entries", "IngressImpl.fwd"], capture_output=True, text=True, check=True).stdout
        self.assertEqual(n.strip(), "1")
        # Still primary: a Write goes through.
        self.sw.write([self.sw.table_entry("IngressImpl.fwd", {"hdr.eth.dst_addr": 5}, "IngressImpl.drop", {})])
