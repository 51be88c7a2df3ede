//! A P4Runtime `WriteRequest` applied to a switch without a server: what `nevermiss bench
//! program --writes FILE` loads entries with. The program's own P4Info (as `nevermiss p4info`
//! prints it) names the ids; every update is translated as the server translates it
//! (`entities`), then written in one batch with CONTINUE_ON_ERROR (P4Runtime §12.2); the first
//! update that fails is the error. Digest configurations (server state) are refused.

use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use crate::{entities, p4info, server};
use nevermiss_runtime::control::{Atomicity, ControlError};
use nevermiss_runtime::Switch;
use std::sync::Arc;

/// Applies every update of `req` to `sw`; the number applied, or the first failure (`update N:
/// why`, N counted from 1).
pub fn apply(sw: &Arc<Switch>, req: &p4::WriteRequest) -> Result<usize, String> {
    let built = p4info::build(sw.prog()).map_err(|e| format!("P4Info: {e}"))?;
    let p = Pipeline::new(
        sw.clone(),
        built.p4info,
        built.ids,
        prost::bytes::Bytes::new(),
        None,
    );
    let changes = req
        .updates
        .iter()
        .enumerate()
        .map(|(i, u)| {
            server::update_op(u.r#type)
                .and_then(
                    |op| match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
                        None => Err(ControlError::InvalidArgument("entity unset".into())),
                        Some(p4::entity::Entity::DigestEntry(_)) => {
                            Err(ControlError::InvalidArgument(
                                "a digest configuration is a server's state, not the switch's"
                                    .into(),
                            ))
                        }
                        Some(e) => entities::translate(&p, op, e),
                    },
                )
                .map_err(|e| format!("update {}: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, String>>()?;
    for (i, r) in sw
        .write(&changes, Atomicity::ContinueOnError)
        .into_iter()
        .enumerate()
    {
        r.map_err(|e| format!("update {}: {e}", i + 1))?;
    }
    Ok(changes.len())
}
