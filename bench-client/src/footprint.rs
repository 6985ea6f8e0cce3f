//! What a server holds: its memory, read from Linux's `/proc`, and its data on disk.
//!
//! Memory is the proportional set size (PSS) summed over the server's process and its
//! descendants. A server may be several processes (PostgreSQL runs a backend per connection
//! beside its postmaster, Neo4j may sit under a launcher) that share pages: summing their RSS
//! would count a shared buffer once per backend, PSS counts each page once in all. For a
//! single-process server it is its RSS less its share of the libraries it maps with others.

use std::path::Path;

/// PSS of process `pid` and all its descendants, bytes; `None` if `pid` is not readable.
pub fn memory_bytes(pid: u32) -> Option<u64> {
    let mut tree = vec![pid];
    let mut i = 0;
    let parents = parents();
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|&&(_, p)| p == parent)
                .map(|&(c, _)| c),
        );
        i += 1;
    }
    let mut total = pss_bytes(pid)?;
    // A child may exit between the listing and the read: it then holds nothing.
    total += tree[1..].iter().filter_map(|&p| pss_bytes(p)).sum::<u64>();
    Some(total)
}

/// `Pss:` of one process, from `smaps_rollup` (Linux 4.14 on), bytes.
fn pss_bytes(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|l| l.starts_with("Pss:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Every process as (pid, parent pid).
fn parents() -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Bytes the files under `dir` take on disk (allocated blocks, as `du` counts them); 0 if
/// `dir` does not exist.
pub fn disk_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.blocks() * 512),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_tree_counts_its_children() {
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        // Until the child has execed, it is a copy of this process.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let own = pss_bytes(me).expect("this process is readable");
        let child_alone = pss_bytes(child.id()).expect("the child is readable");
        let tree = memory_bytes(me).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(own > 1 << 20, "PSS of a test process: {own} bytes");
        assert!(child_alone > 0);
        // Measured one after the other, so within a MiB of each other.
        assert!(
            tree + (1 << 20) >= own + child_alone,
            "{own} own, {child_alone} child, {tree} together"
        );
    }

    #[test]
    fn disk_bytes_adds_up_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), vec![1u8; 10_000]).unwrap();
        std::fs::write(dir.path().join("sub/b"), vec![2u8; 50_000]).unwrap();
        let bytes = disk_bytes(dir.path());
        assert!((60_000..=80_000).contains(&bytes), "{bytes}");
        assert_eq!(disk_bytes(&dir.path().join("missing")), 0);
    }
}
