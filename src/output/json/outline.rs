//! The analysis of a `json` response without holding its values.
//!
//! [`super::analyse`] keeps every element as a `serde_json::Value`, several
//! times over (the strict value, its items, the salvaged elements); a value
//! tree is five to ten times the text it came from. `parse` reads responses
//! of any size, so it uses this form instead: each element is validated as
//! the scan reaches it and kept only as its span and verdict, and values are
//! read again from the text, one at a time, when they are written. When the
//! whole response is one closed array that salvage walked without a break,
//! and the whole-response schema only constrains its items and a length the
//! array has, the strict value *is* those elements: it is neither built nor
//! validated again, and when elements are rejected its violations are
//! theirs under their index. A closed object whose members are all arrays
//! is the same when `whole.rs` finds it valid from its elements; otherwise
//! the whole validator words why not.
//!
//! [`OutlineView`] serialises to exactly the bytes [`super::JsonAnalysis`]
//! does (tests/output_props.rs checks it on generated responses).

use std::ops::Range;
use std::sync::Arc;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::strict::{self, Strict};
use super::{
    BrokenSpan, JsonSchemas, JsonStatus, ParseStop, SalvageStop, items_of, salvage_report, strict_region_bytes,
};
use crate::output::position::LineCounter;
use crate::output::salvage::ArrayScanner;
use crate::output::schema::Violation;

/// The strict value, when there is one.
#[derive(Debug, Clone, PartialEq)]
pub enum StrictValue {
    /// Strict parsing failed.
    Absent,
    /// The value is the array of the salvaged elements, in order.
    Elements,
    /// The value is an object with these keys, in order, each holding the
    /// array of the salvaged elements under it.
    Members(Vec<Arc<str>>),
    /// Any other value, held.
    Held(Value),
}

/// One element salvage recovered: where it is and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementVerdict {
    /// Its bytes in the text.
    pub span: Range<usize>,
    /// The property of the enclosing object, for an object of arrays.
    pub property: Option<Arc<str>>,
    /// 1-based line where it starts.
    pub line: usize,
    /// The element schema's complaints (none: valid).
    pub errors: Vec<Violation>,
}

/// [`super::JsonAnalysis`] with values left in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// Strict verdict.
    pub status: JsonStatus,
    /// The strict value.
    pub value: StrictValue,
    /// Where and why strict parsing stopped, when it did.
    pub error: Option<ParseStop>,
    /// Schema violations of the whole value.
    pub violations: Vec<Violation>,
    /// Every complete element salvage recovered.
    pub elements: Vec<ElementVerdict>,
    /// Where salvage stopped, when the array never closed.
    pub salvage_stop: Option<SalvageStop>,
    /// The spans salvage skipped after broken elements.
    pub broken: Vec<BrokenSpan>,
    /// Python-only tokens of the strict value (see [`crate::output::pyjson`]).
    pub not_standard: Vec<String>,
}

/// Analyse `text` keeping spans, not values.
pub fn outline(text: &[u8], schemas: &JsonSchemas) -> Outline {
    let mut scanner = ArrayScanner::new();
    let mut elements = Vec::new();
    let mut lines = LineCounter::new();
    // What the whole schema would say of each invalid element, should the
    // array turn out to be the whole response.
    let mut item_violations = Vec::new();
    let mut keep = |el: crate::output::salvage::Element| {
        let errors = schemas.element_errors(el.property.as_deref(), &el.value);
        if !errors.is_empty() && el.property.is_none() {
            item_violations.extend(schemas.whole_item_violations(elements.len(), &el.value));
        }
        elements.push(ElementVerdict {
            line: lines.line_of(text, el.span.start),
            errors,
            span: el.span,
            property: el.property,
        });
    };
    scanner.feed_with(text, &mut keep);
    let stop = scanner.finish(text, &mut keep);
    let broken = scanner.take_broken();
    let (strict, value) = match walked(&scanner, text, &broken) {
        Some(Walked::Array) if schemas.whole_by_items(elements.len()) => {
            // The strict value is the elements: valid exactly when each is, and
            // its violations are theirs (a huge array's value tree is never built).
            let valid = schemas.whole.is_none() || item_violations.is_empty();
            let violations = if valid { Vec::new() } else { item_violations };
            (judged(violations), StrictValue::Elements)
        }
        Some(Walked::Object(keys)) if schemas.whole_by_members(&member_stats(&keys, &elements)) => {
            (judged(Vec::new()), StrictValue::Members(keys))
        }
        _ => {
            let mut strict = strict::verdict(text, schemas);
            let value = strict.value.take().map_or(StrictValue::Absent, StrictValue::Held);
            (strict, value)
        }
    };
    let (salvage_stop, broken) = salvage_report(text, stop, broken);
    Outline {
        status: strict.status,
        value,
        error: strict.error,
        violations: strict.violations,
        elements,
        salvage_stop,
        broken,
        not_standard: strict.not_standard,
    }
}

