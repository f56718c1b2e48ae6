//! The few kinds of Plotly figure the reports use, built with the `plotly` crate: grouped
//! bars, lines, stacked areas and stacked horizontal bars. A variant keeps its colour on
//! every chart of a page.

use crate::page::Figure;
use plotly::common::{
    DashType, Line as Stroke, Marker, Mode, Orientation, TextPosition, TickMode, Title,
};
use plotly::layout::{
    Axis, AxisRange, AxisType, BarMode, Legend, Margin, TicksDirection, TraceOrder, UniformText,
    UniformTextMode,
};
use plotly::{Bar, Layout, Plot, Scatter};

/// Plotly's default colour sequence.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Colours for categories that are not variants (a profile's categories), so that no
/// category is mistaken for a variant: ColorBrewer's Set2 and Pastel1, which share no
/// colour with `PALETTE`.
const CATEGORY_PALETTE: [&str; 16] = [
    "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3",
    "#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6", "#ffffcc", "#e5d8bd", "#fddaec",
];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Line dashes, a variant's on every line chart, so that lines lying on one another
/// (free memory at the watermarks in every variant) still show each variant's.
const DASHES: [DashType; 6] = [
    DashType::Solid,
    DashType::Dash,
    DashType::Dot,
    DashType::DashDot,
    DashType::LongDash,
    DashType::LongDashDot,
];

/// The dash of series `i`'s line.
pub fn dash(i: usize) -> DashType {
    DASHES[i % DASHES.len()].clone()
}

/// The colour of category `i` (never a variant's).
pub fn category_color(i: usize) -> &'static str {
    CATEGORY_PALETTE[i % CATEGORY_PALETTE.len()]
}

/// Fix a chart's x axis to `[0, x_max]`, so that charts of different variants side by
/// side share their x range.
pub fn x_range(figure: &mut Figure, x_title: &str, x_max: f64) {
    let axis = Axis::new()
        .title(Title::with_text(x_title))
        .auto_margin(true)
        .range(AxisRange::new(0.0, x_max));
    let layout = figure.plot.layout().clone().x_axis(axis);
    figure.plot.set_layout(layout);
}

/// One named series: y (and for bars the text on each bar) over the chart's x.
pub struct Series {
    pub name: String,
    pub y: Vec<f64>,
    pub text: Vec<String>,
}

/// The layout every chart shares: title, axis titles, a legend above the plot.
fn layout(title: &str, x_title: &str, y_title: &str, y_log: bool) -> Layout {
    let mut y = Axis::new()
        .title(Title::with_text(y_title))
        .auto_margin(true);
    if y_log {
        y = y.type_(AxisType::Log);
    }
    Layout::new()
        .title(Title::with_text(title))
        .x_axis(
            Axis::new()
                .title(Title::with_text(x_title))
                .auto_margin(true),
        )
        .y_axis(y)
        .legend(Legend::new().orientation(Orientation::Horizontal).y(-0.25))
        .margin(Margin::new().top(60).bottom(40).left(70).right(20))
}

/// The smallest font (px) a bar's label is drawn at; a smaller one is hidden.
pub const LABEL_MIN_PX: usize = 9;

/// The gap between bars of one group, as a fraction of a bar's slot.
pub const BAR_GROUP_GAP: f64 = 0.15;

