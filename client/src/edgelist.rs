//! Reading edge-list files (SNAP text, CSV, optionally gzip-compressed) into parallel arrays:
//! ids, and for CSV files with `src,dst[,label][,weight]` rows, labels and weights.
//!
//! The reader streams: one reusable line buffer, CSV lines split as RFC 4180 says (so quoted fields
//! are read as spreadsheets and databases write them), ids parsed straight from bytes, label
//! names interned through a hash map, so a 35M-line file costs no per-line allocation. Rows are kept exactly as written (file order,
//! duplicates, self-loops), so that statistics and error messages describe the file;
//! [`EdgeList::sorted`] gives the distinct edges in the order they are best loaded in.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;
use thiserror::Error;

/// Edge rows as parallel arrays (`src[i] -> dst[i]`), in file order, with their labels and
/// weights when some row has one.
#[derive(Debug, Clone, Default)]
pub struct EdgeList {
    pub src: Vec<u64>,
    pub dst: Vec<u64>,
    /// Per row, an index into `label_names`; empty when no row has a label.
    pub labels: Vec<u32>,
    /// Label names, each once; `""` (no label) is the first once any row has a label. Replace
    /// it with [`EdgeList::set_labels`], which keeps the name index in step.
    pub label_names: Vec<String>,
    /// Per row, its weight; empty when no row has one (then every weight is 1).
    pub weights: Vec<f32>,
    names: NameIndex,
}

impl PartialEq for EdgeList {
    /// Equal rows, labels and weights (the name index is derived from `label_names`).
    fn eq(&self, other: &Self) -> bool {
        (
            &self.src,
            &self.dst,
            &self.labels,
            &self.label_names,
            &self.weights,
        ) == (
            &other.src,
            &other.dst,
            &other.labels,
            &other.label_names,
            &other.weights,
        )
    }
}

/// Where each label name is in a list of names, so that a file with many distinct labels is
/// read in linear time. Names pushed onto the list by other code are indexed when next used.
#[derive(Debug, Clone, Default)]
struct NameIndex {
    at: HashMap<String, u32>,
    /// How many names of the list are in `at`.
    indexed: usize,
}

impl NameIndex {
    /// `name`'s position in `names`, pushing it if it is not there.
    fn intern(&mut self, names: &mut Vec<String>, name: &str) -> u32 {
        if self.indexed > names.len() {
            *self = Self::default(); // The list was replaced by a shorter one.
        }
        for (i, known) in names.iter().enumerate().skip(self.indexed) {
            self.at.entry(known.clone()).or_insert(i as u32);
        }
        self.indexed = names.len();
        match self.at.get(name) {
            Some(&i) if names.get(i as usize).is_some_and(|known| known == name) => i,
            // New (or the list was edited in place, and a second entry of a name is harmless).
            _ => {
                names.push(name.to_owned());
                self.indexed = names.len();
                let i = names.len() as u32 - 1;
                self.at.insert(name.to_owned(), i);
                i
            }
        }
    }
}

impl FromIterator<(u64, u64)> for EdgeList {
    fn from_iter<I: IntoIterator<Item = (u64, u64)>>(pairs: I) -> Self {
        let (src, dst) = pairs.into_iter().unzip();
        Self {
            src,
            dst,
            ..Self::default()
        }
    }
}

impl EdgeList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(rows: usize) -> Self {
        Self {
            labels: Vec::new(),
            label_names: Vec::new(),
            weights: Vec::new(),
            src: Vec::with_capacity(rows),
            dst: Vec::with_capacity(rows),
            names: NameIndex::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.src.len()
    }

    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// Appends an unlabelled row of weight 1.
    pub fn push(&mut self, src: u64, dst: u64) {
        self.push_with(src, dst, "", 1.0);
    }

    /// Appends a row with a label (`""`: none) and a weight.
    pub fn push_with(&mut self, src: u64, dst: u64, label: &str, weight: f32) {
        let row = self.src.len();
        self.src.push(src);
        self.dst.push(dst);
        // The columns start with the first row that needs them; earlier rows get the defaults.
        if !label.is_empty() || !self.label_names.is_empty() {
            if self.label_names.is_empty() {
                self.label_names.push(String::new());
            }
            self.labels.resize(row, 0);
            let at = self.names.intern(&mut self.label_names, label);
            self.labels.push(at);
        }
        if weight != 1.0 || !self.weights.is_empty() {
            self.weights.resize(row, 1.0);
            self.weights.push(weight);
        }
    }

    /// Gives the rows the labels `label_names[labels[i]]`, replacing any they had.
    pub fn set_labels(&mut self, label_names: Vec<String>, labels: Vec<u32>) {
        self.label_names = label_names;
        self.labels = labels;
        self.names = NameIndex::default();
    }

    /// Drops the first `n` rows (all of them if fewer), with their labels and weights.
    pub fn skip_first(&mut self, n: usize) {
        let n = n.min(self.len());
        self.src.drain(..n);
        self.dst.drain(..n);
        if !self.labels.is_empty() {
            self.labels.drain(..n);
        }
        if !self.weights.is_empty() {
            self.weights.drain(..n);
        }
    }

    /// Whether some row has a label or a weight other than 1.
    pub fn has_attrs(&self) -> bool {
        !self.labels.is_empty() || !self.weights.is_empty()
    }

    /// Row `i`'s label name (`""`: none) and weight.
    pub fn attrs(&self, i: usize) -> (&str, f32) {
        let label = self
            .labels
            .get(i)
            .map_or("", |&at| self.label_names[at as usize].as_str());
        (label, self.weights.get(i).copied().unwrap_or(1.0))
    }

    /// Rows as `(src, dst)` pairs, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + '_ {
        self.src.iter().copied().zip(self.dst.iter().copied())
    }

    /// The distinct edges in (src, dst) order: the order to load them in. The module stores rows
    /// in insertion order, so this puts each vertex's out-arcs on the same table pages; reading a
    /// neighbor list then touches a few pages instead of one per arc (index-hop BFS on the
    /// LJ-sized graph ran about 30% faster, `results/lj-holds/`).
    /// Rows that are the same edge with the same label and weight count once; rows that give
    /// one edge different labels or weights are all kept (the server refuses the second; see
    /// [`EdgeList::first_conflict`]).
    pub fn sorted(&self) -> EdgeList {
        if !self.has_attrs() {
            let mut pairs: Vec<(u64, u64)> = self.iter().collect();
            pairs.sort_unstable();
            pairs.dedup();
            return pairs.into_iter().collect();
        }
        let key = |i: usize| {
            let label = self.labels.get(i).copied().unwrap_or(0);
            let weight = self.weights.get(i).map_or(0, |w| w.to_bits());
            (self.src[i], self.dst[i], label, weight)
        };
        let mut rows: Vec<usize> = (0..self.len()).collect();
        rows.sort_unstable_by_key(|&i| key(i));
        rows.dedup_by_key(|i| key(*i));
        let mut out = EdgeList {
            label_names: self.label_names.clone(),
            ..EdgeList::with_capacity(rows.len())
        };
        for i in rows {
            out.src.push(self.src[i]);
            out.dst.push(self.dst[i]);
            if let Some(&label) = self.labels.get(i) {
                out.labels.push(label);
            }
            if let Some(&weight) = self.weights.get(i) {
                out.weights.push(weight);
            }
        }
        out
    }

    /// In a [`sorted`](Self::sorted) list, the first two rows that give one edge different
    /// labels or weights (an edge has one of each), as indices.
    pub fn first_conflict(&self) -> Option<(usize, usize)> {
        (1..self.len())
            .find(|&i| (self.src[i], self.dst[i]) == (self.src[i - 1], self.dst[i - 1]))
            .map(|i| (i - 1, i))
    }

    /// In a [`sorted`](Self::sorted) list read from `file` in `format`, what is wrong if rows
    /// give an edge different labels or weights: the first such edge, its lines in `file` (read
    /// again; a pipe or standard input cannot be, and is not named), the first two that differ
    /// with what each says, and how many other edges are given two ways.
    pub fn conflict_error(&self, file: &Path, format: Format) -> Option<String> {
        let (a, b) = self.first_conflict()?;
        let (s, d) = (self.src[a], self.dst[a]);
        let said = |(label, weight): (&str, f32)| match label {
            "" => format!("no label and weight {weight}"),
            label => format!("label `{label}` and weight {weight}"),
        };
        let rows = rows_of_edge(file, format, s, d).unwrap_or_default();
        let first = rows.first();
        let differing = first.and_then(|(_, label, weight)| {
            (rows.iter()).find(|r| (&r.1, r.2.to_bits()) != (label, weight.to_bits()))
        });
        let two_ways = match (first, differing) {
            (Some((l1, label1, w1)), Some((l2, label2, w2))) => {
                let shown: Vec<String> = rows.iter().take(5).map(|r| r.0.to_string()).collect();
                let more = if rows.len() > 5 { ", …" } else { "" };
                format!(
                    "lines {}{more} give the edge {s} → {d} two ways: line {l1} {}, line {l2} {}",
                    shown.join(", "),
                    said((label1, *w1)),
                    said((label2, *w2)),
                )
            }
            _ => format!(
                "its lines give the edge {s} → {d} two ways: {} and {}",
                said(self.attrs(a)),
                said(self.attrs(b)),
            ),
        };
        let others = match self.conflicts() - 1 {
            0 => String::new(),
            1 => " (1 other edge is also given two ways)".to_string(),
            n => format!(" ({n} other edges are also given two ways)"),
        };
        Some(format!(
            "{}: {two_ways}; an edge has one label and one weight{others}",
            shown_path(file),
        ))
    }

    /// In a [`sorted`](Self::sorted) list, how many edges are given different labels or
    /// weights (each run of rows with the same ends, as [`first_conflict`](Self::first_conflict)
    /// finds the first).
    pub fn conflicts(&self) -> usize {
        let ends = |i: usize| (self.src[i], self.dst[i]);
        (1..self.len())
            .filter(|&i| ends(i) == ends(i - 1) && (i < 2 || ends(i - 1) != ends(i - 2)))
            .count()
    }

    /// Size and degree statistics of the rows as written.
    ///
    /// Degree is the undirected row degree: rows with `src == v` plus rows with `dst == v`.
    /// So a duplicate row counts each time and a self-loop counts twice, and
    /// `mean_degree == 2 * edges / vertices`. (This is not the distinct-neighbor degree the
    /// module reports after deduplication.)
    ///
    /// Counting uses a dense counter array indexed by id when the largest id is below twice
    /// the row count (the usual SNAP case; the array is then no larger than a sort buffer),
    /// otherwise it sorts all endpoint ids and counts runs. Both are O(rows) memory.
    pub fn summary(&self) -> Summary {
        let edges = self.len() as u64;
        let Some(max_id) = self.src.iter().chain(&self.dst).copied().max() else {
            return Summary::default();
        };
        let (vertices, max_degree) = if max_id < 2 * edges {
            let mut counts = vec![0u64; max_id as usize + 1];
            for &v in self.src.iter().chain(&self.dst) {
                counts[v as usize] += 1;
            }
            let vertices = counts.iter().filter(|&&c| c > 0).count() as u64;
            (vertices, counts.iter().copied().max().unwrap_or(0))
        } else {
            let mut ids: Vec<u64> = self.src.iter().chain(&self.dst).copied().collect();
            ids.sort_unstable();
            let (mut vertices, mut max_degree) = (0u64, 0u64);
            for run in ids.chunk_by(|a, b| a == b) {
                vertices += 1;
                max_degree = max_degree.max(run.len() as u64);
            }
            (vertices, max_degree)
        };
        Summary {
            vertices,
            edges,
            max_degree,
            mean_degree: 2.0 * edges as f64 / vertices as f64,
        }
    }
}

