//! The report's files: `<dataset>.json` (the model as is), the raw samples of calls made one
//! at a time in `<dataset>-samples.jsonl` and `.csv`; those of calls made while others ran (a
//! hundred thousand rows or more a run), gzipped CSV only: the mixed workload's in
//! `<dataset>-mixed-samples.csv.gz`, the other phases' (contention, traversals under writes,
//! insert throughput) in `<dataset>-concurrent-samples.csv.gz`; the charts, and `<dataset>.md`
//! showing the tables and linking the rest.

use super::markdown;
use super::model::{Report, Sample};
use super::{charts, samples};
use flate2::{Compression, write::GzEncoder};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Writes the report and its `samples` into `dir` and returns the paths, the Markdown first.
/// Charts are secondary: when they fail (no font installed, say) this warns and writes the
/// rest, so that a long run never loses its numbers.
pub fn write(report: &Report, samples: &[Sample], dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let dataset = &report.environment.dataset;
    let md = dir.join(format!("{dataset}.md"));
    let json = dir.join(format!("{dataset}.json"));
    std::fs::write(&json, serde_json::to_string_pretty(report)?)?;
    // The concurrent workloads' calls are those that record when they began.
    let (concurrent, one_at_a_time): (Vec<&Sample>, Vec<&Sample>) =
        samples.iter().partition(|s| s.at_s.is_some());
    let (mixed, other): (Vec<&Sample>, Vec<&Sample>) = concurrent
        .into_iter()
        .partition(|s| s.workload.starts_with("mixed "));
    let mut samples_files = vec![
        (
            format!("{dataset}-samples.jsonl"),
            samples::jsonl(one_at_a_time.iter().copied())?.into_bytes(),
        ),
        (
            format!("{dataset}-samples.csv"),
            samples::csv(one_at_a_time.iter().copied())?.into_bytes(),
        ),
    ];
    for (kind, calls) in [("mixed", mixed), ("concurrent", other)] {
        if !calls.is_empty() {
            let mut gz = GzEncoder::new(Vec::new(), Compression::default());
            gz.write_all(samples::csv(calls)?.as_bytes())?;
            samples_files.push((format!("{dataset}-{kind}-samples.csv.gz"), gz.finish()?));
        }
    }
    let mut sample_paths = Vec::new();
    for (name, bytes) in &samples_files {
        let path = dir.join(name);
        std::fs::write(&path, bytes)?;
        sample_paths.push(path);
    }
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
    let sample_names: Vec<String> = samples_files.into_iter().map(|(name, _)| name).collect();
    std::fs::write(&md, markdown::document(report, &sample_names, &chart_names))?;
    let mut paths = vec![md, json];
    paths.extend(sample_paths);
    paths.extend(chart_paths);
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::fixtures::{report, row};

    #[test]
    fn writes_the_json_the_samples_the_charts_and_markdown_linking_them() {
        let dir = tempfile::tempdir().unwrap();
        let results = vec![
            row("bfs", "stage2", [58e6, 64e6, 65e6, 65e6], Some([4e3; 4])),
            row("path", "neo4j", [120.0, 300.0, 900.0, 1e3], None),
        ];
        let report = report(results, vec![]);
        let mut samples: Vec<Sample> = (0..3)
            .map(|index| Sample {
                system: "neo4j".into(),
                workload: "path".into(),
                index,
                a: Some(1),
                b: Some(2),
                e2e_us: 120.0,
                server_us: None,
                client_us: None,
                at_s: None,
                stats: None,
            })
            .collect();
        // Two calls of the mixed workload: their own file, gzipped.
        let first = samples[0].clone();
        samples.extend((0..2).map(|index| Sample {
            workload: "mixed uniform: add edge".into(),
            index,
            at_s: Some(5.0 + index as f64),
            ..first.clone()
        }));
        // And one of a throughput phase: the other concurrent file.
        samples.push(Sample::call(
            "throughput: add_edges".into(),
            0,
            300.0,
            Some(0.5),
        ));
        let paths = write(&report, &samples, dir.path()).unwrap();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "tiny.md",
                "tiny.json",
                "tiny-samples.jsonl",
                "tiny-samples.csv",
                "tiny-mixed-samples.csv.gz",
                "tiny-concurrent-samples.csv.gz",
                "tiny-latency.png",
                "tiny-hold.png"
            ]
        );
        let md = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(
            md.contains("[tiny-samples.jsonl](tiny-samples.jsonl)")
                && md.contains("[tiny-samples.csv](tiny-samples.csv)")
                && md.contains("[tiny-mixed-samples.csv.gz](tiny-mixed-samples.csv.gz)")
                && md.contains("[tiny-concurrent-samples.csv.gz](tiny-concurrent-samples.csv.gz)"),
            "{md}"
        );
        let lines = |p: &PathBuf| std::fs::read_to_string(p).unwrap().lines().count();
        assert_eq!((lines(&paths[2]), lines(&paths[3])), (3, 4));
        let gunzip = |p: &PathBuf| {
            let mut text = String::new();
            let gz = std::fs::File::open(p).unwrap();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text)
                .unwrap();
            text
        };
        let mixed = gunzip(&paths[4]);
        let rows: Vec<&str> = mixed.lines().collect();
        assert_eq!(rows.len(), 3, "{mixed}");
        assert!(rows[1].contains("mixed uniform: add edge") && rows[2].contains(",6.0,"));
        let concurrent = gunzip(&paths[5]);
        let rows: Vec<&str> = concurrent.lines().collect();
        assert_eq!(rows.len(), 2, "{concurrent}");
        assert!(
            rows[1].starts_with("stdb,throughput: add_edges,0,,,300.0,"),
            "{concurrent}"
        );
        assert!(md.contains("![tiny-latency](tiny-latency.png)"), "{md}");
        assert!(md.contains("![tiny-hold](tiny-hold.png)"), "{md}");
        assert!(md.contains("| path | neo4j | 10 | 120 µs |"), "{md}");
        let json: Report =
            serde_json::from_str(&std::fs::read_to_string(&paths[1]).unwrap()).unwrap();
        assert_eq!(json.results.len(), 2);
        for png in &paths[6..] {
            assert!(std::fs::read(png).unwrap().starts_with(b"\x89PNG"));
        }
    }
}
