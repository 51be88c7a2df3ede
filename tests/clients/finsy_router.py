"""finsy (PyPI finsy 0.30.0, asyncio) against `nevermiss serve`: connects (arbitration,
Capabilities, gNMI refused as UNIMPLEMENTED), loads the v1model router with a cookie, writes a
batch of 100 entries, reads them back, modifies one, sets the default action, sees NOT_FOUND per
update for absent deletes (strict and not), and empties the switch with delete_all(). Run by
crates/nevermiss/tests/clients.rs with the interpreter of .venv/finsy.

Usage: python finsy_router.py ADDR P4INFO.txtpb DEVICE_CONFIG
"""

import asyncio
import os
import sys
from pathlib import Path

import finsy as fy

from checks import check


def route(i, next_hop=1, port=1):
    return fy.P4TableEntry(
        "ipv4_lpm",
        match=fy.Match(**{"hdr.ipv4.dst_addr": f"10.{i // 256}.{i % 256}.0/24"}),
        action=fy.Action("set_next_hop", next_hop=next_hop, port=port),
    )


async def main(addr, p4info, devcfg):
    opts = fy.SwitchOptions(
        p4info=Path(p4info),
        p4blob=Path(devcfg),
        device_id=1,
    )
    async with fy.Switch("nevermiss", addr, opts) as sw:
        check(sw.is_primary, "finsy is the primary client")

        await sw.write([+route(i, next_hop=i, port=i % 500) for i in range(100)])
        got = [e async for e in sw.read(fy.P4TableEntry("ipv4_lpm"))]
        check(len(got) == 100, "a batch of 100 inserts reads back 100 entries")

        await sw.write([~route(7, next_hop=70, port=3)])
        got = [e async for e in sw.read(route(7))]
        check(len(got) == 1 and got[0].action.args["next_hop"] == 70,
              "a modify reads back: %s" % (got[0].action if got else None))

        await sw.write([
            ~fy.P4TableEntry(
                "next_hop_mac",
                action=fy.Action("set_dmac", dmac="aa:00:00:00:00:01"),
                is_default_action=True,
            )
        ])
        got = [e async for e in sw.read(fy.P4TableEntry("next_hop_mac", is_default_action=True))]
        check(len(got) == 1 and got[0].action.name.endswith("set_dmac"), "the default action is set")

        # Deleting absent entries: tolerated with strict=False (every error is NOT_FOUND), an
        # error with one detail per update otherwise.
        await sw.write([-route(1000), -route(1001)], strict=False)
        try:
            await sw.write([-route(1000), -route(5)])
            check(False, "a strict delete of an absent entry fails")
        except fy.P4ClientError as e:
            codes = {k: v.canonical_code.name for k, v in e.details.items()}
            check(codes == {0: "NOT_FOUND"}, "per-update details name the absent entry: %s" % codes)
        got = [e async for e in sw.read(route(5))]
        check(got == [], "the present entry of that batch was deleted")

        # Everything away, as finsy's controllers start: wildcard reads of every table,
        # multicast groups, clone sessions, action profiles, default entries reset, digests.
        await sw.delete_all()
        got = [e async for e in sw.read(fy.P4TableEntry())]
        check(got == [], "delete_all() leaves no entry")
        got = [e async for e in sw.read(fy.P4TableEntry("next_hop_mac", is_default_action=True))]
        check(len(got) == 1 and got[0].action.name.endswith("drop"),
              "delete_all() resets the default action to the program's")


if __name__ == "__main__":
    try:
        asyncio.run(main(*sys.argv[1:4]))
    except Exception as e:  # noqa: BLE001 - any failure is the test's failure
        print("FAILED:", type(e).__name__, e, file=sys.stderr, flush=True)
        os._exit(1)
    os._exit(0)