/// Bars per category, one bar per series in each group, the series' text on its bars.
pub fn grouped_bars(
    title: &str,
    y_title: &str,
    x: &[String],
    series: Vec<Series>,
    y_log: bool,
) -> Figure {
    let mut plot = Plot::new();
    let range = y_log
        .then(|| log_range(series.iter().flat_map(|s| &s.y)))
        .flatten();
    for (i, s) in series.into_iter().enumerate() {
        let bar = Bar::new(x.to_vec(), s.y)
            .name(s.name)
            .marker(Marker::new().color(color(i)))
            .text_array(s.text)
            .text_position(TextPosition::Outside)
            .clip_on_axis(false);
        plot.add_trace(bar);
    }
    // Plotly shrinks a label to its bar's width and draws a chart's labels at one size;
    // one that would be smaller than LABEL_MIN_PX is hidden (the bar's hover still shows
    // it). Bars of a group touch unless given a gap, and labels as wide as their bars
    // would then run together ("-100.0%-100.0%"): BAR_GROUP_GAP keeps them apart.
    let text = UniformText::new()
        .mode(UniformTextMode::Hide)
        .min_size(LABEL_MIN_PX);
    let mut l = layout(title, "", y_title, y_log)
        .bar_mode(BarMode::Group)
        .bar_group_gap(BAR_GROUP_GAP)
        .uniform_text(text);
    if let Some(r) = range {
        let y = Axis::new()
            .title(Title::with_text(y_title))
            .auto_margin(true);
        l = l.y_axis(y.type_(AxisType::Log).range(r.to_vec()));
    }
    plot.set_layout(l);
    Figure::new(plot, false)
}

/// A log axis's range (log10 units) for bars of `ys`: from a decade at least a factor 2
/// below the smallest positive bar, so that every bar has a visible length (Plotly's
/// own range starts near the smallest bar, which then looks empty), to a little above
/// the largest, for its label. None when no bar is positive.
pub fn log_range<'a>(ys: impl Iterator<Item = &'a f64>) -> Option<[f64; 2]> {
    let pos: Vec<f64> = ys.copied().filter(|y| *y > 0.0 && y.is_finite()).collect();
    let min = pos.iter().copied().reduce(f64::min)?;
    let max = pos.iter().copied().reduce(f64::max)?;
    let lo = (min.log10() - 2f64.log10()).floor();
    let hi = max.log10() + 0.1 * (max.log10() - lo) + 0.05;
    Some([lo, hi])
}

/// A log axis over `range` (log10 units, from `log_range`) whose labels are decades
/// only, with unlabelled ticks at 2..9 times each: Plotly's own ticks on a range of a
/// decade or two label 2, 5 (or every digit) as large as the decades, and the axis then
/// reads like a linear one with odd numbers. The range spans a decade at least, so that
/// two decades are labelled. None: Plotly's own log axis.
fn log_axis(axis: Axis, range: Option<[f64; 2]>) -> Axis {
    let axis = axis.type_(AxisType::Log);
    let Some([lo, hi]) = range else {
        return axis;
    };
    let hi = hi.max(lo + 1.0);
    let (vals, text) = log_ticks(lo, hi);
    axis.range(vec![lo, hi])
        .tick_mode(TickMode::Array)
        .tick_values(vals)
        .tick_text(text)
        .ticks(TicksDirection::Outside)
}

/// Ticks at 1..9 times each decade in `[10^lo, 10^hi]` (log10 units), labelled only at
/// the decades ("0.01", "1", "100", "1e5").
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<String>) {
    let (mut vals, mut text) = (Vec::new(), Vec::new());
    for d in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for m in 1..10 {
            let v = m as f64 * 10f64.powi(d);
            if v.log10() < lo - 1e-9 || v.log10() > hi + 1e-9 {
                continue;
            }
            vals.push(v);
            text.push(match (m, d) {
                (1, -3..=-1) => format!("{v:.*}", (-d) as usize),
                (1, 0..=4) => format!("{v:.0}"),
                (1, _) => format!("1e{d}"),
                _ => String::new(),
            });
        }
    }
    (vals, text)
}