/// What [`EdgeList::summary`] reports; see there for the degree definition.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Distinct ids in `src ∪ dst`.
    pub vertices: u64,
    /// Rows, including duplicates and self-loops.
    pub edges: u64,
    pub max_degree: u64,
    pub mean_degree: f64,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} vertices, {} edges, max degree {}, mean degree {:.2}",
            self.vertices, self.edges, self.max_degree, self.mean_degree
        )
    }
}

/// Text layout of an edge-list file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// SNAP: `src dst` separated by tabs and/or spaces; `#` (SNAP) and `%` (KONECT) comment
    /// lines.
    Snap,
    /// Comma separated `src,dst[,label][,weight]` (an empty label: none; an empty or no weight:
    /// 1), fields optionally in double quotes; `#` comment lines; an optional non-numeric header
    /// as the first non-comment line.
    Csv,
}

impl Format {
    /// `.csv` (optionally followed by `.gz`) is CSV; anything else is read as SNAP.
    pub fn from_path(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".csv") {
            Format::Csv
        } else {
            Format::Snap
        }
    }
}

/// Why an edge-list file could not be read. Always names the file; parse errors name the
/// 1-based line.
#[derive(Debug, Error)]
pub enum EdgeListError {
    #[error("cannot open {file}: {error}")]
    Open { file: String, error: io::Error },
    #[error("{file}: line {line}: read error: {error}")]
    Read {
        file: String,
        line: u64,
        error: io::Error,
    },
    #[error(
        "{file} is damaged ({error}), so its lines are not what was written (the first bad one: \
         {first}); download or compress it again"
    )]
    Damaged {
        file: String,
        error: io::Error,
        first: Box<EdgeListError>,
    },
    #[error("{file}: line {line}: {problem}")]
    Line {
        file: String,
        line: u64,
        problem: LineError,
    },
}

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LineError {
    #[error("expected two vertex ids, found {0}")]
    TooFewFields(usize),
    #[error(
        "expected two vertex ids separated by a comma, found a tab: a .csv file's fields are \
         separated by commas (a file named otherwise is read as SNAP text, which takes tabs)"
    )]
    TabSeparated,
    #[error(
        "expected two vertex ids separated by spaces or tabs, found a comma: this is read as \
         SNAP text (the layout of a file not named .csv or .csv.gz, and of standard input); \
         name a CSV file .csv, or pass `graph load --format csv`"
    )]
    CommaSeparated,
    /// A line that another separator than the file's splits: `found` names it, `rule` says
    /// what the file takes.
    #[error("found {found} between fields: {rule}")]
    OtherSeparator {
        found: &'static str,
        rule: &'static str,
    },
    #[error("too many fields: expected two vertex ids, a label and a weight, found {0}")]
    TooManyFields(usize),
    /// A SNAP line with more than two fields, such as a KONECT file's weight and time columns
    /// or a SNAP temporal network's timestamps: which they are is not written in the line, so
    /// none is guessed.
    #[error(
        "expected two vertex ids, found {0} fields: this is read as SNAP text, one edge per \
         line, whose third column (a KONECT weight, a timestamp) is not read. To load the \
         edges alone, keep the first two columns (`awk '{{print $1, $2}}'`); to load weights, \
         write `src,dst,,weight` rows as CSV (a .csv file, or `graph load --format csv`)"
    )]
    ExtraColumns(usize),
    #[error("a double quote out of place: quote a whole field, and double the quotes inside it")]
    BadQuotes,
    #[error(
        "a quoted field that does not end on its line: a field cannot hold a line break, so \
         close its quote on the same line"
    )]
    UnclosedQuote,
    #[error("expected a vertex id and a label, found {} field{}", .0, if *.0 == 1 { "" } else { "s" })]
    NotIdAndLabel(usize),
    #[error(
        "header `{header}`: its columns must be named {expected} (or leave the header out and \
         give them in that order); see the README for other names"
    )]
    UnknownColumns {
        header: String,
        expected: &'static str,
    },
    #[error(
        "vertex {id} is given {} here and {} on line {earlier_line}",
        label_or_none(label),
        label_or_none(earlier)
    )]
    TwoLabels {
        id: u64,
        label: String,
        earlier: String,
        earlier_line: u64,
    },
    #[error("label `{0}`: labels are at most 64 bytes, without control characters")]
    BadLabel(String),
    #[error("label `{0}` is not UTF-8 text (save the file as UTF-8)")]
    LabelNotUtf8(String),
    #[error(
        "weight `{0}`: weights are finite, non-negative numbers within a 32-bit float's range \
         (at most 3.4e38)"
    )]
    BadWeight(String),
    #[error("empty field where a vertex id was expected")]
    EmptyField,
    #[error(
        "field {0} has a value, but the header gives its column no name: name the column or \
         leave its fields empty"
    )]
    ValueInUnnamedColumn(usize),
    #[error("`{0}` is not an unsigned integer")]
    NotAnInteger(String),
    #[error("`{0}` does not fit in a 64-bit vertex id")]
    TooLarge(String),
    #[error(
        "a carriage return within the line: lines that end in CR alone (old Mac files) are not \
         read; convert the file to LF or CRLF line ends"
    )]
    CarriageReturn,
}

