//! SVG charts. A session's request sizes, call by call: what each request
//! would have weighed without compression next to what condense sent, with
//! the compaction threshold and the calls at which condense compacted, so a
//! person sees at a glance what condense did to a session (the CLI's
//! `--plot`, the README's chart). And spend over time, what was measured next
//! to the estimate without compression, for the proxy's operator page.
//!
//! plotters lays out text (legend boxes, label areas) from font metrics. Its
//! usual source for them, `ttf`, looks fonts up through fontconfig, which a
//! clean CI box does not have; so the metrics come from an ASCII cut of DejaVu
//! Sans built into the binary (`fonts/`, with its licence); other characters,
//! say in a session's name, are measured as its missing-glyph box, about a
//! letter wide. The SVG itself names the generic "sans-serif" family and the
//! viewer draws the text; DejaVu Sans is wider than most sans-serif faces, so
//! the text fits the boxes laid out for it.
//!
//! Every chart is an `<svg>` element with no XML declaration before it, so
//! the same text is a file of its own and a part of an HTML page. A page's
//! script or style finds a compaction's mark by `class="compaction"` and its
//! call by `data-call`: plotters' SVG backend takes no attributes of ours, so
//! the marks are drawn in a colour of their own and then rewritten (see
//! `tag_compactions`), which leaves their place plotters' to compute.

use crate::ReplayStats;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context as _, Result, bail};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

/// One session's request sizes, call by call, for a chart.
pub struct Series {
    /// Shown in the title, e.g. the session file name.
    pub title: String,
    /// The compaction threshold (token_threshold), drawn as a horizontal line.
    pub threshold: u64,
    /// Tokens of each call's request without compression (index = call - 1).
    pub uncompressed: Vec<u64>,
    /// Tokens of each call's request as condense sent it (same length).
    pub condensed: Vec<u64>,
    /// 1-based call numbers at which condense compacted.
    pub compactions: Vec<usize>,
}

const SIZE: (u32, u32) = (960, 540);
const FONT: &str = "sans-serif";
const FONT_DATA: &[u8] = include_bytes!("../fonts/DejaVuSans-ascii.ttf");
const UNCOMPRESSED: RGBColor = RGBColor(230, 85, 13);
const CONDENSED: RGBColor = RGBColor(31, 119, 180);
const THRESHOLD: RGBColor = RGBColor(90, 90, 90);
const COMPACTION: RGBColor = RGBColor(200, 0, 90);
/// What the compaction marks are drawn in before [`tag_compactions`] gives
/// them COMPACTION back: a colour nothing else in a chart is drawn in, which
/// tells them from the legend's sample (drawn in COMPACTION itself).
const COMPACTION_DRAWN: RGBColor = RGBColor(200, 0, 91);

/// A chart's frame, the same for every chart: its caption, margin and
/// label areas.
fn framed<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(caption, (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72);
    builder
}

/// A chart's axes and grid, the same look for every chart.
fn styled<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        // The fine grid between labelled ticks only clutters the curves.
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
}

/// Writes the chart of `series` as SVG to `path`, replacing it atomically
/// (nothing half-written on error). Errors name the path.
pub fn write_svg(path: &Path, series: &Series) -> Result<()> {
    let svg = render_svg(series).with_context(|| format!("charting {}", path.display()))?;
    condense_host::store::write_atomically(path, svg.as_bytes())
        .with_context(|| format!("writing the chart to {}", path.display()))
}

/// The chart of a replay's calls: `stats.per_call`, `threshold` drawn.
pub fn series_of(title: &str, threshold: u32, stats: &ReplayStats) -> Series {
    Series {
        title: title.to_owned(),
        threshold: u64::from(threshold),
        uncompressed: stats.per_call.iter().map(|c| c.uncompressed).collect(),
        condensed: stats.per_call.iter().map(|c| c.sent).collect(),
        compactions: (1..=stats.per_call.len())
            .filter(|&call| stats.per_call[call - 1].compacted)
            .collect(),
    }
}

/// The SVG text itself (what write_svg writes): the same as
/// [`render_svg_inline`], as an SVG file needs no XML declaration either.
pub fn render_svg(series: &Series) -> Result<String> {
    render_svg_inline(series)
}

