//! PNG charts of a report, for the writer to put next to its Markdown: end-to-end latency per
//! benchmark, transaction hold times against the 5 ms target, and writer latency under
//! contention.
//!
//! Every chart is a dot-range per report row (three statistics on one vertical line), grouped by
//! workload and coloured by mode, on a log scale: one report spans 0.1 ms round trips and minute
//! long Stage-1 scans, and bars would make lengths on a log axis look meaningful. The tables stay
//! the exact record; the charts are for reading a run at a glance.

use super::model::Report;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::OnceLock;

/// Stage-2's goal for the longest transaction of a query, drawn on the hold chart.
const HOLD_TARGET_US: f64 = 5_000.0;

/// Where distributions install DejaVu Sans: Debian/Ubuntu (`fonts-dejavu-core`), Fedora, Arch,
/// Alpine.
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// The family plotters asks for by default (axis labels), so one registration covers all text.
const FONT: &str = "sans-serif";

/// Distinct colours for modes, in order of first appearance (enough for every mode and the
/// round trip); red is kept for the target line.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(57, 59, 121),
];
const TARGET: RGBColor = RGBColor(214, 39, 40);
const INK: RGBColor = RGBColor(60, 60, 60);

/// Pixels per mark: a chart grows wider with more rows rather than crowding them.
const MARK_PX: f64 = 56.0;
/// Space between workload groups, in marks.
const GAP: f64 = 0.8;
const HEIGHT: u32 = 720;
const LEGEND_PX: u32 = 230;

/// A rendered chart: its file name and its PNG bytes.
#[derive(Debug, Clone)]
pub struct Png {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Renders `<dataset>-latency.png`, `-hold.png` (when any row has hold times) and
/// `-writers.png` (when contention was measured).
///
/// Fails when no font is installed: the error names the package.
pub fn render(report: &Report) -> anyhow::Result<Vec<Png>> {
    register_font()?;
    let dataset = &report.environment.dataset;
    let mut charts = Vec::new();
    for (name, chart) in [
        ("latency", latency(report)),
        ("hold", hold(report)),
        ("writers", writers(report)),
        ("live", live(report)),
    ] {
        if chart.marks.is_empty() {
            continue;
        }
        charts.push(Png {
            name: format!("{dataset}-{name}.png"),
            bytes: chart.render()?,
        });
    }
    Ok(charts)
}

/// Makes DejaVu Sans plotters' sans-serif font, once per process (ab_glyph reads no system
/// fonts). Its bytes must live for `'static`, so the file is read once and leaked (~750 KB).
pub(crate) fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    let register = || {
        let (path, bytes) = find_font(&FONT_PATHS)?;
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(FONT, FontStyle::Normal, bytes)
            .map_err(|_| format!("{path} is not a usable font"))
    };
    REGISTERED
        .get_or_init(register)
        .clone()
        .map_err(anyhow::Error::msg)
}

/// The first of `paths` that can be read, or an error saying what to install.
fn find_font<'p>(paths: &[&'p str]) -> Result<(&'p str, Vec<u8>), String> {
    paths
        .iter()
        .find_map(|p| Some((*p, std::fs::read(p).ok()?)))
        .ok_or_else(|| {
            format!(
                "charts need the DejaVu Sans font, found at none of {}; \
                 install it (Debian/Ubuntu: apt-get install fonts-dejavu-core)",
                paths.join(", ")
            )
        })
}

/// One report row: three statistics (µs, ascending) drawn on one vertical line.
struct Mark<'a> {
    group: &'a str,
    series: &'a str,
    values: [f64; 3],
}

struct Chart<'a> {
    title: String,
    subtitle: String,
    y_desc: &'static str,
    /// What the colours tell apart, and every series in colour order: the same for all charts of
    /// a report, so that a mode keeps its colour when a chart lacks some modes.
    series_desc: &'static str,
    series: Vec<&'a str>,
    /// Names of a mark's three values, e.g. p50, p90, p99.
    stats: [&'static str; 3],
    /// A horizontal line, µs.
    target: Option<f64>,
    marks: Vec<Mark<'a>>,
}

