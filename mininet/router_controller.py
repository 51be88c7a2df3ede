"""A P4Runtime controller for examples/v1model-router.p4 on a network of nevermiss switches
(mininet/triangle.py runs it): it reads a topology, computes each switch's shortest paths
(Dijkstra over the links' costs), and, switch by switch, pushes the program
(SetForwardingPipelineConfig) and installs its routes with p4runtime-shell:

- `IngressImpl.ipv4_lpm`: each host's /32 to (next hop, port): the host itself on its own
  switch, else the neighbour switch on the first link of the shortest path;
- `IngressImpl.next_hop_mac`: each next hop's MAC (the host's, or the neighbour switch's);
- `EgressImpl.port_mac`: the switch's MAC as the source of what leaves each of its ports.

Run with .venv/p4runtime-shell's Python (scripts/setup.sh makes it):

    python mininet/router_controller.py TOPOLOGY.json P4INFO.txtpb DEVICE_CONFIG

TOPOLOGY.json: {"switches": {NAME: {"grpc": "ADDR:PORT", "device_id": N, "mac": MAC}},
"hosts": {NAME: {"ip": IP, "mac": MAC, "switch": NAME, "port": N}},
"links": [[SWITCH, PORT, SWITCH, PORT, COST], ...]}. Prints what it installs; exit 0 when every
switch took its routes.
"""

import heapq
import json
import sys

import p4runtime_sh.shell as sh


def shortest_first_hops(topo, src):
    """For each switch, the (port, neighbour) of the first link on a shortest path from
    `src` to it (ties broken by switch name, so the result is the same every run)."""
    adj = {}
    for a, pa, b, pb, cost in topo["links"]:
        adj.setdefault(a, []).append((cost, b, pa))
        adj.setdefault(b, []).append((cost, a, pb))
    first = {src: None}
    dist = {src: 0}
    heap = [(0, src, None)]
    done = set()
    while heap:
        d, sw, hop = heapq.heappop(heap)
        if sw in done:
            continue
        done.add(sw)
        first[sw] = hop
        for cost, nb, port in sorted(adj.get(sw, [])):
            nd = d + cost
            if nb not in dist or nd < dist[nb]:
                dist[nb] = nd
                heapq.heappush(heap, (nd, nb, hop if hop else (port, nb)))
    return first


def plan(topo, sw):
    """The entries of switch `sw`: routes [(prefix, next_hop_id, port)], next hops
    {id: mac} and port MACs {port: mac}."""
    hops = shortest_first_hops(topo, sw)
    mine = topo["switches"][sw]["mac"]
    next_hops, ids, routes = {}, {}, []
    for name, h in sorted(topo["hosts"].items()):
        if h["switch"] == sw:
            port, mac = h["port"], h["mac"]
        else:
            port, nb = hops[h["switch"]]
            mac = topo["switches"][nb]["mac"]
        if mac not in ids:
            ids[mac] = len(ids) + 1
            next_hops[ids[mac]] = mac
        routes.append(("%s/32" % h["ip"], ids[mac], port))
    ports = sorted({h["port"] for h in topo["hosts"].values() if h["switch"] == sw} |
                   {pa for a, pa, _, _, _ in topo["links"] if a == sw} |
                   {pb for _, _, b, pb, _ in topo["links"] if b == sw})
    return routes, next_hops, {p: mine for p in ports}


def program(topo, sw, p4info, devcfg):
    s = topo["switches"][sw]
    sh.setup(device_id=s["device_id"], grpc_addr=s["grpc"], election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info, devcfg), verbose=False)
    try:
        routes, next_hops, port_macs = plan(topo, sw)
        for prefix, nh, port in routes:
            te = sh.TableEntry("IngressImpl.ipv4_lpm")(action="IngressImpl.set_next_hop")
            te.match["hdr.ipv4.dst_addr"] = prefix
            te.action["next_hop"] = str(nh)
            te.action["port"] = str(port)
            te.insert()
            print("%s: route %s -> next hop %d, port %d" % (sw, prefix, nh, port))
        for nh, mac in sorted(next_hops.items()):
            te = sh.TableEntry("IngressImpl.next_hop_mac")(action="IngressImpl.set_dmac")
            te.match["meta.next_hop"] = str(nh)
            te.action["dmac"] = mac
            te.insert()
        for port, mac in sorted(port_macs.items()):
            te = sh.TableEntry("EgressImpl.port_mac")(action="EgressImpl.set_smac")
            te.match["sm.egress_port"] = str(port)
            te.action["smac"] = mac
            te.insert()
        n = len(list(sh.TableEntry("IngressImpl.ipv4_lpm").read()))
        if n != len(routes):
            raise RuntimeError("%s: %d routes read back, %d installed" % (sw, n, len(routes)))
    finally:
        sh.teardown()


def main():
    topo_path, p4info, devcfg = sys.argv[1:4]
    with open(topo_path) as f:
        topo = json.load(f)
    for sw in sorted(topo["switches"]):
        program(topo, sw, p4info, devcfg)
    print("controller: routes installed on %d switches" % len(topo["switches"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