/// The chart of `series` as an `<svg>` element to put inside an HTML page's
/// `<body>`: no XML declaration; each compaction's mark is a `<circle>` with
/// `class="compaction"` and `data-call="N"` (N its 1-based call), in the
/// order of `series.compactions`; the legend's sample has neither.
pub fn render_svg_inline(series: &Series) -> Result<String> {
    let n = series.uncompressed.len();
    if n != series.condensed.len() {
        bail!(
            "{}: {} uncompressed request sizes but {} condensed ones",
            series.title,
            n,
            series.condensed.len()
        );
    }
    if n == 0 {
        bail!("{}: nothing to plot (no model calls)", series.title);
    }
    if let Some(&call) = series.compactions.iter().find(|&&c| c == 0 || c > n) {
        bail!(
            "{}: compaction at call {call}, outside calls 1..={n}",
            series.title
        );
    }
    register_embedded_font()?;

    // A single call still needs an x range of some width: put it mid-chart.
    let x_range = if n == 1 { 0..2 } else { 1..n as u64 };
    let tallest = |calls: usize| {
        (series.uncompressed[..calls].iter())
            .chain(&series.condensed[..calls])
            .chain([&series.threshold])
            .copied()
            .max()
            .unwrap_or(0)
    };
    // The legend sits in the top left quarter or so of the plot: the calls
    // under it (and the threshold, which spans the chart) get a third more
    // headroom so it never covers them; the rest a tenth. At least 10, as a
    // range must not be empty.
    let under_legend = (n * 3).div_ceil(10).max(1);
    let y_max = (tallest(n) / 10)
        .saturating_mul(11)
        .max((tallest(under_legend) / 3).saturating_mul(4))
        .max(10);
    let points =
        |values: &[u64]| -> Vec<(u64, u64)> { (1..).zip(values.iter().copied()).collect() };
    // Markers show the individual calls of a short session, where the lines
    // alone (or a single point) would hide them.
    let point_size = if n <= 40 { 3 } else { 0 };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).context("drawing the background")?;
        let caption = format!("{}: request tokens per model call", series.title);
        let mut chart = framed(&root, &caption)
            .build_cartesian_2d(x_range.clone(), 0u64..y_max)
            .context("laying out the chart")?;
        styled(&mut chart.configure_mesh())
            .x_desc("model call")
            .y_desc("request tokens")
            .y_label_formatter(&|tokens| readable_tokens(*tokens))
            .draw()
            .context("drawing the axes")?;

        chart
            .draw_series(
                LineSeries::new(points(&series.uncompressed), UNCOMPRESSED.stroke_width(2))
                    .point_size(point_size),
            )
            .context("drawing the uncompressed sizes")?
            .label("no compression")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 24, y)], UNCOMPRESSED.stroke_width(2)));
        chart
            .draw_series(
                LineSeries::new(points(&series.condensed), CONDENSED.stroke_width(2))
                    .point_size(point_size),
            )
            .context("drawing the condensed sizes")?
            .label("condense")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 24, y)], CONDENSED.stroke_width(2)));
        chart
            .draw_series(DashedLineSeries::new(
                [x_range.start, x_range.end].map(|call| (call, series.threshold)),
                8,
                6,
                THRESHOLD.stroke_width(2),
            ))
            .context("drawing the threshold")?
            .label(format!("threshold ({} tokens)", series.threshold))
            .legend(|(x, y)| {
                DashedPathElement::new([(x, y), (x + 24, y)], 8, 4, THRESHOLD.stroke_width(2))
            });
        let marks = series.compactions.iter().map(|&call| {
            Circle::new(
                (call as u64, series.condensed[call - 1]),
                5,
                COMPACTION_DRAWN.filled(),
            )
        });
        chart
            .draw_series(marks)
            .context("drawing the compactions")?
            .label("compaction")
            .legend(|(x, y)| Circle::new((x + 12, y), 5, COMPACTION.filled()));

        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .context("drawing the legend")?;
        root.present().context("finishing the SVG")?;
    }
    tag_compactions(&without_declaration(svg), &series.compactions)
}

