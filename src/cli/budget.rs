//! `cutline budget PROMPT [--provider P] [--input NAME | --inputs DIR|FILE.jsonl] [--target 0.95]`
//!
//! From one uncut answer per input (recorded with `replay`, else run now
//! with no limit of the command line's), the smallest max-token limit at
//! which the prompt's consumer (JSONL lines, or strict JSON) keeps at least
//! the target share of the uncut answer's items; per input, and the limit
//! that serves them all (the maximum; the p95 too from 20 inputs).
//! Reasoning tokens the run spent are added: they count against the same
//! limit. JSONL records: `input` per input, then `budget`.

use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::eval::budget::{self, InputBudget};
use crate::eval::inputs::Input;
use crate::llm::Transcript;
use crate::output::sweep::{SweepSchemas, sweep};
use crate::output::tokens::{Tokenizer, boundaries, boundaries_from_pieces};
use crate::prompt::ResponseType;
use crate::run::Spec;

/// Arguments of `budget`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id or path.
    pub prompt: String,
    /// Provider: `replay` (each input's recorded uncut run), `local`, or a
    /// configured name (run once per input now, with no limit of its own).
    #[arg(long, default_value = "replay")]
    pub provider: String,
    /// One sample input of the prompt (default: every one).
    #[arg(long, conflicts_with = "inputs")]
    pub input: Option<String>,
    /// Inputs: a directory or a JSONL file, as `eval --inputs` reads them.
    #[arg(long, value_name = "DIR|FILE.jsonl")]
    pub inputs: Option<std::path::PathBuf>,
    /// The share of the uncut answer's items the limit must keep (0–1].
    #[arg(long, default_value_t = 0.95, value_parser = parse_target)]
    pub target: f64,
}

fn parse_target(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|t| *t > 0.0 && *t <= 1.0)
        .ok_or_else(|| format!("{s:?} is not a share in (0, 1]"))
}

/// The inputs to budget for.
fn inputs_of(args: &Args, cfg: &crate::prompt::PromptConfig) -> Result<Vec<Input>, CliError> {
    if let Some(path) = &args.inputs {
        let raw = crate::eval::inputs::load(path).map_err(CliError::from)?;
        return Ok(raw.iter().map(|r| r.for_prompt(cfg)).collect());
    }
    let all: Vec<Input> = cfg
        .inputs
        .iter()
        .filter(|i| args.input.as_deref().is_none_or(|n| n == i.name))
        .map(|i| Input {
            id: i.name.clone(),
            vars: i.vars.clone(),
        })
        .collect();
    if all.is_empty() {
        return Err(CliError::new(
            Category::Usage,
            format!(
                "prompt {:?} has no sample input {:?}",
                cfg.id,
                args.input.as_deref().unwrap_or("")
            ),
        ));
    }
    Ok(all)
}

/// What one input gives the budget.
enum Uncut {
    /// An answer that ended on its own.
    Whole(Transcript),
    /// An answer the limit cut in a runaway loop, kept up to the end of the
    /// loop's first repeat: more tokens would only say it again, so the
    /// budget does not chase it.
    BeforeLoop(Transcript, crate::output::loops::Loop),
    /// Nothing to budget from, and why.
    Left(String),
}

/// The uncut answer for one input.
fn uncut(args: &Args, cli: &Cli, spec: &Spec) -> Result<Uncut, CliError> {
    let target = super::run::target_for(&args.provider, spec, &cli.sessions)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let outcome = rt.block_on(crate::run::execute(&target, spec, None, |_, _| {}))?;
    let r = outcome.record;
    Ok(match (&r.error, r.finish, crate::run::loop_of(&r)) {
        (Some(e), _, _) => Uncut::Left(format!("the run failed: {e}")),
        (None, crate::llm::FinishReason::Length, Some(l)) => {
            Uncut::BeforeLoop(before(r.transcript(), l.start_byte + l.period_bytes), l)
        }
        (None, crate::llm::FinishReason::Length, None) => Uncut::Left(format!(
            "the answer was cut at {} tokens, so the uncut item count is unknown",
            r.usage.completion_tokens.unwrap_or(0)
        )),
        _ => Uncut::Whole(r.transcript()),
    })
}

/// `t` up to byte `end`: whole token pieces only, when it has them.
fn before(mut t: Transcript, end: usize) -> Transcript {
    if t.has_token_pieces() {
        let mut at = 0;
        t.pieces.retain(|p| {
            at += p.text.len();
            at <= end
        });
        t.text = t.pieces.iter().map(|p| p.text.as_str()).collect();
    } else {
        let mut cut = end.min(t.text.len());
        while !t.text.is_char_boundary(cut) {
            cut -= 1;
        }
        t.text.truncate(cut);
    }
    t
}

