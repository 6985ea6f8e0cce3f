//! `graph export`'s files: the graph as CSV that `graph load` (the edges) and
//! `graph label-vertices` (the vertices) read back, optionally gzip-compressed (a name ending in
//! `.gz`). Each file is written beside its destination and renamed into place once complete, so
//! an export that fails leaves no partial file under the name asked for.

use crate::edgelist::{Format, gzip_name};
use crate::graph::ExportPage;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The edge file's header: the column names `graph load` reads.
pub const EDGE_HEADER: &str = "src,dst,label,weight";
/// The vertex file's header: the column names `graph label-vertices` reads.
pub const VERTEX_HEADER: &str = "id,label";

/// A file being written under a temporary name, removed if dropped before it is finished.
struct Output {
    path: PathBuf,
    partial: PathBuf,
    /// `None` once finished.
    out: Option<Sink>,
}

enum Sink {
    Plain(BufWriter<File>),
    Gz(GzEncoder<BufWriter<File>>),
}

/// Where an export writes `path`: the file a symbolic link points to (the link stays), checked
/// to be a regular file or none yet. A pipe or a device is refused: the file is written beside
/// its destination and renamed into place, which would replace it.
fn destination(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..40 {
        // `/dev/stdout` and the like lead to a file this process has open (where the shell sent
        // its output): replacing that file would drop what was written to it since.
        if path.starts_with("/proc") || path.starts_with("/dev/fd") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a file descriptor of this process (standard output?): an export \
                     writes files of its own; give a file name",
                    path.display()
                ),
            ));
        }
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(meta) if !meta.is_file() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not a regular file: an export writes a file beside it and renames \
                         it into place",
                        path.display()
                    ),
                ));
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: too many levels of symbolic links", path.display()),
    ))
}

/// `path` from the root, through its directory's real path (which exists; the file may not).
fn absolute(path: &Path) -> PathBuf {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    match (
        std::fs::canonicalize(dir.unwrap_or(Path::new("."))),
        path.file_name(),
    ) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_owned(),
    }
}

/// `e` with `path` named in its message.
fn naming(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Where the file for `path` is written until it is complete: `path` with `.partial` added.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    PathBuf::from(partial)
}

impl Output {
    fn create(path: &Path, header: &str) -> io::Result<Self> {
        let partial = partial_path(path);
        let file = BufWriter::new(File::create(&partial).map_err(|e| naming(&partial, e))?);
        let out = match gzip_name(path) {
            true => Sink::Gz(GzEncoder::new(file, Compression::fast())),
            false => Sink::Plain(file),
        };
        let mut output = Self {
            path: path.to_owned(),
            partial,
            out: Some(out),
        };
        writeln!(output.writer(), "{header}")?;
        Ok(output)
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self.out.as_mut().expect("not finished") {
            Sink::Plain(w) => w,
            Sink::Gz(w) => w,
        }
    }