/// [`Outline::item_count`] of [`outline`], keeping no element: each is
/// checked with the validator's yes or no and dropped, and no violation is
/// worded (the sweep asks only how many items a strict consumer gets; an
/// outline of 200,000 rejected elements held ~100 MB of messages).
pub fn strict_item_count(text: &[u8], schemas: &JsonSchemas) -> usize {
    let mut scanner = ArrayScanner::new();
    let mut tally = Tally::default();
    let mut keep = |el: crate::output::salvage::Element| {
        let valid = schemas.element(el.property.as_deref()).is_none_or(|s| {
            let held = crate::output::pyjson::python_floats(&el.value);
            s.is_valid(held.as_ref().unwrap_or(&el.value))
        });
        tally.add(el.property, valid);
    };
    scanner.feed_with(text, &mut keep);
    scanner.finish(text, &mut keep);
    let broken = scanner.take_broken();
    match walked(&scanner, text, &broken) {
        Some(Walked::Array) if schemas.whole_by_items(tally.len) => {
            if schemas.whole.is_none() || !tally.top_rejected {
                tally.len
            } else {
                0
            }
        }
        Some(Walked::Object(keys)) if schemas.whole_by_members(&tally.members(&keys)) => tally.len,
        _ => match strict::verdict(text, schemas) {
            Strict {
                status: JsonStatus::Ok,
                value: Some(v),
                ..
            } => items_of(&v).len(),
            _ => 0,
        },
    }
}

/// Elements counted as the scan meets them, for [`strict_item_count`].
#[derive(Default)]
struct Tally {
    /// Every element.
    len: usize,
    /// A top-level element is rejected.
    top_rejected: bool,
    /// Each property's elements: how many, and whether all are valid.
    by_property: std::collections::HashMap<Arc<str>, (usize, bool)>,
}

impl Tally {
    fn add(&mut self, property: Option<Arc<str>>, valid: bool) {
        self.len += 1;
        match property {
            None => self.top_rejected |= !valid,
            Some(p) => {
                let e = self.by_property.entry(p).or_insert((0, true));
                e.0 += 1;
                e.1 &= valid;
            }
        }
    }

    /// [`member_stats`] from the tally.
    fn members<'a>(&self, keys: &'a [Arc<str>]) -> Vec<(&'a str, usize, bool)> {
        keys.iter()
            .map(|k| {
                let (n, ok) = self.by_property.get(k).copied().unwrap_or((0, true));
                (k.as_ref(), n, ok)
            })
            .collect()
    }
}

/// What salvage's walk says the strict value is, when it decides it: the
/// whole strict region is one array or object it closed without a break.
enum Walked {
    Array,
    /// An object whose members are all arrays, each key once, in order.
    Object(Vec<Arc<str>>),
}

fn walked(scanner: &ArrayScanner, text: &[u8], broken: &[crate::output::salvage::Broken]) -> Option<Walked> {
    if !broken.is_empty() || scanner.closed_value() != Some(strict_region_bytes(text)) {
        return None;
    }
    if scanner.closed_array().is_some() {
        return Some(Walked::Array);
    }
    let members = scanner.members();
    let keys: Vec<Arc<str>> = members.iter().map(|m| m.key.clone()).collect();
    let unique = keys.iter().collect::<std::collections::HashSet<_>>().len() == keys.len();
    // `{}` is one item, not an object of arrays (see `items_of`).
    (!keys.is_empty() && unique && members.iter().all(|m| m.array)).then_some(Walked::Object(keys))
}

/// Each key's array: its length and whether every element is valid.
fn member_stats<'a>(keys: &'a [Arc<str>], elements: &[ElementVerdict]) -> Vec<(&'a str, usize, bool)> {
    let mut stats: Vec<(&str, usize, bool)> = keys.iter().map(|k| (k.as_ref(), 0, true)).collect();
    for e in elements {
        if let Some(s) = stats.iter_mut().find(|s| Some(s.0) == e.property.as_deref()) {
            s.1 += 1;
            s.2 &= e.errors.is_empty();
        }
    }
    stats
}

/// A valid strict verdict when `violations` is empty, else schema-invalid
/// with them; the value is left in the text.
fn judged(violations: Vec<Violation>) -> Strict {
    Strict {
        status: if violations.is_empty() {
            JsonStatus::Ok
        } else {
            JsonStatus::SchemaInvalid
        },
        value: None,
        error: None,
        violations,
        not_standard: Vec::new(),
    }
}

impl Outline {
    /// How many items a strict consumer gets.
    pub fn item_count(&self) -> usize {
        match (&self.status, &self.value) {
            (JsonStatus::Ok, StrictValue::Elements | StrictValue::Members(_)) => self.elements.len(),
            (JsonStatus::Ok, StrictValue::Held(v)) => items_of(v).len(),
            _ => 0,
        }
    }

    /// How many salvaged elements the element schema accepts.
    pub fn salvaged_count(&self) -> usize {
        self.elements.iter().filter(|e| e.errors.is_empty()).count()
    }

