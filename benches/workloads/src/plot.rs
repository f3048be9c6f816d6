//! Hand-written SVG charts for the report: grouped horizontal bars and line charts, both on
//! logarithmic axes.

use std::fmt::Write as _;

/// A series of a chart.
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// One value per category (bars) or x position (lines); `None` leaves a gap.
    pub values: Vec<Option<f64>>,
}

/// Colours for up to ten series.
pub const PALETTE: [&str; 10] = [
    "#1f3a68", "#6b8fc7", "#c0504d", "#9bbb59", "#8064a2", "#4bacc6", "#f79646", "#7f7f7f",
    "#d4a017", "#2e8b57",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A value with an SI-style suffix, for axis labels.
pub fn short(v: f64) -> String {
    let (scaled, suffix) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if scaled >= 10.0 || scaled == scaled.trunc() {
        format!("{scaled:.0}{suffix}")
    } else {
        format!("{scaled:.1}{suffix}")
    }
}

struct LogAxis {
    lo: f64,
    hi: f64,
}

impl LogAxis {
    fn fit(values: impl Iterator<Item = f64>) -> LogAxis {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return LogAxis { lo: 1.0, hi: 10.0 };
        }
        LogAxis {
            lo: 10f64.powf(lo.log10().floor()),
            hi: 10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
        }
    }

    /// Position in 0..=1.
    fn pos(&self, v: f64) -> f64 {
        if v <= 0.0 {
            return 0.0;
        }
        ((v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())).clamp(0.0, 1.0)
    }

    fn decades(&self) -> Vec<f64> {
        let mut out = Vec::new();
        let mut v = self.lo;
        while v <= self.hi * 1.0001 {
            out.push(v);
            v *= 10.0;
        }
        out
    }
}