    /// Flushes the file to disk and renames it into place (the partial file is removed if that
    /// fails).
    fn finish(mut self) -> io::Result<()> {
        let out = self.out.take().expect("finished once");
        let done = (|| {
            let file = match out {
                Sink::Plain(w) => w.into_inner().map_err(|e| e.into_error())?,
                Sink::Gz(w) => w.finish()?.into_inner().map_err(|e| e.into_error())?,
            };
            file.sync_all()?;
            std::fs::rename(&self.partial, &self.path)
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(&self.partial);
        }
        done.map_err(|e| naming(&self.path, e))
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// The edge file and, optionally, the vertex file of one export.
pub struct ExportFiles {
    edges: Output,
    vertices: Option<Output>,
    pub edge_count: u64,
    pub vertex_count: u64,
}

impl ExportFiles {
    /// Where an export of `edges` (and `vertices`) writes, checked before anything is read: an
    /// edge file named so that `graph load` reads it as CSV (`.csv`, optionally `.gz`), two
    /// different files, each a regular file or none yet (a symbolic link: the file it points
    /// to).
    pub fn destinations(
        edges: &Path,
        vertices: Option<&Path>,
    ) -> io::Result<(PathBuf, Option<PathBuf>)> {
        if Format::from_path(edges) != Format::Csv {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: name the edge file .csv or .csv.gz (`graph load` reads any other name \
                     as SNAP text, without labels or weights)",
                    edges.display()
                ),
            ));
        }
        let edges = destination(edges)?;
        let vertices = vertices.map(destination).transpose()?;
        if vertices
            .as_ref()
            .is_some_and(|v| absolute(v) == absolute(&edges))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the edge and vertex files are the same file ({}): give two names",
                    edges.display()
                ),
            ));
        }
        Ok((edges, vertices))
    }

    /// Creates (or truncates) the files, headers written: at [`ExportFiles::destinations`].
    pub fn create(edges: &Path, vertices: Option<&Path>) -> io::Result<Self> {
        Ok(Self {
            edges: Output::create(edges, EDGE_HEADER)?,
            vertices: vertices
                .map(|path| Output::create(path, VERTEX_HEADER))
                .transpose()?,
            edge_count: 0,
            vertex_count: 0,
        })
    }

    pub fn write(&mut self, page: &ExportPage) -> io::Result<()> {
        let w = self.edges.writer();
        for e in &page.edges {
            // `{}` prints the shortest decimal that reads back as the same f32.
            let label = csv_field(&e.label);
            writeln!(w, "{},{},{label},{}", e.src, e.dst, e.weight)?;
        }
        self.edge_count += page.edges.len() as u64;
        if let Some(vertices) = &mut self.vertices {
            let w = vertices.writer();
            for v in &page.vertices {
                writeln!(w, "{},{}", v.id, csv_field(&v.label))?;
            }
        }
        self.vertex_count += page.vertices.len() as u64;
        Ok(())
    }

    /// Completes both files and moves them into place.
    pub fn finish(self) -> io::Result<()> {
        self.edges.finish()?;
        self.vertices.map_or(Ok(()), Output::finish)
    }
}

