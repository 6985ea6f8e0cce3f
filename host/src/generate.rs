//! `graph-host generate`: client bindings for a module, as `spacetime generate` writes them.
//! The engine extracts the module's definition from its wasm (in a throw-away in-memory
//! instance); `graph-codegen` writes the bindings.

use std::path::PathBuf;

use anyhow::Context as _;
use spacetimedb::host::extract_schema;
use spacetimedb::messages::control_db::HostType;

/// Write client bindings (`module_bindings/`) for a module, like `spacetime generate`.
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Language of the bindings.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The module, compiled to wasm.
    #[arg(long)]
    bin_path: PathBuf,
    /// Directory for the bindings. Files an earlier run generated there are replaced; other
    /// files are left alone.
    #[arg(long)]
    out_dir: PathBuf,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Lang {
    Rust,
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let Lang::Rust = args.lang;
    let wasm = std::fs::read(&args.bin_path)
        .with_context(|| format!("reading {}", args.bin_path.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let module = runtime
        .block_on(extract_schema(wasm.into(), HostType::Wasm))
        .with_context(|| {
            format!(
                "extracting the module definition from {}",
                args.bin_path.display()
            )
        })?;
    let mut files = graph_codegen::generate(&module)?;
    graph_codegen::rustfmt(&mut files)?;
    let written = graph_codegen::write_dir(&args.out_dir, &files)
        .with_context(|| format!("writing {}", args.out_dir.display()))?;
    eprintln!(
        "{} files in {}: {} changed, {} removed",
        files.len(),
        args.out_dir.display(),
        written.changed.len(),
        written.removed.len()
    );
    Ok(())
}
