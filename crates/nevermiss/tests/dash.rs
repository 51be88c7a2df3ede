//! SONiC DASH's `dash-pipeline` as its own sources are (issue 28). Env-gated on `DASH_DIR`, a
//! checkout of github sonic-net/DASH (nothing of DASH is in this repository; skipped when
//! unset): both builds as DASH's Makefile compiles them — v1model (`-DTARGET_BMV2_V1MODEL`,
//! p4c-bm2-ss) and PNA (`-DTARGET_DPDK_PNA -DPNA_CONNTRACK -DDISABLE_128BIT_ARITHMETIC`,
//! p4c-dpdk) — pass `nevermiss check`, get a P4Info with DASH's structured annotations, and run
//! over generated traffic on both engines. With `P4C_BM2_SS` (a p4c-bm2-ss binary) and
//! `P4C_DPDK` (p4c-dpdk) each build's P4Info is compared with p4c's, byte for byte.
//!
//! DASH's outbound VNET flow as a workload (entries and VXLAN packets written here from DASH's
//! documentation and its P4's table and action names): every output packet byte for byte on
//! both builds (and through p4c-bm2-ss's BMv2 JSON with `P4C_BM2_SS`), connection tracking's
//! inserts and hits read from the table, and the bench point of docs/bench.md
//! (`dash_vnet_bench`, ignored unless asked for).
//!
//! Without DASH: the constructs DASH needed, through the binary, on this repository's programs.

use nevermiss_p4rt::format::parse_p4info_text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-dash-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run nevermiss")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A `##` that forms no token (DASH's `push_vxlan_tunnel_ ## id ## (`) is a warning with the
/// macro use's place, and the program checks.
#[test]
fn check_warns_about_a_failed_paste_and_goes_on() {
    let f = root().join("tests/p4/ok/v1model-macro-paste.p4");
    let o = run(&["check", p(&f)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains(
            "v1model-macro-paste.p4:30:1: warning: pasting \"set_outer\" and \"(\" does not give a valid preprocessing token"
        ),
        "{e}"
    );
    assert!(
        e.contains("v1model-macro-paste.p4:30:1: warning: pasting \".\" and \"outer\""),
        "{e}"
    );
    assert!(
        e.contains("v1model-macro-paste.p4:31:1: warning: pasting \"set_inner\" and \"(\""),
        "{e}"
    );
    // One warning per paste and macro use, not one per `##` of the expansion.
    assert_eq!(e.matches("warning:").count(), 4, "{e}");
}

/// DASH's two builds: (name, defines).
const BUILDS: [(&str, &[&str]); 2] = [
    ("v1model", &["-DTARGET_BMV2_V1MODEL"]),
    (
        "pna",
        &[
            "-DTARGET_DPDK_PNA",
            "-DPNA_CONNTRACK",
            "-DDISABLE_128BIT_ARITHMETIC",
        ],
    ),
];

fn dash_pipeline() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("DASH_DIR") else {
        eprintln!("DASH_DIR not set: skipping the SONiC DASH tests");
        return None;
    };
    let f = PathBuf::from(dir).join("dash-pipeline/bmv2/dash_pipeline.p4");
    assert!(f.is_file(), "DASH_DIR has no {}", f.display());
    Some(f)
}

fn with_defines<'a>(args: &[&'a str], defines: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(defines).copied().collect()
}