/// `label `x``, or `no label` for the empty one.
fn label_or_none(label: &str) -> String {
    match label {
        "" => "no label".to_owned(),
        label => format!("label `{label}`"),
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const READ_BUFFER: usize = 1 << 20;

/// Reads a whole edge-list file. The format comes from [`Format::from_path`]; the file is
/// decompressed (streaming) if its name ends in `.gz` or it starts with the gzip magic bytes.
pub fn read_edge_list(path: &Path) -> Result<EdgeList, EdgeListError> {
    read_edge_list_as(path, Format::from_path(path))
}

/// Reads a whole edge-list file in `format`, decompressed as [`read_edge_list`] says; `-` reads
/// standard input.
pub fn read_edge_list_as(path: &Path, format: Format) -> Result<EdgeList, EdgeListError> {
    parse_edge_list(open_text(path)?, &shown_path(path), format).map_err(|e| damaged(path, e))
}

/// `-`, the usual name of standard input on a command line.
pub fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// How messages name `path`.
pub fn shown_path(path: &Path) -> String {
    match is_stdin(path) {
        true => "standard input".to_string(),
        false => path.display().to_string(),
    }
}

/// Reads a file of vertex labels: CSV lines `id,label` (an empty label: none), optionally
/// gzipped, with `#` comments and an optional header line. A vertex given two different labels
/// is an error naming both lines (the file would say two things). `-` reads standard input.
pub fn read_vertex_labels(path: &Path) -> Result<VertexLabels, EdgeListError> {
    parse_vertex_labels(open_text(path)?, &shown_path(path)).map_err(|e| damaged(path, e))
}

/// `error`, unless it is a bad line of a gzip file that is damaged (its checksum, at the end,
/// says so): then that, since its lines are not what was written. Standard input cannot be
/// read again.
fn damaged(path: &Path, error: EdgeListError) -> EdgeListError {
    if !matches!(error, EdgeListError::Line { .. }) || is_stdin(path) {
        return error;
    }
    let Ok(mut text) = open_text(path) else {
        return error;
    };
    match io::copy(&mut text, &mut io::sink()) {
        Err(damage) => EdgeListError::Damaged {
            file: shown_path(path),
            error: GzipError::cause_of(damage),
            first: Box::new(error),
        },
        Ok(_) => error,
    }
}

/// `path` (`-`: standard input) as buffered text, decompressed if its name ends in `.gz` or it
/// starts with the gzip magic bytes.
fn open_text(path: &Path) -> Result<Box<dyn BufRead>, EdgeListError> {
    let name = shown_path(path);
    let open = |error| EdgeListError::Open {
        file: name.clone(),
        error,
    };
    let input: Box<dyn Read> = match is_stdin(path) {
        true => Box::new(io::stdin()),
        false => {
            let file = File::open(path).map_err(open)?;
            if file.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(open(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                )));
            }
            Box::new(file)
        }
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, input);
    let starts_gzip = reader
        .fill_buf()
        .map_err(|error| EdgeListError::Read {
            file: name.clone(),
            line: 1,
            error,
        })?
        .starts_with(&GZIP_MAGIC);
    let gz_name = gzip_name(path);
    let head = reader.buffer();
    let other = [
        (&b"\xFD7zXZ\x00"[..], "xz"),
        (&b"\x28\xB5\x2F\xFD"[..], "zstd"),
        (&b"BZh"[..], "bzip2"),
    ]
    .into_iter()
    .find(|(magic, _)| head.starts_with(magic));
    if let Some((_, compression)) = other {
        return Err(EdgeListError::Read {
            file: name,
            line: 1,
            error: io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the file is {compression}-compressed; only gzip is read (decompress it, or \
                     compress it with gzip)"
                ),
            ),
        });
    }
    if gz_name && !starts_gzip {
        return Err(EdgeListError::Read {
            file: name,
            line: 1,
            error: io::Error::new(
                io::ErrorKind::InvalidData,
                "the name ends in .gz, but the file is not gzip-compressed (rename it, or \
                 compress it)",
            ),
        });
    }
    Ok(match starts_gzip || gz_name {
        true => Box::new(BufReader::with_capacity(
            READ_BUFFER,
            GzipText(MultiGzDecoder::new(reader)),
        )),
        false => Box::new(reader),
    })
}

/// A gzip decoder whose errors say what they mean for the file: the decoder's own ("unexpected
/// end of file", "invalid gzip header" for bytes after the last member) name no cause a user
/// would recognize.
struct GzipText<R>(R);

impl<R: Read> Read for GzipText<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let explained = |cause| io::Error::new(io::ErrorKind::InvalidData, GzipError { cause });
        self.0.read(buf).map_err(explained)
    }
}

/// A gzip decoder's error, with what it can mean.
#[derive(Debug, Error)]
#[error(
    "{cause}: the gzip data is cut short (an interrupted download or copy), damaged, or \
     followed by bytes that are not gzip; `gzip -t` checks the file"
)]
struct GzipError {
    cause: io::Error,
}

impl GzipError {
    /// The decoder's own error within `e`, for a message that says what it means itself.
    fn cause_of(e: io::Error) -> io::Error {
        e.downcast::<GzipError>()
            .map_or_else(|e| e, |gzip| gzip.cause)
    }
}

/// Whether `path`'s name ends in `.gz`, in any case: such a file is read, and written by
/// `graph export`, gzip-compressed.
pub fn gzip_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Vertices and their labels: vertex `ids[i]` has label `label_names[labels[i]]`.
#[derive(Debug, Clone, Default)]
pub struct VertexLabels {
    pub ids: Vec<u64>,
    pub label_names: Vec<String>,
    pub labels: Vec<u32>,
    names: NameIndex,
}

impl PartialEq for VertexLabels {
    fn eq(&self, other: &Self) -> bool {
        (&self.ids, &self.label_names, &self.labels)
            == (&other.ids, &other.label_names, &other.labels)
    }
}

impl Eq for VertexLabels {}

