//! The ksweep figure: two panels, median time against k and a memory-traffic proxy against k
//! (LLC loads/s where hardware counters ran, else the engine's edges scanned/s, and the axis
//! says which), k on a log2 axis, one line per dataset, auto's run marked with a cross at the
//! k it chose. Drawn as SVG with plotters; rasterized to PNG with resvg when the system has a
//! font for the labels (an SVG carries its text as text, a PNG needs glyphs).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::compare::format_number;
use crate::error::{BenchError, BenchResult};
use crate::report::{KSetting, Report, Run};

/// The figure's size in pixels.
const WIDTH_PX: u32 = 1280;
const HEIGHT_PX: u32 = 520;

/// One line of a panel.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    dataset: String,
    /// (log2 k, value) for each fixed k, in k order.
    points: Vec<(f64, f64)>,
    /// (log2 of the k auto chose, auto's value), when the engine reported its k.
    auto: Option<(f64, f64)>,
}

/// One panel: a title, a y-axis label and lines.
#[derive(Clone, Debug, PartialEq)]
struct Panel {
    title: String,
    y_label: String,
    lines: Vec<Line>,
}

/// Draws the ksweep figure of `report` at `svg_path` (and a PNG beside it when a font exists);
/// returns one line per file written or left out.
pub fn draw_ksweep(report: &Report, svg_path: &Path) -> BenchResult<Vec<String>> {
    if report.runs.is_empty() {
        return Err(BenchError::Plot("the report has no ksweep runs".into()));
    }
    let (time, traffic) = panels(report);
    let svg = render_svg(&time, &traffic)?;
    std::fs::write(svg_path, &svg).map_err(|e| BenchError::io(svg_path, &e))?;
    let mut notes = vec![format!("plot: wrote {}", svg_path.display())];
    let png_path = svg_path.with_extension("png");
    match rasterize(&svg, &png_path)? {
        Some(font) => notes.push(format!(
            "plot: wrote {} (labels in {font})",
            png_path.display()
        )),
        None => notes.push(
            "plot: no PNG: rasterizing the labels needs a TrueType/OpenType font and none was \
             found in the system font folders; the SVG is complete"
                .into(),
        ),
    }
    Ok(notes)
}

/// The time panel and the traffic panel.
fn panels(report: &Report) -> (Panel, Panel) {
    let hardware = report
        .runs
        .iter()
        .all(|r| r.figures.llc_loads_per_s.is_some());
    let time = Panel {
        title: "sp64: median time vs k".into(),
        y_label: "median time (s)".into(),
        lines: lines(&report.runs, |run| {
            run.figures.time_s.as_ref().map(|s| s.median)
        }),
    };
    let traffic = if hardware {
        Panel {
            title: "memory traffic: LLC loads/s (hardware counters)".into(),
            y_label: "LLC loads per second".into(),
            lines: lines(&report.runs, |run| {
                run.figures.llc_loads_per_s.as_ref().map(|s| s.median)
            }),
        }
    } else {
        Panel {
            title: "traffic proxy: edges scanned/s (software; no hardware counters)".into(),
            y_label: "edges scanned per second (software proxy)".into(),
            lines: lines(&report.runs, |run| {
                run.figures.edges_per_s.as_ref().map(|s| s.median)
            }),
        }
    };
    (time, traffic)
}