#[test]
fn dash_builds_check_get_a_p4info_and_run() {
    let Some(dash) = dash_pipeline() else { return };
    for (build, defines) in BUILDS {
        let o = run(&with_defines(&["check", p(&dash)], defines));
        assert_eq!(o.status.code(), Some(0), "{build}: {}", stderr(&o));

        let out = tmp(&format!("dash-{build}.txtpb"));
        let o = run(&with_defines(&["p4info", p(&dash), "-o", p(&out)], defines));
        assert_eq!(o.status.code(), Some(0), "{build}: {}", stderr(&o));
        let p4info = parse_p4info_text(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(
            p4info.tables.len() > 30,
            "{build}: {} tables",
            p4info.tables.len()
        );
        assert!(
            p4info.actions.len() > 30,
            "{build}: {} actions",
            p4info.actions.len()
        );
        // DASH's SAI generator reads its `@SaiTable[...]` and `@SaiVal[...]` from the P4Info.
        let sai_tables = p4info
            .tables
            .iter()
            .filter(|t| {
                t.preamble
                    .as_ref()
                    .unwrap()
                    .structured_annotations
                    .iter()
                    .any(|a| a.name == "SaiTable")
            })
            .count();
        assert!(
            sai_tables > 20,
            "{build}: {sai_tables} tables with @SaiTable"
        );
        let sai_keys = p4info
            .tables
            .iter()
            .flat_map(|t| &t.match_fields)
            .filter(|m| m.structured_annotations.iter().any(|a| a.name == "SaiVal"))
            .count();
        assert!(sai_keys > 20, "{build}: {sai_keys} keys with @SaiVal");

        for engine in ["jit", "interp"] {
            let o = run(&with_defines(
                &[
                    "run",
                    p(&dash),
                    "--engine",
                    engine,
                    "--port",
                    "0=gen:two-phase,m=4096,r=100,count=20000,field=ipv4.dst",
                ],
                defines,
            ));
            let text = String::from_utf8_lossy(&o.stdout);
            assert_eq!(o.status.code(), Some(0), "{build} {engine}: {}", stderr(&o));
            assert!(
                text.contains("total: 20000 packets in"),
                "{build} {engine}: {text}"
            );
        }
    }
}

/// Each build's P4Info against p4c's, run as DASH's Makefile runs it: the v1model build
/// against p4c-bm2-ss's (`P4C_BM2_SS` names the binary), the PNA build against p4c-dpdk's
/// (`P4C_DPDK`); p4c finds its own `p4include`. Byte for byte.
#[test]
fn dash_p4info_equals_p4cs() {
    let Some(dash) = dash_pipeline() else { return };
    let compilers = [
        ("P4C_BM2_SS", BUILDS[0], &["-o", "dash.json"][..]),
        (
            "P4C_DPDK",
            BUILDS[1],
            &["--arch", "pna", "-o", "dash.spec"][..],
        ),
    ];
    for (var, (build, defines), extra) in compilers {
        let Some(p4c) = std::env::var_os(var) else {
            eprintln!("{var} not set: skipping the comparison of DASH's {build} P4Info with p4c's");
            continue;
        };
        let theirs = tmp(&format!("dash_{build}_p4c.txt"));
        let o = Command::new(p4c)
            .args(defines)
            .args(extra.iter().map(|a| match *a {
                "dash.json" | "dash.spec" => tmp(a).into_os_string(),
                a => a.into(),
            }))
            .arg("--p4runtime-files")
            .arg(&theirs)
            .arg(&dash)
            .output()
            .expect("run p4c");
        assert!(o.status.success(), "{var}: {}", stderr(&o));
        let ours = tmp(&format!("dash_{build}_nevermiss.txt"));
        let o = run(&with_defines(
            &["p4info", p(&dash), "-o", p(&ours)],
            defines,
        ));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (a, b) = (
            std::fs::read_to_string(&ours).unwrap(),
            std::fs::read_to_string(&theirs).unwrap(),
        );
        if a != b {
            let (i, (x, y)) = a
                .lines()
                .zip(b.lines())
                .enumerate()
                .find(|(_, (x, y))| x != y)
                .unwrap_or((a.lines().count().min(b.lines().count()), ("", "")));
            panic!(
                "DASH's {build} P4Info differs from {var}'s at line {}: ours `{x}`, p4c `{y}` ({} vs {} lines)",
                i + 1,
                a.lines().count(),
                b.lines().count()
            );
        }
        eprintln!("DASH's {build} P4Info equals {var}'s ({} bytes)", a.len());
    }
}

// ---------------------------------------------------------------------------------------------
// DASH's outbound VNET flow as a workload (issue 28): entries written here from DASH's
// documentation (the VNET-to-VNET outbound flow: ENI lookup by the VM's MAC, outbound routing to
// a VNET, the CA-to-PA mapping, VXLAN encapsulation with the VNET's VNI) and from its P4's table,
// key and action names; VXLAN packets built here; output packets checked byte by byte.

/// The DPU's underlay: its VIP, its MAC and its next hop's MAC (`internal_config`).
const VIP: [u8; 4] = [10, 10, 0, 1];
const DPU_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const NEIGHBOR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
/// The host of the local VM (its PA; the ENI's `vm_underlay_dip`) and its MAC.
const HOST_PA: [u8; 4] = [10, 20, 0, 5];
const HOST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];
/// The local VM: its MAC is the ENI's, its CA in VNET 1; the VNI its host sends with.
const VM_MAC: [u8; 6] = [0x00, 0x1a, 0xc5, 0, 0, 0x01];
const VM_CA: [u8; 4] = [10, 1, 1, 10];
const VM_VNI: u32 = 100;
/// The peer VM in VNET 2 (10.1.2.0/24 routed there): its CA, MAC, host PA and the VNET's VNI.
const PEER_CA: [u8; 4] = [10, 1, 2, 50];
const PEER_MAC: [u8; 6] = [0x00, 0x1a, 0xc5, 0, 0, 0x02];
const PEER_PA: [u8; 4] = [10, 20, 0, 9];
const VNET2_VNI: u32 = 2000;
const GATEWAY_MAC: [u8; 6] = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc];
const ENI_ID: u16 = 7;

