//! The page around the charts: headings, notes, the inlined plotly.js, and a div per
//! chart with a stable id (`plot-0`, `plot-1`, ...).

use plotly::Plot;

/// One chart.
pub struct Figure {
    pub plot: Plot,
    /// Take the page's full width (time series); otherwise charts sit two to a row.
    pub wide: bool,
    /// Its height in px, where a row's 380 px is too little (a bar for each of many
    /// labels); None: the row's.
    pub height_px: Option<usize>,
}

impl Figure {
    /// A chart of the row's height.
    pub fn new(plot: Plot, wide: bool) -> Self {
        Figure {
            plot,
            wide,
            height_px: None,
        }
    }
}

/// A heading, an optional note (why a chart is missing, how to read them), its charts.
pub struct Section {
    pub heading: String,
    pub note: Option<String>,
    pub figures: Vec<Figure>,
}

impl Section {
    /// A section with nothing to plot: its heading and a note saying why.
    pub fn empty(heading: String, why: &str) -> Section {
        Section {
            heading,
            note: Some(why.to_string()),
            figures: Vec::new(),
        }
    }
}

/// A whole report.
pub struct Page {
    pub title: String,
    /// Lines under the title (seed, variants).
    pub facts: Vec<String>,
    /// The scenario's description, shown preformatted.
    pub description: String,
    /// The headline changes, a table shown before the charts: its first row is the
    /// header, each row's first cell names it (empty: no summary).
    pub summary: Vec<Vec<String>>,
    pub sections: Vec<Section>,
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em;border-bottom:1px solid #ccc}\
pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}.note{color:#555}\
.grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:8px}\
.fig{height:380px;min-width:0}.fig.wide{grid-column:1/-1}\
table.summary{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:.95em}\
.summary th,.summary td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}\
.summary td{white-space:nowrap}.summary td:nth-child(2){white-space:normal;color:#555}\
.summary tr>:first-child{text-align:left}";

impl Page {
    /// The number of charts on the page.
    pub fn figure_count(&self) -> usize {
        self.sections.iter().map(|s| s.figures.len()).sum()
    }

    /// The page as one HTML document: plotly.js inline, no external resource.
    pub fn render(&self) -> String {
        let mut out = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"reclaimsim-plots\" content=\"{}\">\n<title>{}</title>\n\
             <style>{STYLE}</style>\n{}\n</head>\n<body>\n<h1>{}</h1>\n",
            self.figure_count(),
            escape(&self.title),
            plotly_js(),
            escape(&self.title)
        );
        for f in &self.facts {
            out += &format!("<p>{}</p>\n", escape(f));
        }
        if !self.description.is_empty() {
            out += &format!("<pre>{}</pre>\n", escape(&self.description));
        }
        out += &summary_table(&self.summary);
        let mut n = 0;
        for s in &self.sections {
            out += &format!("<h2>{}</h2>\n", escape(&s.heading));
            if let Some(note) = &s.note {
                out += &format!("<p class=\"note\">{}</p>\n", escape(note));
            }
            out += "<div class=\"grid\">\n";
            for f in &s.figures {
                let class = if f.wide { "fig wide" } else { "fig" };
                let style = f
                    .height_px
                    .map_or(String::new(), |h| format!(" style=\"height:{h}px\""));
                let id = format!("plot-{n}");
                out += &format!(
                    "<div class=\"{class}\"{style}>{}</div>\n",
                    f.plot.to_inline_html(Some(&id))
                );
                n += 1;
            }
            out += "</div>\n";
        }
        out + "</body>\n</html>\n"
    }
}

/// The summary as a table under its heading: the first row in `<th>`, and each row's
/// first cell; nothing for no rows.
fn summary_table(rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = "<h2>Summary</h2>\n<table class=\"summary\">\n".to_string();
    for (r, row) in rows.iter().enumerate() {
        out += "<tr>";
        for (c, cell) in row.iter().enumerate() {
            let tag = if r == 0 || c == 0 { "th" } else { "td" };
            out += &format!("<{tag}>{}</{tag}>", escape(cell));
        }
        out += "</tr>\n";
    }
    out + "</table>\n"
}

/// plotly.js as the `plotly` crate embeds it, in a `<script>` element. The crate's
/// offline sources also carry MathJax, which no chart here uses: only the first script
/// (plotly.js) is kept.
fn plotly_js() -> String {
    let all = Plot::offline_js_sources();
    let end = "</script>";
    match all.find(end) {
        Some(i) => all[..i + end.len()].to_string(),
        None => all,
    }
}

/// Text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let page = Page {
            title: "a<b".into(),
            facts: vec!["seed 1".into()],
            description: "x & y".into(),
            summary: vec![
                vec!["".into(), "a".into(), "b".into()],
                vec!["x<y".into(), "1".into(), "2 (2.00x)".into()],
            ],
            sections: vec![Section {
                heading: "h".into(),
                note: Some("n".into()),
                figures: vec![
                    Figure::new(Plot::new(), false),
                    Figure {
                        height_px: Some(700),
                        ..Figure::new(Plot::new(), true)
                    },
                ],
            }],
        };
        let html = page.render();
        assert!(html.contains("<title>a&lt;b</title>"));
        assert!(html.contains("<div class=\"fig\"><div id=\"plot-0\""));
        assert!(html.contains("<div class=\"fig wide\" style=\"height:700px\"><div id=\"plot-1\""));
        assert!(html.contains("<pre>x &amp; y</pre>"));
        let summary = html
            .find("<tr><th>x&lt;y</th><td>1</td><td>2 (2.00x)</td></tr>")
            .expect("the summary's row");
        assert!(html.contains("<tr><th></th><th>a</th><th>b</th></tr>"));
        assert!(
            summary < html.find("id=\"plot-0\"").unwrap(),
            "before the charts"
        );
        assert!(html.contains("plotly.js v"), "plotly.js is inlined");
        assert!(!html.contains("<script src"), "no external script");
        // plotly.js's script and the figures': MathJax is left out.
        assert_eq!(html.matches("<script").count(), 3);
        assert!(html.contains("content=\"2\""));
        assert_eq!(html, page.render(), "deterministic");
    }
}
