//! Line charts as inline SVG: items recovered against max tokens (a step
//! line per parser, from the sweep) and, for an eval, items against the
//! limits it ran (one marker per limit). Values in, markup out.
//!
//! Colours come from CSS classes (`s0`…`s2`) and variables, so the page's
//! light/dark and print styles apply; series also differ by dash and width,
//! so they stay apart in greyscale. Every element is closed explicitly
//! (`<circle …></circle>`), which both the HTML parser and an XML reader of
//! the standalone file accept.

use std::fmt::Write as _;

use maud::{Markup, PreEscaped, html};

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
}

/// What the x axis shows.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Token counts from 0 to `max`; series are step functions (an item
    /// counts from the token that completes it on).
    Tokens {
        /// The last cut.
        max: usize,
        /// A limit to mark with a vertical rule (the run's own).
        limit: Option<usize>,
    },
    /// One position per label (eval limits); points at x = 0, 1, 2…
    Limits(Vec<String>),
}

/// A chart to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Accessible title (also the SVG `<title>`).
    pub title: String,
    /// The x axis.
    pub x: XAxis,
    /// Up to three series, drawn as `s0`, `s1`, `s2`.
    pub series: Vec<Series>,
}

const W: f64 = 640.0;
const H: f64 = 260.0;
const LEFT: f64 = 46.0;
const RIGHT: f64 = 18.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 40.0;

/// The colours and strokes of the chart, for the standalone file (the page
/// carries the same rules in its own stylesheet).
pub const STYLE: &str = include_str!("chart.css");

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds far below 2^52: exact as f64"
)]
fn f(x: usize) -> f64 {
    x as f64
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving at most about `n` ticks.
fn nice_step(max: f64, n: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let raw = max / n;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    step.max(1.0)
}

/// Ticks from 0 in `step`s: up to `max`, or (`cover`) up to the first
/// tick at or above it, so the top of the data sits under a labelled line.
fn ticks(max: f64, step: f64, cover: bool) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = 0.0;
    while out.len() < 50 {
        if t > max + 1e-9 && !(cover && out.last().is_some_and(|l: &f64| *l < max - 1e-9)) {
            break;
        }
        out.push(t);
        t += step;
    }
    out
}

/// A number without a trailing `.0`, two decimals at most.
fn num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// Points of a step line: the value holds until the next x, then jumps;
/// only the changes are kept, so a 768-token sweep draws a few dozen points.
fn step_points(points: &[(f64, f64)], px: impl Fn(f64) -> f64, py: impl Fn(f64) -> f64) -> String {
    let mut s = String::new();
    let mut prev: Option<(f64, f64)> = None;
    for (i, &(x, y)) in points.iter().enumerate() {
        let last = i + 1 == points.len();
        match prev {
            None => {
                let _ = write!(s, "{:.1},{:.1}", px(x), py(y));
            }
            Some((_, py0)) if (py0 - y).abs() > f64::EPSILON => {
                let _ = write!(s, " {:.1},{:.1} {:.1},{:.1}", px(x), py(py0), px(x), py(y));
            }
            Some(_) if last => {
                let _ = write!(s, " {:.1},{:.1}", px(x), py(y));
            }
            Some(_) => {}
        }
        prev = Some((x, y));
    }
    if points.len() == 1 {
        let (x, y) = points[0];
        let _ = write!(s, " {:.1},{:.1}", px(x) + 1.0, py(y));
    }
    s
}