/// Grouped horizontal bars: one row per label (the first at the top), one bar per
/// series in each row, on a log value axis when `x_log`. For long labels (a lock's call
/// sites) and values spanning orders of magnitude, which vertical bars crowd.
pub fn grouped_hbars(
    title: &str,
    x_title: &str,
    rows: &[String],
    series: Vec<Series>,
    x_log: bool,
) -> Figure {
    let mut plot = Plot::new();
    let n = series.len();
    let series_range = log_range(series.iter().flat_map(|s| &s.y));
    // Plotly draws the first category at the bottom, and in each group the first trace
    // lowest: given bottom up (and the legend reversed), rows and bars read top down.
    let up: Vec<String> = rows.iter().rev().cloned().collect();
    for (i, s) in series.into_iter().enumerate().rev() {
        let bar = Bar::new(s.y.into_iter().rev().collect(), up.clone())
            .orientation(Orientation::Horizontal)
            .name(s.name)
            .marker(Marker::new().color(color(i)));
        plot.add_trace(bar);
    }
    let mut x = Axis::new()
        .title(Title::with_text(x_title))
        .auto_margin(true);
    if x_log {
        x = log_axis(x, series_range);
    }
    let y = (Axis::new().auto_margin(true)).type_(AxisType::Category);
    // About 14 px a bar and a little between rows, so no bar is thinner than a line.
    let height = 120 + rows.len() * (n.max(1) * 14 + 10);
    let layout = layout(title, x_title, "", false)
        .bar_mode(BarMode::Group)
        .x_axis(x)
        .y_axis(y)
        .legend(Legend::new().trace_order(TraceOrder::Reversed))
        .height(height);
    plot.set_layout(layout);
    Figure {
        height_px: Some(height),
        ..Figure::new(plot, true)
    }
}