/// Dataset size and server, under every title: charts get copied out of their report.
fn subtitle(report: &Report) -> String {
    let e = &report.environment;
    format!(
        "{} vertices · {} edges · direction {} · {} · {} cores",
        thousands(e.vertices),
        thousands(e.edges),
        e.direction,
        e.server_kind,
        e.cores
    )
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Round-trip rows have no mode ("-").
fn series_name(mode: &str) -> &str {
    if mode == "-" { "round trip" } else { mode }
}

/// Modes in order of first appearance.
fn modes(report: &Report) -> Vec<&str> {
    let mut modes = Vec::new();
    for s in &report.results {
        let mode = series_name(&s.mode);
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    modes
}

fn latency(report: &Report) -> Chart<'_> {
    Chart {
        title: format!(
            "{}: end-to-end latency per benchmark",
            report.environment.dataset
        ),
        subtitle: subtitle(report),
        y_desc: "latency per call (log scale)",
        series_desc: "mode",
        series: modes(report),
        stats: ["p50", "p90", "p99"],
        target: None,
        marks: report
            .results
            .iter()
            .filter(|s| s.e2e.count > 0)
            .map(|s| Mark {
                group: &s.workload,
                series: series_name(&s.mode),
                values: [s.e2e.p50, s.e2e.p90, s.e2e.p99],
            })
            .collect(),
    }
}

fn hold(report: &Report) -> Chart<'_> {
    Chart {
        title: format!(
            "{}: longest transaction of each query",
            report.environment.dataset
        ),
        subtitle: subtitle(report),
        y_desc: "transaction hold time (log scale)",
        series_desc: "mode",
        series: modes(report),
        stats: ["p50", "p99", "max"],
        target: Some(HOLD_TARGET_US),
        marks: report
            .results
            .iter()
            .filter(|s| s.max_hold.count > 0)
            .map(|s| Mark {
                group: &s.workload,
                series: series_name(&s.mode),
                values: [s.max_hold.p50, s.max_hold.p99, s.max_hold.max],
            })
            .collect(),
    }
}

const IDLE: &str = "idle";
const BUSY: &str = "during traversals";

fn writers(report: &Report) -> Chart<'_> {
    Chart {
        title: format!(
            "{}: single-edge insert from another client, idle vs during a traversal loop",
            report.environment.dataset
        ),
        subtitle: subtitle(report),
        y_desc: "writer latency (log scale)",
        series_desc: "writer ran",
        series: vec![IDLE, BUSY],
        stats: ["p50", "p99", "max"],
        target: None,
        marks: report
            .contention
            .iter()
            .flat_map(|c| {
                [(IDLE, &c.idle), (BUSY, &c.busy)].map(|(series, p)| Mark {
                    group: &c.traversal,
                    series,
                    values: [p.p50, p.p99, p.max],
                })
            })
            .collect(),
    }
}

/// Write → subscriber latency, by confirmed-reads setting.
fn live(report: &Report) -> Chart<'_> {
    Chart {
        title: format!(
            "{}: single-edge insert on one WebSocket until a subscriber on another sees it",
            report.environment.dataset
        ),
        subtitle: subtitle(report),
        y_desc: "write → subscriber latency (log scale)",
        series_desc: "subscriber",
        series: vec![CONFIRMED, UNCONFIRMED],
        stats: ["p50", "p99", "max"],
        // The p50 target.
        target: Some(1_000.0),
        marks: report
            .propagation
            .iter()
            .map(|p| Mark {
                group: "write → subscriber",
                series: if p.confirmed_reads {
                    CONFIRMED
                } else {
                    UNCONFIRMED
                },
                values: [p.latency.p50, p.latency.p99, p.latency.max],
            })
            .collect(),
    }
}

const CONFIRMED: &str = "confirmed reads on";
const UNCONFIRMED: &str = "confirmed reads off";

/// Axis ticks: "100 µs", "1 ms", "20 s".
fn tick(ms: f64) -> String {
    let (v, unit) = if ms >= 1e3 {
        (ms / 1e3, "s")
    } else if ms >= 1.0 {
        (ms, "ms")
    } else {
        (ms * 1e3, "µs")
    };
    format!("{} {unit}", (v * 1e3).round() / 1e3)
}

/// Decades around `values` (ms), so that every tick is a round number.
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if hi == 0.0 {
        return (0.01, 1.0);
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    (lo, if hi > lo { hi } else { lo * 10.0 })
}

/// A little room beyond the decades, so that marks on them show whole and the floor is labelled.
const HEADROOM: f64 = 1.3;

