//! A standalone SVG of a sweep: time and bus bandwidth against message size, both log-log,
//! hand-written so the report needs no plotting crate. Output is deterministic (fixed
//! decimals, no randomness), so plots can be diffed and checked in.

use super::sizes::size_label;
use std::fmt::Write;

/// One curve: a label for the legend and its points `(size bytes, time us, busbw GB/s)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text (escaped on output).
    pub label: String,
    /// `(size in bytes, time in us, busbw in GB/s)`, in sweep order.
    pub points: Vec<(f64, f64, f64)>,
}

const WIDTH: f64 = 980.0;
const LEFT: f64 = 80.0;
const GAP: f64 = 110.0;
const TOP: f64 = 60.0;
const PANEL_W: f64 = 380.0;
const PANEL_H: f64 = 280.0;
const LEGEND_ROW: f64 = 18.0;
const MAX_TICKS: i32 = 9;
const PALETTE: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// A log-scale axis: its range in log10 units and labelled ticks `(value, label)`.
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

/// One panel: where it sits, its titles and which coordinate of a point it plots.
struct Panel {
    x0: f64,
    title: &'static str,
    y_title: &'static str,
    y_of: fn(&(f64, f64, f64)) -> f64,
}

const PANELS: [Panel; 2] = [
    Panel { x0: LEFT, title: "Time", y_title: "time (us)", y_of: |p| p.1 },
    Panel { x0: LEFT + PANEL_W + GAP, title: "Bus bandwidth", y_title: "busbw (GB/s)", y_of: |p| p.2 },
];

/// The two-panel plot (time vs size, busbw vs size; log-log) of `series` under `title`.
///
/// Each series gets one polyline and one marker per point in each panel, in a colour of its
/// own (dashed after ten series), and a legend entry. Points that a log axis cannot show
/// (non-positive or non-finite size or value) are left out of that panel.
pub fn plot_svg(title: &str, series: &[Series]) -> String {
    let legend_top = TOP + PANEL_H + 64.0;
    let height = legend_top + LEGEND_ROW * series.len().max(1) as f64 + 10.0;
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#,
        w = num(WIDTH),
        h = num(height)
    );
    let _ = writeln!(out, r#"<rect x="0" y="0" width="{}" height="{}" fill="white"/>"#, num(WIDTH), num(height));
    let _ = writeln!(
        out,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
        num(WIDTH / 2.0),
        escape(title)
    );
    for panel in &PANELS {
        draw_panel(&mut out, panel, series);
    }
    draw_legend(&mut out, series, legend_top);
    out.push_str("</svg>\n");
    out
}

/// The points of `s` that `panel` can show, as `(size, value)`.
fn visible(panel: &Panel, s: &Series) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .map(|p| (p.0, (panel.y_of)(p)))
        .filter(|&(x, y)| x.is_finite() && x > 0.0 && y.is_finite() && y > 0.0)
        .collect()
}

/// Frame, grid, ticks, titles and curves of one panel.
fn draw_panel(out: &mut String, panel: &Panel, series: &[Series]) {
    let curves: Vec<Vec<(f64, f64)>> = series.iter().map(|s| visible(panel, s)).collect();
    let xs: Vec<f64> = curves.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = curves.iter().flatten().map(|p| p.1).collect();
    let (xa, ya) = (size_axis(&xs), decade_axis(&ys));
    let _ = writeln!(out, "<g>");
    draw_frame(out, panel);
    draw_x_ticks(out, panel, &xa);
    draw_y_ticks(out, panel, &ya);
    if xs.is_empty() {
        let (cx, cy) = (panel.x0 + PANEL_W / 2.0, TOP + PANEL_H / 2.0);
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#888888">no data</text>"##,
            num(cx),
            num(cy)
        );
    }
    for (i, curve) in curves.iter().enumerate() {
        draw_curve(out, panel, &xa, &ya, curve, i);
    }
    let _ = writeln!(out, "</g>");
}