impl VertexLabels {
    pub fn push(&mut self, id: u64, label: &str) {
        let at = self.names.intern(&mut self.label_names, label);
        self.ids.push(id);
        self.labels.push(at);
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// How many vertices the rows name (a vertex may be named by several).
    pub fn distinct_vertices(&self) -> usize {
        let mut ids = self.ids.clone();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Parses `id,label` lines from any buffered reader; `name` is only used in error messages.
pub fn parse_vertex_labels<R: BufRead>(
    reader: R,
    name: &str,
) -> Result<VertexLabels, EdgeListError> {
    let mut out = VertexLabels::default();
    // Each vertex's label (an index into `out.label_names`) and the line that gave it.
    let mut given: HashMap<u64, (u32, u64)> = HashMap::new();
    let mut csv = CsvRows::new(&VERTEX_CSV);
    for_each_data_line(reader, name, Format::Csv, |line, first, line_no| {
        let hint = |e| separator_hint(e, line, Format::Csv, true);
        let Some(mut fields) = csv.fields(line, first).map_err(hint)? else {
            return Ok(()); // The header.
        };
        let (id, label) = match (fields.next(), fields.next(), fields.count()) {
            (Some(id), Some(label), 0) => (parse_id(id)?, parse_label(label)?),
            (id, label, rest) => {
                let found = usize::from(id.is_some()) + usize::from(label.is_some()) + rest;
                return Err(hint(LineError::NotIdAndLabel(found)));
            }
        };
        out.push(id, label);
        let at = *out.labels.last().expect("just pushed");
        let (earlier, earlier_line) = *given.entry(id).or_insert((at, line_no));
        if earlier != at {
            return Err(LineError::TwoLabels {
                id,
                label: label.to_owned(),
                earlier: out.label_names[earlier as usize].clone(),
                earlier_line,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// Parses edge rows from any buffered reader; `name` is only used in error messages.
pub fn parse_edge_list<R: BufRead>(
    reader: R,
    name: &str,
    format: Format,
) -> Result<EdgeList, EdgeListError> {
    let mut edges = EdgeList::new();
    for_each_edge(reader, name, format, |s, d, label, weight, _| {
        edges.push_with(s, d, label, weight)
    })?;
    Ok(edges)
}

/// The 1-based lines of the edge-list file at `path`, in `format`, that give the edge
/// `src → dst` (the file is read again: rows keep no line numbers), to name them in an error
/// the server reports.
pub fn lines_of_edge(
    path: &Path,
    format: Format,
    src: u64,
    dst: u64,
) -> Result<Vec<u64>, EdgeListError> {
    Ok(rows_of_edge(path, format, src, dst)?
        .into_iter()
        .map(|(line, _, _)| line)
        .collect())
}

/// The rows of the file at `path` that give the edge `src → dst`: each one's 1-based line, label
/// and weight (read again to name them in an error: rows keep no line numbers). None from
/// standard input, which cannot be read again (and, from a terminal, would wait for more).
fn rows_of_edge(
    path: &Path,
    format: Format,
    src: u64,
    dst: u64,
) -> Result<Vec<(u64, String, f32)>, EdgeListError> {
    let mut rows = Vec::new();
    if is_stdin(path) {
        return Ok(rows);
    }
    for_each_edge(
        open_text(path)?,
        &path.display().to_string(),
        format,
        |s, d, label, weight, line| {
            if (s, d) == (src, dst) {
                rows.push((line, label.to_string(), weight));
            }
        },
    )?;
    Ok(rows)
}

/// Calls `edge(src, dst, label, weight, line)` for each edge row of `reader`.
fn for_each_edge<R: BufRead>(
    reader: R,
    name: &str,
    format: Format,
    mut edge: impl FnMut(u64, u64, &str, f32, u64),
) -> Result<(), EdgeListError> {
    let mut csv = CsvRows::new(&EDGE_CSV);
    for_each_data_line(reader, name, format, |line, first, line_no| {
        let (s, d, label, weight) = match format {
            Format::Snap => parse_fields(
                line.split(u8::is_ascii_whitespace)
                    .filter(|f| !f.is_empty()),
                false,
            )
            .map_err(|e| separator_hint(e, line, format, false))?,
            Format::Csv => match csv
                .fields(line, first)
                .and_then(|fields| fields.map(|f| parse_fields(f, true)).transpose())
                .map_err(|e| separator_hint(e, line, format, false))?
            {
                Some(fields) => fields,
                None => return Ok(()), // The header.
            },
        };
        edge(s, d, label, weight, line_no);
        Ok(())
    })
}

/// `problem`, or what it likely comes from: a line read as one field (or a SNAP field that is no
/// id) that another separator than `format`'s splits, such as a CSV file named .txt, a tab-
/// separated .csv, or a spreadsheet's `;`-separated export (`vertices`: a `label-vertices`
/// file, always CSV).
fn separator_hint(problem: LineError, line: &[u8], format: Format, vertices: bool) -> LineError {
    const CSV_RULE: &str = "a CSV file's fields are separated by commas";
    const SPREADSHEET_RULE: &str = "a CSV file's fields are separated by commas (a spreadsheet \
                                    set to some languages writes `;`: save the file with commas)";
    const SNAP_RULE: &str = "this is read as SNAP text (the layout of a file not named .csv or \
                             .csv.gz, and of standard input), whose fields are separated by \
                             spaces or tabs; `graph load --format csv` reads CSV";
    let one_field = matches!(
        problem,
        LineError::TooFewFields(1) | LineError::NotIdAndLabel(1) | LineError::UnknownColumns { .. }
    );
    let has = |c: u8| line.contains(&c);
    let snap_suspect = one_field || matches!(problem, LineError::NotAnInteger(_));
    let other = |found, rule| LineError::OtherSeparator { found, rule };
    match format {
        Format::Snap if snap_suspect && has(b',') => LineError::CommaSeparated,
        Format::Snap if snap_suspect && has(b';') => other("`;`", SNAP_RULE),
        Format::Csv if one_field && !has(b',') && has(b'\t') => match vertices {
            true => other("a tab", CSV_RULE),
            false => LineError::TabSeparated,
        },
        Format::Csv if one_field && !has(b',') && has(b';') => other("`;`", SPREADSHEET_RULE),
        _ => problem,
    }
}

/// Calls `row(line, first, number)` for each line of `reader` that is neither blank nor a
/// comment (`#`, and in SNAP files also KONECT's `%`), trimmed (`first`: the first such line;
/// `number`: 1-based); a line's error comes back naming `name` and the line. A UTF-8 byte-order
/// mark is skipped.
fn for_each_data_line<R: BufRead>(
    mut reader: R,
    name: &str,
    format: Format,
    mut row: impl FnMut(&[u8], bool, u64) -> Result<(), LineError>,
) -> Result<(), EdgeListError> {
    let read_error = |line, error| EdgeListError::Read {
        file: name.to_owned(),
        line,
        error,
    };
    skip_bom(&mut reader).map_err(|e| read_error(1, e))?;
    let comment = |c: u8| c == b'#' || (c == b'%' && format == Format::Snap);
    let mut buf = Vec::with_capacity(256);
    let mut line_no = 0u64;
    let mut seen_data_line = false;
    loop {
        buf.clear();
        line_no += 1;
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| read_error(line_no, e))?;
        if read == 0 {
            return Ok(());
        }
        let line = buf.trim_ascii();
        // A carriage return within a line, comment or not: the file's lines end in CR alone
        // (read as one line, which a first comment would otherwise hide whole).
        let checked = if line.contains(&b'\r') {
            Err(LineError::CarriageReturn)
        } else if line.is_empty() || comment(line[0]) {
            continue;
        } else {
            let first = !std::mem::replace(&mut seen_data_line, true);
            row(line, first, line_no)
        };
        checked.map_err(|problem| EdgeListError::Line {
            file: name.to_owned(),
            line: line_no,
            problem,
        })?;
    }
}

/// One CSV line split into fields as RFC 4180 reads them: a field in double quotes may hold
/// commas and spaces, kept as written, with `""` for a quote; an unquoted field is trimmed and
/// holds no quote. A quote anywhere else is refused (`"1"2` is neither 1 nor 12, ` "a"` not
/// `a`). A quoted field cannot span lines here, which loses nothing: labels hold no control
/// characters. (csv-core, used before, cannot say which fields were quoted, so it trimmed the
/// spaces of `" road "` too, and read misplaced quotes somehow.) Its buffers are reused from
/// line to line.
#[derive(Default)]
struct CsvLine {
    /// The fields' bytes, unquoted, one after another.
    bytes: Vec<u8>,
    /// Where each field ends in `bytes`.
    ends: Vec<usize>,
}

impl CsvLine {
    fn split(&mut self, line: &[u8]) -> Result<(), LineError> {
        self.bytes.clear();
        self.ends.clear();
        let mut rest = line;
        loop {
            let next = if let Some(quoted) = rest.strip_prefix(b"\"") {
                // The closing quote is the first one not doubled.
                let mut i = 0;
                loop {
                    match (quoted.get(i), quoted.get(i + 1)) {
                        (None, _) => return Err(LineError::UnclosedQuote),
                        (Some(b'"'), Some(b'"')) => {
                            self.bytes.push(b'"');
                            i += 2;
                        }
                        (Some(b'"'), _) => break,
                        (Some(&c), _) => {
                            self.bytes.push(c);
                            i += 1;
                        }
                    }
                }
                let tail = &quoted[i + 1..];
                let gap = tail
                    .iter()
                    .take_while(|&&c| c == b' ' || c == b'\t')
                    .count();
                match tail.get(gap) {
                    None | Some(b',') => tail.get(gap + 1..),
                    Some(_) => return Err(LineError::BadQuotes),
                }
            } else {
                let end = rest.iter().position(|&c| c == b',').unwrap_or(rest.len());
                let field = &rest[..end];
                if field.contains(&b'"') {
                    return Err(LineError::BadQuotes);
                }
                self.bytes.extend_from_slice(field.trim_ascii());
                rest.get(end + 1..)
            };
            self.ends.push(self.bytes.len());
            match next {
                Some(after) => rest = after,
                None => return Ok(()),
            }
        }
    }

    fn fields(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.bytes[start..end])
    }

    /// A header is a first line whose fields are all names: none empty, none starting like a
    /// number (`src,dst`, `:START_ID,:END_ID`; not `1.0,person` or `-1,-2`, which are data with
    /// a bad id, refused as such).
    fn is_header(&self) -> bool {
        let name = |f: &[u8]| {
            f.first()
                .is_some_and(|&c| !c.is_ascii_digit() && !b"+-.".contains(&c))
        };
        // Empty fields aside (a trailing comma): data has at least two ids.
        let fields = || self.fields().map(<[u8]>::trim_ascii);
        fields().all(|f| f.is_empty() || name(f)) && fields().filter(|f| name(f)).count() >= 2
    }

    /// The role each field of this (header) line names: an index into `roles`, where
    /// `roles[i]` lists the names of role `i` (compared in lower case; Neo4j's `:NAME`,
    /// `:NAME(group)` and `name:type` are read as `name`), or [`UNNAMED`] for an empty field.
    /// `None` if a field names none, or two fields one role.
    fn roles(&self, roles: &[&[&str]]) -> Option<Vec<usize>> {
        let mut seen = vec![false; roles.len()];
        self.fields()
            .map(|field| {
                if field.trim_ascii().is_empty() {
                    return Some(UNNAMED);
                }
                let role = role_named(field, roles)?;
                (!std::mem::replace(&mut seen[role], true)).then_some(role)
            })
            .collect()
    }

    /// This line's fields joined again, for an error message.
    fn shown(&self) -> String {
        self.fields().map(shown).collect::<Vec<_>>().join(",")
    }
}

/// The role of a column whose header field is empty (a trailing comma): its fields are not read.
const UNNAMED: usize = usize::MAX;

/// The role out of `roles` that a header field names, if any (see [`CsvLine::roles`]).
fn role_named(field: &[u8], roles: &[&[&str]]) -> Option<usize> {
    let name = String::from_utf8_lossy(field.trim_ascii()).to_ascii_lowercase();
    let name = match name.strip_prefix(':') {
        Some(rest) => rest,
        None => name.split(':').next().unwrap_or_default(),
    };
    let name = name.split('(').next().unwrap_or_default();
    roles.iter().position(|names| names.contains(&name))
}

/// An edge file's header names for its columns, by role: the two ends, a label, a weight.
const EDGE_COLUMNS: [&[&str]; 4] = [
    &[
        "src",
        "source",
        "from",
        "start",
        "start_id",
        "from_id",
        "src_id",
        "source_id",
        "tail",
    ],
    &[
        "dst",
        "target",
        "to",
        "end",
        "end_id",
        "to_id",
        "dst_id",
        "target_id",
        "head",
    ],
    &[
        "label",
        "type",
        "relationship",
        "relation",
        "rel",
        "kind",
        "edge_label",
    ],
    &["weight", "w", "cost", "distance", "dist", "length"],
];

/// A vertex-label file's header names for its columns: the vertex, its label.
const VERTEX_COLUMNS: [&[&str]; 2] = [
    &["id", "vertex", "node", "vertex_id", "node_id"],
    &["label", "labels", "type", "kind", "vertex_label"],
];

/// A CSV line's fields, in the order its reader wants them.
type LineFields<'a> = Box<dyn Iterator<Item = &'a [u8]> + 'a>;

/// Which field of a CSV line holds which role (an index into a list of roles such as
/// [`EDGE_COLUMNS`]): by position, without a header or under one whose names are not all roles
/// (allowed only where the position says it all), or as the header names them.
#[derive(Debug, Clone, PartialEq)]
enum Columns {
    Positional,
    /// The role of each field, in order, and how many roles there are.
    Named(Vec<usize>, usize),
}

impl Columns {
    /// The columns `header` names, out of `kind.roles`; the first two roles (the ends; the
    /// vertex and its label) must be named. A header whose names are not all roles is taken as
    /// positional if it has two fields, each a name of neither kind of file or of the role at
    /// its place (`a,b` or `from,b` over two ids; `person,kind` over vertices and labels);
    /// otherwise it is refused (`src,label` over edges; `src,dst` or `id,weight` given to
    /// `label-vertices`): guessing which field is which would load labels as ids, or weights
    /// as labels.
    fn from_header(header: &CsvLine, kind: &CsvKind) -> Result<Self, LineError> {
        let roles = kind.roles;
        let in_place = |(at, field): (usize, &[u8])| match role_named(field, roles) {
            Some(role) => role == at,
            None => role_named(field, kind.other).is_none(),
        };
        match header.roles(roles) {
            Some(order) if order.contains(&0) && order.contains(&1) => {
                Ok(Columns::Named(order, roles.len()))
            }
            _ if header.fields().count() == 2 && header.fields().enumerate().all(in_place) => {
                Ok(Columns::Positional)
            }
            _ => Err(LineError::UnknownColumns {
                header: header.shown(),
                expected: kind.expected,
            }),
        }
    }

    /// A line's fields in role order (a role the line has no field for: empty), or by position.
    /// Refused: a line with more fields than the header, or (`kind.whole`) fewer, and a value
    /// in a column the header leaves unnamed (it would be dropped unread).
    fn arrange<'a>(
        &self,
        fields: impl Iterator<Item = &'a [u8]> + 'a,
        kind: &CsvKind,
    ) -> Result<LineFields<'a>, LineError> {
        let (order, roles) = match self {
            Columns::Positional => return Ok(Box::new(fields)),
            Columns::Named(order, roles) => (order, *roles),
        };
        let mut by_role: Vec<&[u8]> = vec![b""; roles];
        let mut count = 0;
        for field in fields {
            match order.get(count) {
                Some(&UNNAMED) if !field.trim_ascii().is_empty() => {
                    return Err(LineError::ValueInUnnamedColumn(count + 1));
                }
                Some(&UNNAMED) | None => {}
                Some(&role) => by_role[role] = field,
            }
            count += 1;
        }
        if count > order.len() || (kind.whole && count < order.len()) {
            return Err((kind.miscount)(count));
        }
        Ok(Box::new(by_role.into_iter()))
    }
}

/// What a kind of CSV file holds: its columns' roles and names, and how a line with the wrong
/// number of fields is refused.
struct CsvKind {
    roles: &'static [&'static [&'static str]],
    /// The other kind of file's column names: a header of those is that file, not this one.
    other: &'static [&'static [&'static str]],
    /// The columns in order, for the error that refuses a header.
    expected: &'static str,
    /// Whether a line under a header must have all its fields (else the missing are empty).
    whole: bool,
    /// The error for a line with `n` fields too many (or, `whole`, too few).
    miscount: fn(usize) -> LineError,
}

const EDGE_CSV: CsvKind = CsvKind {
    roles: &EDGE_COLUMNS,
    other: &VERTEX_COLUMNS,
    expected: "src,dst[,label][,weight]",
    whole: false,
    miscount: LineError::TooManyFields,
};

const VERTEX_CSV: CsvKind = CsvKind {
    roles: &VERTEX_COLUMNS,
    other: &EDGE_COLUMNS,
    expected: "id,label",
    whole: true,
    miscount: LineError::NotIdAndLabel,
};

/// The lines of one CSV file of a [`CsvKind`], read one after another.
struct CsvRows {
    kind: &'static CsvKind,
    line: CsvLine,
    columns: Columns,
}

impl CsvRows {
    fn new(kind: &'static CsvKind) -> Self {
        Self {
            kind,
            line: CsvLine::default(),
            columns: Columns::Positional,
        }
    }

    /// `line`'s fields in role order, or `None` if it is the header (`first`: the file's first
    /// data line), which then says where each field is.
    fn fields<'a>(
        &'a mut self,
        line: &[u8],
        first: bool,
    ) -> Result<Option<LineFields<'a>>, LineError> {
        self.line.split(line)?;
        if first && self.line.is_header() {
            self.columns = Columns::from_header(&self.line, self.kind)?;
            return Ok(None);
        }
        self.columns
            .arrange(self.line.fields(), self.kind)
            .map(Some)
    }
}

/// Skips a UTF-8 byte-order mark at the start of `reader` (spreadsheets write one), and refuses
/// UTF-16 text, whose byte-order mark says what it is (its ids would read as other bytes).
fn skip_bom(reader: &mut impl BufRead) -> io::Result<()> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let head = reader.fill_buf()?;
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the file is UTF-16 text (its byte-order mark says so); save it as UTF-8",
        ));
    }
    if head.starts_with(BOM) {
        reader.consume(BOM.len());
    }
    Ok(())
}

/// Two ids and, if `attrs` allows them, a label and a weight (missing: `""` and 1).
fn parse_fields<'a>(
    mut fields: impl Iterator<Item = &'a [u8]>,
    attrs: bool,
) -> Result<(u64, u64, &'a str, f32), LineError> {
    let (a, b) = match (fields.next(), fields.next()) {
        (Some(a), Some(b)) => (a, b),
        (first, _) => return Err(LineError::TooFewFields(usize::from(first.is_some()))),
    };
    let (label, weight) = match attrs {
        true => (fields.next(), fields.next()),
        false => (None, None),
    };
    let extra = fields.count();
    if extra > 0 && !attrs {
        return Err(LineError::ExtraColumns(2 + extra));
    }
    if extra > 0 {
        let given = 2 + usize::from(label.is_some()) + usize::from(weight.is_some());
        return Err(LineError::TooManyFields(given + extra));
    }
    let label = match label {
        None => "",
        Some(field) => parse_label(field)?,
    };
    let weight = match weight {
        None => 1.0,
        Some([]) => 1.0,
        Some(field) => std::str::from_utf8(field.trim_ascii())
            .ok()
            .and_then(|w| w.parse::<f32>().ok())
            .filter(|w| w.is_finite() && *w >= 0.0)
            // One form for zero, as the module stores it: -0 and 0 are one weight.
            .map(|w| w + 0.0)
            .ok_or_else(|| LineError::BadWeight(shown(field)))?,
    };
    Ok((parse_id(a)?, parse_id(b)?, label, weight))
}