impl Chart<'_> {
    fn render(&self) -> anyhow::Result<Vec<u8>> {
        // Marks left to right, workload by workload in order of first appearance.
        let mut groups: Vec<(&str, Vec<&Mark>)> = Vec::new();
        for m in &self.marks {
            match groups.iter_mut().find(|(g, _)| *g == m.group) {
                Some((_, marks)) => marks.push(m),
                None => groups.push((m.group, vec![m])),
            }
        }
        let colour = |s: &str| {
            let i = self.series.iter().position(|x| *x == s).unwrap_or(0);
            PALETTE[i % PALETTE.len()]
        };
        // x of each group's marks, and the x span each group's label may use.
        let mut placed = Vec::new();
        let mut x = 0.0;
        for (name, marks) in &groups {
            let start = x;
            let xs: Vec<(f64, &Mark)> = marks
                .iter()
                .map(|m| {
                    x += 1.0;
                    (x - 0.5, *m)
                })
                .collect();
            placed.push((*name, start, x, xs));
            x += GAP;
        }
        let x_end = x - GAP;

        let (lo, hi) = decades(
            self.marks
                .iter()
                .flat_map(|m| m.values)
                .chain(self.target)
                .map(|us| us / 1e3),
        );
        // Zero (e.g. a hold too short to measure) has no place on a log axis: draw it on the axis,
        // below the lowest labelled decade, so that it does not read as that value.
        let floor = lo / HEADROOM;
        let y = |us: f64| (us / 1e3).max(floor);

        let width = 120 + LEGEND_PX + ((x_end * MARK_PX) as u32).max(640);
        let mut rgb = vec![0u8; width as usize * HEIGHT as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (width, HEIGHT)).into_drawing_area();
            root.fill(&WHITE)?;
            root.draw(&Text::new(
                self.title.as_str(),
                (20, 14),
                (FONT, 26).into_font().color(&BLACK),
            ))?;
            root.draw(&Text::new(
                self.subtitle.as_str(),
                (20, 50),
                (FONT, 16).into_font().color(&INK),
            ))?;
            let (plot_area, legend_area) = root
                .margin(80, 0, 0, 0)
                .split_horizontally(width - LEGEND_PX);
            let mut chart = ChartBuilder::on(&plot_area)
                .margin_left(10)
                .margin_right(10)
                .margin_top(10)
                .x_label_area_size(70)
                .y_label_area_size(100)
                .build_cartesian_2d(-0.2..x_end + 0.2, (floor..hi * HEADROOM).log_scale())?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_desc(self.y_desc)
                .y_label_formatter(&|v| tick(*v))
                .label_style((FONT, 16))
                .axis_desc_style((FONT, 17))
                .draw()?;

            // Workload labels under the axis, word-wrapped when wider than their group.
            let label = TextStyle::from((FONT, 17).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            for (i, (name, start, end, _)) in placed.iter().enumerate() {
                if i > 0 {
                    let sep = start - GAP / 2.0;
                    chart.draw_series([PathElement::new(
                        [(sep, floor), (sep, hi * HEADROOM)],
                        BLACK.mix(0.15),
                    )])?;
                }
                let (left, top) = chart.backend_coord(&((start + end) / 2.0, floor));
                let room = (end - start + GAP) * MARK_PX;
                let lines: Vec<&str> = if f64::from(root.estimate_text_size(name, &label)?.0) > room
                {
                    name.split(' ').collect()
                } else {
                    vec![name]
                };
                for (row, line) in lines.iter().enumerate() {
                    root.draw(&Text::new(
                        *line,
                        (left, top + 10 + 20 * row as i32),
                        label.clone(),
                    ))?;
                }
            }

            if let Some(us) = self.target {
                chart.draw_series([PathElement::new(
                    [(-0.2, y(us)), (x_end + 0.2, y(us))],
                    TARGET.stroke_width(2),
                )])?;
                let (px, py) = chart.backend_coord(&(-0.2, y(us)));
                root.draw(&Text::new(
                    format!("{} target", tick(us / 1e3)),
                    (px + 6, py - 22),
                    (FONT, 16).into_font().color(&TARGET),
                ))?;
            }

            for (_, _, _, xs) in &placed {
                for (x, m) in xs {
                    let c = colour(m.series);
                    let [a, b, top] = m.values.map(y);
                    chart
                        .draw_series([PathElement::new([(*x, a), (*x, top)], c.stroke_width(2))])?;
                    chart.draw_series([EmptyElement::at((*x, b))
                        + PathElement::new([(-10, 0), (10, 0)], c.stroke_width(3))])?;
                    chart.draw_series([TriangleMarker::new((*x, top), 7, c.filled())])?;
                    chart.draw_series([Circle::new((*x, a), 6, c.filled())])?;
                }
            }

            self.legend(&legend_area, colour)?;
            root.present()?;
        }
        encode_png((width, HEIGHT), &rgb)
    }

    /// Colours of the series shown, then the marker of each statistic.
    fn legend(
        &self,
        area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
        colour: impl Fn(&str) -> RGBColor,
    ) -> anyhow::Result<()> {
        let text = |s: &str, y: i32| Text::new(s.to_string(), (34, y - 9), (FONT, 16).into_font());
        let heading = |s: &str, y: i32| {
            Text::new(
                s.to_string(),
                (10, y - 9),
                (FONT, 15).into_font().color(&INK),
            )
        };
        let mut y = 30;
        area.draw(&heading(self.series_desc, y))?;
        y += 26;
        for s in &self.series {
            if self.marks.iter().any(|m| m.series == *s) {
                area.draw(&Circle::new((18, y), 6, colour(s).filled()))?;
                area.draw(&text(s, y))?;
                y += 26;
            }
        }
        y += 14;
        area.draw(&heading("statistic", y))?;
        y += 26;
        let [a, b, c] = self.stats;
        area.draw(&Circle::new((18, y), 6, INK.filled()))?;
        area.draw(&text(a, y))?;
        y += 26;
        area.draw(&PathElement::new([(11, y), (25, y)], INK.stroke_width(3)))?;
        area.draw(&text(b, y))?;
        y += 26;
        area.draw(&TriangleMarker::new((18, y), 7, INK.filled()))?;
        area.draw(&text(c, y))?;
        Ok(())
    }
}

