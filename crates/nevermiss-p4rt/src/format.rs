//! P4Info and other P4Runtime messages as text, JSON and binary, through the messages'
//! descriptors ([`crate::pb::FILE_DESCRIPTOR_SET`]): text format as p4c writes `.p4info.txtpb`
//! files, JSON as the protobuf JSON mapping.

use crate::pb::p4::config::v1::P4Info;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, MessageDescriptor, Value};
use std::sync::OnceLock;

/// The header p4c puts at the top of a P4Info text file.
pub const TEXT_HEADER: &str =
    "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n";

fn descriptor(name: &str) -> MessageDescriptor {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(crate::pb::FILE_DESCRIPTOR_SET)
            .expect("the build's own descriptors decode")
    })
    .get_message_by_name(name)
    .expect("a message of the P4Runtime protocol")
}

fn dynamic(p: &P4Info) -> DynamicMessage {
    DynamicMessage::decode(
        descriptor("p4.config.v1.P4Info"),
        p.encode_to_vec().as_slice(),
    )
    .expect("a P4Info re-decodes")
}

/// Protobuf text format as protobuf's C++ library (and so p4c) prints it: one `name { ... }`
/// block per element of a repeated field, two-space indents, octal escapes in strings — with
/// p4c's header.
pub fn p4info_text(p: &P4Info) -> String {
    let mut out = String::from(TEXT_HEADER);
    write_message(&mut out, &dynamic(p), 0);
    out
}

fn write_message(out: &mut String, m: &DynamicMessage, depth: usize) {
    let mut fields: Vec<_> = m.fields().collect();
    fields.sort_by_key(|(f, _)| f.number());
    for (f, v) in fields {
        match v {
            Value::List(items) => {
                for it in items {
                    write_field(out, f.name(), it, depth);
                }
            }
            Value::Map(entries) => {
                let mut entries: Vec<_> = entries.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in entries {
                    let pad = "  ".repeat(depth);
                    out.push_str(&format!("{pad}{} {{\n", f.name()));
                    let key = match k {
                        MapKey::String(s) => quote(s.as_bytes()),
                        MapKey::Bool(b) => b.to_string(),
                        MapKey::I32(x) => x.to_string(),
                        MapKey::I64(x) => x.to_string(),
                        MapKey::U32(x) => x.to_string(),
                        MapKey::U64(x) => x.to_string(),
                    };
                    out.push_str(&format!("{pad}  key: {key}\n"));
                    write_field(out, "value", v, depth + 1);
                    out.push_str(&format!("{pad}}}\n"));
                }
            }
            v => {
                // An enum is printed by its value's name.
                if let (Value::EnumNumber(n), prost_reflect::Kind::Enum(e)) = (v, f.kind()) {
                    let name = e
                        .get_value(*n)
                        .map_or_else(|| n.to_string(), |x| x.name().to_string());
                    out.push_str(&format!("{}{}: {name}\n", "  ".repeat(depth), f.name()));
                } else {
                    write_field(out, f.name(), v, depth);
                }
            }
        }
    }
}

fn write_field(out: &mut String, name: &str, v: &Value, depth: usize) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Message(m) => {
            out.push_str(&format!("{pad}{name} {{\n"));
            write_message(out, m, depth + 1);
            out.push_str(&format!("{pad}}}\n"));
        }
        Value::String(s) => out.push_str(&format!("{pad}{name}: {}\n", quote(s.as_bytes()))),
        Value::Bytes(b) => out.push_str(&format!("{pad}{name}: {}\n", quote(b))),
        Value::Bool(b) => out.push_str(&format!("{pad}{name}: {b}\n")),
        Value::I32(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::I64(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::U32(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::U64(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::F32(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::F64(x) => out.push_str(&format!("{pad}{name}: {x}\n")),
        Value::EnumNumber(n) => out.push_str(&format!("{pad}{name}: {n}\n")),
        Value::List(_) | Value::Map(_) => {}
    }
}

/// A string or bytes value as C++ protobuf quotes it: printable ASCII as is, `\"`, `\\`,
/// `\n`, `\r`, `\t`, and every other byte as a three-digit octal escape.
fn quote(b: &[u8]) -> String {
    let mut s = String::from('"');
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\'' => s.push_str("\\'"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\{c:03o}")),
        }
    }
    s.push('"');
    s
}

/// Protobuf JSON mapping.
pub fn p4info_json(p: &P4Info) -> String {
    let mut s = serde_json::to_string_pretty(&dynamic(p)).unwrap_or_default();
    s.push('\n');
    s
}

/// Parses a message `name` of the P4Runtime protocol in text format (`#` comments allowed).
fn parse_text<M: Message + Default>(name: &str, text: &str) -> Result<M, TextFormatError> {
    let m = DynamicMessage::parse_text_format(descriptor(name), text)
        .map_err(TextFormatError::Parse)?;
    M::decode(m.encode_to_vec().as_slice()).map_err(TextFormatError::Decode)
}

/// Parses a P4Info in text format (`#` comments allowed), e.g. p4c's `.p4info.txtpb`.
pub fn parse_p4info_text(text: &str) -> Result<P4Info, TextFormatError> {
    parse_text("p4.config.v1.P4Info", text)
}

/// Parses a P4Runtime `WriteRequest` in text format (`#` comments allowed): the updates a
/// controller would send, e.g. `updates { type: INSERT entity { table_entry { ... } } }`.
pub fn parse_write_text(text: &str) -> Result<crate::pb::p4::v1::WriteRequest, TextFormatError> {
    parse_text("p4.v1.WriteRequest", text)
}

/// Why a message in text format (a P4Info, a WriteRequest) did not load.
#[derive(Debug)]
pub enum TextFormatError {
    /// The text is not the message in protobuf text format (with the position).
    Parse(prost_reflect::text_format::ParseError),
    /// The message parsed but does not decode as its type.
    Decode(prost::DecodeError),
}

impl std::fmt::Display for TextFormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextFormatError::Parse(e) => write!(f, "{e}"),
            TextFormatError::Decode(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TextFormatError {}