/// Gives the compaction marks, the circles drawn in COMPACTION_DRAWN, their
/// attributes and COMPACTION's colour: the n-th such circle is the n-th entry
/// of `compactions`, as plotters draws a series' elements in order. Exact:
/// plotters writes one element per line, a colour as `fill="#RRGGBB"`, and
/// text escaped (a `"` as `&quot;`), so that attribute is found nowhere but
/// in the marks; the count is checked all the same, so that a plotters
/// drawing them otherwise fails here instead of tagging the wrong circles.
fn tag_compactions(svg: &str, compactions: &[usize]) -> Result<String> {
    let drawn = format!(r#"fill="{}""#, svg_color(COMPACTION_DRAWN));
    let shown = format!(r#"fill="{}""#, svg_color(COMPACTION));
    let mut calls = compactions.iter();
    let mut tagged = String::with_capacity(svg.len() + 40 * compactions.len());
    for line in svg.split_inclusive('\n') {
        match line.strip_prefix("<circle ") {
            Some(rest) if rest.contains(&drawn) => {
                let Some(call) = calls.next() else {
                    bail!(
                        "more compaction marks in the SVG than the {} drawn",
                        compactions.len()
                    );
                };
                tagged.push_str(&format!(
                    r#"<circle class="compaction" data-call="{call}" "#
                ));
                tagged.push_str(&rest.replace(&drawn, &shown));
            }
            _ => tagged.push_str(line),
        }
    }
    if calls.next().is_some() {
        bail!(
            "fewer compaction marks in the SVG than the {} drawn",
            compactions.len()
        );
    }
    Ok(tagged)
}

/// How plotters' SVG backend writes a colour.
fn svg_color(RGBColor(r, g, b): RGBColor) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// plotters' SVG backend writes none today; an XML declaration would make
/// the element invalid inside an HTML page, so one a later plotters writes
/// is dropped rather than trusted away.
fn without_declaration(svg: String) -> String {
    match svg
        .strip_prefix("<?xml")
        .and_then(|rest| rest.split_once("?>"))
    {
        Some((_, element)) => element.trim_start().to_owned(),
        None => svg,
    }
}

/// Cumulative spend over time, for a chart: what the calls so far cost as
/// measured, next to what they would have cost sent without compression.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpendSeries {
    /// Shown in the title, e.g. the proxy's name.
    pub title: String,
    /// Oldest first.
    pub points: Vec<SpendPoint>,
}

/// The spend up to one moment; both figures cumulative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpendPoint {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// US dollars spent, as measured on the calls' usage.
    pub measured_usd: f64,
    /// US dollars the same calls would have cost uncompressed (an estimate).
    pub uncompressed_usd: f64,
}