/// The panel's border, title and axis titles.
fn draw_frame(out: &mut String, panel: &Panel) {
    let (x0, mid_x, mid_y) = (panel.x0, panel.x0 + PANEL_W / 2.0, TOP + PANEL_H / 2.0);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333333"/>"##,
        num(x0),
        num(TOP),
        num(PANEL_W),
        num(PANEL_H)
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{}</text>"#,
        num(mid_x),
        num(TOP - 10.0),
        panel.title
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">message size (bytes)</text>"#,
        num(mid_x),
        num(TOP + PANEL_H + 38.0)
    );
    let (tx, ty) = (x0 - 58.0, mid_y);
    let _ = writeln!(
        out,
        r#"<text x="{x}" y="{y}" text-anchor="middle" transform="rotate(-90 {x} {y})">{}</text>"#,
        panel.y_title,
        x = num(tx),
        y = num(ty)
    );
}

/// Vertical grid lines and labels at the size ticks.
fn draw_x_ticks(out: &mut String, panel: &Panel, xa: &Axis) {
    for (v, label) in &xa.ticks {
        let x = map(xa, *v, panel.x0, PANEL_W);
        grid_line(out, x, TOP, x, TOP + PANEL_H);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{label}</text>"#,
            num(x),
            num(TOP + PANEL_H + 16.0)
        );
    }
}

/// Horizontal grid lines and labels at the decade ticks.
fn draw_y_ticks(out: &mut String, panel: &Panel, ya: &Axis) {
    for (v, label) in &ya.ticks {
        let y = TOP + PANEL_H - map(ya, *v, 0.0, PANEL_H);
        grid_line(out, panel.x0, y, panel.x0 + PANEL_W, y);
        let _ =
            writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{label}</text>"#, num(panel.x0 - 6.0), num(y + 4.0));
    }
}

fn grid_line(out: &mut String, x1: f64, y1: f64, x2: f64, y2: f64) {
    let _ = writeln!(
        out,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#dddddd"/>"##,
        num(x1),
        num(y1),
        num(x2),
        num(y2)
    );
}

/// One series in one panel: a polyline (possibly empty) and a marker per point.
fn draw_curve(out: &mut String, panel: &Panel, xa: &Axis, ya: &Axis, curve: &[(f64, f64)], i: usize) {
    let coords: Vec<(f64, f64)> =
        curve.iter().map(|&(x, y)| (map(xa, x, panel.x0, PANEL_W), TOP + PANEL_H - map(ya, y, 0.0, PANEL_H))).collect();
    let points: Vec<String> = coords.iter().map(|&(x, y)| format!("{},{}", num(x), num(y))).collect();
    let _ = writeln!(
        out,
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"{}/>"#,
        points.join(" "),
        colour(i),
        dash(i)
    );
    for (x, y) in coords {
        let _ = writeln!(out, r#"<circle cx="{}" cy="{}" r="3" fill="{}"/>"#, num(x), num(y), colour(i));
    }
}

/// The legend: one swatch line and label per series, below the panels.
fn draw_legend(out: &mut String, series: &[Series], top: f64) {
    let _ = writeln!(out, "<g>");
    for (i, s) in series.iter().enumerate() {
        let y = top + LEGEND_ROW * i as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="3"{}/>"#,
            num(LEFT),
            num(y),
            num(LEFT + 24.0),
            num(y),
            colour(i),
            dash(i)
        );
        let _ = writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, num(LEFT + 32.0), num(y + 4.0), escape(&s.label));
    }
    let _ = writeln!(out, "</g>");
}

/// Position of `v` along an axis drawn from `start` over `len` pixels.
fn map(axis: &Axis, v: f64, start: f64, len: f64) -> f64 {
    start + (v.log10() - axis.lo) / (axis.hi - axis.lo) * len
}

