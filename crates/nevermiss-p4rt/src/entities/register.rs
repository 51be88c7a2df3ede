//! Register entries (P4Runtime §9.8 "RegisterEntry").

use super::{entity, extern_of, index_msg, index_of, only_modified, read_cells};
use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, ControlError, Op};

use p4::entity::Entity as E;

/// A write of register cells: without an index every cell is written (P4Runtime §9.8).
pub(super) fn translate(
    p: &Pipeline,
    op: Op,
    r: &p4::RegisterEntry,
) -> Result<Change, ControlError> {
    only_modified(op, "register entries")?;
    let x = extern_of(p, r.register_id, "register")?;
    let index = r.index.map(|i| index_of(i.index)).transpose()?;
    let fields = p.sw.register_fields(x)?;
    let Some(data) = &r.data else {
        return Err(ControlError::InvalidArgument("register data unset".into()));
    };
    Ok(Change::Register {
        register: x,
        index,
        value: register_value(data, fields.len())?,
    })
}

/// A read of register cells (wildcards: every register, every cell).
pub(super) fn read(p: &Pipeline, re: &p4::RegisterEntry) -> Result<Vec<p4::Entity>, ControlError> {
    let all = p.p4info.registers.iter().map(|r| r.preamble.as_ref());
    let cells = read_cells(p, re.register_id, all, re.index.as_ref(), "register", |x| {
        p.sw.register_size(x)
    })?;
    cells
        .into_iter()
        .map(|(id, x, i)| {
            Ok(entity(E::RegisterEntry(p4::RegisterEntry {
                register_id: id,
                index: index_msg(i),
                data: Some(register_data(p.sw.read_register(x, i)?)),
            })))
        })
        .collect()
}

/// A register cell's value from P4Data: a bit string for a one-field cell, a struct (or
/// tuple) of bit strings for more.
fn register_value(d: &p4::P4Data, fields: usize) -> Result<Vec<Vec<u8>>, ControlError> {
    use p4::p4_data::Data;
    let bits = |d: &p4::P4Data| match &d.data {
        Some(Data::Bitstring(b)) if !b.is_empty() => Ok(b.to_vec()),
        Some(Data::Bool(b)) => Ok(vec![u8::from(*b)]),
        _ => Err(ControlError::InvalidArgument(
            "register fields are bit strings".into(),
        )),
    };
    let v: Vec<Vec<u8>> = match &d.data {
        Some(Data::Struct(s)) => s.members.iter().map(bits).collect::<Result<_, _>>()?,
        Some(Data::Tuple(s)) => s.members.iter().map(bits).collect::<Result<_, _>>()?,
        _ => vec![bits(d)?],
    };
    if v.len() != fields {
        return Err(ControlError::InvalidArgument(format!(
            "the register's cells have {fields} fields, {} given",
            v.len()
        )));
    }
    Ok(v)
}

/// The P4Data of a register cell's value.
fn register_data(v: Vec<Vec<u8>>) -> p4::P4Data {
    use p4::p4_data::Data;
    let bit = |b: &[u8]| p4::P4Data {
        data: Some(Data::Bitstring(crate::pipeline::canonical(b))),
    };
    if v.len() == 1 {
        return bit(&v[0]);
    }
    p4::P4Data {
        data: Some(Data::Struct(p4::P4StructLike {
            members: v.iter().map(|b| bit(b)).collect(),
        })),
    }
}
