//! SVG charts of a session's request sizes, call by call: what each request
//! would have weighed without compression next to what condense sent, with
//! the compaction threshold and the calls at which condense compacted, so a
//! person sees at a glance what condense did to a session.
//!
//! plotters lays out text (legend boxes, label areas) from font metrics. Its
//! usual source for them, `ttf`, looks fonts up through fontconfig, which a
//! clean CI box does not have; so the metrics come from an ASCII cut of DejaVu
//! Sans built into the binary (`fonts/`, with its licence); other characters,
//! say in a session's name, are measured as its missing-glyph box, about a
//! letter wide. The SVG itself names the generic "sans-serif" family and the
//! viewer draws the text; DejaVu Sans is wider than most sans-serif faces, so
//! the text fits the boxes laid out for it.

use condense_replay::ReplayStats;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context as _, Result, bail};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
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

/// The SVG text itself (what write_svg writes).
pub fn render_svg(series: &Series) -> Result<String> {
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
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: request tokens per model call", series.title),
                (FONT, 22),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x_range.clone(), 0u64..y_max)
            .context("laying out the chart")?;
        chart
            .configure_mesh()
            .x_desc("model call")
            .y_desc("request tokens")
            .y_label_formatter(&|tokens| readable_tokens(*tokens))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            // The fine grid between labelled ticks only clutters the curves.
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
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
                COMPACTION.filled(),
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
    Ok(svg)
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
        // CONDENSE_PLOT_CHECK=/tmp/plot-check.svg cargo test -p condense-cli --lib plot
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
    fn plot_readable_tokens() {
        assert_eq!(readable_tokens(0), "0");
        assert_eq!(readable_tokens(950), "950");
        assert_eq!(readable_tokens(40_000), "40k");
        assert_eq!(readable_tokens(2_500), "2.5k");
        assert_eq!(readable_tokens(2_000_000), "2M");
    }
}
