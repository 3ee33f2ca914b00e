//! The planning report behind `EXPLAIN (VEXEC)`.
//!
//! While PostgreSQL plans a statement, every place where vexec considers a
//! vector alternative (a VecScan for a base relation, a VecAgg for a GROUP BY,
//! ...) records one [`Alternative`]: what it is, whether it was chosen, and if
//! not, why. The report travels with the finished plan (on PostgreSQL 19 in
//! `PlannedStmt.extension_state`, which must be a node tree, so the report is
//! [`Report::encode`]d into a string) and `EXPLAIN (VEXEC)` prints it.
//!
//! This module is pure data: building, encoding and rendering the report
//! needs no server, so plain `cargo test` covers it.

use std::fmt;

/// What happened to one vector alternative.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The vector path won and is in the plan.
    Chosen,
    /// The vector path was built and costed but a row path won (or the mode
    /// forbids choosing it).
    NotChosen(String),
    /// No vector path could be built.
    NotPossible(String),
}

impl Verdict {
    /// The verdict's short name, as printed in structured EXPLAIN formats.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Chosen => "chosen",
            Verdict::NotChosen(_) => "not chosen",
            Verdict::NotPossible(_) => "not possible",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Chosen => None,
            Verdict::NotChosen(r) | Verdict::NotPossible(r) => Some(r),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason() {
            None => f.write_str(self.name()),
            Some(r) => write!(f, "{} ({})", self.name(), r),
        }
    }
}

/// One vector alternative the planner considered.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// The vector node kind: `VecScan`, `VecAgg`, ...
    pub node: String,
    /// What it would replace: `on t`, `on GROUP BY`, ...
    pub target: String,
    pub verdict: Verdict,
    /// Total cost of the best row path it competed with, if one was costed.
    pub row_cost: Option<f64>,
    /// Total cost of the vector path, if one was built.
    pub vector_cost: Option<f64>,
    /// Free-form facts: kernel and fallback steps, source, keys, ...
    pub details: Vec<String>,
}

/// Everything vexec considered while planning one statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// `vexec.mode` at planning time.
    pub mode: String,
    /// `vexec.batch_format` at planning time.
    pub batch_format: String,
    /// Whether the alternatives were recorded: only when the statement is
    /// planned for EXPLAIN (VEXEC) or in explain mode (recording every join
    /// pair's alternative costs planning time every query would pay). A plan
    /// made before, and printed later (EXPLAIN EXECUTE of a cached plan),
    /// has the summary only.
    pub recorded: bool,
    pub alternatives: Vec<Alternative>,
}

/// The sentence EXPLAIN (VEXEC) prints when there is nothing to report.
pub const NOTHING_CONSIDERED: &str = "no vector alternatives were considered";

/// The sentence EXPLAIN (VEXEC) prints for a plan made without recording.
pub const NOT_RECORDED: &str = "alternatives not recorded: the plan was made outside EXPLAIN (VEXEC)";

impl Report {
    pub fn new(mode: &str, batch_format: &str) -> Self {
        Report {
            mode: mode.into(),
            batch_format: batch_format.into(),
            recorded: true,
            alternatives: Vec::new(),
        }
    }

    /// A report that records no alternatives (see [`Report::recorded`]).
    pub fn unrecorded(mode: &str, batch_format: &str) -> Self {
        Report { recorded: false, ..Report::new(mode, batch_format) }
    }

    /// The one-line summary after `Vexec:`.
    pub fn summary(&self) -> String {
        format!("mode {}, format {}", self.mode, self.batch_format)
    }

