//! The report's files: `<dataset>.json` (the model as is), the charts, and `<dataset>.md`
//! showing the tables and linking the charts.

use super::charts;
use super::markdown;
use super::model::Report;
use std::path::{Path, PathBuf};

/// Writes the report into `dir` and returns the paths, the Markdown first. Charts are
/// secondary: when they fail (no font installed, say) this warns and writes the rest, so that a
/// long run never loses its numbers.
pub fn write(report: &Report, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let dataset = &report.environment.dataset;
    let md = dir.join(format!("{dataset}.md"));
    let json = dir.join(format!("{dataset}.json"));
    std::fs::write(&json, serde_json::to_string_pretty(report)?)?;
    let charts = charts::render(report).unwrap_or_else(|e| {
        eprintln!("warning: no charts: {e:#}");
        Vec::new()
    });
    let mut chart_paths = Vec::new();
    for chart in &charts {
        let path = dir.join(&chart.name);
        std::fs::write(&path, &chart.bytes)?;
        chart_paths.push(path);
    }
    let chart_names: Vec<String> = charts.into_iter().map(|c| c.name).collect();
    std::fs::write(&md, markdown::document(report, &chart_names))?;
    let mut paths = vec![md, json];
    paths.extend(chart_paths);
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::fixtures::{report, row};

    #[test]
    fn writes_the_json_the_charts_and_markdown_linking_them() {
        let dir = tempfile::tempdir().unwrap();
        let results = vec![
            row("bfs", "stage2", [58e6, 64e6, 65e6, 65e6], Some([4e3; 4])),
            row("path", "neo4j", [120.0, 300.0, 900.0, 1e3], None),
        ];
        let report = report(results, vec![]);
        let paths = write(&report, dir.path()).unwrap();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["tiny.md", "tiny.json", "tiny-latency.png", "tiny-hold.png"]
        );
        let md = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(md.contains("![tiny-latency](tiny-latency.png)"), "{md}");
        assert!(md.contains("![tiny-hold](tiny-hold.png)"), "{md}");
        assert!(md.contains("| path | neo4j | 10 | 120 µs |"), "{md}");
        let json: Report =
            serde_json::from_str(&std::fs::read_to_string(&paths[1]).unwrap()).unwrap();
        assert_eq!(json.results.len(), 2);
        for png in &paths[2..] {
            assert!(std::fs::read(png).unwrap().starts_with(b"\x89PNG"));
        }
    }
}
