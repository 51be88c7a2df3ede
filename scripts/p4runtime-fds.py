#!/usr/bin/env python3
"""Writes the P4Runtime protocol's descriptors as one FileDescriptorSet.

The .proto files are not nevermiss's: they come from the PyPI packages `p4runtime` and
`googleapis-common-protos` (pinned in scripts/setup.sh), whose generated modules carry every
file's serialized descriptor. crates/nevermiss-p4rt/build.rs compiles the set with prost/tonic.

usage: p4runtime-fds.py OUT.fds
"""
import sys

from google.protobuf import descriptor_pb2

# The files nevermiss needs; their imports are added recursively.
import p4.v1.p4runtime_pb2  # noqa: F401
import p4.config.v1.p4info_pb2  # noqa: F401
import google.rpc.status_pb2  # noqa: F401
import google.rpc.code_pb2  # noqa: F401
from google.protobuf import descriptor_pool

ROOTS = [
    "p4/v1/p4runtime.proto",
    "p4/config/v1/p4info.proto",
    "google/rpc/status.proto",
    "google/rpc/code.proto",
]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pool = descriptor_pool.Default()
    out = descriptor_pb2.FileDescriptorSet()
    seen = set()

    def add(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        fd = pool.FindFileByName(name)
        for dep in fd.dependencies:
            add(dep.name)
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        out.file.append(proto)

    for r in ROOTS:
        add(r)
    with open(sys.argv[1], "wb") as f:
        f.write(out.SerializeToString())
    print(f"{sys.argv[1]}: {len(out.file)} files: " + ", ".join(p.name for p in out.file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
