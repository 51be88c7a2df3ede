//! [paper 004]'s method applied to a whole program: its cost predicted from component models
//! (what the lab's `nevermiss-lab reproduce 004` fits from `nevermiss bench component` runs and
//! writes as `models.json`) and set beside the measured cost.
//!
//! A model gives a component's cost per packet over the skeleton baseline
//! (`examples/bench/forward.p4`: Ethernet, IPv4, UDP and a result header parsed and emitted) in
//! ns, Eq. 4, as a function of the component's parameter. The program's predicted latency is
//! the baseline's measured median plus, for every table, the entries model of its match kind at
//! its number of entries times its applies per packet (measured from the table's hit and miss
//! counts), plus the parsed-headers model at the parser's `extract` statements beyond the
//! skeleton's four. What the models do not cover (actions' bodies, header and metadata writes,
//! externs, interpreter fallbacks, deparser changes) is not in the prediction: its error says
//! how much that is.
//!
//! [paper 004]: ../../docs/papers.md#paper-004

use crate::error::BenchError;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One fitted part of a model: a template with parameters, valid up to `x_max`.
#[derive(Clone, Debug)]
struct Part {
    template: String,
    params: Vec<f64>,
    x_max: f64,
}

/// One component's model: parts in order of their domains, `log_x` when fitted on log10(x).
#[derive(Clone, Debug)]
pub struct Model {
    parts: Vec<Part>,
    log_x: bool,
}

/// Horner: p[0]·x^(n-1) + … + p[n-1].
fn poly(x: f64, p: &[f64]) -> f64 {
    p.iter().fold(0.0, |acc, c| acc * x + c)
}

/// A template of the lab's `models.TEMPLATES` at `x`; `None` for an unknown name or a wrong
/// parameter count.
fn eval_template(name: &str, p: &[f64], x: f64) -> Option<f64> {
    let polys = ["const", "lin", "quad", "cubic", "poly_4", "poly_5"];
    if let Some(deg) = polys.iter().position(|n| *n == name) {
        return (p.len() == deg + 1).then(|| poly(x, p));
    }
    if let Some(deg) = name
        .strip_prefix("inv_")
        .and_then(|n| polys.iter().position(|m| *m == n))
    {
        return (p.len() == deg + 2).then(|| p[0] / poly(x, &p[1..]));
    }
    let log = |tag: &str| -> Option<fn(f64) -> f64> {
        match tag {
            "log_np" => Some(f64::ln),
            "log10" => Some(f64::log10),
            "log2" => Some(f64::log2),
            _ => None,
        }
    };
    match (name, p) {
        ("exp_full", [a, b, c, d, e]) => Some(a * b.powf(c * x + d) + e),
        ("inv_exp_full", [a, b, c, d, e, f]) => Some(a / (b * c.powf(d * x + e) + f)),
        ("gaussian", [a, b, c]) => Some(a * (-((x - b).powi(2)) / 2.0 * c * c).exp()),
        ("log_np_full", [a, b, c, d]) => Some(a * (b * x + c).ln() + d),
        ("inv_log_np_full", [a, b, c, d, e]) => Some(a / (b * (c * x + d).ln() + e)),
        _ => {
            if let Some(l) = log(name) {
                let [a, b, c] = p else { return None };
                return Some(a * l(b * x) + c);
            }
            let l = log(name.strip_prefix("inv_")?)?;
            let [a, b, c, d] = p else { return None };
            Some(a / (b * l(c * x) + d))
        }
    }
}

impl Model {
    /// The model at parameter value `x` (unclipped, as the lab predicts): the first part whose
    /// domain reaches `x`, the last above every domain.
    pub fn at(&self, x: f64) -> Option<f64> {
        let v = if self.log_x { x.log10() } else { x };
        let part = self
            .parts
            .iter()
            .find(|p| p.x_max >= v)
            .or(self.parts.last())?;
        eval_template(&part.template, &part.params, v).filter(|y| y.is_finite())
    }