/// Run `budget`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let cfg = cli.workspace()?.resolve(&args.prompt)?;
    let jsonl = cfg.response_type == ResponseType::Jsonl;
    let schemas = SweepSchemas::of_response(jsonl, cfg.schema.as_ref())
        .map_err(|e| CliError::new(Category::ConfigInvalid, format!("prompt {:?}: {e}", cfg.id)).because(e))?;
    let mut budgets: Vec<InputBudget> = Vec::new();
    let mut estimated = false;
    for input in inputs_of(args, &cfg)? {
        let spec = Spec::new(cfg.clone(), input.vars.clone());
        let t = match uncut(args, cli, &spec)? {
            Uncut::Whole(t) => t,
            Uncut::BeforeLoop(t, l) => {
                out.warn(format!(
                    "input {:?} loops until the limit ({} repeats of {} tokens from token {}); budgeted on its answer up to the end of the first repeat",
                    input.id,
                    l.repeats,
                    l.period_tokens.map_or_else(|| "?".into(), |n| n.to_string()),
                    l.start_token.map_or_else(|| "?".into(), |n| n.to_string()),
                ))
                .map_err(io_err)?;
                t
            }
            Uncut::Left(why) => {
                out.warn(format!("input {:?} left out: {why}", input.id))
                    .map_err(io_err)?;
                continue;
            }
        };
        let cuts = if t.has_token_pieces() {
            let pieces: Vec<&str> = t.pieces.iter().map(|p| p.text.as_str()).collect();
            boundaries_from_pieces(&pieces)
        } else {
            estimated = true;
            boundaries(&t.text, Tokenizer::O200kBase)
        };
        let points = sweep(t.text.as_bytes(), &cuts, &schemas);
        let b = budget::of_input(&input.id, &points, jsonl, args.target, t.usage.reasoning_tokens);
        if b.items_uncut == 0 {
            // Any limit keeps a share of nothing: no limit (least of all 0)
            // is what this input needs.
            out.warn(format!(
                "input {:?} left out: its uncut answer ({} tokens) gives the consumer no items ({}), so no limit \
                 keeps a share of them",
                input.id,
                b.tokens_uncut,
                if jsonl {
                    "no valid JSONL line"
                } else {
                    "strict JSON keeps nothing"
                }
            ))
            .map_err(io_err)?;
            continue;
        }
        let mut rec = serde_json::to_value(&b).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut rec {
            m.insert("type".into(), "input".into());
        }
        out.record(&rec).map_err(io_err)?;
        budgets.push(b);
    }
    if budgets.is_empty() {
        return Err(CliError::new(
            Category::InputError,
            "no input has an uncut answer to budget from (see the warnings)",
        ));
    }
    let r = budget::recommend(&budgets);
    let mut data = serde_json::to_value(&r).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut data {
        m.insert("prompt".into(), cfg.id.clone().into());
        m.insert("target".into(), json!(args.target));
        m.insert("tokens_estimated".into(), json!(estimated));
        m.insert("inputs".into(), json!(budgets));
    }
    let mut rec = data.clone();
    if let Value::Object(m) = &mut rec {
        m.insert("type".into(), "budget".into());
        m.remove("inputs");
    }
    out.record(&rec).map_err(io_err)?;
    out.pretty(&pretty(&budgets, &r, args.target)).map_err(io_err)?;
    Ok(data)
}

fn pretty(b: &[InputBudget], r: &budget::Recommendation, target: f64) -> String {
    use crate::i18n::{left, right};
    use rust_i18n::t;
    use std::fmt::Write as _;
    let share = format!("{:.0}%", target * 100.0);
    let mut s = format!(
        "{} {} {}  {}\n",
        left(&t!("pretty.input"), 26),
        right(&t!("pretty.uncut"), 6),
        right(&t!("pretty.items"), 6),
        t!("pretty.limit_for", share = share)
    );
    for x in b {
        let _ = writeln!(
            s,
            "{:<26} {:>6} {:>6} {:>6}",
            x.input, x.tokens_uncut, x.items_uncut, x.limit
        );
    }
    let _ = writeln!(s, "{}", t!("pretty.recommended", n = r.recommended_max_tokens));
    if let Some(p) = r.p95_max_tokens {
        let _ = writeln!(s, "{}", t!("pretty.p95", n = p));
    }
    s
}