/// `s` as one CSV field: quoted (quotes doubled) where the reader would otherwise split it
/// (a comma), unquote it (a quote) or trim it (spaces at either end).
pub fn csv_field(s: &str) -> Cow<'_, str> {
    let trimmed = s.trim_ascii() != s;
    if s.contains([',', '"']) || trimmed {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edgelist::{read_edge_list, read_vertex_labels};
    use crate::graph::{ExportedEdge, ExportedVertex, QueryStats};

    fn page(edges: Vec<ExportedEdge>, vertices: Vec<ExportedVertex>) -> ExportPage {
        ExportPage {
            version: 7,
            vertices,
            edges,
            next: None,
            stats: QueryStats {
                transactions: 1,
                yields: 0,
                max_hold_us: 0,
                total_hold_us: 0,
                slow_transactions: 0,
                total_us: 0,
                vertices_expanded: 0,
                edges_scanned: 0,
                lookups: 0,
                version_start: 7,
                version_end: 7,
                from_snapshot: false,
                version: 7,
                pinned: true,
                changes_applied: 0,
                catch_up_us: 0,
            },
        }
    }

    #[test]
    fn exported_files_read_back_as_the_same_graph() {
        let labels = ["", "a,b", "say \"hi\"", " padded ", "ü", "#x", "1"];
        let weights = [1.0, 0.0, 2.5, 1e-45, 3.4e38, 0.1, 123456.79];
        let edges: Vec<ExportedEdge> = (0..labels.len() as u64)
            .map(|i| ExportedEdge {
                src: i,
                dst: u64::MAX - i,
                label: labels[i as usize].to_string(),
                weight: weights[i as usize],
            })
            .collect();
        let vertices: Vec<ExportedVertex> = (0..labels.len() as u64)
            .map(|i| ExportedVertex {
                id: i * 1000,
                label: labels[i as usize].to_string(),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        for (e, v) in [("e.csv", "v.csv"), ("e.csv.gz", "v.csv.gz")] {
            let (e, v) = (dir.path().join(e), dir.path().join(v));
            let mut files = ExportFiles::create(&e, Some(&v)).unwrap();
            files.write(&page(edges[..3].to_vec(), vec![])).unwrap();
            files
                .write(&page(edges[3..].to_vec(), vertices.clone()))
                .unwrap();
            assert_eq!((files.edge_count, files.vertex_count), (7, 7));
            files.finish().unwrap();
            let read = read_edge_list(&e).unwrap();
            assert_eq!(read.len(), edges.len());
            for (i, want) in edges.iter().enumerate() {
                assert_eq!((read.src[i], read.dst[i]), (want.src, want.dst));
                let (label, weight) = read.attrs(i);
                assert_eq!(label, want.label);
                assert_eq!(weight.to_bits(), want.weight.to_bits());
            }
            let read = read_vertex_labels(&v).unwrap();
            let labelled: Vec<(u64, &str)> = (0..read.len())
                .map(|i| {
                    (
                        read.ids[i],
                        read.label_names[read.labels[i] as usize].as_str(),
                    )
                })
                .collect();
            let want: Vec<(u64, &str)> =
                vertices.iter().map(|v| (v.id, v.label.as_str())).collect();
            assert_eq!(labelled, want);
        }
    }

    #[test]
    fn a_file_appears_under_its_name_only_once_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("edges.csv");
        let files = ExportFiles::create(&path, None).unwrap();
        assert!(!path.exists());
        files.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "src,dst,label,weight\n"
        );
        assert!(!dir.path().join("edges.csv.partial").exists());
    }

    #[test]
    fn destinations_are_files_graph_load_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        let refused =
            |e: &Path, v: Option<&Path>| ExportFiles::destinations(e, v).unwrap_err().to_string();
        for name in ["copy.txt", "copy", "copy.tsv.gz", "copy.csv.partial"] {
            assert!(
                refused(&at(name), None).contains(".csv or .csv.gz"),
                "{name}"
            );
        }
        let (e, v) = ExportFiles::destinations(&at("e.CSV.GZ"), Some(&at("v.csv"))).unwrap();
        assert_eq!((e, v), (at("e.CSV.GZ"), Some(at("v.csv"))));
        // The same file twice, however it is named.
        for v in [at("same.csv"), at(".").join("same.csv")] {
            let message = refused(&at("same.csv"), Some(&v));
            assert!(message.contains("the same file"), "{message}");
        }
        // A device or a pipe would be replaced: refused.
        std::os::unix::fs::symlink("/dev/null", at("null.csv")).unwrap();
        assert!(refused(&at("null.csv"), None).contains("not a regular file"));
        // A descriptor this process has open (`--vertices /dev/stdout` sent to a file) would
        // have replaced that file: refused.
        let held = std::fs::File::create(at("held.csv")).unwrap();
        let fd = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&held));
        for v in [Path::new(&fd), Path::new("/dev/stdout")] {
            let message = refused(&at("e.csv"), Some(v));
            assert!(message.contains("file descriptor"), "{message}");
        }
        // A symbolic link is written through: the link stays and points to the new file.
        std::fs::create_dir(at("real")).unwrap();
        std::os::unix::fs::symlink("real/target.csv", at("link.csv")).unwrap();
        let (e, _) = ExportFiles::destinations(&at("link.csv"), None).unwrap();
        ExportFiles::create(&e, None).unwrap().finish().unwrap();
        assert!(
            std::fs::symlink_metadata(at("link.csv"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(at("real/target.csv")).unwrap(),
            "src,dst,label,weight\n"
        );
        // `.GZ` is compressed as `graph load` expects of that name.
        ExportFiles::create(&at("e.CSV.GZ"), None)
            .unwrap()
            .finish()
            .unwrap();
        assert!(read_edge_list(&at("e.CSV.GZ")).unwrap().is_empty());
        // A file that cannot be put in place leaves no partial file, and the error names it.
        std::fs::create_dir(at("taken.csv")).unwrap();
        let message = ExportFiles::create(&at("taken.csv"), None)
            .unwrap()
            .finish()
            .unwrap_err()
            .to_string();
        assert!(message.contains("taken.csv"), "{message}");
        assert!(!at("taken.csv.partial").exists());
    }

    #[test]
    fn an_export_given_up_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let (e, v) = (dir.path().join("e.csv"), dir.path().join("v.csv.gz"));
        let mut files = ExportFiles::create(&e, Some(&v)).unwrap();
        files.write(&page(vec![], vec![])).unwrap();
        drop(files);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
