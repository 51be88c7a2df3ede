//! PNA rules of the checker, through the real pipeline (our `p4include/pna.p4`, dialect
//! detection): architecture detection, add-on-miss / `add_entry`, expiry externs, `mirror_packet`.

use p4_front::check::{Arch, PnaDialect};
use p4_front::driver::{self, Options};

const TYPES: &str = r#"
#include <core.p4>
#include <pna.p4>
header ipv4_t { bit<8> proto; bit<32> src; bit<32> dst; }
struct headers_t { ipv4_t ipv4; }
struct meta_t { ExpireTimeProfileId_t tmo; bit<32> port; }
struct nh_params_t { PortId_t vport; }
parser MainParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta, in pna_main_parser_input_metadata_t istd) {
    state start { pkt.extract(hdr.ipv4); transition accept; }
}
"#;

/// The main control's body (locals and apply) is `body`; `extra_deparser` goes into the deparser.
fn program(body: &str, extra_deparser: &str, three_blocks: bool) -> String {
    let (pre, pkg) = if three_blocks {
        (
            "",
            "PNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;",
        )
    } else {
        (
            r#"control PreControlImpl(in headers_t hdr, inout meta_t meta, in pna_pre_input_metadata_t istd, inout pna_pre_output_metadata_t ostd) { apply { } }"#,
            "PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(), MainDeparserImpl()) main;",
        )
    };
    let dep_hdr = if three_blocks { "inout" } else { "in" };
    format!(
        r#"{TYPES}
{pre}
control MainControlImpl(inout headers_t hdr, inout meta_t meta, in pna_main_input_metadata_t istd, inout pna_main_output_metadata_t ostd) {{
{body}
}}
control MainDeparserImpl(packet_out pkt, {dep_hdr} headers_t hdr, in meta_t meta, in pna_main_output_metadata_t ostd) {{
    apply {{ pkt.emit(hdr.ipv4); {extra_deparser} }}
}}
{pkg}
"#
    )
}

const LEARNER: &str = r#"
    action next_hop(PortId_t vport) { send_to_port(vport); }
    action learn() {
        add_entry(action_name = "next_hop", action_params = (nh_params_t){ vport = (PortId_t)meta.port },
                  expire_time_profile_id = meta.tmo);
    }
    table flows {
        key = { hdr.ipv4.src: exact; hdr.ipv4.dst: exact; }
        actions = { @tableonly next_hop; @defaultonly learn; }
        const default_action = learn;
        add_on_miss = true;
        pna_idle_timeout = PNA_IdleTimeout_t.NOTIFY_CONTROL;
        size = 4096;
    }
    apply { flows.apply(); }
"#;

fn compile(src: &str) -> Result<driver::Compiled, Vec<String>> {
    driver::compile_str("test.p4", src, &Options::default())
        .map_err(|f| f.diagnostics.iter().map(|d| d.message.clone()).collect())
}

#[track_caller]
fn bad(src: &str, fragment: &str) {
    match compile(src) {
        Ok(_) => panic!("expected an error containing {fragment:?}; accepted"),
        Err(e) => assert!(
            e.iter().any(|m| m.contains(fragment)),
            "expected {fragment:?}, got:\n{}",
            e.join("\n")
        ),
    }
}

#[test]
fn four_block_learner_is_accepted_and_summarized() {
    let c = compile(&program(LEARNER, "", false)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(c.checked.arch, Arch::Pna(PnaDialect::V06FourBlock));
    assert_eq!(c.checked.main_blocks.len(), 4);
    let t = c
        .checked
        .tables
        .values()
        .find(|t| t.add_on_miss)
        .expect("learner table");
    assert_eq!(t.idle_timeout.as_deref(), Some("NOTIFY_CONTROL"));
    assert_eq!(t.size, Some(4096));
    let s = p4_front::check::summary(&c.program, &c.checked);
    assert!(s.contains("add_on_miss: true"), "{s}");
    assert!(s.contains("main_control = control MainControlImpl"), "{s}");
}

#[test]
fn three_block_dialect_is_detected() {
    let c = compile(&program(LEARNER, "", true)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(c.checked.arch, Arch::Pna(PnaDialect::V07ThreeBlock));
    assert_eq!(c.checked.main_blocks.len(), 3);
}

#[test]
fn add_entry_rules() {
    // Not in the default action.
    let hit = LEARNER
        .replace(
            "const default_action = learn;",
            "const default_action = next_hop((PortId_t)0);",
        )
        .replace(
            "@tableonly next_hop; @defaultonly learn;",
            "next_hop; learn;",
        );
    bad(
        &program(&hit, "", false),
        "not called from a default action",
    );
    // The named action is not in the table.
    bad(
        &program(&LEARNER.replace("\"next_hop\"", "\"nope\""), "", false),
        "not any action in table",
    );
    // Not all keys exact.
    bad(
        &program(
            &LEARNER.replace("hdr.ipv4.dst: exact", "hdr.ipv4.dst: ternary"),
            "",
            false,
        ),
        "keys must be exact",
    );
    // Parameters do not match.
    bad(
        &program(
            &LEARNER.replace(
                "action next_hop(PortId_t vport)",
                "action next_hop(PortId_t vport, bit<8> x)",
            ),
            "",
            false,
        ),
        "do not match the parameters",
    );
    // Outside an action.
    let apply = LEARNER.replace(
        "apply { flows.apply(); }",
        "apply { flows.apply(); add_entry(\"next_hop\", (nh_params_t){ vport = (PortId_t)1 }, meta.tmo); }",
    );
    bad(
        &program(&apply, "", false),
        "only be called from within an action",
    );
}

#[test]
fn expiry_externs_need_an_idle_timeout() {
    let body = LEARNER.replace(
        "action next_hop(PortId_t vport) { send_to_port(vport); }",
        "action next_hop(PortId_t vport) { send_to_port(vport); restart_expire_timer(); }",
    );
    assert!(compile(&program(&body, "", false)).is_ok());
    let no_idle = body.replace("pna_idle_timeout = PNA_IdleTimeout_t.NOTIFY_CONTROL;", "");
    bad(&program(&no_idle, "", false), "idle timeout");
}

#[test]
fn mirror_packet_only_in_the_main_control() {
    bad(
        &program(
            LEARNER,
            "mirror_packet((MirrorSlotId_t)1, (MirrorSessionId_t)3);",
            false,
        ),
        "only in the main control",
    );
    let body = LEARNER.replace(
        "apply { flows.apply(); }",
        "apply { flows.apply(); mirror_packet((MirrorSlotId_t)1, (MirrorSessionId_t)0); }",
    );
    bad(&program(&body, "", false), "session id 0 is reserved");
}
