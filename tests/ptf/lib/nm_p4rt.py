"""A small P4Runtime client for the PTF suite of `nevermiss serve` (tests/ptf/tests/serve_tests.py)
and its stream test (hold_streams.py): grpcio with its default channel options, as
p4runtime-shell, finsy and p4c's PTF base test use it; entities named as in the P4Info."""

import queue
import threading

import grpc
from google.protobuf import text_format
from google.rpc import status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


def read_p4info(path):
    p = p4info_pb2.P4Info()
    with open(path, "r", encoding="utf-8") as f:
        text_format.Merge(f.read(), p)
    return p


def details(err):
    """The p4.v1.Error of every update a failed Write reports (grpc-status-details-bin)."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            st = status_pb2.Status()
            st.ParseFromString(value)
            out = []
            for any_ in st.details:
                e = p4runtime_pb2.Error()
                assert any_.Unpack(e), "a detail that is not a p4.v1.Error"
                out.append(e)
            return out
    return None


class Client:
    """One controller: a channel, a stream channel (arbitrated), and the P4Info it loaded."""

    def __init__(self, addr, device_id, election_id=1):
        self.device_id = device_id
        self.election_id = election_id
        self.channel = grpc.insecure_channel(addr)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.p4info = None
        self._out = queue.Queue()
        self.stream_in = queue.Queue()
        self.stream_end = None
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.low = election_id
        self._out.put(req)
        first = self.stream_in.get(timeout=10)
        assert first.HasField("arbitration"), first

    def _read(self):
        try:
            for m in self._stream:
                self.stream_in.put(m)
        except grpc.RpcError as e:
            self.stream_end = e.code()
        else:
            self.stream_end = grpc.StatusCode.OK

    def close(self):
        self._out.put(None)
        self.channel.close()

    def set_pipeline(self, p4info_path, config_path, action="VERIFY_AND_COMMIT"):
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest()
        req.device_id = self.device_id
        req.election_id.low = self.election_id
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action.Value(action)
        self.p4info = read_p4info(p4info_path)
        req.config.p4info.CopyFrom(self.p4info)
        with open(config_path, "rb") as f:
            req.config.p4_device_config = f.read()
        self.stub.SetForwardingPipelineConfig(req)

    def _id(self, kind, name):
        for o in getattr(self.p4info, kind):
            if name in (o.preamble.name, o.preamble.alias):
                return o
        raise KeyError(f"{kind} {name}")

    def table_entry(self, table, key, action, params):
        """An exact-match entry: `key` {field: int}, `params` {param: int}."""
        t = self._id("tables", table)
        a = self._id("actions", action)
        e = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
        for mf in t.match_fields:
            if mf.name in key:
                m = e.match.add(field_id=mf.id)
                m.exact.value = _bytes(key[mf.name], mf.bitwidth)
        e.action.action.action_id = a.preamble.id
        for p in a.params:
            if p.name in params:
                e.action.action.params.add(param_id=p.id, value=_bytes(params[p.name], p.bitwidth))
        return e

    def write(self, entities, kind="INSERT"):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.low = self.election_id
        for e in entities:
            u = req.updates.add(type=p4runtime_pb2.Update.Type.Value(kind))
            if isinstance(e, p4runtime_pb2.TableEntry):
                u.entity.table_entry.CopyFrom(e)
            else:
                u.entity.packet_replication_engine_entry.CopyFrom(e)
        self.stub.Write(req)

    def read_table(self, table):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.add().table_entry.table_id = self._id("tables", table).preamble.id
        return [e.table_entry for r in self.stub.Read(req) for e in r.entities]

    def multicast_group(self, group, ports):
        pre = p4runtime_pb2.PacketReplicationEngineEntry()
        g = pre.multicast_group_entry
        g.multicast_group_id = group
        for i, p in enumerate(ports):
            g.replicas.add(egress_port=p, instance=i)
        return pre

    def clone_session(self, session, ports):
        pre = p4runtime_pb2.PacketReplicationEngineEntry()
        c = pre.clone_session_entry
        c.session_id = session
        for i, p in enumerate(ports):
            c.replicas.add(egress_port=p, instance=i)
        return pre

    def packet_out(self, payload, **fields):
        """A PacketOut with the `packet_out` header's fields by name."""
        meta = next(m for m in self.p4info.controller_packet_metadata if m.preamble.name == "packet_out")
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for m in meta.metadata:
            req.packet.metadata.add(metadata_id=m.id, value=_bytes(fields.get(m.name, 0), m.bitwidth))
        self._out.put(req)


def _bytes(v, bits):
    return int(v).to_bytes((bits + 7) // 8, "big")
