//! Extern instances as apply parameters of controls (P4_16 §7.2.12): each instance is bound
//! to the externs of its first apply; an apply with other externs is a clear error.

use p4_front::driver::{compile_str, Options};
use p4_ir::ir::{Stmt, XOp};

fn program(second_apply: &str) -> String {
    format!(
        r#"#include <v1model.p4>
header h_t {{ bit<8> idx; }}
struct headers_t {{ h_t h; }}
struct meta_t {{ bit<8> x; }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control C(inout headers_t hdr, counter cnt) {{
    apply {{ cnt.count((bit<32>) hdr.h.idx); }}
}}
control V(inout headers_t hdr, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    counter(4, CounterType.packets) a;
    counter(4, CounterType.packets) b;
    C() c;
    apply {{
        c.apply(hdr, a);
        {second_apply}
    }}
}}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control K(inout headers_t hdr, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), K(), D()) main;
"#
    )
}

#[test]
fn extern_parameter_calls_reach_the_callers_instance() {
    let c = compile_str("t.p4", &program("c.apply(hdr, a);"), &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let p = p4_ir::lower(&c).unwrap();
    let names: Vec<&str> = p.externs.iter().map(|x| x.name.as_str()).collect();
    assert!(
        names.contains(&"I.a") && names.contains(&"I.b"),
        "{names:?}"
    );
    let a = p.find_extern("I.a").unwrap();
    let counted: Vec<Option<u32>> = p
        .functions
        .iter()
        .flat_map(|f| &f.body)
        .filter_map(|s| match s {
            Stmt::Extern(x) if x.op == XOp::CounterCount => Some(x.inst),
            _ => None,
        })
        .collect();
    assert_eq!(counted, vec![Some(a)], "one count, on I.a");
}

#[test]
fn applying_one_instance_with_another_extern_is_an_error() {
    let c = compile_str("t.p4", &program("c.apply(hdr, b);"), &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let e = p4_ir::lower(&c).unwrap_err();
    assert!(
        e.message.contains("other extern arguments"),
        "{}",
        e.message
    );
}