/// The chart of `series` as an `<svg>` element to put inside an HTML page:
/// both cumulative figures over time (UTC, HH:MM), in the replay chart's
/// colours and font. Fewer than two points draw no line, so they render as
/// the frame and title saying "no calls yet". Errors on points out of time
/// order or a figure that is not a finite, non-negative amount.
pub fn render_spend_svg(series: &SpendSeries) -> Result<String> {
    let points = &series.points;
    let amounts = |p: &SpendPoint| [p.measured_usd, p.uncompressed_usd];
    let amount = |usd: &f64| usd.is_finite() && *usd >= 0.0;
    if let Some(p) = (points.iter()).find(|p| !amounts(p).iter().all(amount)) {
        bail!(
            "{}: the spend at {} ms is not an amount in dollars (measured {}, uncompressed {})",
            series.title,
            p.at_ms,
            p.measured_usd,
            p.uncompressed_usd
        );
    }
    if let Some(w) = points.windows(2).find(|w| w[1].at_ms < w[0].at_ms) {
        bail!(
            "{}: the spend at {} ms is listed after the spend at {} ms (oldest first)",
            series.title,
            w[1].at_ms,
            w[0].at_ms
        );
    }
    register_embedded_font()?;
    let caption = format!("{}: spend over time", series.title);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).context("drawing the background")?;
        if let [first, .., last] = &points[..] {
            let (x_range, x_ticks) = time_axis(first.at_ms, last.at_ms);
            // In millionths of a dollar: plotters formats the labels of an
            // integer axis with ticks of ours, not those of an f64 one, and a
            // millionth is far below a pixel.
            let micros = |usd: f64| (usd * 1e6).round() as u64;
            let tallest = |until_ms: u64| {
                (points.iter())
                    .take_while(|p| p.at_ms <= until_ms)
                    .flat_map(amounts)
                    .map(micros)
                    .max()
                    .unwrap_or(0)
            };
            // The legend's headroom, as in the replay chart: a third more
            // over the first three tenths of the time shown, a tenth over
            // the rest; a cent at least, as a range must not be empty.
            let legend_end = x_range.start + (x_range.end - x_range.start) * 3 / 10;
            let y_max = (tallest(u64::MAX) / 10)
                .saturating_mul(11)
                .max((tallest(legend_end) / 3).saturating_mul(4))
                .max(10_000);
            let (step, decimals) = dollar_step(y_max);
            let y_ticks = (0..=y_max / step).map(|i| i * step).collect();
            let line = |usd: fn(&SpendPoint) -> f64| -> Vec<(u64, u64)> {
                points.iter().map(|p| (p.at_ms, micros(usd(p)))).collect()
            };
            let point_size = if points.len() <= 40 { 3 } else { 0 };

            let mut chart = framed(&root, &caption)
                .build_cartesian_2d(
                    x_range.with_key_points(x_ticks),
                    (0..y_max).with_key_points(y_ticks),
                )
                .context("laying out the chart")?;
            styled(&mut chart.configure_mesh())
                .x_desc("time (UTC)")
                .y_desc("spend (USD)")
                .x_label_formatter(&|ms| utc_minute(*ms))
                .y_label_formatter(&|micros| format!("${:.decimals$}", *micros as f64 / 1e6))
                .draw()
                .context("drawing the axes")?;
            chart
                .draw_series(
                    LineSeries::new(line(|p| p.uncompressed_usd), UNCOMPRESSED.stroke_width(2))
                        .point_size(point_size),
                )
                .context("drawing the spend without compression")?
                .label("no compression (estimate)")
                .legend(|(x, y)| {
                    PathElement::new([(x, y), (x + 24, y)], UNCOMPRESSED.stroke_width(2))
                });
            chart
                .draw_series(
                    LineSeries::new(line(|p| p.measured_usd), CONDENSED.stroke_width(2))
                        .point_size(point_size),
                )
                .context("drawing the measured spend")?
                .label("measured")
                .legend(|(x, y)| {
                    PathElement::new([(x, y), (x + 24, y)], CONDENSED.stroke_width(2))
                });
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font((FONT, 14))
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(180, 180, 180))
                .draw()
                .context("drawing the legend")?;
        } else {
            let area = (root.margin(16, 16, 16, 16))
                .titled(&caption, (FONT, 22))
                .context("drawing the title")?;
            let (width, height) = area.dim_in_pixel();
            let style = TextStyle::from((FONT, 18).into_font())
                .color(&THRESHOLD)
                .pos(Pos::new(HPos::Center, VPos::Center));
            area.draw(&Text::new(
                "no calls yet",
                (width as i32 / 2, height as i32 / 2),
                style,
            ))
            .context("drawing the note")?;
        }
        root.present().context("finishing the SVG")?;
    }
    Ok(without_declaration(svg))
}

/// The time axis from `first_ms` to `last_ms`: whole minutes, at least one
/// wide, ticked at whole multiples of a step of minutes (so at most about
/// eight ticks, each a distinct HH:MM, on the round times a clock shows).
fn time_axis(first_ms: u64, last_ms: u64) -> (std::ops::Range<u64>, Vec<u64>) {
    const MINUTE: u64 = 60_000;
    const MOST_TICKS: u64 = 8;
    let start = first_ms / MINUTE * MINUTE;
    let end = last_ms
        .div_ceil(MINUTE)
        .saturating_mul(MINUTE)
        .max(start + MINUTE);
    let minutes = (end - start) / MINUTE;
    let step = [1, 2, 5, 10, 15, 30, 60, 120, 180, 240, 360, 720, 1440]
        .into_iter()
        .find(|step| minutes / step <= MOST_TICKS)
        // Days: HH:MM says nothing more, so whole days that keep the count.
        .unwrap_or_else(|| minutes.div_ceil(1440 * MOST_TICKS) * 1440)
        * MINUTE;
    let ticks = (start.div_ceil(step)..=end / step)
        .map(|i| i * step)
        .collect();
    (start..end, ticks)
}