/// Where each legend entry goes: entries flow left to right by their text width and wrap.
fn legend_layout(series: &[Series<'_>], width: f64) -> (Vec<(f64, f64)>, f64) {
    let mut positions = Vec::with_capacity(series.len());
    let (mut x, mut row) = (0.0, 0usize);
    for s in series {
        let w = 14.0 + 6.5 * s.label.chars().count() as f64 + 18.0;
        if x > 0.0 && x + w > width {
            x = 0.0;
            row += 1;
        }
        positions.push((x, row as f64 * 16.0));
        x += w;
    }
    let height = if series.is_empty() {
        0.0
    } else {
        (row + 1) as f64 * 16.0
    };
    (positions, height)
}

fn legend(svg: &mut String, series: &[Series<'_>], x: f64, y: f64, width: f64) {
    let (positions, _) = legend_layout(series, width);
    for (s, (dx, dy)) in series.iter().zip(positions) {
        let (lx, ly) = (x + dx, y + dy);
        let _ = write!(
            svg,
            r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            ly - 9.0,
            s.color,
            lx + 14.0,
            ly,
            esc(s.label)
        );
    }
}

fn legend_height(series: &[Series<'_>], width: f64) -> f64 {
    legend_layout(series, width).1
}

/// Horizontal grouped bars on a log axis: one group per category, one bar per series.
pub fn grouped_bars(title: &str, unit: &str, categories: &[&str], series: &[Series<'_>]) -> String {
    let width = 900.0;
    let left = 150.0;
    let right = 30.0;
    let bar = 5.0;
    let group = bar * series.len() as f64 + 8.0;
    let top = 40.0 + legend_height(series, width - left - right);
    let plot_h = group * categories.len() as f64;
    let height = top + plot_h + 40.0;
    let plot_w = width - left - right;
    let axis = LogAxis::fit(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied()),
    );
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0}" viewBox="0 0 {width} {height:.0}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{left}" y="18" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    legend(&mut svg, series, left, 36.0, plot_w);
    for d in axis.decades() {
        let x = left + axis.pos(d) * plot_w;
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            top + plot_h,
            top + plot_h + 14.0,
            short(d)
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{} (log scale)</text>"#,
        left + plot_w / 2.0,
        top + plot_h + 30.0,
        esc(unit)
    );
    for (ci, cat) in categories.iter().enumerate() {
        let gy = top + ci as f64 * group;
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 6.0,
            gy + group / 2.0 + 3.0,
            esc(cat)
        );
        for (si, s) in series.iter().enumerate() {
            if let Some(Some(v)) = s.values.get(ci) {
                let w = (axis.pos(*v) * plot_w).max(1.0);
                let _ = write!(
                    svg,
                    r#"<rect x="{left}" y="{:.1}" width="{w:.1}" height="{bar}" fill="{}"><title>{} {}: {}</title></rect>"#,
                    gy + 4.0 + si as f64 * bar,
                    s.color,
                    esc(cat),
                    esc(s.label),
                    short(*v)
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// A line chart with logarithmic x and y axes.
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    xs: &[(f64, String)],
    series: &[Series<'_>],
) -> String {
    let width = 720.0;
    let height = 420.0;
    let left = 70.0;
    let right = 20.0;
    let top = 40.0 + legend_height(series, width - left - right);
    let bottom = 50.0;
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    // The x axis spans the data, with a little room on both sides.
    let (x_lo, x_hi) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), (x, _)| {
        (lo.min(*x), hi.max(*x))
    });
    let x_axis = if x_lo.is_finite() && x_hi > x_lo {
        let pad = (x_hi / x_lo).powf(0.05);
        LogAxis {
            lo: x_lo / pad,
            hi: x_hi * pad,
        }
    } else {
        LogAxis::fit(xs.iter().map(|(x, _)| *x))
    };
    let y_axis = LogAxis::fit(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied()),
    );
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{left}" y="18" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    legend(&mut svg, series, left, 36.0, plot_w);
    for d in y_axis.decades() {
        let y = top + plot_h - y_axis.pos(d) * plot_h;
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            y + 3.0,
            short(d)
        );
    }
    for (x, label) in xs {
        let px = left + x_axis.pos(*x) * plot_w;
        let _ = write!(
            svg,
            r##"<line x1="{px:.1}" y1="{top:.1}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            top + plot_h,
            top + plot_h + 14.0,
            esc(label)
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
        left + plot_w / 2.0,
        height - 12.0,
        esc(x_label),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(y_label)
    );
    for s in series {
        let points: Vec<String> = xs
            .iter()
            .zip(&s.values)
            .filter_map(|((x, _), v)| {
                v.filter(|v| *v > 0.0).map(|v| {
                    format!(
                        "{:.1},{:.1}",
                        left + x_axis.pos(*x) * plot_w,
                        top + plot_h - y_axis.pos(v) * plot_h
                    )
                })
            })
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
            s.color,
            points.join(" ")
        );
        for p in &points {
            if let Some((x, y)) = p.split_once(',') {
                let _ = write!(
                    svg,
                    r#"<circle cx="{x}" cy="{y}" r="3" fill="{}"/>"#,
                    s.color
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_svg() {
        let s = [
            Series {
                label: "a<b",
                color: PALETTE[0],
                values: vec![Some(3.0), None, Some(1200.0)],
            },
            Series {
                label: "c",
                color: PALETTE[1],
                values: vec![Some(10.0), Some(20.0), Some(0.5)],
            },
        ];
        let bars = grouped_bars("t", "ns", &["x", "y", "z"], &s);
        assert!(bars.starts_with("<svg") && bars.trim_end().ends_with("</svg>"));
        assert!(bars.contains("a&lt;b"));
        assert_eq!(
            bars.matches("<rect x=\"150\"").count(),
            5,
            "one bar per value"
        );
        let xs = [
            (1.0, "1".into()),
            (10.0, "10".into()),
            (100.0, "100".into()),
        ];
        let chart = lines("t", "x", "y", &xs, &s);
        assert_eq!(chart.matches("<polyline").count(), 2);
        assert_eq!(chart.matches("<circle").count(), 5);
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(1.0), "1");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(20_000_000.0), "20M");
        assert_eq!(short(3.2e9), "3.2G");
    }
}