/// A line over its own x.
pub struct Line {
    pub name: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// Lines over a numeric x, one per series (markers too when there are few points).
pub fn lines(title: &str, x_title: &str, y_title: &str, series: Vec<Line>) -> Figure {
    let mut plot = Plot::new();
    for (i, s) in series.into_iter().enumerate() {
        let mode = if s.x.len() <= 12 {
            Mode::LinesMarkers
        } else {
            Mode::Lines
        };
        let line = Scatter::new(s.x, s.y)
            .name(s.name)
            .mode(mode.clone())
            .marker(Marker::new().color(color(i)))
            .line(Stroke::new().color(color(i)).dash(dash(i)));
        plot.add_trace(line);
    }
    plot.set_layout(layout(title, x_title, y_title, false));
    Figure::new(plot, true)
}

/// Where lines settle after a first drop (free memory after the populate), as a y range
/// that makes them distinguishable, when the drop would otherwise squash them together.
#[derive(Debug, PartialEq)]
pub struct Settled {
    /// The y range shown: the settled samples', with 5% of their span either side.
    pub range: [f64; 2],
    /// The time (x) by which every line had made its first drop.
    pub from_x: f64,
    /// The highest sample, off the top of the zoomed chart.
    pub top: f64,
}

/// The samples of `lines` after each one's first drop: from the first sample within a
/// tenth of its own span above its minimum. Some when every line has dropped by half
/// its run (a steady decline is no drop then a plateau), and those samples span under a
/// quarter of all samples' span (a chart over the whole span shows them as one line)
/// and more than nothing.
pub fn settled(lines: &[Line]) -> Option<Settled> {
    let (mut lo, mut hi, mut from_x) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    let (mut all_lo, mut all_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in lines {
        let min = l.y.iter().copied().fold(f64::INFINITY, f64::min);
        let max = l.y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let Some(k) = l.y.iter().position(|y| *y <= min + 0.1 * (max - min)) else {
            continue;
        };
        for y in &l.y[k..] {
            (lo, hi) = (lo.min(*y), hi.max(*y));
        }
        (all_lo, all_hi) = (all_lo.min(min), all_hi.max(max));
        from_x = from_x.max(l.x.get(k).copied().unwrap_or(0.0));
        if 2 * k > l.y.len() {
            return None;
        }
    }
    let span = hi - lo;
    if !(span > 0.0 && span < 0.25 * (all_hi - all_lo)) {
        return None;
    }
    let range = [(lo - 0.05 * span).max(all_lo.min(0.0)), hi + 0.05 * span];
    Some(Settled {
        range,
        from_x,
        top: all_hi,
    })
}

/// Fix a chart's y axis to `range` (with its title).
pub fn y_range(figure: &mut Figure, y_title: &str, range: [f64; 2]) {
    let axis = Axis::new()
        .title(Title::with_text(y_title))
        .auto_margin(true)
        .range(AxisRange::new(range[0], range[1]));
    let layout = figure.plot.layout().clone().y_axis(axis);
    figure.plot.set_layout(layout);
}

/// One row of marks per series over a numeric x (a run's events over virtual time):
/// series `i` on row `names[i]`, a mark at each x, its label shown on hover.
pub fn marks(
    title: &str,
    x_title: &str,
    names: &[String],
    rows: Vec<Vec<(f64, String)>>,
) -> Figure {
    let mut plot = Plot::new();
    for (i, (name, row)) in names.iter().zip(rows).enumerate() {
        let (x, text): (Vec<f64>, Vec<String>) = row.into_iter().unzip();
        let y = vec![name.clone(); x.len()];
        let mark = Scatter::new(x, y)
            .name(name)
            .mode(Mode::Markers)
            .text_array(text)
            .marker(Marker::new().color(color(i)).size(9));
        plot.add_trace(mark);
    }
    let y = (Axis::new().auto_margin(true)).type_(AxisType::Category);
    let height = 160 + names.len() * 40;
    plot.set_layout(layout(title, x_title, "", false).y_axis(y).height(height));
    Figure {
        height_px: Some(height),
        ..Figure::new(plot, true)
    }
}

/// Lines over categories (a sweep's values, which need not be numbers), one per series.
pub fn category_lines(
    title: &str,
    x_title: &str,
    y_title: &str,
    x: &[String],
    series: Vec<Series>,
) -> Figure {
    let mut plot = Plot::new();
    for (i, s) in series.into_iter().enumerate() {
        let line = Scatter::new(x.to_vec(), s.y)
            .name(s.name)
            .mode(Mode::LinesMarkers)
            .marker(Marker::new().color(color(i)));
        plot.add_trace(line);
    }
    let layout = layout(title, x_title, y_title, false).x_axis(
        Axis::new()
            .title(Title::with_text(x_title))
            .type_(AxisType::Category),
    );
    plot.set_layout(layout);
    Figure::new(plot, false)
}

/// Areas stacked over a numeric x, one per series.
pub fn stacked_areas(
    title: &str,
    x_title: &str,
    y_title: &str,
    x: &[f64],
    series: Vec<Series>,
) -> Figure {
    let mut plot = Plot::new();
    for (i, s) in series.into_iter().enumerate() {
        let area = Scatter::new(x.to_vec(), s.y)
            .name(s.name)
            .mode(Mode::Lines)
            .stack_group("one")
            .marker(Marker::new().color(category_color(i)));
        plot.add_trace(area);
    }
    plot.set_layout(layout(title, x_title, y_title, false));
    Figure::new(plot, false)
}

/// Horizontal bars, one per row label (the first at the top, as in `grouped_hbars`),
/// each stacked from the series (a profile's categories), with the series' text on its
/// segment.
pub fn stacked_hbars(title: &str, x_title: &str, rows: &[String], series: Vec<Series>) -> Figure {
    let mut plot = Plot::new();
    // Plotly draws the first category at the bottom: give the rows bottom up.
    let up: Vec<String> = rows.iter().rev().cloned().collect();
    for (i, s) in series.into_iter().enumerate() {
        let bar = Bar::new(s.y.into_iter().rev().collect(), up.clone())
            .orientation(Orientation::Horizontal)
            .name(s.name)
            .marker(Marker::new().color(category_color(i)))
            .text_array(s.text.into_iter().rev().collect())
            .text_position(TextPosition::Inside);
        plot.add_trace(bar);
    }
    let layout = layout(title, x_title, "", false)
        .bar_mode(BarMode::Stack)
        .y_axis(Axis::new().auto_margin(true).type_(AxisType::Category));
    plot.set_layout(layout);
    Figure::new(plot, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 132 us bar beside larger ones starts a decade below, 10 us: its length is
    /// over a decade, not the sliver Plotly's own range left.
    #[test]
    fn a_log_axis_starts_a_decade_below_the_smallest_bar() {
        let [lo, hi] = log_range([132.0, 900.0, 4000.0, 0.0].iter()).unwrap();
        assert_eq!(lo, 1.0);
        assert!(132f64.log10() - lo > 1.0);
        assert!(hi > 4000f64.log10());
        // a bar just above a decade still gets a factor 2 below it
        assert_eq!(log_range([150.0].iter()).unwrap()[0], 1.0);
        assert_eq!(log_range([250.0].iter()).unwrap()[0], 2.0);
        assert!(log_range([0.0].iter()).is_none());
    }

    /// Lines that drop from 512 to a few MiB and stay there: the y range is the few
    /// MiB after the drop (the old chart's, 0 to 512, drew them as one line), and each
    /// line has its own dash.
    #[test]
    fn lines_after_a_first_drop_get_their_own_range_and_dash() {
        let line = |i: usize, end: f64| Line {
            name: format!("v{i}"),
            x: (0..10).map(|t| t as f64 / 10.0).collect(),
            y: [512.0, 300.0, 3.0, 5.0, end, 4.0, 3.5, 6.0, 3.0, end].to_vec(),
        };
        let ls: Vec<Line> = (0..6).map(|i| line(i, 3.0 + i as f64)).collect();
        let s = settled(&ls).unwrap();
        assert_eq!(s.from_x, 0.2);
        assert_eq!(s.top, 512.0);
        let [lo, hi] = s.range;
        assert!(
            (lo - 2.75).abs() < 1e-9 && (hi - 8.25).abs() < 1e-9,
            "{lo} {hi}"
        );
        // a chart whose lines already fill it keeps Plotly's range
        let wide: Vec<Line> = (0..2).map(|i| line(i, 400.0)).collect();
        assert!(settled(&wide).is_none());
        // nor does a steady decline, which never settles
        let steady = Line {
            name: "s".into(),
            x: (0..10).map(f64::from).collect(),
            y: (0..10).map(|i| 512.0 - 50.0 * f64::from(i)).collect(),
        };
        assert!(settled(&[steady]).is_none());
        assert!(settled(&[]).is_none());
        let f = lines("Free memory", "s", "MiB", ls);
        let j: serde_json::Value = serde_json::from_str(&f.plot.to_json()).unwrap();
        let dashes: std::collections::BTreeSet<String> = (0..6)
            .map(|i| j["data"][i]["line"]["dash"].to_string())
            .collect();
        assert_eq!(dashes.len(), 6, "{dashes:?}");
    }

    /// The lock-wait chart's log axis labels decades only: every labelled tick is a
    /// power of 10, the ticks between are there but unlabelled, and at least two decades
    /// are labelled even when the bars span less than one.
    #[test]
    fn a_log_hbar_axis_labels_only_decades() {
        let rows = vec!["a".to_string(), "b".to_string()];
        let series = |y: Vec<f64>| Series {
            name: "v".into(),
            y,
            text: vec![],
        };
        for ys in [vec![0.35, 2.0], vec![25.0, 30.0], vec![0.004, 3000.0]] {
            let f = grouped_hbars("Lock wait", "ms", &rows, vec![series(ys)], true);
            let json: serde_json::Value = serde_json::from_str(&f.plot.to_json()).unwrap();
            let x = &json["layout"]["xaxis"];
            assert_eq!(x["type"], "log");
            let vals = x["tickvals"].as_array().expect("explicit ticks");
            let text = x["ticktext"].as_array().unwrap();
            assert_eq!(vals.len(), text.len());
            let mut decades = 0;
            for (v, t) in vals.iter().zip(text) {
                let (v, t) = (v.as_f64().unwrap(), t.as_str().unwrap());
                let decade = (v.log10() - v.log10().round()).abs() < 1e-9;
                assert_eq!(decade, !t.is_empty(), "tick {v} labelled {t:?}");
                if decade {
                    assert_eq!(t.parse::<f64>().unwrap(), v);
                    decades += 1;
                }
            }
            assert!(decades >= 2, "{decades} decades labelled");
            assert!(vals.len() > decades, "minor ticks drawn");
        }
        // ticks only when asked for a log axis
        let f = grouped_hbars("t", "ms", &rows, vec![series(vec![1.0, 2.0])], false);
        assert!(!f.plot.to_json().contains("tickvals"));
    }
}