/// A time in milliseconds since the epoch as its UTC hour and minute.
fn utc_minute(ms: u64) -> String {
    format!("{:02}:{:02}", ms / 3_600_000 % 24, ms / 60_000 % 60)
}

/// The dollar axis's tick step, in millionths of a dollar, for a range up
/// to `y_max` of them (1, 2 or 5 times a power of ten, eight steps at most),
/// and the decimals its labels need: none from a dollar up, cents at least
/// below one.
fn dollar_step(y_max: u64) -> (u64, usize) {
    let mut power = 1;
    loop {
        for step in [power, 2 * power, 5 * power] {
            if y_max / step <= 8 {
                // A step's last digit is power's: 10^-d dollars needs d.
                let decimals = 6usize.saturating_sub(power.ilog10() as usize);
                let decimals = if decimals == 0 { 0 } else { decimals.max(2) };
                return (step, decimals);
            }
        }
        power *= 10;
    }
}

/// plotters keeps fonts in a process-wide table: register ours once, however
/// many charts (or test threads) there are.
fn register_embedded_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FONT, FontStyle::Normal, FONT_DATA).is_ok());
    if !ok {
        bail!("the embedded chart font is not a usable font file");
    }
    Ok(())
}

/// 40000 as "40k", 1500 as "1.5k", 2000000 as "2M": tick labels a person
/// reads without counting zeros.
fn readable_tokens(tokens: u64) -> String {
    let (value, unit) = match tokens {
        t if t >= 1_000_000 => (t as f64 / 1e6, "M"),
        t if t >= 1_000 => (t as f64 / 1e3, "k"),
        t => return t.to_string(),
    };
    let text = format!("{value:.1}");
    format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 300-call session: the uncompressed request grows from 5k to 150k
    /// tokens; condense compacts every 60 calls, back to about 8k.
    fn realistic() -> Series {
        let uncompressed: Vec<u64> = (0..300).map(|i| 5_000 + i * 145_000 / 299).collect();
        let mut condensed = Vec::new();
        let mut compactions = Vec::new();
        let mut base = 0;
        for (i, &tokens) in uncompressed.iter().enumerate() {
            if i > 0 && i % 60 == 0 {
                compactions.push(i + 1);
                base = tokens - 8_000;
            }
            condensed.push(tokens - base);
        }
        Series {
            title: "session-0042.jsonl".into(),
            threshold: 40_000,
            uncompressed,
            condensed,
            compactions,
        }
    }

    #[test]
    fn plot_realistic_session_has_every_label() {
        let svg = render_svg(&realistic()).expect("renders");
        for text in [
            "session-0042.jsonl: request tokens per model call",
            "no compression",
            "condense",
            "threshold (40000 tokens)",
            "compaction",
            "model call",
            "request tokens",
            "40k",
        ] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        assert!(svg.contains(r#"width="960" height="540""#));
        // For a look at the chart itself:
        // CONDENSE_PLOT_CHECK=/tmp/plot-check.svg cargo test -p condense-replay --lib plot
        if let Some(path) = std::env::var_os("CONDENSE_PLOT_CHECK") {
            write_svg(Path::new(&path), &realistic()).expect("writes the check chart");
        }
    }

    #[test]
    fn plot_edge_cases_error_or_render_without_panicking() {
        let mut series = realistic();
        series.condensed.pop();
        let error = render_svg(&series).unwrap_err().to_string();
        assert!(error.contains("300") && error.contains("299"), "{error}");

        let empty = Series {
            title: "empty".into(),
            threshold: 0,
            uncompressed: vec![],
            condensed: vec![],
            compactions: vec![],
        };
        let error = render_svg(&empty).unwrap_err().to_string();
        assert!(error.contains("nothing to plot"), "{error}");

        let one = Series {
            title: "one <&> call".into(),
            threshold: 40_000,
            uncompressed: vec![1_000],
            condensed: vec![1_000],
            compactions: vec![1],
        };
        let svg = render_svg(&one).expect("renders one call");
        assert!(svg.contains("one &lt;&amp;&gt; call"));

        let beyond = Series {
            compactions: vec![2],
            ..one
        };
        let error = render_svg(&beyond).unwrap_err().to_string();
        assert!(error.contains("call 2"), "{error}");
    }

    #[test]
    fn plot_write_svg_replaces_the_file_and_names_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("chart.svg");
        std::fs::write(&path, "old").expect("seed file");
        write_svg(&path, &realistic()).expect("writes");
        let written = std::fs::read_to_string(&path).expect("reads back");
        assert!(written.starts_with("<svg"), "{written:.40}");
        let entries = std::fs::read_dir(dir.path()).expect("lists").count();
        assert_eq!(entries, 1, "a temp file was left behind");

        let missing = dir.path().join("no-such-dir").join("chart.svg");
        let error = format!("{:#}", write_svg(&missing, &realistic()).unwrap_err());
        assert!(error.contains(&missing.display().to_string()), "{error}");
    }

    #[test]
    fn plot_inline_is_an_element_with_each_compaction_marked() {
        let mut series = realistic();
        series.compactions = vec![3, 7];
        let svg = render_svg_inline(&series).expect("renders");
        assert!(
            svg.starts_with("<svg ") && !svg.contains("<?xml"),
            "{svg:.60}"
        );
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(render_svg(&series).expect("renders"), svg);

        let marks: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains(r#"class="compaction""#))
            .collect();
        assert_eq!(marks.len(), 2, "{marks:#?}");
        for (mark, call) in marks.iter().zip([3, 7]) {
            assert!(mark.starts_with("<circle "), "{mark}");
            assert!(mark.contains(&format!(r#"data-call="{call}""#)), "{mark}");
            assert!(mark.contains(r##"fill="#C8005A""##), "{mark}");
        }
        assert_eq!(svg.matches("data-call=").count(), 2);
        // The legend's sample: the same circle, untagged.
        let samples = svg
            .lines()
            .filter(|l| l.starts_with("<circle cx=") && l.contains(r##"fill="#C8005A""##))
            .count();
        assert_eq!(samples, 1, "{svg}");
        assert!(!svg.contains(&svg_color(COMPACTION_DRAWN)));

        // Each mark where plotters put the condensed curve's point of its
        // call: the coordinate mapping is plotters' own, not a copy of it.
        let attribute = |line: &str, name: &str| -> String {
            let value = line.split(&format!(r#" {name}=""#)).nth(1).expect(name);
            value[..value.find('"').expect("closed")].to_owned()
        };
        let condensed = svg
            .lines()
            .find(|l| l.starts_with("<polyline ") && l.contains(r##"stroke="#1F77B4""##))
            .expect("the condensed curve");
        let condensed: Vec<String> = attribute(condensed, "points")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        for (mark, call) in marks.iter().zip([3, 7]) {
            let at = format!("{},{}", attribute(mark, "cx"), attribute(mark, "cy"));
            assert_eq!(at, condensed[call - 1], "call {call}");
        }
    }

    #[test]
    fn plot_compaction_marks_are_tagged_in_their_order_or_not_at_all() {
        let line = |fill: &str| {
            format!(
                r#"<circle cx="1" cy="2" r="5" opacity="1" fill="{fill}" stroke="none" stroke-width="1"/>"#
            )
        };
        let drawn = svg_color(COMPACTION_DRAWN);
        let svg = format!(
            "<svg>\n{}\n{}\n{}\n</svg>\n",
            line(&drawn),
            line("#C8005A"),
            line(&drawn)
        );
        let tagged = tag_compactions(&svg, &[9, 2]).expect("tags");
        let lines: Vec<&str> = tagged.lines().collect();
        assert_eq!(
            lines[1],
            r##"<circle class="compaction" data-call="9" cx="1" cy="2" r="5" opacity="1" fill="#C8005A" stroke="none" stroke-width="1"/>"##
        );
        assert_eq!(lines[2], line("#C8005A"));
        assert!(lines[3].contains(r#"data-call="2""#));
        assert!(tag_compactions(&svg, &[9]).is_err());
        assert!(tag_compactions(&svg, &[9, 2, 4]).is_err());
        assert_eq!(
            without_declaration(format!("<?xml version=\"1.0\"?>\n{svg}")),
            svg
        );
    }

    fn spend(points: usize) -> SpendSeries {
        // A call every 7 minutes from 09:58 UTC on 2024-05-01, each costing
        // 2 cents measured and 5 uncompressed.
        let start = 1_714_557_480_000;
        SpendSeries {
            title: "proxy <local>".into(),
            points: (1..=points)
                .map(|i| SpendPoint {
                    at_ms: start + (i as u64 - 1) * 7 * 60_000,
                    measured_usd: 0.02 * i as f64,
                    uncompressed_usd: 0.05 * i as f64,
                })
                .collect(),
        }
    }

    #[test]
    fn plot_spend_renders_every_size_of_series() {
        for points in [0, 1] {
            let svg = render_spend_svg(&spend(points)).expect("renders");
            assert!(
                svg.starts_with("<svg ") && !svg.contains("<?xml"),
                "{svg:.60}"
            );
            assert!(svg.contains("no calls yet"), "{points} points: {svg}");
            assert!(svg.contains("proxy &lt;local&gt;: spend over time"));
            if let Some(path) = std::env::var_os("CONDENSE_SPEND_CHECK") {
                std::fs::write(format!("{}.{points}", path.display()), &svg).expect("writes");
            }
        }

        let svg = render_spend_svg(&spend(3)).expect("renders");
        assert!(
            svg.starts_with("<svg ") && !svg.contains("<?xml"),
            "{svg:.60}"
        );
        assert!(!svg.contains("no calls yet"));
        for text in [
            "proxy &lt;local&gt;: spend over time",
            "measured",
            "no compression (estimate)",
            "time (UTC)",
            "spend (USD)",
            // 09:58 to 10:12, ticked every other minute.
            "09:58",
            "10:00",
            "10:12",
            "$0.00",
            "$0.10",
        ] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        for colour in [UNCOMPRESSED, CONDENSED] {
            assert!(svg.contains(&svg_color(colour)));
        }
        assert!(svg.contains(r#"width="960" height="540""#));
        if let Some(path) = std::env::var_os("CONDENSE_SPEND_CHECK") {
            std::fs::write(path, &svg).expect("writes the check chart");
        }
    }

    #[test]
    fn plot_spend_refuses_what_it_cannot_draw() {
        let mut backwards = spend(3);
        backwards.points.swap(0, 2);
        let error = render_spend_svg(&backwards).unwrap_err().to_string();
        assert!(error.contains("oldest first"), "{error}");

        let mut nan = spend(3);
        nan.points[1].uncompressed_usd = f64::NAN;
        let error = render_spend_svg(&nan).unwrap_err().to_string();
        assert!(error.contains("not an amount"), "{error}");

        // The same moment twice, and nothing spent: still a chart.
        let mut still = spend(2);
        still.points[1].at_ms = still.points[0].at_ms;
        for p in &mut still.points {
            (p.measured_usd, p.uncompressed_usd) = (0.0, 0.0);
        }
        render_spend_svg(&still).expect("renders");
    }

    #[test]
    fn plot_time_axis_ticks_whole_minutes() {
        let minute = 60_000;
        let (range, ticks) = time_axis(90 * minute + 5_000, 90 * minute + 9_000);
        assert_eq!(range, 90 * minute..91 * minute);
        assert_eq!(ticks, [90 * minute, 91 * minute]);
        let (range, ticks) = time_axis(0, 3 * 60 * minute);
        assert_eq!(range, 0..180 * minute);
        assert_eq!(ticks.len(), 7, "every 30 minutes");
        let labels: Vec<String> = ticks.iter().map(|&t| utc_minute(t)).collect();
        assert_eq!(labels[..3], ["00:00", "00:30", "01:00"]);
        let (_, ticks) = time_axis(0, 40 * 24 * 60 * minute);
        assert!(ticks.len() <= 9, "{}", ticks.len());
    }

    #[test]
    fn plot_dollar_step() {
        assert_eq!(dollar_step(10_000), (2_000, 3));
        assert_eq!(dollar_step(500_000), (100_000, 2));
        assert_eq!(dollar_step(12_000_000), (2_000_000, 0));
        assert_eq!(dollar_step(150_000_000), (20_000_000, 0));
    }

    #[test]
    fn plot_readable_tokens() {
        assert_eq!(readable_tokens(0), "0");
        assert_eq!(readable_tokens(950), "950");
        assert_eq!(readable_tokens(40_000), "40k");
        assert_eq!(readable_tokens(2_500), "2.5k");
        assert_eq!(readable_tokens(2_000_000), "2M");
    }
}
