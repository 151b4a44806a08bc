//! `cutline migrate PROMPT --check`: run the original JSON-array prompt and
//! its migration on the same sample inputs, provider and (generous) limit,
//! and report whether the migrated prompt extracts the same items.
//!
//! Items are matched as `compare` matches them (the per-line schema's
//! required string fields, per `type` for unions). Each input gets a
//! verdict: `same`, `different`, or `inconclusive` when a side was cut by
//! the limit or its provider failed, since a cut answer cannot say what the
//! prompt extracts. Both runs are recorded in one session so they can be
//! reopened, replayed or compared later.

use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::out::{Category, CliError, Out};
use super::run::target_for;
use super::{Cli, io_err};
use crate::compare::{self, Keys, Report};
use crate::llm::FinishReason;
use crate::prompt::PromptConfig;
use crate::run::{Outcome, Spec};
use crate::session::RunRecord;

/// The default limit of a check: generous, so that neither side is cut.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;

/// What `--check` needs besides the two prompts.
#[derive(Debug, Clone)]
pub struct CheckArgs<'a> {
    /// Provider name: `local`, `replay` or a configured one.
    pub provider: &'a str,
    /// Max-token limit of both runs.
    pub max_tokens: Option<u32>,
    /// Only this sample input (default: every one).
    pub input: Option<&'a str>,
    /// Key fields (default: the per-line schema's required string fields).
    pub keys: &'a [String],
    /// Record both runs in a session.
    pub record: bool,
    /// `--vars FILE.json`: variables laid over every sample input (or the
    /// only input, named `vars`, when the prompt has none).
    pub vars: Option<&'a std::path::Path>,
}

/// Named inputs: (name, variables).
type Inputs = Vec<(String, Map<String, Value>)>;