const T_INBOUND_CONNTRACK: &str = "dash_ingress.dash_match_stage.inbound.ConntrackOut.conntrackOut";

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn n32(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

/// `name(p1:v1, p2:v2, ...)`, every parameter of the action in `all` (0 unless in `set`).
fn call(name: &str, all: &[&str], set: &[(&str, u128)]) -> String {
    let args: Vec<String> = all
        .iter()
        .map(|p| {
            let v = set.iter().find(|(n, _)| n == p).map_or(0, |(_, v)| *v);
            format!("{p}:{v:#x}")
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

/// The entries (STF syntax, `nevermiss run --entries`): the same for DASH's two builds (the ACL
/// keys the PNA build matches as ternary/range and v1model as optional are given as single
/// values, which both read the same way).
fn vnet_entries() -> String {
    let mut eni_params: Vec<String> = [
        "cps",
        "pps",
        "flows",
        "admin_state",
        "ha_scope_id",
        "vm_underlay_dip",
        "vm_vni",
        "vnet_id",
        "pl_sip",
        "pl_sip_mask",
        "pl_underlay_sip",
        "v4_meter_policy_id",
        "v6_meter_policy_id",
        "dash_tunnel_dscp_mode",
        "dscp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for dir in ["inbound_v4", "inbound_v6", "outbound_v4", "outbound_v6"] {
        for stage in 1..=5 {
            eni_params.push(format!("{dir}_stage{stage}_dash_acl_group_id"));
        }
    }
    eni_params.extend(
        [
            "disable_fast_path_icmp_flow_redirection",
            "full_flow_resimulation_requested",
            "max_resimulated_flow_per_second",
            "outbound_routing_group_id",
            "enable_reverse_tunnel_learning",
            "reverse_tunnel_sip",
            "is_ha_flow_owner",
            "flow_table_id",
            "dash_eni_mode",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let eni_params: Vec<&str> = eni_params.iter().map(String::as_str).collect();
    let route_params = [
        "dst_vnet_id",
        "dash_tunnel_id",
        "meter_class_or",
        "meter_class_and",
        "routing_actions_disabled_in_flow_resimulation",
    ];
    let mapping_params = [
        "underlay_dip",
        "overlay_dmac",
        "use_dst_vnet_vni",
        "meter_class_or",
        "dash_tunnel_id",
        "flow_resimulation_requested",
        "routing_actions_disabled_in_flow_resimulation",
    ];
    let mac = |m: [u8; 6]| u128::from_str_radix(&hexs(&m), 16).unwrap();
    let ip = |a: [u8; 4]| u128::from(n32(a));
    let pre = "dash_ingress.dash_lookup_stage.pre_pipeline_stage";
    let out = "dash_ingress.dash_match_stage.outbound";
    [
        // The appliance: its underlay MACs; flows off (no DPAPP; connection tracking is PNA's
        // add-on-miss tables).
        format!(
            "add {pre}.internal_config meta.appliance_id:0&&&0 {}",
            call(
                &format!("{pre}.set_internal_config"),
                &["neighbor_mac", "mac", "cpu_mac", "flow_enabled"],
                &[("neighbor_mac", mac(NEIGHBOR_MAC)), ("mac", mac(DPU_MAC))]
            )
        ),
        format!(
            "add {pre}.vip meta.rx_encap.underlay_dip:{:#x} {pre}.accept()",
            n32(VIP)
        ),
        // Packets from VMs arrive with the VNI their hosts use for the DPU: outbound.
        format!(
            "add dash_ingress.dash_lookup_stage.direction_lookup_stage.direction_lookup meta.rx_encap.vni:{VM_VNI} dash_ingress.dash_lookup_stage.direction_lookup_stage.set_outbound_direction(dash_eni_mac_override_type:0)"
        ),
        format!(
            "add dash_ingress.dash_lookup_stage.eni_lookup_stage.eni_ether_address_map meta.eni_addr:{:#x} dash_ingress.dash_lookup_stage.eni_lookup_stage.set_eni(eni_id:{ENI_ID})",
            mac(VM_MAC)
        ),
        // The ENI: up, in VNET 1, routing group 3, outbound IPv4 ACL group 5.
        format!(
            "add dash_ingress.dash_lookup_stage.dash_eni_stage.eni meta.eni_id:{ENI_ID} {}",
            call(
                "dash_ingress.dash_lookup_stage.dash_eni_stage.set_eni_attrs",
                &eni_params,
                &[
                    ("admin_state", 1),
                    ("vm_underlay_dip", ip(HOST_PA)),
                    ("vm_vni", u128::from(VM_VNI)),
                    ("vnet_id", 1),
                    ("outbound_v4_stage1_dash_acl_group_id", 5),
                    ("outbound_routing_group_id", 3),
                ]
            )
        ),
        // The two VNIs in use are trusted (a range key given one value is that value).
        format!("add dash_ingress.trusted_vni_stage.global_trusted_vni meta.rx_encap.vni:{VM_VNI} dash_ingress.trusted_vni_stage.permit()"),
        format!("add dash_ingress.trusted_vni_stage.global_trusted_vni meta.rx_encap.vni:{VNET2_VNI} dash_ingress.trusted_vni_stage.permit()"),
        // Outbound ACL, group 5: TCP is permitted; the stage's default denies the rest.
        format!("add {out}.acl.stage1 meta.stage1_dash_acl_group_id:5 meta.ip_protocol:0x06 {out}.acl.permit()"),
        // Outbound routing: 10.1.0.0/16 (an IPv4 address is the low 32 bits of the 128-bit
        // key, so /16 is /112) is VNET 2.
        format!(
            "add {out}.outbound_routing_stage.outbound_routing_group meta.eni_data.outbound_routing_group_data.outbound_routing_group_id:3 {out}.outbound_routing_stage.set_outbound_routing_group_attr(disabled:0)"
        ),
        format!(
            "add {out}.outbound_routing_stage.routing meta.eni_data.outbound_routing_group_data.outbound_routing_group_id:3 meta.is_overlay_ip_v6:0 meta.dst_ip_addr:0x0a010000/112 {}",
            call(
                "route_vnet",
                &route_params,
                &[("dst_vnet_id", 2), ("meter_class_and", 0xffff_ffff)]
            )
        ),
        // The VNET mapping: the peer's CA is at its host's PA, with the peer's MAC; VNET 2's VNI.
        format!(
            "add {out}.outbound_mapping_stage.ca_to_pa meta.dst_vnet_id:2 meta.is_lkup_dst_ip_v6:0 meta.lkup_dst_ip_addr:{:#x} {}",
            n32(PEER_CA),
            call(
                "set_tunnel_mapping",
                &mapping_params,
                &[
                    ("underlay_dip", ip(PEER_PA)),
                    ("overlay_dmac", mac(PEER_MAC)),
                    ("use_dst_vnet_vni", 1)
                ]
            )
        ),
        format!(
            "add {out}.outbound_mapping_stage.vnet meta.vnet_id:2 {out}.outbound_mapping_stage.set_vnet_attrs(vni:{VNET2_VNI})"
        ),
        // Inbound: VNET 2's traffic for this ENI is decapsulated (and sent to the VM's host).
        format!(
            "add dash_ingress.dash_match_stage.inbound.inbound_routing_stage.inbound_routing meta.eni_id:{ENI_ID} meta.rx_encap.vni:{VNET2_VNI} dash_ingress.dash_match_stage.inbound.inbound_routing_stage.tunnel_decap(meter_class_or:0, meter_class_and:0xffffffff)"
        ),
        // The underlay: 10.20.0.0/16 leaves on port 1.
        "add dash_ingress.underlay.underlay_routing meta.dst_ip_addr:0x0a140000/112 dash_ingress.underlay.pkt_act(packet_action:1, next_hop_id:1)".to_string(),
    ]
    .join("\n")
        + "\n"
}

/// The Internet checksum of `b`.
fn csum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn ethernet(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    [&dst[..], &src[..], &[0x08, 0x00]].concat()
}

/// An IPv4 header (no options) for `payload_len` bytes of `proto`; `checksum: false` leaves
/// the checksum 0 (DASH's PNA build writes 0 and computes none).
fn ipv4(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    payload_len: usize,
    id: u16,
    ttl: u8,
    checksum: bool,
) -> Vec<u8> {
    let len = (20 + payload_len) as u16;
    let mut h = [
        &[0x45, 0][..],
        &len.to_be_bytes(),
        &id.to_be_bytes(),
        &[0, 0, ttl, proto, 0, 0],
        &src,
        &dst,
    ]
    .concat();
    if checksum {
        let c = csum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
    h
}

/// A customer TCP/IPv4 frame (Ethernet, IPv4, TCP with its checksum, 8 bytes of payload).
fn customer_tcp(
    dmac: [u8; 6],
    smac: [u8; 6],
    sip: [u8; 4],
    dip: [u8; 4],
    sport: u16,
    dport: u16,
    flags: u8,
) -> Vec<u8> {
    let payload = b"nevrmiss";
    let mut tcp = [
        &sport.to_be_bytes()[..],
        &dport.to_be_bytes(),
        &1000u32.to_be_bytes(),
        &0u32.to_be_bytes(),
        &[0x50, flags, 0xff, 0xff, 0, 0, 0, 0],
        payload,
    ]
    .concat();
    let pseudo = [
        &sip[..],
        &dip,
        &[0, 6],
        &(tcp.len() as u16).to_be_bytes(),
        &tcp,
    ]
    .concat();
    let c = csum(&pseudo);
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
    [
        ethernet(dmac, smac),
        ipv4(sip, dip, 6, tcp.len(), 1, 64, true),
        tcp,
    ]
    .concat()
}

/// `inner` in Ethernet/IPv4/UDP 4789/VXLAN with `vni`.
#[allow(clippy::too_many_arguments)]
fn vxlan(
    dmac: [u8; 6],
    smac: [u8; 6],
    sip: [u8; 4],
    dip: [u8; 4],
    sport: u16,
    flags: u8,
    vni: u32,
    id: u16,
    checksum: bool,
    inner: &[u8],
) -> Vec<u8> {
    let udp_len = (8 + 8 + inner.len()) as u16;
    let udp = [
        &sport.to_be_bytes()[..],
        &4789u16.to_be_bytes(),
        &udp_len.to_be_bytes(),
        &[0, 0],
    ]
    .concat();
    let vx = [&[flags, 0, 0, 0][..], &(vni << 8).to_be_bytes()].concat();
    [
        ethernet(dmac, smac),
        ipv4(sip, dip, 17, usize::from(udp_len), id, 64, checksum),
        udp,
        vx,
        inner.to_vec(),
    ]
    .concat()
}

/// What the VM's host sends: the VM's frame in VXLAN (VNI 100) to the DPU's VIP; the outer
/// UDP source port from the inner flow, as VXLAN senders do (RFC 7348 §5), so RSS spreads flows.
fn from_vm_host(inner: &[u8]) -> Vec<u8> {
    let sport = 49152 | (csum(&inner[26..38]) & 0x3fff);
    vxlan(
        DPU_MAC, HOST_MAC, HOST_PA, VIP, sport, 0x08, VM_VNI, 7, true, inner,
    )
}

/// What the peer's host sends: the peer's frame in VXLAN (VNET 2's VNI) to the VIP.
fn from_peer_host(inner: &[u8]) -> Vec<u8> {
    let sport = 49152 | (csum(&inner[26..38]) & 0x3fff);
    vxlan(
        DPU_MAC, HOST_MAC, PEER_PA, VIP, sport, 0x08, VNET2_VNI, 9, true, inner,
    )
}

/// DASH's encapsulation of `inner` toward `pa` with `vni` (`push_vxlan_tunnel_u0`): from the
/// DPU's MAC to its neighbor, VIP to `pa`, UDP source port 0, TTL 64, identification 1; the
/// v1model build sets the VXLAN I flag (0x08) and computes the IPv4 checksum
/// (`dash_compute_checksum`), the PNA build writes flags 0 and checksum 0.
fn dash_encap(pna: bool, pa: [u8; 4], vni: u32, inner: &[u8]) -> Vec<u8> {
    let flags = if pna { 0 } else { 0x08 };
    vxlan(
        NEIGHBOR_MAC,
        DPU_MAC,
        VIP,
        pa,
        0,
        flags,
        vni,
        1,
        !pna,
        inner,
    )
}

/// The VM's TCP packet to the peer (`sport` → 80) with `flags`.
fn vm_to_peer(sport: u16, flags: u8, dmac: [u8; 6]) -> Vec<u8> {
    customer_tcp(dmac, VM_MAC, VM_CA, PEER_CA, sport, 80, flags)
}

/// The peer's TCP packet to the VM (`sport` → 22) with `flags`.
fn peer_to_vm(sport: u16, flags: u8) -> Vec<u8> {
    customer_tcp(VM_MAC, PEER_MAC, PEER_CA, VM_CA, sport, 22, flags)
}

/// The VM's UDP packet to the peer: the outbound ACL denies it.
fn vm_udp_to_peer() -> Vec<u8> {
    let udp = [
        &5353u16.to_be_bytes()[..],
        &53u16.to_be_bytes(),
        &16u16.to_be_bytes(),
        &[0, 0],
        b"nevrmiss",
    ]
    .concat();
    [
        ethernet(GATEWAY_MAC, VM_MAC),
        ipv4(VM_CA, PEER_CA, 17, udp.len(), 1, 64, true),
        udp,
    ]
    .concat()
}

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// The scenario's packets in order, each with what must leave port 1 for it on the `pna` or
/// v1model build (`None`: dropped).
fn vnet_packets(pna: bool) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let outbound = |sport, flags| {
        (
            from_vm_host(&vm_to_peer(sport, flags, GATEWAY_MAC)),
            // Routed to VNET 2, mapped to the peer's PA, the inner destination MAC the peer's.
            Some(dash_encap(
                pna,
                PEER_PA,
                VNET2_VNI,
                &vm_to_peer(sport, flags, PEER_MAC),
            )),
        )
    };
    let inbound = |sport, flags| {
        (
            from_peer_host(&peer_to_vm(sport, flags)),
            // Decapsulated and sent to the VM's host with the ENI's VNI, the inner frame as it came.
            Some(dash_encap(pna, HOST_PA, VM_VNI, &peer_to_vm(sport, flags))),
        )
    };
    vec![
        outbound(40000, SYN),
        outbound(40000, ACK),
        (from_vm_host(&vm_udp_to_peer()), None),
        // Two inbound connections: each SYN inserts its connection, the later packets hit.
        inbound(5000, SYN),
        inbound(5000, ACK),
        inbound(5000, ACK),
        inbound(5001, SYN),
        inbound(5001, ACK),
    ]
}

fn build_defines(pna: bool) -> &'static [&'static str] {
    BUILDS[usize::from(pna)].1
}

/// Runs `program` over the scenario's packets with `nevermiss run` and returns what left port 1
/// and the run's report.
fn run_vnet(
    program: &Path,
    defines: &[&str],
    extra: &[&str],
    inputs: &[Vec<u8>],
    tag: &str,
) -> (Vec<Vec<u8>>, String) {
    let entries = tmp(&format!("vnet-{tag}.entries"));
    std::fs::write(&entries, vnet_entries()).unwrap();
    let input = tmp(&format!("vnet-{tag}-in.pcap"));
    let output = tmp(&format!("vnet-{tag}-out.pcap"));
    let pkts: Vec<nevermiss_io::Packet> = inputs
        .iter()
        .enumerate()
        .map(|(i, d)| nevermiss_io::Packet::from_bytes(d, 0, 1000 * i as u64))
        .collect();
    nevermiss_io::pcap::write_file(&input, &pkts).unwrap();
    let (spec0, spec1) = (
        format!("0=pcap:{}", p(&input)),
        format!("1=pcap:,{}", p(&output)),
    );
    let mut args = vec![
        "run",
        p(program),
        "--port",
        &spec0,
        "--port",
        &spec1,
        "--entries",
        p(&entries),
    ];
    args.extend_from_slice(defines);
    args.extend_from_slice(extra);
    let o = run(&args);
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{tag}: {}{report}", stderr(&o));
    let got = nevermiss_io::pcap::read_file(&output).unwrap();
    (got.iter().map(|p| p.data().to_vec()).collect(), report)
}

fn assert_outputs(tag: &str, got: &[Vec<u8>], want: &[Vec<u8>]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            hexs(g),
            hexs(w),
            "{tag}: output packet {i} differs (got, expected)"
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{tag}: {} packets left port 1, expected {}",
        got.len(),
        want.len()
    );
}

/// The outbound VNET flow, its ACL and the inbound return path through `nevermiss run` on
/// DASH's PNA build (P4-DPDK's forwarding: `--pna-default-port 1`, since DASH's PNA build calls
/// neither `send_to_port` nor `drop_packet`) and v1model build, both engines; every output
/// packet byte for byte. With `P4C_BM2_SS`, the same packets through p4c-bm2-ss's BMv2 JSON of
/// the v1model build.
#[test]
fn dash_outbound_vnet_packets_byte_for_byte() {
    let Some(dash) = dash_pipeline() else { return };
    for pna in [true, false] {
        let cases = vnet_packets(pna);
        let inputs: Vec<Vec<u8>> = cases.iter().map(|c| c.0.clone()).collect();
        let want: Vec<Vec<u8>> = cases.iter().filter_map(|c| c.1.clone()).collect();
        for engine in ["jit", "interp"] {
            let tag = format!("{}-{engine}", if pna { "pna" } else { "v1model" });
            let mut extra = vec!["--engine", engine];
            if pna {
                extra.extend(["--pna-default-port", "1"]);
            }
            let (got, report) = run_vnet(&dash, build_defines(pna), &extra, &inputs, &tag);
            assert_outputs(&tag, &got, &want);
            assert!(
                report.contains(&format!("port   0: in {} pkts", inputs.len())),
                "{tag}: {report}"
            );
            eprintln!(
                "{tag}: {} packets in, {} out as expected",
                inputs.len(),
                got.len()
            );
        }
        if !pna {
            let Some(p4c) = std::env::var_os("P4C_BM2_SS") else {
                eprintln!("P4C_BM2_SS not set: skipping the BMv2 JSON cross-check");
                continue;
            };
            let json = tmp("dash-v1model.json");
            let o = Command::new(p4c)
                .args(build_defines(false))
                .arg("-o")
                .arg(&json)
                .arg(&dash)
                .output()
                .expect("run p4c-bm2-ss");
            assert!(o.status.success(), "p4c-bm2-ss: {}", stderr(&o));
            let (got, _) = run_vnet(&json, &[], &[], &inputs, "bmv2-json");
            assert_outputs("p4c-bm2-ss's JSON", &got, &want);
            eprintln!("p4c-bm2-ss's JSON: the same {} packets out", got.len());
        }
    }
}

/// Loads DASH's PNA build into a switch with the scenario's entries (in this process, so the
/// test reads the connection table's entries themselves).
fn pna_switch(
    dash: &Path,
    config: nevermiss_runtime::Config,
) -> std::sync::Arc<nevermiss_runtime::Switch> {
    let opts = p4_front::driver::Options {
        include_dirs: Vec::new(),
        defines: build_defines(true)
            .iter()
            .map(|d| (d.trim_start_matches("-D").to_string(), "1".to_string()))
            .collect(),
        arch: p4_front::driver::ArchChoice::Auto,
    };
    let prog = p4_ir::lower::source::compile_file(dash, &opts).expect("DASH's PNA build compiles");
    let sw = std::sync::Arc::new(nevermiss_runtime::Switch::new(prog, config).unwrap());
    let mut cp = nevermiss_runtime::control::ControlPlane::new(&sw);
    for st in nevermiss_io::parse_stf(&vnet_entries()).unwrap() {
        cp.apply(&st.command)
            .unwrap_or_else(|e| panic!("line {}: {e}", st.line));
    }
    sw
}

fn table_id(sw: &nevermiss_runtime::Switch, name: &str) -> u32 {
    sw.prog()
        .tables
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}")) as u32
}

/// Connection tracking as DASH's PNA build does it (`dash_conntrack.p4`, `PNA_CONNTRACK`): an
/// inbound SYN misses `ConntrackOut` and inserts its connection with `add_entry`
/// (`conntrackOut_allow`, expire profile 2); the later packets of that connection hit it; a
/// second connection inserts its own. The key is direction-neutral: (local CA, remote CA,
/// protocol, local port, remote port, ENI). Outbound packets miss their conntrack tables and
/// insert nothing: DASH inserts on the outbound side only for NAT46 routes (`conntrackIn_miss`).
#[test]
fn dash_connection_tracking_inserts_on_miss_and_hits_after() {
    let Some(dash) = dash_pipeline() else { return };
    use nevermiss_runtime::control::EntryAction;
    use nevermiss_tables::FieldMatch;
    for engine in [
        nevermiss_runtime::Engine::Jit,
        nevermiss_runtime::Engine::Interp,
    ] {
        let config = nevermiss_runtime::Config {
            engine,
            pna_default_port: Some(1),
            ..Default::default()
        };
        let sw = pna_switch(&dash, config);
        let ct = table_id(&sw, T_INBOUND_CONNTRACK);
        let mut w = nevermiss_runtime::Worker::new(sw.clone(), 0);
        let cases = vnet_packets(true);
        let mut entries_after = Vec::new();
        for (i, (input, want)) in cases.iter().enumerate() {
            let out = w.process(input, 0, 1_000 * i as u64);
            let got: Vec<&Vec<u8>> = out.as_slice().iter().map(|(_, b)| b).collect();
            match want {
                Some(w) => assert_eq!(
                    got.iter().map(|b| hexs(b)).collect::<Vec<_>>(),
                    vec![hexs(w)],
                    "{engine:?} packet {i}"
                ),
                None => assert!(got.is_empty(), "{engine:?} packet {i} should be dropped"),
            }
            entries_after.push(sw.read_entries(ct).unwrap().len());
        }
        // Outbound SYN, ACK, UDP: nothing; inbound SYN (5000): 1; its ACKs: 1; SYN (5001): 2.
        assert_eq!(entries_after, vec![0, 0, 0, 1, 1, 1, 2, 2], "{engine:?}");
        let mut keys: Vec<Vec<Vec<u8>>> = sw
            .read_entries(ct)
            .unwrap()
            .iter()
            .map(|e| {
                e.key
                    .matches
                    .iter()
                    .map(|m| match m {
                        FieldMatch::Exact(b) => b.clone(),
                        m => panic!("not exact: {m:?}"),
                    })
                    .collect()
            })
            .collect();
        keys.sort();
        let key = |peer_port: u16| {
            vec![
                VM_CA.to_vec(),
                PEER_CA.to_vec(),
                vec![6],
                22u16.to_be_bytes().to_vec(),
                peer_port.to_be_bytes().to_vec(),
                ENI_ID.to_be_bytes().to_vec(),
            ]
        };
        assert_eq!(keys, vec![key(5000), key(5001)], "{engine:?}");
        let allow = sw.prog().tables[ct as usize]
            .actions
            .iter()
            .position(|a| a.name.ends_with("conntrackOut_allow"))
            .unwrap() as u32;
        for e in sw.read_entries(ct).unwrap() {
            match &e.action {
                EntryAction::Call(c) => assert_eq!(c.action, allow, "{engine:?}"),
                a => panic!("{engine:?}: {a:?}"),
            }
        }
        // Hits and inserts as the table counted them: 2 inserts; 3 hits (the ACKs).
        let r = nevermiss_runtime::run::table_reports(&sw);
        let s = &r[ct as usize].stats;
        assert_eq!((s.inserts, s.hits), (2, 3), "{engine:?}: {s:?}");
        for other in [
            "dash_ingress.dash_match_stage.outbound.ConntrackOut.conntrackOut",
            "dash_ingress.dash_match_stage.outbound.ConntrackIn.conntrackIn",
            "dash_ingress.dash_match_stage.inbound.ConntrackIn.conntrackIn",
        ] {
            assert!(
                sw.read_entries(table_id(&sw, other)).unwrap().is_empty(),
                "{engine:?}: {other}"
            );
        }
    }
}

/// Inbound TCP packets of connection `i` (peer CA 10.128.0.0 + i / 2^16, peer port i mod 2^16,
/// to the VM's port 22) with `flags`, as the peer's host sends them.
fn connection_packet(i: u32, flags: u8) -> Vec<u8> {
    let ca = (n32([10, 128, 0, 0]) + (i >> 16)).to_be_bytes();
    let inner = customer_tcp(VM_MAC, PEER_MAC, ca, VM_CA, i as u16, 22, flags);
    from_peer_host(&inner)
}

/// Seconds and packets/s of a run report's total line (`...; 1.234 s, 5678 packets/s`).
fn report_rate(report: &str) -> (f64, f64) {
    let line = report
        .lines()
        .find(|l| l.starts_with("total:"))
        .expect("a total line");
    let tail: Vec<&str> = line
        .rsplit(';')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    (tail[0].parse().unwrap(), tail[2].parse().unwrap())
}

fn vm_hwm_rss_kib() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let get = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("VmRSS:"), get("VmHWM:"))
}

/// The bench point of docs/bench.md, "DASH outbound VNET" (DASH's PNA build, its connection
/// table sized 2^25 as DASH's requirements ask): new connections per second on 1 and 2 cores
/// (`nevermiss run --cores N` over a capture of inbound SYNs, every one a new connection),
/// the established-connection rate (a capture of 2^16 SYNs then ACKs of those connections),
/// and, in this process, the memory of 2^25 connections (RSS before and after filling the
/// table, and the table's own accounting). Run with a release build:
/// `DASH_DIR=... cargo test --release -p nevermiss --test dash -- --ignored dash_vnet_bench --nocapture`
/// (`DASH_BENCH_PACKETS`, default 2^21 packets per run; `DASH_BENCH_FILL`, default 2^25, 0
/// skips the in-process part; `DASH_BENCH_NEVERMISS`, the binary, default this build's).
#[test]
#[ignore = "a benchmark (minutes; a release build and DASH_DIR): docs/bench.md"]
fn dash_vnet_bench() {
    let Some(dash) = dash_pipeline() else { return };
    let env = |k: &str, d: u32| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let packets = env("DASH_BENCH_PACKETS", 1 << 21);
    let fill = env("DASH_BENCH_FILL", 1 << 25);
    let size = format!("{T_INBOUND_CONNTRACK}=2^25");
    let entries = tmp("bench.entries");
    std::fs::write(&entries, vnet_entries()).unwrap();
    let write = |name: &str, it: &mut dyn Iterator<Item = Vec<u8>>| {
        let f = tmp(name);
        let pkts: Vec<nevermiss_io::Packet> = it
            .map(|d| nevermiss_io::Packet::from_bytes(&d, 0, 0))
            .collect();
        nevermiss_io::pcap::write_file(&f, &pkts).unwrap();
        f
    };
    let established_flows = 1u32 << 16;
    let new = write(
        "bench-new.pcap",
        &mut (0..packets).map(|i| connection_packet(i, SYN)),
    );
    let est = write(
        "bench-est.pcap",
        &mut (0..established_flows)
            .map(|i| connection_packet(i, SYN))
            .chain((0..packets).map(|i| connection_packet(i % established_flows, ACK))),
    );
    let bin_path = std::env::var("DASH_BENCH_NEVERMISS")
        .unwrap_or(env!("CARGO_BIN_EXE_nevermiss").to_string());
    let run_once = |input: &Path, cores: &str| -> (f64, f64, String) {
        let spec = format!("0=pcap:{}", p(input));
        let mut args = vec![
            "run",
            p(&dash),
            "--pna-default-port",
            "1",
            "--table-size",
            &size,
            "--expire-profile",
            "2=1h",
            "--cores",
            cores,
            "--port",
            &spec,
            "--port",
            "1=null",
            "--entries",
            p(&entries),
        ];
        args.extend_from_slice(build_defines(true));
        let o = Command::new(&bin_path).args(&args).output().unwrap();
        let report = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(0), "{}{report}", stderr(&o));
        let (s, pps) = report_rate(&report);
        (s, pps, report)
    };
    for cores in ["1", "2"] {
        let mut new_rates = Vec::new();
        let mut est_rates = Vec::new();
        for _ in 0..3 {
            let (_, pps, report) = run_once(&new, cores);
            let line = report
                .lines()
                .find(|l| l.contains(T_INBOUND_CONNTRACK))
                .unwrap();
            assert!(
                line.contains(&format!(": {packets} entries of 33554432;")),
                "{line}"
            );
            new_rates.push(pps);
            // The established run: its SYNs take the new-connection rate, the rest is ACKs.
            let (s, _, report) = run_once(&est, cores);
            let line = report
                .lines()
                .find(|l| l.contains(T_INBOUND_CONNTRACK))
                .unwrap();
            assert!(line.contains(&format!("hits {packets},")), "{line}");
            est_rates.push(f64::from(packets) / (s - f64::from(established_flows) / pps));
        }
        new_rates.sort_by(f64::total_cmp);
        est_rates.sort_by(f64::total_cmp);
        eprintln!(
            "cores {cores}: new connections/s median {:.0} (min {:.0}, max {:.0}); established packets/s median {:.0} (min {:.0}, max {:.0})",
            new_rates[1], new_rates[0], new_rates[2], est_rates[1], est_rates[0], est_rates[2]
        );
    }

    // 2^25 connections in this process: one worker, batch 1.
    if fill == 0 {
        return;
    }
    let (rss0, _) = vm_hwm_rss_kib();
    let mut profiles = nevermiss_tables::DEFAULT_PROFILES_S
        .iter()
        .map(|s| s * 1_000_000_000)
        .collect::<Vec<u64>>();
    profiles[2] = 3600 * 1_000_000_000;
    let config = nevermiss_runtime::Config {
        pna_default_port: Some(1),
        table_sizes: vec![(T_INBOUND_CONNTRACK.to_string(), 1 << 25)],
        expire_profiles_ns: Some(profiles),
        ..Default::default()
    };
    let sw = pna_switch(&dash, config);
    let ct = table_id(&sw, T_INBOUND_CONNTRACK);
    let (rss1, _) = vm_hwm_rss_kib();
    let mut w = nevermiss_runtime::Worker::new(sw.clone(), 0);
    let mut pkt = connection_packet(0, SYN);
    // Bytes of the peer's CA and port in the frame (outer 50 bytes, inner Ethernet 14).
    let (ca_at, port_at) = (50 + 14 + 12, 50 + 14 + 20);
    let t = std::time::Instant::now();
    for i in 0..fill {
        pkt[ca_at..ca_at + 4].copy_from_slice(&(n32([10, 128, 0, 0]) + (i >> 16)).to_be_bytes());
        pkt[port_at..port_at + 2].copy_from_slice(&(i as u16).to_be_bytes());
        w.process(&pkt, 0, 0);
    }
    let fill_s = t.elapsed().as_secs_f64();
    let (rss2, hwm) = vm_hwm_rss_kib();
    let r = nevermiss_runtime::run::table_reports(&sw);
    let table = &r[ct as usize];
    assert_eq!(
        (table.entries, table.stats.inserts),
        (fill as usize, u64::from(fill))
    );
    // Established: ACKs of connections spread over the whole table.
    let mut ack = connection_packet(0, ACK);
    let n = fill.min(1 << 22);
    let t = std::time::Instant::now();
    for k in 0..n {
        let i = k.wrapping_mul(2_654_435_761) % fill;
        ack[ca_at..ca_at + 4].copy_from_slice(&(n32([10, 128, 0, 0]) + (i >> 16)).to_be_bytes());
        ack[port_at..port_at + 2].copy_from_slice(&(i as u16).to_be_bytes());
        w.process(&ack, 0, 0);
    }
    let est_s = t.elapsed().as_secs_f64();
    let r = nevermiss_runtime::run::table_reports(&sw);
    assert_eq!(r[ct as usize].stats.hits, u64::from(n));
    eprintln!(
        "in process, {fill} connections: table {} bytes ({:.1} per entry of 2^25); RSS {} KiB before the switch, {} KiB loaded, {} KiB filled (peak {} KiB): {:.1} bytes per connection from before the switch to filled (the table's arrays are written when it is made, so loading, not filling, grows RSS); fill {:.0} new connections/s, established {:.0} packets/s (one worker, batch 1)",
        table.memory_bytes,
        table.memory_bytes as f64 / f64::from(1u32 << 25),
        rss0,
        rss1,
        rss2,
        hwm,
        (rss2 - rss0) as f64 * 1024.0 / f64::from(fill),
        f64::from(fill) / fill_s,
        f64::from(n) / est_s
    );
}