    /// Each item a strict consumer gets, read from `text` one at a time.
    pub fn for_each_item(&self, text: &[u8], each: &mut dyn FnMut(&Value)) {
        match (&self.status, &self.value) {
            (JsonStatus::Ok, StrictValue::Elements | StrictValue::Members(_)) => {
                for e in &self.elements {
                    each(&read(text, &e.span));
                }
            }
            (JsonStatus::Ok, StrictValue::Held(v)) => items_of(v).iter().for_each(each),
            _ => {}
        }
    }
}

/// An element's value, read again from its span (it parsed once already).
pub fn read(text: &[u8], span: &Range<usize>) -> Value {
    serde_json::from_slice(&text[span.clone()]).unwrap_or(Value::Null)
}

/// An outline and its text, serialised as [`super::JsonAnalysis`] is.
#[derive(Clone, Copy)]
pub struct OutlineView<'a> {
    /// The analysis.
    pub outline: &'a Outline,
    /// The text it was made from.
    pub text: &'a [u8],
}

/// Calls its argument with each value of a sequence in turn.
type Values<'a> = dyn Fn(&mut dyn FnMut(&Value)) + 'a;

/// A sequence written one value at a time.
struct Each<'a>(&'a Values<'a>);

impl Serialize for Each<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        (self.0)(&mut |v| {
            if failed.is_none()
                && let Err(e) = seq.serialize_element(v)
            {
                failed = Some(e);
            }
        });
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

/// One element as [`super::SalvagedElement`] serialises; as a `parse`
/// record, it ends with `"type": "element"`.
pub struct ElementView<'a> {
    index: usize,
    element: &'a ElementVerdict,
    text: &'a [u8],
    record: bool,
}

impl Serialize for ElementView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.element;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("index", &self.index)?;
        if let Some(p) = &e.property {
            m.serialize_entry("property", p.as_ref())?;
        }
        m.serialize_entry("line", &e.line)?;
        m.serialize_entry("value", &read(self.text, &e.span))?;
        m.serialize_entry("valid", &e.errors.is_empty())?;
        if !e.errors.is_empty() {
            m.serialize_entry("errors", &e.errors)?;
        }
        if self.record {
            m.serialize_entry("type", "element")?;
        }
        m.end()
    }
}

/// An object of arrays, each read from the elements under its key.
struct Members<'a> {
    keys: &'a [Arc<str>],
    outline: &'a Outline,
    text: &'a [u8],
}

impl Serialize for Members<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.keys.len()))?;
        for key in self.keys {
            let under = |f: &mut dyn FnMut(&Value)| {
                for e in &self.outline.elements {
                    if e.property.as_deref() == Some(key.as_ref()) {
                        f(&read(self.text, &e.span));
                    }
                }
            };
            m.serialize_entry(key.as_ref(), &Each(&under))?;
        }
        m.end()
    }
}

/// The `elements` list.
struct Elements<'a>(OutlineView<'a>);

impl Serialize for Elements<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.outline.elements.len()))?;
        for (index, element) in self.0.outline.elements.iter().enumerate() {
            seq.serialize_element(&ElementView {
                index,
                element,
                text: self.0.text,
                record: false,
            })?;
        }
        seq.end()
    }
}

impl<'a> OutlineView<'a> {
    /// Each element as a `parse` record (`"type": "element"`).
    pub fn element_records(self) -> impl Iterator<Item = ElementView<'a>> {
        self.outline
            .elements
            .iter()
            .enumerate()
            .map(move |(index, element)| ElementView {
                index,
                element,
                text: self.text,
                record: true,
            })
    }
}

impl Serialize for OutlineView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (o, text) = (self.outline, self.text);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("status", &o.status)?;
        match &o.value {
            StrictValue::Absent => {}
            StrictValue::Elements => m.serialize_entry(
                "value",
                &Each(&|f| o.elements.iter().for_each(|e| f(&read(text, &e.span)))),
            )?,
            StrictValue::Members(keys) => m.serialize_entry("value", &Members { keys, outline: o, text })?,
            StrictValue::Held(v) => m.serialize_entry("value", v)?,
        }
        if let Some(e) = &o.error {
            m.serialize_entry("error", e)?;
        }
        if !o.violations.is_empty() {
            m.serialize_entry("violations", &o.violations)?;
        }
        m.serialize_entry("items", &Each(&|f| o.for_each_item(text, f)))?;
        m.serialize_entry("elements", &Elements(*self))?;
        let valid = |f: &mut dyn FnMut(&Value)| {
            for e in o.elements.iter().filter(|e| e.errors.is_empty()) {
                f(&read(text, &e.span));
            }
        };
        m.serialize_entry("salvaged", &Each(&valid))?;
        if let Some(stop) = &o.salvage_stop {
            m.serialize_entry("salvage_stop", stop)?;
        }
        if !o.broken.is_empty() {
            m.serialize_entry("broken", &o.broken)?;
        }
        if !o.not_standard.is_empty() {
            m.serialize_entry("not_standard", &o.not_standard)?;
        }
        m.end()
    }
}
