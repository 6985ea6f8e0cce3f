//! Formatting the generated files with rustfmt, and writing them to their directory.

use std::io::{self, BufRead as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use thiserror::Error;

use crate::Files;
use crate::rust::{GENERATED_MARKER, OFFICIAL_MARKER};

#[derive(Debug, Error)]
pub enum FormatError {
    #[error("running `{rustfmt}` (set RUSTFMT to choose another): {source}")]
    Spawn {
        rustfmt: String,
        #[source]
        source: io::Error,
    },
    #[error("rustfmt rejected the generated {file} (a generator bug):\n{message}")]
    Rejected { file: String, message: String },
}

/// Formats every file with `rustfmt --edition 2024` (or `$RUSTFMT`), as the official CLI
/// formats its Rust output. rustfmt reads its configuration from the current directory
/// upwards, as `cargo fmt` does for the crate the files land in.
pub fn rustfmt(files: &mut Files) -> Result<(), FormatError> {
    let rustfmt = std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into());
    for (file, contents) in files.iter_mut() {
        let spawn_error = |source| FormatError::Spawn {
            rustfmt: rustfmt.clone(),
            source,
        };
        let mut child = Command::new(&rustfmt)
            .args(["--edition", "2024"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let input = std::mem::take(contents);
        // Written from another thread: rustfmt may fill its output pipe before reading all input.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().map_err(spawn_error)?;
        writer
            .join()
            .expect("rustfmt input writer")
            .map_err(spawn_error)?;
        if !output.status.success() {
            return Err(FormatError::Rejected {
                file: file.clone(),
                message: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        *contents = String::from_utf8(output.stdout).map_err(|e| FormatError::Rejected {
            file: file.clone(),
            message: format!("output is not UTF-8: {e}"),
        })?;
    }
    Ok(())
}

/// What [`write_dir`] changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Written {
    /// Files created or rewritten because their contents changed.
    pub changed: Vec<String>,
    /// Generated files of an earlier run that this one does not produce.
    pub removed: Vec<String>,
}

/// Puts `files` in `dir` (created if missing). Files there from an earlier run of this or the
/// official generator (recognised by their first line) that `files` does not contain are
/// removed; every other file is left alone. Files whose contents did not change are not
/// rewritten, so their timestamps stay.
pub fn write_dir(dir: &Path, files: &Files) -> io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let mut written = Written::default();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file()
            && name.ends_with(".rs")
            && !files.contains_key(&name)
            && is_generated(&entry.path())?
        {
            stale.push(name);
        }
    }
    stale.sort();
    for name in stale {
        std::fs::remove_file(dir.join(&name))?;
        written.removed.push(name);
    }
    for (name, contents) in files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
            std::fs::write(&path, contents)?;
            written.changed.push(name.clone());
        }
    }
    Ok(written)
}

fn is_generated(path: &Path) -> io::Result<bool> {
    let mut first_line = String::new();
    io::BufReader::new(std::fs::File::open(path)?).read_line(&mut first_line)?;
    Ok(first_line.starts_with(GENERATED_MARKER) || first_line.starts_with(OFFICIAL_MARKER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_generated_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let stale_ours = format!("{GENERATED_MARKER} old\nfn a() {{}}\n");
        let stale_official = format!("{OFFICIAL_MARKER}. EDITS…\nfn b() {{}}\n");
        std::fs::write(path("gone_table.rs"), &stale_ours).unwrap();
        std::fs::write(path("gone_type.rs"), &stale_official).unwrap();
        std::fs::write(path("handwritten.rs"), "fn mine() {}\n").unwrap();
        std::fs::write(path("notes.txt"), &stale_ours).unwrap();
        let same = format!("{GENERATED_MARKER}\n// same\n");
        std::fs::write(path("kept.rs"), &same).unwrap();

        let mut files = Files::new();
        files.insert("kept.rs".into(), same.clone());
        files.insert(
            "mod.rs".into(),
            format!("{GENERATED_MARKER}\npub mod kept;\n"),
        );
        let written = write_dir(dir.path(), &files).unwrap();

        assert_eq!(written.changed, ["mod.rs"]);
        assert_eq!(written.removed, ["gone_table.rs", "gone_type.rs"]);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["handwritten.rs", "kept.rs", "mod.rs", "notes.txt"]);
        assert_eq!(std::fs::read_to_string(path("kept.rs")).unwrap(), same);
    }
}
