"""Makes `p4.tmp.p4config_pb2` importable for p4lang/tutorials' controllers (their
`p4runtime_lib/bmv2.py` sends PI's `p4.tmp.P4DeviceConfig` around the BMv2 JSON), which PyPI's
`p4runtime` does not carry: the message is described here from its field numbers (PI's
p4config.proto: reassign = 1, extras = 2 {map<string, string> kv = 1}, device_data = 3) and
registered as that module. tests/tutorials/run.py puts this directory on PYTHONPATH; Python
imports `sitecustomize` at start. Without protobuf or `p4` it does nothing.
"""

import sys
import types


def _install():
    import p4  # noqa: F401  (PyPI's p4runtime)
    from google.protobuf import descriptor_pb2, descriptor_pool

    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="p4/tmp/p4config.proto", package="p4.tmp",
                                             syntax="proto3")
    msg = fdp.message_type.add(name="P4DeviceConfig")
    extras = msg.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    extras.field.add(name="kv", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    msg.field.add(name="reassign", number=1, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    msg.field.add(name="extras", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                  type_name=".p4.tmp.P4DeviceConfig.Extras")
    msg.field.add(name="device_data", number=3, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.Default()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("p4.tmp.P4DeviceConfig")
    try:
        from google.protobuf import message_factory
        cls = message_factory.GetMessageClass(desc)
    except (ImportError, AttributeError):
        from google.protobuf import message_factory
        cls = message_factory.MessageFactory(pool).GetPrototype(desc)
    tmp = types.ModuleType("p4.tmp")
    mod = types.ModuleType("p4.tmp.p4config_pb2")
    mod.P4DeviceConfig = cls
    mod.DESCRIPTOR = desc.file
    tmp.p4config_pb2 = mod
    sys.modules["p4.tmp"] = tmp
    sys.modules["p4.tmp.p4config_pb2"] = mod
    sys.modules["p4"].tmp = tmp


try:
    _install()
except ImportError:
    pass
