//! Incremental analysis of a response as it streams in.
//!
//! Chunks may split UTF-8 characters and JSON tokens anywhere. Bytes are
//! buffered; a JSONL line is judged once its `\n` arrives, and array elements
//! are handed out by the resumable salvage scanner as they close, so the total
//! work is linear in the response size and the final result equals the
//! one-shot analysis of the same text.

use serde_json::Value;

use super::json::{self, JsonAnalysis, JsonSchemas};
use super::jsonl::{JsonlAnalysis, LineJudge, LineOutcome};
use super::salvage::{ArrayScanner, Element, Salvaged};
use super::schema::CompiledSchema;

/// Something that completed while streaming.
#[derive(Debug, Clone, PartialEq)]
pub enum Completed {
    /// A JSONL line was judged (its value, when kept).
    Line(LineOutcome, Option<Value>),
    /// An array element closed.
    Element(Element),
}

/// Streaming analyser for a `jsonl` response.
#[derive(Debug)]
pub struct JsonlStream<'s> {
    buf: Vec<u8>,
    line_start: usize,
    judge: LineJudge<'s>,
    analysis: JsonlAnalysis,
}

impl<'s> JsonlStream<'s> {
    /// A new analyser checking each line against `schema`.
    pub fn new(schema: Option<&'s CompiledSchema>) -> Self {
        Self::with_python(schema, crate::output::tg::TgPython::default())
    }

    /// A new analyser judging lines as TrustGraph's service on `py` does.
    pub fn with_python(schema: Option<&'s CompiledSchema>, py: crate::output::tg::TgPython) -> Self {
        Self {
            buf: Vec::new(),
            line_start: 0,
            judge: LineJudge::with_python(schema, py),
            analysis: JsonlAnalysis::default(),
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &[u8] {
        &self.buf
    }

    /// The analysis of the lines judged so far. A line ending in a code
    /// fence is judged only once a later line (or the end) shows whether
    /// the reference would strip that fence.
    pub fn so_far(&self) -> &JsonlAnalysis {
        &self.analysis
    }

    /// Feed a chunk; every line it lets the analyser judge is pushed onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Completed>) {
        let mut search = self.buf.len();
        self.buf.extend_from_slice(chunk);
        let analysis = &mut self.analysis;
        let mut emit = |o: LineOutcome, v: Option<Value>| {
            out.push(Completed::Line(o.clone(), v.clone()));
            analysis.push(o, v);
        };
        while let Some(off) = memchr::memchr(b'\n', &self.buf[search..]) {
            let nl = search + off;
            self.judge.line(&self.buf[self.line_start..nl], true, &mut emit);
            self.line_start = nl + 1;
            search = nl + 1;
        }
        self.analysis.tg_line_offset = self.judge.tg_line_offset();
    }

    /// The end of the stream: judge the unterminated last line, if any.
    pub fn finish(mut self, out: &mut Vec<Completed>) -> JsonlAnalysis {
        let analysis = &mut self.analysis;
        let mut emit = |o: LineOutcome, v: Option<Value>| {
            out.push(Completed::Line(o.clone(), v.clone()));
            analysis.push(o, v);
        };
        if self.line_start < self.buf.len() {
            self.judge.line(&self.buf[self.line_start..], false, &mut emit);
        }
        let offset = self.judge.tg_line_offset();
        self.judge.finish(&mut emit);
        self.analysis.tg_line_offset = offset;
        self.analysis
    }
}

/// Streaming analyser for a `json` response.
#[derive(Debug)]
pub struct JsonStream<'s> {
    schemas: &'s JsonSchemas,
    buf: Vec<u8>,
    scanner: ArrayScanner,
    elements: Vec<Element>,
}

impl<'s> JsonStream<'s> {
    /// A new analyser against `schemas`.
    pub fn new(schemas: &'s JsonSchemas) -> Self {
        Self {
            schemas,
            buf: Vec::new(),
            scanner: ArrayScanner::new(),
            elements: Vec::new(),
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &[u8] {
        &self.buf
    }

    /// Elements completed so far.
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// Feed a chunk; every element it completes is pushed onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Completed>) {
        self.buf.extend_from_slice(chunk);
        let before = self.elements.len();
        self.scanner.feed(&self.buf, &mut self.elements);
        out.extend(self.elements[before..].iter().cloned().map(Completed::Element));
    }

    /// The end of the stream: the strict parse and the full analysis. The
    /// elements the scan keeps only now (after one that turned out broken
    /// at the end) are pushed onto `out`.
    pub fn finish(mut self, out: &mut Vec<Completed>) -> JsonAnalysis {
        match std::str::from_utf8(&self.buf) {
            Ok(text) => {
                let before = self.elements.len();
                let stop = self.scanner.finish(&self.buf, &mut |e| self.elements.push(e));
                out.extend(self.elements[before..].iter().cloned().map(Completed::Element));
                let found = Salvaged {
                    elements: self.elements,
                    broken: self.scanner.take_broken(),
                    stop,
                };
                json::analyse_with(text, self.schemas, found)
            }
            // The one-shot analyser reads the text with invalid bytes
            // replaced, which moves offsets and can change what scans as an
            // element: analyse that text instead.
            Err(_) => json::analyse(&String::from_utf8_lossy(&self.buf), self.schemas),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_utf8_and_tokens() {
        let text = "{\"e\": \"日本\"}\n{\"e\": \"語\", \"n\": 12}\n{\"e\": \"x";
        let one = crate::output::jsonl::analyse(text.as_bytes(), None);
        for step in 1..5 {
            let mut s = JsonlStream::new(None);
            let mut out = Vec::new();
            for c in text.as_bytes().chunks(step) {
                s.feed(c, &mut out);
            }
            assert_eq!(s.finish(&mut out), one);
        }
        assert_eq!(one.items, vec![json!({"e": "日本"}), json!({"e": "語", "n": 12})]);
    }
}