    /// The report as indented text lines (two spaces a level), the way
    /// EXPLAIN's text format prints it below the `Vexec:` line.
    pub fn text_lines(&self, show_costs: bool) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        if !self.recorded {
            out.push((0, NOT_RECORDED.to_string()));
        } else if self.alternatives.is_empty() {
            out.push((0, NOTHING_CONSIDERED.to_string()));
        }
        for alt in &self.alternatives {
            out.push((0, format!("{} {}: {}", alt.node, alt.target, alt.verdict)));
            if show_costs {
                if let Some(c) = cost_line(alt) {
                    out.push((1, c));
                }
            }
            for d in &alt.details {
                out.push((1, d.clone()));
            }
        }
        out
    }

    /// Encode into one string (for a plan's node tree). The format is a
    /// sequence of fields, each `<byte length>:<bytes>`, so any text survives.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        push_field(&mut out, "vexec-report-2");
        push_field(&mut out, &self.mode);
        push_field(&mut out, &self.batch_format);
        push_field(&mut out, if self.recorded { "1" } else { "0" });
        push_field(&mut out, &self.alternatives.len().to_string());
        for alt in &self.alternatives {
            push_field(&mut out, &alt.node);
            push_field(&mut out, &alt.target);
            let (tag, reason) = match &alt.verdict {
                Verdict::Chosen => ("c", ""),
                Verdict::NotChosen(r) => ("n", r.as_str()),
                Verdict::NotPossible(r) => ("p", r.as_str()),
            };
            push_field(&mut out, tag);
            push_field(&mut out, reason);
            push_field(&mut out, &opt_f64(alt.row_cost));
            push_field(&mut out, &opt_f64(alt.vector_cost));
            push_field(&mut out, &alt.details.len().to_string());
            for d in &alt.details {
                push_field(&mut out, d);
            }
        }
        out
    }

    /// The inverse of [`Report::encode`].
    pub fn decode(s: &str) -> Result<Report, DecodeError> {
        let mut r = FieldReader { rest: s };
        if r.field()? != "vexec-report-2" {
            return Err(DecodeError("unknown report version"));
        }
        let mut report = Report::new(r.field()?, r.field()?);
        report.recorded = match r.field()? {
            "1" => true,
            "0" => false,
            _ => return Err(DecodeError("bad recorded flag")),
        };
        let n = r.count()?;
        for _ in 0..n {
            let node = r.field()?.to_string();
            let target = r.field()?.to_string();
            let tag = r.field()?;
            let reason = r.field()?.to_string();
            let verdict = match tag {
                "c" => Verdict::Chosen,
                "n" => Verdict::NotChosen(reason),
                "p" => Verdict::NotPossible(reason),
                _ => return Err(DecodeError("unknown verdict")),
            };
            let row_cost = r.opt_f64()?;
            let vector_cost = r.opt_f64()?;
            let nd = r.count()?;
            let details = (0..nd).map(|_| r.field().map(str::to_string)).collect::<Result<_, _>>()?;
            report.alternatives.push(Alternative { node, target, verdict, row_cost, vector_cost, details });
        }
        if !r.rest.is_empty() {
            return Err(DecodeError("trailing bytes"));
        }
        Ok(report)
    }
}

fn cost_line(alt: &Alternative) -> Option<String> {
    match (alt.row_cost, alt.vector_cost) {
        (None, None) => None,
        (Some(r), None) => Some(format!("cost: row {r:.2}")),
        (None, Some(v)) => Some(format!("cost: vector {v:.2}")),
        (Some(r), Some(v)) => Some(format!("cost: row {r:.2}, vector {v:.2}")),
    }
}

fn push_field(out: &mut String, s: &str) {
    out.push_str(&s.len().to_string());
    out.push(':');
    out.push_str(s);
}

fn opt_f64(v: Option<f64>) -> String {
    // `{:?}` round-trips an f64 exactly.
    v.map(|v| format!("{v:?}")).unwrap_or_default()
}

/// A report string that is not one [`Report::encode`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed vexec report: {}", self.0)
    }
}

struct FieldReader<'a> {
    rest: &'a str,
}