/// One line per dataset (in run order) of the values `value` reads.
fn lines(runs: &[Run], value: impl Fn(&Run) -> Option<f64>) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for run in runs {
        let index = match lines.iter().position(|l| l.dataset == run.dataset) {
            Some(index) => index,
            None => {
                lines.push(Line {
                    dataset: run.dataset.clone(),
                    points: Vec::new(),
                    auto: None,
                });
                lines.len() - 1
            }
        };
        let Some(value) = value(run) else { continue };
        match run.k {
            KSetting::Fixed(k) => lines[index].points.push((log2(k), value)),
            KSetting::Auto => lines[index].auto = run.k_chosen.map(|k| (log2(k), value)),
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

fn log2(k: usize) -> f64 {
    assert!(k > 0, "k is positive");
    (k as f64).log2()
}

fn plot_error(error: impl std::fmt::Display) -> BenchError {
    BenchError::Plot(error.to_string())
}

fn render_svg(time: &Panel, traffic: &Panel) -> BenchResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (left, right) = root.split_horizontally(WIDTH_PX / 2);
        draw_panel(&left, time)?;
        draw_panel(&right, traffic)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// The x range (log2 k) covering every point, padded; at least one octave wide.
fn x_range(panel: &Panel) -> (f64, f64) {
    let xs = panel
        .lines
        .iter()
        .flat_map(|l| l.points.iter().chain(l.auto.iter()).map(|p| p.0));
    let (low, high) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    if !low.is_finite() {
        return (-0.5, 1.5);
    }
    (low - 0.5, high.max(low + 1.0) + 0.5)
}

/// The k at an integer log2 position; nothing between octaves.
fn k_label(log2_k: f64) -> String {
    if (log2_k - log2_k.round()).abs() < 1e-9 {
        format!("{}", 2f64.powf(log2_k.round()))
    } else {
        String::new()
    }
}

/// The y range top: a third above the highest point, leaving room for the legend.
fn y_max(panel: &Panel) -> f64 {
    let high = panel
        .lines
        .iter()
        .flat_map(|l| l.points.iter().chain(l.auto.iter()).map(|p| p.1))
        .fold(0.0f64, f64::max);
    if high > 0.0 {
        high * 1.35
    } else {
        1.0
    }
}

fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> BenchResult<()> {
    let (x_low, x_high) = x_range(panel);
    // One label per octave: plotters picks steps of 1, 2 or 5 within the asked-for count.
    let octaves = (x_high.floor() - x_low.ceil()) as usize + 1;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(78)
        .build_cartesian_2d(x_low..x_high, 0.0..y_max(panel))
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("k (max active sources), log2 axis")
        .y_desc(&panel.y_label)
        .x_labels(octaves + 1)
        .x_label_formatter(&|x| k_label(*x))
        .y_label_formatter(&|y| format_number(*y))
        .draw()
        .map_err(plot_error)?;
    for (index, line) in panel.lines.iter().enumerate() {
        draw_line(&mut chart, index, line)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_line(chart: &mut Chart<'_, '_>, index: usize, line: &Line) -> BenchResult<()> {
    let color = Palette99::pick(index).to_rgba();
    chart
        .draw_series(LineSeries::new(line.points.clone(), color.stroke_width(2)))
        .map_err(plot_error)?
        .label(line.dataset.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    chart
        .draw_series(
            line.points
                .iter()
                .map(|&p| Circle::new(p, 3, color.filled())),
        )
        .map_err(plot_error)?;
    if let Some(auto) = line.auto {
        chart
            .draw_series(std::iter::once(Cross::new(auto, 7, color.stroke_width(3))))
            .map_err(plot_error)?
            .label(format!("{}: auto (chosen k)", line.dataset))
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
    }
    Ok(())
}

/// Rasterizes the SVG to `png_path` with the system's fonts; `None` (nothing written) when the
/// system has no font. Returns the font family used for labels.
fn rasterize(svg: &str, png_path: &PathBuf) -> BenchResult<Option<String>> {
    let mut options = resvg::usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    let Some(family) = sans_family(fonts) else {
        return Ok(None);
    };
    fonts.set_sans_serif_family(family.clone());
    options.font_family.clone_from(&family);
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(plot_error)?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| BenchError::Plot("the figure has no area".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.save_png(png_path).map_err(plot_error)?;
    Ok(Some(family))
}

/// A sans-serif family the system has (preferring DejaVu Sans, then any "Sans"), else any.
fn sans_family(fonts: &resvg::usvg::fontdb::Database) -> Option<String> {
    let families: Vec<&str> = fonts
        .faces()
        .filter_map(|face| face.families.first().map(|(name, _)| name.as_str()))
        .collect();
    let preferred = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"];
    preferred
        .iter()
        .find(|p| families.contains(p))
        .map(|p| (*p).to_string())
        .or_else(|| {
            families
                .iter()
                .find(|f| f.contains("Sans"))
                .map(|f| (*f).to_string())
        })
        .or_else(|| families.first().map(|f| (*f).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample_report;
    use crate::report::tests::sample_run as run;

    fn sweep() -> Report {
        let mut report = sample_report(&[1.0]);
        report.workload = "ksweep".into();
        report.runs = vec![
            run("dense", KSetting::Fixed(1), Some(1), 4.0),
            run("dense", KSetting::Fixed(4), Some(4), 2.0),
            run("dense", KSetting::Fixed(16), Some(16), 3.0),
            run("dense", KSetting::Auto, Some(4), 2.1),
            run("sparse", KSetting::Fixed(1), Some(1), 8.0),
            run("sparse", KSetting::Fixed(16), Some(16), 1.0),
            run("sparse", KSetting::Auto, None, 1.5),
        ];
        report
    }

    #[test]
    fn lines_group_by_dataset_with_auto_at_its_chosen_k() {
        let (time, traffic) = panels(&sweep());
        assert_eq!(time.lines.len(), 2);
        assert_eq!(
            time.lines[0].points,
            vec![(0.0, 4.0), (2.0, 2.0), (4.0, 3.0)]
        );
        assert_eq!(time.lines[0].auto, Some((2.0, 2.1)));
        assert_eq!(time.lines[1].auto, None, "no reported k, no auto mark");
        assert!(traffic.y_label.contains("software proxy"));
        assert_eq!(x_range(&time), (-0.5, 4.5));
    }

    #[test]
    fn draws_svg_and_png_when_a_font_exists() {
        let dir = tempfile::tempdir().unwrap();
        let svg_path = dir.path().join("ksweep.svg");
        let notes = draw_ksweep(&sweep(), &svg_path).unwrap();
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..60.min(svg.len())]);
        assert!(svg.contains("dense") && svg.contains("sparse"));
        assert!(svg.contains("edges scanned per second (software proxy)"));
        let png = svg_path.with_extension("png");
        assert_eq!(
            png.exists(),
            notes.iter().any(|n| n.contains(".png")),
            "{notes:?}"
        );
        if png.exists() {
            let bytes = std::fs::read(png).unwrap();
            assert_eq!(&bytes[1..4], b"PNG");
        }
    }

    #[test]
    fn an_empty_sweep_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let report = sample_report(&[1.0]);
        assert!(draw_ksweep(&report, &dir.path().join("x.svg")).is_err());
    }
}