/// Encodes with `png` directly: plotters' `bitmap_encoder` would bring the `image` crate with
/// JPEG and BMP codecs for the same result.
pub(crate) fn encode_png((width, height): (u32, u32), rgb: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Contention;
    use crate::report::model::fixtures::{percentiles, report, row};

    /// Checks the bytes are a complete, decodable PNG of a plausible size with something drawn.
    fn assert_png(png: &Png) {
        let name = &png.name;
        assert_eq!(&png.bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        assert!(
            png.bytes.len() > 10_000,
            "{name}: {} bytes",
            png.bytes.len()
        );
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png.bytes))
            .read_info()
            .unwrap();
        let (width, height) = (reader.info().width, reader.info().height);
        assert_eq!(height, HEIGHT);
        assert!((640 + LEGEND_PX..4000).contains(&width), "width {width}");
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut rgb).unwrap();
        let inked = rgb.chunks(3).filter(|px| px != &[255, 255, 255]).count();
        assert!(inked > 10_000, "{name}: {inked} non-white pixels");
    }

    fn names(charts: &[Png]) -> Vec<&str> {
        charts.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn a_full_report_gets_three_charts() {
        let results = vec![
            row("empty procedure", "-", [600.0, 700.0, 850.0, 3e3], None),
            row(
                "bfs",
                "stage2",
                [58e6, 64e6, 65e6, 65e6],
                Some([4e3, 6e3, 6e3, 6.1e3]),
            ),
            row(
                "bfs",
                "stage1",
                [24e6, 26e6, 26e6, 26e6],
                Some([24e6, 26e6, 26e6, 26e6]),
            ),
            row("bfs", "stage1-reducer", [25e6, 26e6, 26e6, 26e6], None),
            row("path", "neo4j", [120.0, 300.0, 900.0, 1e3], None),
        ];
        let contention = vec![Contention {
            traversal: "Stage-2 full BFS loop".into(),
            idle: percentiles(100, [600.0, 800.0, 950.0, 1e3]),
            busy: percentiles(100, [3e3, 5e3, 6.7e3, 7.2e3]),
            traversals: 1,
        }];
        let charts = render(&report(results, contention)).unwrap();
        assert_eq!(
            names(&charts),
            ["tiny-latency.png", "tiny-hold.png", "tiny-writers.png"]
        );
        charts.iter().for_each(assert_png);
    }

    #[test]
    fn without_holds_or_contention_only_latency_is_charted() {
        let results = vec![row("neighbors", "postgres", [900.0, 1e3, 2e3, 3e3], None)];
        let charts = render(&report(results, vec![])).unwrap();
        assert_eq!(names(&charts), ["tiny-latency.png"]);
        assert_png(&charts[0]);
        assert!(render(&report(vec![], vec![])).unwrap().is_empty());
    }

    #[test]
    fn zeros_are_drawn_on_the_axis_of_a_log_scale() {
        let results = vec![row("path", "stage2", [0.0; 4], Some([0.0; 4]))];
        let charts = render(&report(results, vec![])).unwrap();
        assert_eq!(charts.len(), 2);
        charts.iter().for_each(assert_png);
        assert_eq!(decades([0.0].into_iter()), (0.01, 1.0));
        assert_eq!(decades([0.25, 0.0, 30.0].into_iter()), (0.1, 100.0));
        assert_eq!(decades([1.0].into_iter()), (1.0, 10.0));
    }

    #[test]
    fn a_missing_font_names_the_package_to_install() {
        let err = find_font(&["/nonexistent/DejaVuSans.ttf"]).unwrap_err();
        assert!(err.contains("fonts-dejavu-core"), "{err}");
    }

    #[test]
    fn labels() {
        assert_eq!(tick(0.1), "100 µs");
        assert_eq!(tick(1.0000000000000002), "1 ms");
        assert_eq!(tick(20_000.0), "20 s");
        assert_eq!(thousands(34_681_189), "34,681,189");
        assert_eq!(thousands(999), "999");
    }
}