/// The size axis: powers of two around the data (1..1K with no data), at most
/// [`MAX_TICKS`] ticks, labelled `1K`, `64M`, ...
fn size_axis(xs: &[f64]) -> Axis {
    let (lo, hi) = log_bounds(xs, f64::log2, (0, 10));
    let stride = ((hi - lo) + MAX_TICKS - 1) / MAX_TICKS;
    let ticks = (lo..=hi).step_by(stride.max(1) as usize).map(|e| (2f64.powi(e), pow2_label(e))).collect();
    Axis { lo: f64::from(lo) * 2f64.log10(), hi: f64::from(hi) * 2f64.log10(), ticks }
}

/// A value axis: decades around the data (1..10 with no data), at most [`MAX_TICKS`] ticks.
fn decade_axis(ys: &[f64]) -> Axis {
    let (lo, hi) = log_bounds(ys, f64::log10, (0, 1));
    let stride = ((hi - lo) + MAX_TICKS - 1) / MAX_TICKS;
    let ticks = (lo..=hi).step_by(stride.max(1) as usize).map(|e| (10f64.powi(e), decade_label(e))).collect();
    Axis { lo: f64::from(lo), hi: f64::from(hi), ticks }
}

/// Integer exponents enclosing `values` under `log`; widened by one each way when the data
/// sit on a single exponent, and `empty` when there is no data.
fn log_bounds(values: &[f64], log: fn(f64) -> f64, empty: (i32, i32)) -> (i32, i32) {
    let logs = values.iter().map(|&v| log(v));
    let lo = logs.clone().fold(f64::INFINITY, f64::min);
    let hi = logs.fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        return empty;
    }
    let (lo, hi) = (lo.floor() as i32, hi.ceil() as i32);
    if lo == hi { (lo - 1, hi + 1) } else { (lo, hi) }
}

/// `2^e` as a size label (`512`, `4K`), or a decimal fraction below one byte.
fn pow2_label(e: i32) -> String {
    match u32::try_from(e) {
        Ok(k) if k < 64 => size_label(1u64 << k),
        _ => trim_decimals(&format!("{:.6}", 2f64.powi(e))),
    }
}

/// `10^e` written out for `1e-3 ..= 1e5`, else as `1e<e>`.
fn decade_label(e: i32) -> String {
    match e {
        0..=5 => 10u32.pow(e as u32).to_string(),
        -3..=-1 => format!("{:.*}", (-e) as usize, 10f64.powi(e)),
        _ => format!("1e{e}"),
    }
}

fn trim_decimals(s: &str) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
}

/// Fixed two-decimal coordinates keep the output stable.
fn num(v: f64) -> String {
    format!("{v:.2}")
}

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Series beyond the palette repeat its colours dashed, so they stay distinguishable.
fn dash(i: usize) -> &'static str {
    if i < PALETTE.len() { "" } else { r#" stroke-dasharray="6 3""# }
}