    fn from_json(v: &Value) -> Result<Model, String> {
        let parts = v
            .get("parts")
            .and_then(Value::as_array)
            .ok_or("no `parts`")?
            .iter()
            .map(|p| {
                let template = p
                    .get("template")
                    .and_then(Value::as_str)
                    .ok_or("a part without `template`")?
                    .to_string();
                let params = p
                    .get("params")
                    .and_then(Value::as_array)
                    .ok_or("a part without `params`")?
                    .iter()
                    .map(|x| x.as_f64().ok_or("a parameter that is not a number"))
                    .collect::<Result<Vec<_>, _>>()?;
                let x_max = p.get("x_max").and_then(Value::as_f64).unwrap_or(f64::MAX);
                if eval_template(&template, &params, 1.0).is_none() {
                    return Err(format!(
                        "unknown template `{template}` with {} parameters",
                        params.len()
                    ));
                }
                Ok(Part {
                    template,
                    params,
                    x_max,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if parts.is_empty() {
            return Err("a model without parts".into());
        }
        let log_x = v
            .pointer("/extra/log_x")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(Model { parts, log_x })
    }
}

/// The component models of one `models.json` (component name → model).
#[derive(Clone, Debug)]
pub struct Models {
    /// The file they came from (for the report).
    pub path: String,
    models: BTreeMap<String, Model>,
}

impl Models {
    /// Reads the lab's `models.json`: `{component: {"parts": [{"template", "params", "x_max"}],
    /// "extra": {"log_x"}}}`.
    pub fn read(path: &Path) -> Result<Models, BenchError> {
        let err = |error: String| BenchError::Models {
            path: path.to_path_buf(),
            error,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        Self::parse(&text, &path.display().to_string()).map_err(err)
    }

    /// [`Models::read`] of `text`.
    pub fn parse(text: &str, path: &str) -> Result<Models, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let obj = v.as_object().ok_or("not a JSON object of models")?;
        let models = obj
            .iter()
            .map(|(k, m)| {
                Model::from_json(m)
                    .map(|m| (k.clone(), m))
                    .map_err(|e| format!("{k}: {e}"))
            })
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        Ok(Models {
            path: path.to_string(),
            models,
        })
    }

    /// The model of `component`, if the file has one.
    pub fn get(&self, component: &str) -> Option<&Model> {
        self.models.get(component)
    }
}

/// What a program is made of, as the component models see it.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    /// `extract` statements of the program's parsers.
    pub extracts: u64,
    /// Per table: its name, its match kind's component (`exact-entries`, `lpm-entries`,
    /// `ternary-entries`), its entries and its applies per packet.
    pub tables: Vec<(String, &'static str, u64, f64)>,
}

/// Headers the skeleton baseline's parser extracts (Ethernet, IPv4, UDP, result).
pub const SKELETON_EXTRACTS: u64 = 4;

/// One term of a prediction.
#[derive(Clone, Debug, Serialize)]
pub struct Term {
    /// What it is for (`parser`, or a table's name).
    pub what: String,
    /// The component model used.
    pub component: String,
    /// The model's parameter value.
    pub x: f64,
    /// How many times per packet.
    pub times: f64,
    /// ns per packet (the model at x, times `times`); `None` when the file has no such model.
    pub ns: Option<f64>,
}

/// Predicted beside measured, in ns per packet (Eq. 4 medians).
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// The models' file.
    pub models: String,
    /// The parser's term, then one per table with keys.
    pub terms: Vec<Term>,
    /// The baseline's measured median latency (ns).
    pub baseline_ns: f64,
    /// Baseline plus every term (those without a model count 0 and are listed in `terms`).
    pub predicted_ns: f64,
    /// The program's measured median latency (ns).
    pub measured_ns: f64,
    /// (predicted − measured) / measured, in %.
    pub error_pct: f64,
}

/// Predicts a program of `shape` from `models`, beside its measured median latency.
pub fn predict(models: &Models, shape: &Shape, baseline_ns: f64, measured_ns: f64) -> Prediction {
    let mut terms = Vec::new();
    let extra = shape.extracts.saturating_sub(SKELETON_EXTRACTS);
    terms.push(Term {
        what: "parser".into(),
        component: "parsed-headers".into(),
        x: extra as f64,
        times: 1.0,
        ns: models
            .get("parsed-headers")
            .and_then(|m| m.at(extra as f64)),
    });
    for (name, comp, entries, applies) in &shape.tables {
        let x = (*entries).max(1) as f64;
        terms.push(Term {
            what: name.clone(),
            component: (*comp).into(),
            x,
            times: *applies,
            ns: models.get(comp).and_then(|m| m.at(x)).map(|y| y * applies),
        });
    }
    let predicted_ns = baseline_ns + terms.iter().filter_map(|t| t.ns).sum::<f64>();
    Prediction {
        models: models.path.clone(),
        terms,
        baseline_ns,
        predicted_ns,
        measured_ns,
        error_pct: if measured_ns != 0.0 {
            (predicted_ns - measured_ns) / measured_ns * 100.0
        } else {
            f64::NAN
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_evaluate_as_the_lab_defines_them() {
        assert_eq!(eval_template("const", &[3.0], 10.0), Some(3.0));
        assert_eq!(eval_template("lin", &[2.0, 1.0], 10.0), Some(21.0));
        assert_eq!(eval_template("quad", &[1.0, 0.0, 1.0], 3.0), Some(10.0));
        assert_eq!(eval_template("inv_lin", &[6.0, 1.0, 1.0], 2.0), Some(2.0));
        let ln = eval_template("log_np", &[2.0, 1.0, 1.0], std::f64::consts::E).unwrap();
        assert!((ln - 3.0).abs() < 1e-12);
        assert_eq!(eval_template("log10", &[1.0, 1.0, 0.0], 100.0), Some(2.0));
        assert_eq!(
            eval_template("lin", &[1.0], 1.0),
            None,
            "wrong parameter count"
        );
        assert_eq!(eval_template("nope", &[1.0], 1.0), None);
    }

    #[test]
    fn split_models_pick_their_part_and_log_axes_apply() {
        let text = r#"{
          "exact-entries": {"parts": [
             {"template": "const", "params": [10.0], "x_max": 3.0},
             {"template": "lin", "params": [5.0, 0.0], "x_max": 6.0}],
             "extra": {"log_x": true}},
          "parsed-headers": {"parts": [{"template": "lin", "params": [2.0, 0.0], "x_max": 63}],
             "extra": {"log_x": false}}
        }"#;
        let m = Models::parse(text, "m.json").unwrap();
        let e = m.get("exact-entries").unwrap();
        assert_eq!(e.at(100.0), Some(10.0), "log10(100) = 2 ≤ 3: first part");
        assert_eq!(e.at(1e4), Some(20.0), "log10 = 4: second part, 5·4");
        assert_eq!(e.at(1e9), Some(45.0), "beyond every domain: the last part");
        let shape = Shape {
            extracts: 6,
            tables: vec![
                ("t".into(), "exact-entries", 100, 2.0),
                ("u".into(), "lpm-entries", 10, 1.0),
            ],
        };
        let p = predict(&m, &shape, 100.0, 150.0);
        assert_eq!(
            p.terms[0].ns,
            Some(4.0),
            "2 extracts beyond the skeleton's 4"
        );
        assert_eq!(p.terms[1].ns, Some(20.0), "10 ns per apply, 2 applies");
        assert_eq!(p.terms[2].ns, None, "no lpm model in the file");
        assert_eq!(p.predicted_ns, 124.0);
        assert!((p.error_pct - (124.0 - 150.0) / 150.0 * 100.0).abs() < 1e-9);
        assert!(Models::parse("[1]", "x").is_err());
        assert!(Models::parse(r#"{"a": {"parts": []}}"#, "x").is_err());
        assert!(Models::parse(
            r#"{"a": {"parts": [{"template": "zz", "params": [1]}]}}"#,
            "x"
        )
        .is_err());
    }
}