/// The inputs to check on: the sample inputs (or the one named), with
/// `--vars` laid over each.
fn check_inputs(src: &PromptConfig, args: &CheckArgs<'_>) -> Result<Inputs, CliError> {
    let overlay = args.vars.map(super::input::vars_object).transpose()?;
    let mut inputs: Inputs = match args.input {
        Some(name) => vec![(
            name.to_owned(),
            crate::prompt::input_vars(src, Some(name))
                .map_err(|e| CliError::new(Category::Usage, e.to_string()).because(e))?,
        )],
        None if src.inputs.is_empty() && overlay.is_some() => vec![("vars".to_owned(), Map::new())],
        None if src.inputs.is_empty() => {
            return Err(CliError::new(
                Category::Usage,
                format!(
                    "prompt {:?} has no sample inputs to check on; add an [[inputs]] entry",
                    src.id
                ),
            ));
        }
        None => src.inputs.iter().map(|i| (i.name.clone(), i.vars.clone())).collect(),
    };
    if let Some(o) = &overlay {
        for (_, vars) in &mut inputs {
            vars.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    Ok(inputs)
}

/// One input's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Both answers complete, and the same keys per type.
    Same,
    /// Both answers complete, and some keys differ.
    Different,
    /// A side was cut by the limit or failed: no verdict.
    Inconclusive,
}

/// One input checked.
#[derive(Debug, Clone, Serialize)]
pub struct InputCheck {
    /// The sample input's name.
    pub input: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why a verdict is inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Finish reasons of the original and the migrated run.
    pub finish: [String; 2],
    /// Session references of the two runs, when recorded.
    pub runs: [Option<String>; 2],
    /// The item comparison (A: original, B: migrated).
    pub report: Report,
}

/// The verdict of one input from its two runs and their comparison.
pub fn verdict(original: &RunRecord, migrated: &RunRecord, report: &Report) -> (Verdict, Option<String>) {
    for (label, r) in [("original", original), ("migrated", migrated)] {
        if let Some(e) = &r.error {
            return (Verdict::Inconclusive, Some(format!("the {label} run failed: {e}")));
        }
        if r.finish == FinishReason::Length {
            let limit = r
                .params
                .max_tokens
                .map_or_else(|| "its limit".to_owned(), |n| n.to_string());
            return (
                Verdict::Inconclusive,
                Some(format!("the {label} run was cut at {limit} tokens; raise --max-tokens")),
            );
        }
    }
    if report.total.only_a == 0 && report.total.only_b == 0 {
        (Verdict::Same, None)
    } else {
        (Verdict::Different, None)
    }
}

/// Run the check; returns the data of the envelope's `check` field.
pub fn run<W: Write>(
    src: &PromptConfig,
    migrated: &PromptConfig,
    args: &CheckArgs<'_>,
    cli: &Cli,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let inputs = check_inputs(src, args)?;
    // Every target first: a replay with no recording refuses before a
    // session is opened for runs that would never come.
    let mut planned = Vec::with_capacity(inputs.len());
    for (name, vars) in inputs {
        let mut pair = Vec::with_capacity(2);
        for prompt in [src, migrated] {
            let spec = Spec::new(prompt.clone(), vars.clone()).limit(args.max_tokens);
            let target = target_for(args.provider, &spec, &cli.sessions)?;
            pair.push((spec, target));
        }
        planned.push((name, pair));
    }
    let mut recorder = if args.record {
        Some(
            super::run::session_for(&cli.sessions, None, &format!("migrate-check-{}", src.id)).map_err(|e| {
                CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())).because(e)
            })?,
        )
    } else {
        None
    };
    let keys = Keys::of(migrated.schema.as_ref(), args.keys);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let mut checks = Vec::new();
    for (name, pair) in planned {
        let mut outcomes = Vec::with_capacity(2);
        for (spec, target) in pair {
            let outcome = rt.block_on(crate::run::execute(&target, &spec, recorder.as_mut(), |_, _| {}))?;
            outcomes.push(outcome);
        }
        let (a, b) = (&outcomes[0], &outcomes[1]);
        let side =
            |o: &Outcome, label: &str| compare::side(label, &o.analysis, o.record.finish == FinishReason::Length);
        let report = compare::compare(side(a, &src.id), side(b, &migrated.id), &keys, None);
        let (v, reason) = verdict(&a.record, &b.record, &report);
        let session_ref = |o: &Outcome| Some(o.record.run_id.clone()).filter(|id| !id.is_empty());
        let check = InputCheck {
            input: name,
            verdict: v,
            reason,
            finish: [a.record.finish.as_str().to_owned(), b.record.finish.as_str().to_owned()],
            runs: [session_ref(a), session_ref(b)],
            report,
        };
        out.record(&check_record(&check)).map_err(io_err)?;
        checks.push(check);
    }
    drop(rt);
    let same = checks.iter().filter(|c| c.verdict == Verdict::Same).count();
    let different = checks.iter().filter(|c| c.verdict == Verdict::Different).count();
    let inconclusive = checks.len() - same - different;
    out.pretty(&pretty(&checks)).map_err(io_err)?;
    let data = json!({
        "provider": args.provider,
        "max_tokens": args.max_tokens,
        "keys": keys,
        "inputs": checks,
        "same": same,
        "different": different,
        "inconclusive": inconclusive,
        "session": recorder.as_ref().map(|r| r.path().display().to_string()),
    });
    if same == checks.len() {
        Ok(data)
    } else {
        let mut err = CliError::new(
            Category::CheckFailed,
            format!(
                "migrate --check: {different} of {} input(s) extract different items, {inconclusive} inconclusive",
                checks.len()
            ),
        );
        err.detail = Some(data);
        Err(err)
    }
}

/// The JSONL record of one input: `type: "check"` and the check's fields.
fn check_record(c: &InputCheck) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        let mut r = Map::new();
        r.insert("type".into(), "check".into());
        r.extend(std::mem::take(m));
        return Value::Object(r);
    }
    v
}

fn pretty(checks: &[InputCheck]) -> String {
    let mut s = String::new();
    for c in checks {
        let t = &c.report.total;
        let _ = write!(
            s,
            "{:<14} {:<12} both {:>3}  only original {:>3}  only migrated {:>3}  finish {}/{}",
            c.input,
            format!("{:?}", c.verdict).to_lowercase(),
            t.both,
            t.only_a,
            t.only_b,
            c.finish[0],
            c.finish[1]
        );
        if let Some(r) = &c.reason {
            let _ = write!(s, "  ({r})");
        }
        s.push('\n');
        for ty in &c.report.types {
            for k in &ty.only_a_keys {
                let _ = writeln!(s, "    - {}: {k}", ty.ty);
            }
            for k in &ty.only_b_keys {
                let _ = writeln!(s, "    + {}: {k}", ty.ty);
            }
        }
    }
    s
}