impl<'a> FieldReader<'a> {
    fn field(&mut self) -> Result<&'a str, DecodeError> {
        let colon = self.rest.find(':').ok_or(DecodeError("missing length"))?;
        let len: usize = self.rest[..colon].parse().map_err(|_| DecodeError("bad length"))?;
        let body = &self.rest[colon + 1..];
        if body.len() < len || !body.is_char_boundary(len) {
            return Err(DecodeError("truncated field"));
        }
        self.rest = &body[len..];
        Ok(&body[..len])
    }

    fn count(&mut self) -> Result<usize, DecodeError> {
        self.field()?.parse().map_err(|_| DecodeError("bad count"))
    }

    fn opt_f64(&mut self) -> Result<Option<f64>, DecodeError> {
        let f = self.field()?;
        if f.is_empty() {
            return Ok(None);
        }
        f.parse().map(Some).map_err(|_| DecodeError("bad cost"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut r = Report::new("explain", "postgres");
        r.alternatives.push(Alternative {
            node: "VecScan".into(),
            target: "on vt".into(),
            verdict: Verdict::NotChosen("explain mode".into()),
            row_cost: Some(1234.5),
            vector_cost: Some(0.1 + 0.2),
            details: vec!["quals: 1 kernel step, 0 fallback steps".into(), "ünïcödé: 3:4:".into()],
        });
        r.alternatives.push(Alternative {
            node: "VecAgg".into(),
            target: "on GROUP BY".into(),
            verdict: Verdict::NotPossible("grouping sets".into()),
            row_cost: None,
            vector_cost: None,
            details: vec![],
        });
        r
    }

    #[test]
    fn encode_decode_round_trips_exactly() {
        let r = sample();
        let back = Report::decode(&r.encode()).unwrap();
        assert_eq!(back, r);
        // The float goes through text and must come back bit for bit.
        assert_eq!(back.alternatives[0].vector_cost.unwrap().to_bits(), (0.1f64 + 0.2).to_bits());
        assert_eq!(
            Report::decode(&Report::new("auto", "arrow").encode()).unwrap(),
            Report::new("auto", "arrow")
        );
    }

    #[test]
    fn decode_rejects_garbage() {
        let enc = sample().encode();
        assert!(Report::decode("").is_err());
        assert!(Report::decode("nonsense").is_err());
        assert!(Report::decode(&enc[..enc.len() - 1]).is_err());
        assert!(Report::decode(&format!("{enc}1:x")).is_err());
        assert_eq!(Report::decode("3:abc").unwrap_err(), DecodeError("unknown report version"));
        // A length that cuts a multi-byte character is refused, not a panic.
        assert!(Report::decode("14:vexec-report-22:ü").is_err());
    }

    #[test]
    fn text_lines_show_verdicts_costs_and_details() {
        let lines = sample().text_lines(true);
        assert_eq!(
            lines,
            vec![
                (0, "VecScan on vt: not chosen (explain mode)".to_string()),
                (1, "cost: row 1234.50, vector 0.30".to_string()),
                (1, "quals: 1 kernel step, 0 fallback steps".to_string()),
                (1, "ünïcödé: 3:4:".to_string()),
                (0, "VecAgg on GROUP BY: not possible (grouping sets)".to_string()),
            ]
        );
        let no_costs = sample().text_lines(false);
        assert!(no_costs.iter().all(|(_, l)| !l.starts_with("cost:")));
    }

    #[test]
    fn empty_report_says_nothing_was_considered() {
        let r = Report::new("auto", "postgres");
        assert_eq!(r.summary(), "mode auto, format postgres");
        assert_eq!(r.text_lines(true), vec![(0, NOTHING_CONSIDERED.to_string())]);
    }

    #[test]
    fn unrecorded_report_says_so_and_round_trips() {
        let r = Report::unrecorded("auto", "postgres");
        assert_eq!(r.summary(), "mode auto, format postgres");
        assert_eq!(r.text_lines(true), vec![(0, NOT_RECORDED.to_string())]);
        let back = Report::decode(&r.encode()).unwrap();
        assert_eq!(back, r);
        assert!(!back.recorded);
    }

    #[test]
    fn verdict_display() {
        assert_eq!(Verdict::Chosen.to_string(), "chosen");
        assert_eq!(
            Verdict::NotChosen("row path cheaper".into()).to_string(),
            "not chosen (row path cheaper)"
        );
        assert_eq!(Verdict::NotPossible("x".into()).name(), "not possible");
    }
}
