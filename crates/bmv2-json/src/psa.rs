//! PSA (`psa_switch`): blocks and externs.

use crate::expr::Cx;
use crate::json::{Result, J};
use crate::Builder;
use p4_ir::*;

impl<'a> Builder<'a> {
    pub(crate) fn assemble_psa(&mut self, root: &J<'a>) -> Result<()> {
        Err(root.unsupported("PSA programs (not yet)"))
    }

    /// One instance of `extern_instances`.
    pub(crate) fn extern_instance(&mut self, x: &J<'a>, _name: &str, ty: &str) -> Result<ExternId> {
        Err(x.unsupported(format!("extern instances of type {ty}")))
    }

    /// A method call on an extern instance.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn extern_call(
        &mut self,
        p: &J<'a>,
        _x: ExternId,
        ty: &str,
        method: &str,
        _args: &[J<'a>],
        _cx: &Cx,
        _out: &mut Vec<Stmt>,
    ) -> Result<()> {
        Err(p.unsupported(format!("the method {ty}.{method}")))
    }
}