/// Escapes the five XML special characters.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every opened tag is closed in order; `<?..?>` and self-closing tags stand alone.
    fn balanced(svg: &str) -> bool {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let Some(len) = rest[start..].find('>') else { return false };
            let tag = &rest[start + 1..start + len];
            rest = &rest[start + len + 1..];
            if tag.starts_with('?') || tag.ends_with('/') {
                continue;
            }
            match tag.strip_prefix('/') {
                Some(name) => {
                    if stack.pop().as_deref() != Some(name) {
                        return false;
                    }
                }
                None => stack.push(tag.split_whitespace().next().unwrap_or_default().to_string()),
            }
        }
        stack.is_empty() && !rest.contains('>')
    }

    /// Every `&` starts one of the entities `escape` writes.
    fn entities_ok(svg: &str) -> bool {
        svg.match_indices('&')
            .all(|(i, _)| ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].iter().any(|e| svg[i..].starts_with(e)))
    }

    fn sweep(label: &str, scale: f64) -> Series {
        let points = (10..=26).map(|e| (2f64.powi(e), scale * 2f64.powi(e - 10), 2f64.powi(e - 20))).collect();
        Series { label: label.to_string(), points }
    }

    fn polyline_points(svg: &str) -> Vec<usize> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline"))
            .map(|l| {
                let attr = l.split("points=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or_default();
                attr.split_whitespace().count()
            })
            .collect()
    }

    #[test]
    fn two_series_plot_is_well_formed() {
        let svg = plot_svg("allreduce <8 ranks>", &[sweep("ring & mesh", 1.0), sweep("two-shot \"fast\"", 0.5)]);
        assert!(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
        assert!(svg.ends_with("</svg>\n"));
        assert!(balanced(&svg));
        assert!(entities_ok(&svg));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert_eq!(polyline_points(&svg), [17, 17, 17, 17]);
        assert_eq!(svg.matches("<circle").count(), 68);
        assert!(svg.contains(">allreduce &lt;8 ranks&gt;</text>"));
        assert!(svg.contains(">ring &amp; mesh</text>"));
        assert!(svg.contains(">two-shot &quot;fast&quot;</text>"));
        assert!(svg.contains(r##"stroke="#1f77b4""##) && svg.contains(r##"stroke="#ff7f0e""##));
        assert!(svg.contains(">time (us)</text>") && svg.contains(">busbw (GB/s)</text>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn axes_have_size_and_decade_labels() {
        let svg = plot_svg("t", &[sweep("a", 1.0)]);
        for label in [">1K<", ">4K<", ">1M<", ">64M<", ">0.001<", ">1<", ">100000<"] {
            assert!(svg.contains(label), "missing {label}");
        }
        assert!(!svg.contains(">2K<"), "1K..64M spans 16 octaves: ticks every other power of two");
    }

    #[test]
    fn non_positive_points_are_skipped() {
        let points = vec![
            (1024.0, 10.0, 1.0),
            (0.0, 5.0, 5.0),
            (2048.0, -1.0, 2.0),
            (4096.0, 20.0, 0.0),
            (8192.0, f64::NAN, f64::INFINITY),
        ];
        let svg = plot_svg("skip", &[Series { label: "s".to_string(), points }]);
        assert!(balanced(&svg));
        assert_eq!(polyline_points(&svg), [2, 2]);
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn single_point_and_empty_inputs() {
        let one = plot_svg("one", &[Series { label: "x".to_string(), points: vec![(4096.0, 10.0, 0.33)] }]);
        assert!(balanced(&one));
        assert_eq!(polyline_points(&one), [1, 1]);
        // A lone 4K point is centred between 2K and 8K; 10 us between 1 and 100.
        assert!(one.contains(r#"<circle cx="270.00" cy="200.00" r="3""#), "{one}");
        assert!(one.contains(">2K<") && one.contains(">8K<"));

        let none = plot_svg("none", &[]);
        assert!(balanced(&none));
        assert_eq!(none.matches("<polyline").count(), 0);
        assert_eq!(none.matches(">no data<").count(), 2);

        let all_bad = plot_svg("bad", &[Series { label: "b".to_string(), points: vec![(0.0, 0.0, 0.0)] }]);
        assert_eq!(polyline_points(&all_bad), [0, 0]);
        assert_eq!(all_bad.matches(">no data<").count(), 2);
    }

    #[test]
    fn output_is_deterministic_and_many_series_stay_distinct() {
        let many: Vec<Series> = (0..12).map(|i| sweep(&format!("s{i}"), 1.0 + f64::from(i))).collect();
        let a = plot_svg("many", &many);
        assert_eq!(a, plot_svg("many", &many));
        assert_eq!(a.matches("<polyline").count(), 24);
        assert_eq!(a.matches("stroke-dasharray").count(), 2 * 3);
    }

    #[test]
    fn labels_and_escaping() {
        assert_eq!(escape(r#"<a & 'b' "c">"#), "&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;");
        assert_eq!(pow2_label(-1), "0.5");
        assert_eq!(pow2_label(30), "1G");
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(3), "1000");
        assert_eq!(decade_label(7), "1e7");
        assert_eq!(decade_label(-4), "1e-4");
    }
}