fn straight_points(points: &[(f64, f64)], px: impl Fn(f64) -> f64, py: impl Fn(f64) -> f64) -> String {
    points
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The chart as an `<svg>` element. `standalone` adds the XML namespace and
/// the stylesheet, for a file of its own (`--format svg`).
pub fn chart(c: &Chart, standalone: bool) -> Markup {
    let (x_max, x_ticks, x_label) = x_axis(&c.x);
    let (y_ticks, y_max) = y_axis(c);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let (x_pad, px_span) = match c.x {
        XAxis::Limits(_) => (pw * 0.06, pw * 0.88),
        XAxis::Tokens { .. } => (0.0, pw),
    };
    let px = |x: f64| LEFT + x_pad + x / x_max * px_span;
    let py = |y: f64| TOP + ph - y / y_max * ph;
    let steps = matches!(c.x, XAxis::Tokens { .. });
    let limit = match c.x {
        XAxis::Tokens { limit: Some(l), max } if l <= max => Some(f(l)),
        _ => None,
    };
    let xmlns = standalone.then_some("http://www.w3.org/2000/svg");
    html! {
        svg class="chart" xmlns=[xmlns] viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(c.title) {
            title { (c.title) }
            @if standalone {
                style { (PreEscaped(STYLE)) }
                rect class="bg" x="0" y="0" width=(W) height=(H) {}
            }
            @for &t in &y_ticks {
                line class="grid" x1=(LEFT) x2=(W - RIGHT) y1={(format!("{:.1}", py(t)))} y2={(format!("{:.1}", py(t)))} {}
                text class="tick" x=(LEFT - 6.0) y={(format!("{:.1}", py(t) + 4.0))} text-anchor="end" { (num(t)) }
            }
            @for (t, label) in &x_ticks {
                line class="tickmark" x1={(format!("{:.1}", px(*t)))} x2={(format!("{:.1}", px(*t)))} y1=(TOP + ph) y2=(TOP + ph + 4.0) {}
                text class="tick" x={(format!("{:.1}", px(*t)))} y=(TOP + ph + 16.0) text-anchor="middle" { (label) }
            }
            line class="axis" x1=(LEFT) x2=(W - RIGHT) y1=(TOP + ph) y2=(TOP + ph) {}
            line class="axis" x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(TOP + ph) {}
            text class="axis-label" x={(format!("{:.1}", LEFT + pw / 2.0))} y=(H - 6.0) text-anchor="middle" { (x_label) }
            text class="axis-label" x="12" y={(format!("{:.1}", TOP + ph / 2.0))} text-anchor="middle" transform={"rotate(-90 12 " (format!("{:.1}", TOP + ph / 2.0)) ")"} { "items" }
            @if let Some(l) = limit {
                line class="limit" x1={(format!("{:.1}", px(l)))} x2={(format!("{:.1}", px(l)))} y1=(TOP) y2=(TOP + ph) {}
                text class="tick" x={(format!("{:.1}", px(l)))} y=(TOP - 5.0) text-anchor="end" { "limit " (num(l)) }
            }
            @for (i, s) in c.series.iter().enumerate() {
                @let cls = format!("s{}", i.min(2));
                @if !s.points.is_empty() {
                    polyline class=(cls) fill="none" points=(if steps { step_points(&s.points, px, py) } else { straight_points(&s.points, px, py) }) {
                        title { (s.name) }
                    }
                    @let shown: Vec<&(f64, f64)> = if steps { s.points.last().into_iter().collect() } else { s.points.iter().collect() };
                    @for &&(x, y) in &shown {
                        circle class={(cls) " dot"} cx={(format!("{:.1}", px(x)))} cy={(format!("{:.1}", py(y)))} r="3.5" {
                            title { (s.name) ": " (num(y)) " items at " (x_tick_name(&c.x, x)) }
                        }
                    }
                }
            }
            @for (i, s) in c.series.iter().enumerate() {
                @let x0 = LEFT + f(i) * (pw / 3.0);
                line class={"s" (i.min(2)) " key"} x1=(x0) x2=(x0 + 22.0) y1="14" y2="14" {}
                text class="legend" x=(x0 + 28.0) y="18" { (s.name) }
            }
        }
    }
}

/// The x axis: its greatest value, its ticks with their labels, its
/// title.
fn x_axis(x: &XAxis) -> (f64, Vec<(f64, String)>, &'static str) {
    match x {
        XAxis::Tokens { max, .. } => {
            let m = f(*max).max(1.0);
            let t = ticks(m, nice_step(m, 6.0), false)
                .into_iter()
                .map(|t| (t, num(t)))
                .collect();
            (m, t, "max tokens")
        }
        XAxis::Limits(labels) => {
            let m = f(labels.len().saturating_sub(1)).max(1.0);
            let t = labels.iter().enumerate().map(|(i, l)| (f(i), l.clone())).collect();
            (m, t, "max-token limit")
        }
    }
}

/// The y axis (items): its ticks and its greatest value, at least 1.
fn y_axis(c: &Chart) -> (Vec<f64>, f64) {
    let y_data = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let y_step = nice_step(y_data.max(1.0), 5.0);
    let y_ticks = ticks(y_data.max(1.0), y_step, true);
    let y_max = y_ticks.last().copied().unwrap_or(1.0).max(y_data).max(1.0);
    (y_ticks, y_max)
}

fn x_tick_name(x: &XAxis, v: f64) -> String {
    match x {
        XAxis::Tokens { .. } => format!("{} tokens", num(v)),
        XAxis::Limits(labels) => {
            let i = v.round();
            let label = if i >= 0.0 && i < f(labels.len()) {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "i is checked to lie in 0..labels.len() just above"
                )]
                labels.get(i as usize).cloned()
            } else {
                None
            };
            format!("limit {}", label.unwrap_or_else(|| num(v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert!((nice_step(768.0, 6.0) - 200.0).abs() < 1e-9);
        assert!((nice_step(12.0, 5.0) - 5.0).abs() < 1e-9);
        assert!((nice_step(3.0, 5.0) - 1.0).abs() < 1e-9);
        assert_eq!(ticks(12.0, 5.0, false), vec![0.0, 5.0, 10.0]);
        assert_eq!(ticks(12.0, 5.0, true), vec![0.0, 5.0, 10.0, 15.0]);
        assert_eq!(ticks(10.0, 5.0, true), vec![0.0, 5.0, 10.0]);
    }

    #[test]
    fn a_step_line_keeps_only_the_changes() {
        let pts: Vec<(f64, f64)> = vec![(0.0, 0.0), (1.0, 0.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0)];
        let s = step_points(&pts, |x| x, |y| y);
        assert_eq!(s, "0.0,0.0 2.0,0.0 2.0,1.0 4.0,1.0");
    }

    #[test]
    fn text_in_a_chart_is_escaped() {
        let c = Chart {
            title: "<script>alert(1)</script>".into(),
            x: XAxis::Limits(vec!["64".into(), "<b>".into()]),
            series: vec![Series {
                name: "a&b\"".into(),
                points: vec![(0.0, 1.0), (1.0, 2.0)],
            }],
        };
        let s = chart(&c, false).into_string();
        assert!(!s.contains("<script>"), "{s}");
        assert!(!s.contains("<b>"), "{s}");
        assert!(s.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(s.contains("a&amp;b&quot;"));
        assert!(!s.contains("xmlns"));
        assert!(chart(&c, true).into_string().starts_with("<svg class=\"chart\" xmlns="));
    }
}
