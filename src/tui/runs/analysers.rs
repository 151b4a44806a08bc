//! The streaming analysers of one run: what turns each delta into the
//! elements and lines it completed, so items appear as they complete.

use crate::output::json::{JsonAnalysis, SalvagedElement};
use crate::output::jsonl::JsonlAnalysis;
use crate::output::position::line_col;
use crate::output::stream::{Completed, JsonStream, JsonlStream};
use crate::output::sweep::SweepSchemas;

use super::RunMsg;

/// The streaming analysers of one run: both parsers fed every delta, the
/// array elements validated as they close.
#[derive(Debug)]
pub struct Analysers<'s> {
    json: JsonStream<'s>,
    jsonl: JsonlStream<'s>,
    schemas: &'s SweepSchemas,
    elements: usize,
    py: crate::output::tg::TgPython,
}

impl<'s> Analysers<'s> {
    /// New analysers checking against `schemas`, judging as TrustGraph's
    /// service on `py`.
    pub fn new(schemas: &'s SweepSchemas, py: crate::output::tg::TgPython) -> Self {
        Self {
            json: JsonStream::new(&schemas.json),
            jsonl: JsonlStream::with_python(schemas.line.as_ref(), py),
            schemas,
            elements: 0,
            py,
        }
    }

    /// Feed one delta; the message carrying it and what it completed.
    pub fn feed(&mut self, text: &str, pieces: &[String]) -> RunMsg {
        let mut done = Vec::new();
        self.json.feed(text.as_bytes(), &mut done);
        let mut elements = Vec::new();
        for c in done.drain(..) {
            if let Completed::Element(el) = c {
                elements.push(validate_element(self.json.text(), self.schemas, el, self.elements));
                self.elements += 1;
            }
        }
        self.jsonl.feed(text.as_bytes(), &mut done);
        let lines = done
            .into_iter()
            .filter_map(|c| match c {
                Completed::Line(o, v) => Some((o, v)),
                Completed::Element(_) => None,
            })
            .collect();
        RunMsg::Delta {
            text: text.to_owned(),
            pieces: pieces.to_vec(),
            elements,
            lines,
        }
    }

    /// The end of the text: both full analyses.
    pub fn finish(self) -> (JsonAnalysis, JsonlAnalysis) {
        let mut rest = Vec::new();
        let jsonl = self.jsonl.finish(&mut rest);
        let text = String::from_utf8_lossy(self.json.text()).into_owned();
        let mut json = self.json.finish(&mut rest);
        with_raises(&mut json, &text, self.schemas, self.py);
        (json, jsonl)
    }
}

/// Add to a JSON analysis whether TrustGraph's service on `py` fails the
/// whole response (the streaming parser reads as cutline does).
pub fn with_raises(json: &mut JsonAnalysis, text: &str, schemas: &SweepSchemas, py: crate::output::tg::TgPython) {
    let rejected = json.status == crate::output::json::JsonStatus::SchemaInvalid;
    json.raises = crate::output::tg::json_raises(text, schemas.json.whole.as_ref(), py, rejected);
}

fn validate_element(
    text: &[u8],
    schemas: &SweepSchemas,
    el: crate::output::salvage::Element,
    index: usize,
) -> SalvagedElement {
    let errors = schemas
        .json
        .element(el.property.as_deref())
        .and_then(|s| s.validate(&el.value).err())
        .unwrap_or_default();
    SalvagedElement {
        index,
        property: el.property.map(|p| p.to_string()),
        line: line_col(text, el.span.start).0,
        value: el.value,
        valid: errors.is_empty(),
        errors,
    }
}