/// A label name: at most 64 bytes of UTF-8, without control characters.
fn parse_label(field: &[u8]) -> Result<&str, LineError> {
    let label = std::str::from_utf8(field).map_err(|_| LineError::LabelNotUtf8(shown(field)))?;
    match label.len() <= 64 && !label.chars().any(char::is_control) {
        true => Ok(label),
        false => Err(LineError::BadLabel(shown(field))),
    }
}

/// A vertex id; spaces around it, as in a quoted `" 42 "`, are no part of it.
fn parse_id(field: &[u8]) -> Result<u64, LineError> {
    let field = field.trim_ascii();
    if field.is_empty() {
        return Err(LineError::EmptyField);
    }
    if !field.iter().all(u8::is_ascii_digit) {
        return Err(LineError::NotAnInteger(shown(field)));
    }
    field
        .iter()
        .try_fold(0u64, |acc, &b| {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .ok_or_else(|| LineError::TooLarge(shown(field)))
}

/// A field as text for an error message: control characters escaped (`\u{1}`), cut short at a
/// character boundary if it is long (e.g. a binary file).
fn shown(field: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(field);
    let mut out = String::new();
    for c in text.chars().take(MAX) {
        match c.is_control() {
            true => out.extend(c.escape_debug()),
            false => out.push(c),
        }
    }
    if text.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn skipping_rows_keeps_labels_and_weights_aligned() {
        let mut list = EdgeList::new();
        list.push_with(1, 2, "a", 1.5);
        list.push_with(2, 3, "b", 2.5);
        list.push_with(3, 4, "", 3.5);
        list.skip_first(1);
        assert_eq!(list.iter().collect::<Vec<_>>(), [(2, 3), (3, 4)]);
        assert_eq!((list.attrs(0), list.attrs(1)), (("b", 2.5), ("", 3.5)));
        list.skip_first(9);
        assert!(list.is_empty() && list.labels.is_empty() && list.weights.is_empty());
    }

    #[test]
    fn vertex_label_files_name_their_bad_lines() {
        let other = |found| LineError::OtherSeparator {
            found,
            rule: match found {
                "a tab" => "a CSV file's fields are separated by commas",
                _ => {
                    "a CSV file's fields are separated by commas (a spreadsheet set to some \
                     languages writes `;`: save the file with commas)"
                }
            },
        };
        let text = "# comment\nid,label\n1,person\n2,\n3,city\n1,person\n";
        let got = parse_vertex_labels(text.as_bytes(), "v.csv").unwrap();
        assert_eq!(got.ids, [1, 2, 3, 1]);
        assert_eq!(got.label_names, ["person", "", "city"]);
        assert_eq!(got.labels, [0, 1, 2, 0]);
        for (text, line, problem) in [
            ("1,a\n2\n", 2, LineError::NotIdAndLabel(1)),
            ("1,a,b\n", 1, LineError::NotIdAndLabel(3)),
            ("1,a\nx,b\n", 2, LineError::NotAnInteger("x".into())),
            ("1,a\n2,\u{1}\n", 2, LineError::BadLabel("\\u{1}".into())),
            ("1,a\r2,b\r", 1, LineError::CarriageReturn),
            ("1\tperson\n", 1, other("a tab")),
            ("id\tlabel\n1\tperson\n", 1, other("a tab")),
            ("1,a\n2;city\n", 2, other("`;`")),
        ] {
            match parse_vertex_labels(text.as_bytes(), "v.csv") {
                Err(EdgeListError::Line {
                    line: l,
                    problem: p,
                    ..
                }) => assert_eq!((l, p), (line, problem), "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    use super::*;
    use std::io::Write;

    #[test]
    fn label_and_weight_columns_start_at_the_first_row_that_needs_them() {
        let mut list = EdgeList::new();
        list.push(1, 2);
        assert!(!list.has_attrs());
        list.push_with(2, 3, "", 2.5);
        list.push_with(3, 4, "road", 1.0);
        list.push(4, 5);
        assert_eq!(list.weights, [1.0, 2.5, 1.0, 1.0]);
        assert_eq!(
            (list.labels.as_slice(), list.label_names.as_slice()),
            (&[0, 0, 1, 0][..], &["".to_string(), "road".into()][..])
        );
        assert_eq!((list.attrs(1), list.attrs(2)), (("", 2.5), ("road", 1.0)));
        let mut first = EdgeList::new();
        first.push_with(7, 8, "rail", 0.5);
        assert_eq!((first.labels, first.weights), (vec![1], vec![0.5]));
    }

    #[test]
    fn sorted_is_distinct_and_ordered() {
        let mut list = EdgeList::new();
        for (s, d) in [(5, 1), (2, 9), (5, 1), (2, 3), (7, 7)] {
            list.push(s, d);
        }
        let sorted = list.sorted();
        assert_eq!(sorted.src, [2, 2, 5, 7]);
        assert_eq!(sorted.dst, [3, 9, 1, 7]);
        assert_eq!(EdgeList::new().sorted(), EdgeList::new());
    }

    /// Each line named with what it says, whatever the order the sorted rows put them in.
    #[test]
    fn a_conflict_names_each_line_with_its_own_values() {
        let dir = tempfile::tempdir().unwrap();
        // CSV under another name, read as what it was read as (`graph load --format csv`).
        let file = dir.path().join("two.txt");
        std::fs::write(&file, "1,2,b\n1,2,b\n3,4\n1,2,\n1,2,a,2\n").unwrap();
        let list = read_edge_list_as(&file, Format::Csv).unwrap().sorted();
        let error = list.conflict_error(&file, Format::Csv).unwrap();
        assert!(
            error.ends_with(
                "lines 1, 2, 4, 5 give the edge 1 → 2 two ways: line 1 label `b` and weight 1, \
                 line 4 no label and weight 1; an edge has one label and one weight"
            ),
            "{error}"
        );
        // From a file that cannot be read again: the values alone.
        std::fs::remove_file(&file).unwrap();
        let error = list.conflict_error(&file, Format::Csv).unwrap();
        assert!(
            error.contains("its lines give the edge 1 → 2 two ways: no label and weight 1 and "),
            "{error}"
        );
    }

    /// A directory is refused as what it is.
    #[test]
    fn a_directory_is_no_edge_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_edge_list(dir.path()).unwrap_err().to_string();
        assert!(err.ends_with(": it is a directory"), "{err}");
    }

    fn parse(text: &str, format: Format) -> Result<EdgeList, EdgeListError> {
        parse_edge_list(text.as_bytes(), "test.txt", format)
    }

    fn rows(list: &EdgeList) -> Vec<(u64, u64)> {
        list.iter().collect()
    }

    /// A file whose lines end in CR alone is refused as such, not as one long line; messages
    /// say `no label` and count fields in words.
    #[test]
    fn bare_carriage_returns_and_plain_messages() {
        for format in [Format::Snap, Format::Csv] {
            let (line, problem, message) = line_error("1 2\r2 3\r", format);
            assert_eq!(
                (line, problem),
                (1, LineError::CarriageReturn),
                "{format:?}"
            );
            assert!(message.contains("CR alone"), "{message}");
        }
        // Nor hidden behind a first comment (SNAP files start with one).
        let (line, problem, _) = line_error("# Directed graph\r1 2\r2 3\r", Format::Snap);
        assert_eq!((line, problem), (1, LineError::CarriageReturn));
        // CRLF line ends are read as ever.
        assert_eq!(parse("1 2\r\n2 3\r\n", Format::Snap).unwrap().len(), 2);
        let two = LineError::TwoLabels {
            id: 7,
            label: String::new(),
            earlier: "a".into(),
            earlier_line: 3,
        };
        assert_eq!(
            two.to_string(),
            "vertex 7 is given no label here and label `a` on line 3"
        );
        assert_eq!(
            LineError::NotIdAndLabel(1).to_string(),
            "expected a vertex id and a label, found 1 field"
        );
    }

    fn line_error(text: &str, format: Format) -> (u64, LineError, String) {
        match parse(text, format) {
            Err(e @ EdgeListError::Line { .. }) => {
                let message = e.to_string();
                let EdgeListError::Line { line, problem, .. } = e else {
                    unreachable!()
                };
                (line, problem, message)
            }
            other => panic!("expected a line error, got {other:?}"),
        }
    }

    #[test]
    fn snap_with_comments_blank_lines_tabs_and_spaces() {
        let text = "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n\n1 2\r\n  7 \t 900000000000  \n\t\n2\t2\n0\t1";
        let list = parse(text, Format::Snap).unwrap();
        assert_eq!(
            rows(&list),
            [(0, 1), (1, 2), (7, 900_000_000_000), (2, 2), (0, 1)],
            "file order, self-loop and duplicate kept, last line without newline read"
        );
    }

    #[test]
    fn csv_with_and_without_header() {
        let with = parse("# c\nsrc,dst\n1,2\n 3 , 4 \n", Format::Csv).unwrap();
        assert_eq!(rows(&with), [(1, 2), (3, 4)]);
        let without = parse("1,2\n3,4\n", Format::Csv).unwrap();
        assert_eq!(rows(&without), [(1, 2), (3, 4)]);
    }

    #[test]
    fn csv_header_only_allowed_first() {
        let (line, problem, _) = line_error("src,dst\n1,2\nsrc,dst\n", Format::Csv);
        assert_eq!(line, 3);
        assert_eq!(problem, LineError::NotAnInteger("src".into()));
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert!(parse("", Format::Snap).unwrap().is_empty());
        assert!(parse("# nothing\n\n", Format::Snap).unwrap().is_empty());
        assert!(parse("src,dst\n", Format::Csv).unwrap().is_empty());
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let (line, problem, message) = line_error("1 2\n# c\n\n17\n", Format::Snap);
        assert_eq!((line, problem), (4, LineError::TooFewFields(1)));
        assert_eq!(
            message,
            "test.txt: line 4: expected two vertex ids, found 1"
        );

        let (line, problem, message) = line_error("1 2\n3 4\nx12 5\n", Format::Snap);
        assert_eq!((line, problem), (3, LineError::NotAnInteger("x12".into())));
        assert_eq!(
            message,
            "test.txt: line 3: `x12` is not an unsigned integer"
        );

        let (line, problem, message) = line_error("% asym posweighted\n1 2 0.5\n", Format::Snap);
        assert_eq!((line, problem), (2, LineError::ExtraColumns(3)));
        assert!(message.contains("`awk '{print $1, $2}'`"), "{message}");

        // A CSV file under another name (such as an export renamed .txt) says so.
        for text in ["src,dst,label,weight\n1,2,,1\n", "1,2\n", "1, 2\n"] {
            let (line, problem, _) = line_error(text, Format::Snap);
            assert_eq!((line, problem), (1, LineError::CommaSeparated), "{text:?}");
        }

        let (line, problem, _) = line_error("1 -2\n", Format::Snap);
        assert_eq!((line, problem), (1, LineError::NotAnInteger("-2".into())));

        let (line, problem, _) = line_error("1 18446744073709551616\n", Format::Snap);
        assert_eq!(
            (line, problem),
            (1, LineError::TooLarge("18446744073709551616".into()))
        );

        let (line, problem, _) = line_error("1,2\n3,\n", Format::Csv);
        assert_eq!((line, problem), (2, LineError::EmptyField));

        let (line, problem, _) = line_error("1,2\n3\t4\n", Format::Csv);
        assert_eq!((line, problem), (2, LineError::TabSeparated));

        // Semicolons (a spreadsheet's export in some languages), in either format, header or
        // not; a line of one id and no separator keeps its own error.
        for (text, format, at, rule) in [
            ("1;2\n", Format::Csv, 1, "separated by commas"),
            ("src;dst\n1;2\n", Format::Csv, 1, "separated by commas"),
            ("1,2\n3;4;road;1.5\n", Format::Csv, 2, "separated by commas"),
            ("1;2\n", Format::Snap, 1, "spaces or tabs"),
            ("1 2\n3;4 5\n", Format::Snap, 2, "spaces or tabs"),
        ] {
            let (line, problem, message) = line_error(text, format);
            assert!(
                matches!(problem, LineError::OtherSeparator { found: "`;`", .. }),
                "{text:?}: {problem:?}"
            );
            assert_eq!(line, at, "{text:?}");
            assert!(message.contains(rule), "{text:?}: {message}");
        }
        let (line, problem, _) = line_error("1,2\n5\n", Format::Csv);
        assert_eq!((line, problem), (2, LineError::TooFewFields(1)));
        let (line, problem, _) = line_error("src\tdst\n", Format::Csv);
        assert_eq!((line, problem), (1, LineError::TabSeparated));

        let (line, problem, _) = line_error("1,2,road,1,x\n", Format::Csv);
        assert_eq!((line, problem), (1, LineError::TooManyFields(5)));

        for bad in ["-1", "abc", "inf", "NaN"] {
            let (line, problem, _) = line_error(&format!("1,2\n1,3,road,{bad}\n"), Format::Csv);
            assert_eq!((line, problem), (2, LineError::BadWeight(bad.into())));
        }
        let (line, problem, _) = line_error("1,2,a\tb\n", Format::Csv);
        assert_eq!((line, problem), (1, LineError::BadLabel("a\\tb".into())));
        let (line, problem, _) = line_error(&format!("1,2,{}\n", "x".repeat(65)), Format::Csv);
        assert!(matches!(problem, LineError::BadLabel(_)) && line == 1);
        // Latin-1 text is not taken for a label that is too long or has control characters.
        match parse_edge_list(&b"1,2,a\n3,4,caf\xe9\n"[..], "t.csv", Format::Csv) {
            Err(EdgeListError::Line { line, problem, .. }) => {
                assert_eq!(
                    (line, problem),
                    (2, LineError::LabelNotUtf8("caf\u{fffd}".into()))
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn csv_labels_and_weights() {
        let text = "src,dst,label,weight\n1,2,road,2.5\n2,3,,\n3,4,rail\n4,5\n5,6,,0\n";
        let list = parse(text, Format::Csv).unwrap();
        let attrs: Vec<(&str, f32)> = (0..list.len()).map(|i| list.attrs(i)).collect();
        assert_eq!(
            attrs,
            [
                ("road", 2.5),
                ("", 1.0),
                ("rail", 1.0),
                ("", 1.0),
                ("", 0.0)
            ]
        );
        // -0 is the weight 0: one edge, not two that disagree.
        let zeros = parse("1,2,,0\n1,2,,-0\n", Format::Csv).unwrap().sorted();
        assert_eq!(
            zeros.conflict_error(Path::new("unread.csv"), Format::Csv),
            None
        );
        assert_eq!((zeros.len(), zeros.first_conflict()), (1, None));
        // A SNAP file has no label or weight columns.
        let (_, problem, _) = line_error("1 2 road\n", Format::Snap);
        assert_eq!(problem, LineError::ExtraColumns(3));
    }

    #[test]
    fn csv_as_spreadsheets_and_databases_write_it() {
        // Every field quoted (Neo4j's export), a comma and a quote inside a label.
        let text = "\"src\",\"dst\",\"label\"\n\"1\",\"2\",\"KNOWS\"\n3,4,\"a, b\"\n5,6,\"say \"\"hi\"\"\"\n";
        let list = parse(text, Format::Csv).unwrap();
        assert_eq!(rows(&list), [(1, 2), (3, 4), (5, 6)]);
        let labels: Vec<&str> = (0..list.len()).map(|i| list.attrs(i).0).collect();
        assert_eq!(labels, ["KNOWS", "a, b", "say \"hi\""]);
        // Spaces inside quotes belong to the label (RFC 4180); around an unquoted field, or
        // around a quoted id or weight, they do not.
        let text = "10,11,\" road \"\n11,12,\" \"\n\" 12 \",13, rail ,\" 2.5 \"\n";
        let list = parse(text, Format::Csv).unwrap();
        assert_eq!(rows(&list), [(10, 11), (11, 12), (12, 13)]);
        let attrs: Vec<(&str, f32)> = (0..list.len()).map(|i| list.attrs(i)).collect();
        assert_eq!(attrs, [(" road ", 1.0), (" ", 1.0), ("rail", 2.5)]);
        let got = parse_vertex_labels("1,\" person \"\n2,city \n".as_bytes(), "v.csv").unwrap();
        assert_eq!(got.label_names, [" person ", "city"]);
        // Quotes out of place are refused, not read somehow.
        for bad in ["\"1\"2,3\n", "1,2,\"ab\"c\n", "1,2,a\"b\n"] {
            assert_eq!(
                line_error(bad, Format::Csv).1,
                LineError::BadQuotes,
                "{bad:?}"
            );
        }
        // A line break inside quotes is a quote the line does not close.
        let (line, problem, _) = line_error("1,2,x\n1,2,\"a\nb\",1\n", Format::Csv);
        assert_eq!((line, problem), (2, LineError::UnclosedQuote));
        assert_eq!(
            rows(&parse("\"1\" ,\"2\"  ,\n", Format::Csv).unwrap()),
            [(1, 2)]
        );
        assert_eq!(
            line_error("1, \"2\"\n", Format::Csv).1,
            LineError::BadQuotes
        );
        // A byte-order mark, with and without a header; CRLF line ends; blank lines.
        for text in [
            "\u{feff}1,2\r\n3,4\r\n",
            "\u{feff}src,dst\r\n1,2\r\n\r\n  \r\n3,4",
        ] {
            assert_eq!(
                rows(&parse(text, Format::Csv).unwrap()),
                [(1, 2), (3, 4)],
                "{text:?}"
            );
        }
        assert_eq!(
            rows(&parse("\u{feff}1 2\n", Format::Snap).unwrap()),
            [(1, 2)]
        );
        // UTF-16 text (both byte orders) is refused as such, not as bad ids or a header.
        for bom in [&b"\xFF\xFE"[..], b"\xFE\xFF"] {
            let text = [bom, b"1\x002\x00\n\x00"].concat();
            let err = parse_edge_list(&text[..], "wide.csv", Format::Csv).unwrap_err();
            assert!(
                err.to_string().contains("line 1") && err.to_string().contains("UTF-16"),
                "{err}"
            );
        }
        // A carriage return inside a line is no line end (old Mac files are refused as such,
        // not read as one header line).
        let (line, problem, _) = line_error("1,2\r3,4\n", Format::Csv);
        assert_eq!((line, problem), (1, LineError::CarriageReturn));
        let (line, problem, _) = line_error("src,dst\r1,2\r3,4", Format::Csv);
        assert_eq!((line, problem), (1, LineError::CarriageReturn));
        // Lines are counted across blank, comment and CRLF lines.
        let (line, problem, _) = line_error("1,2\r\n\r\n# c\r\n5\r\n", Format::Csv);
        assert_eq!((line, problem), (4, LineError::TooFewFields(1)));
    }

    #[test]
    fn a_header_is_names_and_says_where_each_column_is() {
        // Data with a bad id on line 1 is refused as on any line, not skipped as a header.
        for (text, problem) in [
            ("-1,-2\n3,4\n", LineError::NotAnInteger("-1".into())),
            ("1.0,2\n", LineError::NotAnInteger("1.0".into())),
            (",,\n1,2\n", LineError::EmptyField),
            (
                "18446744073709551616,2\n",
                LineError::TooLarge("18446744073709551616".into()),
            ),
        ] {
            let (line, got, _) = line_error(text, Format::Csv);
            assert_eq!((line, got), (1, problem), "{text:?}");
        }
        let edges = |text: &str| {
            let list = parse(text, Format::Csv).unwrap();
            (0..list.len())
                .map(|i| {
                    (
                        list.src[i],
                        list.dst[i],
                        list.attrs(i).0.to_owned(),
                        list.attrs(i).1,
                    )
                })
                .collect::<Vec<_>>()
        };
        // A weight column named as one is a weight, not a label.
        assert_eq!(edges("src,dst,weight\n1,2,0.5\n"), [(1, 2, "".into(), 0.5)]);
        assert_eq!(
            edges(":START_ID,:END_ID,:TYPE,weight:double\n1,2,KNOWS,2.5\n"),
            [(1, 2, "KNOWS".into(), 2.5)]
        );
        assert_eq!(edges("Target,Source\n1,2\n"), [(2, 1, "".into(), 1.0)]);
        assert_eq!(
            edges("a,b\n1,2\n"),
            [(1, 2, "".into(), 1.0)],
            "two columns: by position"
        );
        for header in ["a,b,c", "src,dst,timestamp", "src,dst,label,label"] {
            let (line, problem, message) = line_error(&format!("{header}\n1,2,3\n"), Format::Csv);
            assert!(
                matches!(problem, LineError::UnknownColumns { .. }) && line == 1,
                "{header}"
            );
            assert!(message.contains("src,dst[,label][,weight]"), "{message}");
        }
        let (line, problem, _) = line_error("src,dst,weight\n1,2,0.5,9\n", Format::Csv);
        assert_eq!((line, problem), (2, LineError::TooManyFields(4)));

        assert_eq!(
            edges("src,dst,label,\n1,2,a,\n"),
            [(1, 2, "a".into(), 1.0)],
            "a trailing comma"
        );
        // A value under a column the header leaves unnamed would be dropped: refused.
        for (text, field) in [
            ("src,dst,label,\n1,2,road,5\n", 4),
            ("src,,dst\n1,road,2\n", 2),
        ] {
            let (line, problem, _) = line_error(text, Format::Csv);
            assert_eq!((line, problem), (2, LineError::ValueInUnnamedColumn(field)));
        }
        assert_eq!(
            edges(":START_ID(User),:END_ID(User),:TYPE\n1,2,KNOWS\n"),
            [(1, 2, "KNOWS".into(), 1.0)],
            "Neo4j's id groups"
        );
        // A header of two names, one of which names another column (of this kind of file or
        // the other), is refused rather than read by position.
        for header in [
            "id,label",
            "src,label",
            "src,weight",
            "label,dst",
            "node,b",
            "weight,cost",
            "src,src",
            "src,type",
        ] {
            let (line, problem, _) = line_error(&format!("{header}\n1,2\n"), Format::Csv);
            assert!(
                matches!(problem, LineError::UnknownColumns { .. }) && line == 1,
                "{header}"
            );
        }
        for header in [
            "src,dst",
            "id,weight",
            "id,dst",
            "vertex,src",
            "label,x",
            "type,label",
        ] {
            match parse_vertex_labels(format!("{header}\n1,2\n").as_bytes(), "v.csv") {
                Err(EdgeListError::Line {
                    line: 1, problem, ..
                }) => {
                    assert!(problem.to_string().contains("id,label"), "{problem}")
                }
                other => panic!("{header}: {other:?}"),
            }
        }
        // Two names of neither kind, or of the column at their place: read by position.
        for header in ["a,b", "from,b", "a,target", "person,friend"] {
            assert_eq!(
                edges(&format!("{header}\n1,2\n")),
                [(1, 2, "".into(), 1.0)],
                "{header}"
            );
        }
        for header in ["person,kind", "node,b", "a,b"] {
            let labels = parse_vertex_labels(format!("{header}\n1,x\n").as_bytes(), "v.csv");
            assert_eq!(labels.unwrap().len(), 1, "{header}");
        }
        // Under a header a vertex-label line still needs both fields.
        for (text, found) in [("id,label\n7,a\n8\n", 1), ("id,label\n7,a,b\n", 3)] {
            match parse_vertex_labels(text.as_bytes(), "v.csv") {
                Err(EdgeListError::Line { problem, .. }) => {
                    assert_eq!(problem, LineError::NotIdAndLabel(found), "{text:?}")
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let vertices = parse_vertex_labels("label,id\nperson,7\n".as_bytes(), "v.csv").unwrap();
        assert_eq!(
            (vertices.ids, vertices.label_names),
            (vec![7], vec!["person".to_string()])
        );
        match parse_vertex_labels("1.0,person\n2,city\n".as_bytes(), "v.csv") {
            Err(EdgeListError::Line {
                line: 1, problem, ..
            }) => {
                assert_eq!(problem, LineError::NotAnInteger("1.0".into()))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn snap_reads_konect_comments() {
        let text = "% sym unweighted\n% 2 3 3\n1 2\n2\t3\n";
        assert_eq!(rows(&parse(text, Format::Snap).unwrap()), [(1, 2), (2, 3)]);
    }

    #[test]
    fn a_vertex_given_two_labels_names_both_lines() {
        match parse_vertex_labels("1,a\n2,b\n# c\n1,a\n1,b\n".as_bytes(), "v.csv") {
            Err(EdgeListError::Line { line, problem, .. }) => assert_eq!(
                (line, problem.to_string()),
                (
                    5,
                    "vertex 1 is given label `b` here and label `a` on line 1".into()
                )
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn many_distinct_labels_keep_their_indices() {
        let text: String = (0..50_000)
            .map(|i| format!("{i},{},l{}\n", i + 1, i % 20_000))
            .collect();
        let list = parse(&text, Format::Csv).unwrap();
        assert_eq!(list.label_names.len(), 20_001, "\"\" and 20,000 names");
        for i in [0, 19_999, 20_000, 49_999] {
            assert_eq!(list.attrs(i).0, format!("l{}", i % 20_000));
        }
        // A list built around a copy of the names (as `sorted` builds one) interns into it.
        let mut sorted = list.sorted();
        sorted.push_with(9, 9, "l5", 1.0);
        sorted.push_with(9, 10, "new", 1.0);
        assert_eq!(sorted.label_names.len(), 20_002);
        let last = sorted.len() - 1;
        assert_eq!(
            (sorted.attrs(last - 1).0, sorted.attrs(last).0),
            ("l5", "new")
        );
        let mut vertices = VertexLabels::default();
        for i in 0..30_000 {
            vertices.push(i, &format!("v{i}"));
        }
        assert_eq!(
            (vertices.label_names.len(), vertices.labels[29_999]),
            (30_000, 29_999)
        );
    }

    #[test]
    fn u64_max_is_a_valid_id() {
        let list = parse("18446744073709551615 0\n", Format::Snap).unwrap();
        assert_eq!(rows(&list), [(u64::MAX, 0)]);
    }

    #[test]
    fn format_from_path() {
        assert_eq!(Format::from_path(Path::new("a/b.csv")), Format::Csv);
        assert_eq!(Format::from_path(Path::new("b.CSV.gz")), Format::Csv);
        assert_eq!(
            Format::from_path(Path::new("com-lj.ungraph.txt.gz")),
            Format::Snap
        );
        assert_eq!(Format::from_path(Path::new("edges")), Format::Snap);
    }

    fn write_gz(path: &Path, text: &str) {
        let file = File::create(path).unwrap();
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap();
    }

    #[test]
    fn reads_files_plain_gzip_and_csv() {
        let dir = tempfile::tempdir().unwrap();
        let text = "# snap\n1\t2\n3\t4\n";

        let plain = dir.path().join("g.txt");
        std::fs::write(&plain, text).unwrap();
        assert_eq!(rows(&read_edge_list(&plain).unwrap()), [(1, 2), (3, 4)]);

        let gz = dir.path().join("g.txt.gz");
        write_gz(&gz, text);
        assert_eq!(rows(&read_edge_list(&gz).unwrap()), [(1, 2), (3, 4)]);

        // Detected by magic bytes even without the suffix.
        let disguised = dir.path().join("g.edges");
        write_gz(&disguised, text);
        assert_eq!(rows(&read_edge_list(&disguised).unwrap()), [(1, 2), (3, 4)]);

        let csv = dir.path().join("g.csv.gz");
        write_gz(&csv, "src,dst\n5,6\n");
        assert_eq!(rows(&read_edge_list(&csv).unwrap()), [(5, 6)]);
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let err = read_edge_list(&missing).unwrap_err();
        assert!(matches!(err, EdgeListError::Open { .. }));
        assert!(err.to_string().contains("missing.txt"), "{err}");

        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, "1 2\n3 x\n").unwrap();
        let err = read_edge_list(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.txt: line 2: `x` is not"), "{err}");

        // A byte changed inside the compressed data (stored, so the change shows as a bad line):
        // the error says the file is damaged, not only that a line is bad.
        let mut stored = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
        stored.write_all(b"1 2\n3 4\n5 6\n").unwrap();
        let mut bytes = stored.finish().unwrap();
        let at = bytes.windows(3).position(|w| w == b"3 4").unwrap();
        bytes[at] = b'x';
        let flipped = dir.path().join("flipped.txt.gz");
        std::fs::write(&flipped, bytes).unwrap();
        let err = read_edge_list(&flipped).unwrap_err();
        assert!(matches!(err, EdgeListError::Damaged { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("line 2: `x` is not"), "{message}");
        assert!(!message.contains("cut short"), "{message}");

        // Other compressions are named, not read as text.
        for (name, bytes) in [
            ("e.txt.xz", &b"\xFD7zXZ\x00\x00\x04"[..]),
            ("e.csv.zst", &b"\x28\xB5\x2F\xFD\x24"[..]),
            ("e.bz2", &b"BZh91AY&SY"[..]),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let err = read_edge_list(&path).unwrap_err().to_string();
            assert!(err.contains("-compressed; only gzip is read"), "{err}");
        }

        let corrupt = dir.path().join("corrupt.txt.gz");
        std::fs::write(&corrupt, b"\x1f\x8bnot really gzip").unwrap();
        let err = read_edge_list(&corrupt).unwrap_err();
        assert!(matches!(err, EdgeListError::Read { .. }), "{err:?}");
        assert!(err.to_string().contains("corrupt.txt.gz"), "{err}");

        // Cut short, or followed by bytes that are not gzip (which `gzip -d` drops with a
        // warning): the error says what that can be, at the line where the reading stopped.
        let text: String = (0..2_000).map(|i| format!("{i} {}\n", i + 1)).collect();
        let whole = dir.path().join("whole.txt.gz");
        write_gz(&whole, &text);
        let bytes = std::fs::read(&whole).unwrap();
        for (name, bytes) in [
            ("cut.txt.gz", bytes[..bytes.len() / 2].to_vec()),
            ("tail.txt.gz", bytes[..bytes.len() - 4].to_vec()),
            ("trailing.txt.gz", [&bytes[..], b"not gzip\n"].concat()),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let err = read_edge_list(&path).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{}: line ", path.display()))
                    && err.contains("damaged, or followed by bytes that are not gzip"),
                "{err}"
            );
        }

        let plain = dir.path().join("plain.txt.gz");
        std::fs::write(&plain, b"1 2\n").unwrap();
        let err = read_edge_list(&plain).unwrap_err().to_string();
        assert!(
            err.contains("line 1") && err.contains("not gzip-compressed"),
            "{err}"
        );
    }

    #[test]
    fn summary_on_a_hand_checked_graph() {
        // Rows: 1-2, 2-3, 3-1, 3-4, 4-4 (self-loop), 1-2 (duplicate).
        // Row degrees: 1:3, 2:3, 3:3, 4:3 (one from 3-4, two from the self-loop).
        let mut list = EdgeList::new();
        for (s, d) in [(1, 2), (2, 3), (3, 1), (3, 4), (4, 4), (1, 2)] {
            list.push(s, d);
        }
        let expected = Summary {
            vertices: 4,
            edges: 6,
            max_degree: 3,
            mean_degree: 3.0,
        };
        assert_eq!(list.summary(), expected);

        // A hub with sparse ids takes the sort path (max id >= 2 * rows).
        let mut sparse = EdgeList::new();
        for (s, d) in [(10, 1 << 40), (10, 7), (7, 1 << 40)] {
            sparse.push(s, d);
        }
        let s = sparse.summary();
        assert_eq!((s.vertices, s.edges, s.max_degree), (3, 3, 2));
        assert!((s.mean_degree - 2.0).abs() < 1e-12);

        let mut hub = EdgeList::new();
        for leaf in 1..=5 {
            hub.push(0, leaf);
        }
        let s = hub.summary();
        assert_eq!((s.vertices, s.edges, s.max_degree), (6, 5, 5));
        assert!((s.mean_degree - 10.0 / 6.0).abs() < 1e-12);

        assert_eq!(EdgeList::new().summary(), Summary::default());
    }
}
