//! Annotation bodies the checker validates (P4_16 spec §18): structured annotations
//! (`@a[k = v]`, `@a[e1, e2]`) must hold compile-time int / string / bool values with distinct
//! keys and names; `@name` and `@deprecated` must hold a string; `@match` a match kind.

use super::consteval::Value;
use super::scope::EntityKind;
use super::Checker;
use crate::ast::{Annotation, AnnotationBody, Expr, ExprKind};
use std::collections::HashSet;

impl<'a> Checker<'a> {
    /// Checks the annotations of one element.
    pub fn check_annotations(&mut self, anns: &[Annotation]) {
        let mut structured: HashSet<&str> = HashSet::new();
        let count = |n: &str| anns.iter().filter(|a| a.name.name == n).count();
        for a in anns {
            if matches!(
                a.body,
                AnnotationBody::KeyValues(_) | AnnotationBody::StructuredExpressions(_)
            ) && count(&a.name.name) > 1
                && !structured.contains(a.name.name.as_str())
            {
                self.err(
                    a.span,
                    format!("@{}: duplicate name for structured annotation", a.name.name),
                );
                structured.insert(a.name.name.as_str());
                continue;
            }
            let name = a.name.name.as_str();
            match &a.body {
                AnnotationBody::KeyValues(kvs) => {
                    if !structured.insert(name) {
                        self.err(
                            a.span,
                            format!("@{name}: duplicate name for structured annotation"),
                        );
                    }
                    let mut keys = HashSet::new();
                    for (k, v) in kvs {
                        if !keys.insert(k.name.as_str()) {
                            self.err(
                                k.span,
                                format!(
                                    "{}: duplicate key in structured annotation @{name}",
                                    k.name
                                ),
                            );
                        }
                        self.structured_value(v);
                    }
                }
                AnnotationBody::StructuredExpressions(es) => {
                    if !structured.insert(name) {
                        self.err(
                            a.span,
                            format!("@{name}: duplicate name for structured annotation"),
                        );
                    }
                    for e in es {
                        self.structured_value(e);
                    }
                }
                AnnotationBody::Expressions(es) if matches!(name, "name" | "deprecated") => {
                    let ok = es.len() == 1 && {
                        let e = &es[0];
                        self.mute += 1;
                        self.check_expr(e, None);
                        self.mute -= 1;
                        matches!(self.value_of(e.id), Some(Value::String(_)))
                    };
                    if !ok {
                        self.err(a.span, format!("@{name}: should contain a string"));
                    }
                }
                AnnotationBody::Expressions(es) if name == "match" => {
                    self.mute += 1;
                    for e in es {
                        self.check_expr(e, None);
                    }
                    self.mute -= 1;
                    let ok = es.len() == 1 && self.is_match_kind(&es[0]);
                    if !ok {
                        self.err(a.span, "@match: value must be a match_kind");
                    }
                }
                AnnotationBody::Expressions(es) => {
                    // Unstructured bodies are free-form: type them (so every expression has a
                    // type) but report nothing.
                    self.mute += 1;
                    for e in es {
                        self.check_expr(e, None);
                    }
                    self.mute -= 1;
                }
                _ => {}
            }
        }
    }

    fn is_match_kind(&mut self, e: &Expr) -> bool {
        let ExprKind::Path(p) = &e.kind else {
            return false;
        };
        let decls = &self.out.decls;
        !self
            .scopes
            .lookup(&p.name.name, p.global, |d| {
                decls[d.0 as usize].kind == EntityKind::MatchKindMember
            })
            .is_empty()
    }

    fn structured_value(&mut self, e: &Expr) {
        let t = self.check_expr(e, None);
        if t.is_error() {
            return;
        }
        match self.value_of(e.id) {
            // P4Runtime holds the integers of structured annotations as int64 (P4Info's
            // `Expression`): a larger one is legal P4 but no P4Info can carry it.
            Some(Value::Int(i)) if i64::try_from(&i).is_err() => self.warn(
                e.span,
                "integer in a structured annotation does not fit in int64: the program has no P4Info",
            ),
            // `int`, `string` or `bool` only (§18.2): `8w5` is a `bit<8>`, refused as p4c does.
            Some(Value::Int(_) | Value::String(_) | Value::Bool(_)) => {}
            Some(_) => self.err(
                e.span,
                "illegal type for structured annotation; must be int, string or bool",
            ),
            None => self.err(
                e.span,
                "structured annotation must be compile-time constant values",
            ),
        }
    }
}
