//! The raw samples as text, one row per measured call, for others to re-plot: JSON Lines and
//! CSV, both from the same serde serialization of [`Sample`], so that they hold the same fields.

use super::model::Sample;
use crate::system::TxStats;
use serde_json::Value;
use std::fmt::Write as _;

/// The columns before the module's stats, in the order of [`Sample`]'s fields.
const COLUMNS: [&str; 9] = [
    "system",
    "workload",
    "index",
    "a",
    "b",
    "e2e_us",
    "server_us",
    "client_us",
    "at_s",
];

/// One JSON object per line.
pub fn jsonl<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> anyhow::Result<String> {
    let mut out = String::new();
    for sample in samples {
        out.push_str(&serde_json::to_string(sample)?);
        out.push('\n');
    }
    Ok(out)
}

/// A header, then one line per sample; absent values (no server time, no stats) are empty.
pub fn csv<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> anyhow::Result<String> {
    let columns = columns()?;
    let mut out = columns.join(",");
    out.push('\n');
    for sample in samples {
        let Value::Object(fields) = serde_json::to_value(sample)? else {
            anyhow::bail!("a sample did not serialize to a JSON object");
        };
        let cells: Vec<String> = columns.iter().map(|c| cell(fields.get(c))).collect();
        let _ = writeln!(out, "{}", cells.join(","));
    }
    Ok(out)
}

/// [`COLUMNS`], then the fields of the module's `TxStats`.
fn columns() -> anyhow::Result<Vec<String>> {
    let Value::Object(stats) = serde_json::to_value(TxStats::default())? else {
        anyhow::bail!("TxStats did not serialize to a JSON object");
    };
    Ok(COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(stats.into_iter().map(|(k, _)| k))
        .collect())
}

/// A CSV cell: empty for null or absent, quoted when it holds a comma, quote or line break.
fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) if s.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Sample> {
        let stats = TxStats {
            transactions: 3,
            max_hold_us: 410,
            from_snapshot: true,
            ..TxStats::default()
        };
        vec![
            Sample {
                system: "stdb".into(),
                workload: "path".into(),
                index: 0,
                a: Some(7),
                b: Some(9),
                e2e_us: 1250.5,
                server_us: Some(980),
                client_us: None,
                at_s: Some(12.5),
                stats: Some(stats),
            },
            Sample {
                system: "kuzu".into(),
                workload: "bfs-depth".into(),
                index: 1,
                a: Some(7),
                b: None,
                e2e_us: 3000.0,
                server_us: None,
                client_us: Some(3150.25),
                at_s: None,
                stats: None,
            },
        ]
    }

    #[test]
    fn jsonl_has_one_object_per_sample() {
        let text = jsonl(&samples()).unwrap();
        let rows: Vec<Sample> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows, samples());
    }

    #[test]
    fn csv_has_every_jsonl_field_as_a_column() {
        let text = csv(&samples()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(&header[..COLUMNS.len()], COLUMNS);
        let first = serde_json::to_value(&samples()[0]).unwrap();
        let first = first.as_object().unwrap();
        assert_eq!(header.len(), first.len(), "{header:?} vs {first:?}");
        let row: Vec<&str> = lines[1].split(',').collect();
        for (column, value) in header.iter().zip(&row) {
            assert_eq!(*value, cell(first.get(*column)), "{column}");
        }
        let at = |name: &str| header.iter().position(|c| *c == name).unwrap();
        assert_eq!(row[at("e2e_us")], "1250.5");
        assert_eq!(row[at("at_s")], "12.5");
        assert_eq!(row[at("max_hold_us")], "410");
        assert_eq!(row[at("from_snapshot")], "true");
        let bare: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(bare.len(), header.len());
        assert_eq!(
            (bare[at("b")], bare[at("server_us")], bare[at("at_s")]),
            ("", "", "")
        );
        assert_eq!(
            (row[at("client_us")], bare[at("client_us")]),
            ("", "3150.25")
        );
        assert_eq!(bare[at("transactions")], "");
    }

    #[test]
    fn cells_quote_what_csv_needs_quoted() {
        let s = |v: &str| Some(Value::String(v.into()));
        assert_eq!(cell(s("empty procedure").as_ref()), "empty procedure");
        assert_eq!(cell(s("a,b").as_ref()), "\"a,b\"");
        assert_eq!(cell(s("say \"hi\"").as_ref()), "\"say \"\"hi\"\"\"");
        assert_eq!(cell(None), "");
    }
}
