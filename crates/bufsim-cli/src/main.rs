//! The `bufsim` command. A Python interpreter takes 20 ms or more to start and bufsim's
//! command line as much again to load, which is most of a short run; so `bufsim run` starts
//! here, in native code, and calls the core directly. Whatever it does not take exactly as the
//! Python command line would (every other command, help, progress bars, notes and warnings,
//! any error) goes to the Python command line, `python -m bufsim` with the same arguments,
//! which then owns every message: the two never print differently.
//!
//! The interpreter is `$BUFSIM_PYTHON` when set, else the `python3` beside this program (a
//! virtual environment's), else `python3` on `PATH`.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use bufsim_cli::run_args::{self, RunArgs};
use bufsim_cli::text::{json_line, results_table};
use bufsim_core::options::Options;
use bufsim_core::row::row;
use bufsim_core::run::{run_trace, RunConfig};

/// Large tables on huge pages (see `bufsim_core::huge_pages`).
#[global_allocator]
static ALLOC: bufsim_core::huge_pages::HugePageAlloc = bufsim_core::huge_pages::HugePageAlloc;

/// The run's output, or `None` to leave it to Python (an error, a warning to give).
fn run(args: &RunArgs) -> Option<String> {
    // Standard input, a pipe or a FIFO can be read only once: whatever this side read would be
    // gone for the Python side, should it have to take over (an error, a warning to word), so
    // such an input goes to Python from the start.
    if !bufsim_core::trace::rewindable(&args.trace) {
        return None;
    }
    let (o, opts) = Options::parse_resolved(&serde_json::Value::Object(args.options.clone()).to_string()).ok()?;
    let configs = RunConfig::cross(&args.policies, &args.prefetches, &args.caches);
    let results = run_trace(&args.trace, &configs, &opts).ok()?;
    // An empty trace, records passed over, or cache steps past the trace's end come with a
    // warning the Python side words.
    let first = results.first()?;
    if first.stats.requests == 0 || !first.skipped.is_empty() || first.stats.cache_steps_unreached > 0 {
        return None;
    }
    let rows: Vec<_> = results.iter().map(|r| row(r, &o)).collect();
    Some(if args.json { rows.iter().map(|r| json_line(r) + "\n").collect() } else { results_table(&rows) + "\n" })
}

/// The Python side's words for a failed write to standard output (bufsim.errors.os_message).
fn output_error(e: &std::io::Error) -> String {
    let shown = e.to_string();
    let what = shown.split(" (os error").next().unwrap_or(&shown);
    // ENOSPC and EDQUOT: a full disk or quota behind `> file`.
    let full = matches!(e.raw_os_error(), Some(28 | 122));
    let advice = if full { "; free some space or give a path on another file system" } else { "" };
    format!("standard output: {what}{advice}")
}

fn python() -> OsString {
    if let Some(p) = std::env::var_os("BUFSIM_PYTHON").filter(|p| !p.is_empty()) {
        return p;
    }
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join("python3")));
    beside.filter(|p| p.is_file()).map_or_else(|| "python3".into(), PathBuf::into_os_string)
}

fn main() -> ExitCode {
    let words: Vec<OsString> = std::env::args_os().skip(1).collect();
    let text: Option<Vec<String>> = words.iter().map(|w| w.to_str().map(String::from)).collect();
    if let Some(out) = text.as_deref().and_then(run_args::parse).as_ref().and_then(run) {
        let mut stdout = std::io::stdout().lock();
        return match stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()) {
            // A closed pipe (`| head`) is not an error, as on the Python side.
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bufsim: error: {}", output_error(&e));
                ExitCode::from(2)
            }
        };
    }
    // -P: the current directory does not shadow bufsim's modules.
    let interpreter = python();
    let mut python = Command::new(&interpreter);
    python.arg("-P").arg("-m").arg("bufsim").args(&words);
    // Python cannot start with a directory as its standard input (`bufsim ... < dir` ends in a
    // "Fatal Python error" and a dump): a command that reads it is told so; any other gets none.
    if std::fs::metadata("/dev/stdin").is_ok_and(|m| m.is_dir()) {
        if words.iter().any(|w| w == "-") {
            eprintln!("bufsim: error: standard input is a directory; redirect a trace file into bufsim, or give its name instead of -");
            return ExitCode::from(2);
        }
        python.stdin(Stdio::null());
    }
    let err = python.exec();
    eprintln!(
        "bufsim: error: cannot start Python ({}: {err}); set BUFSIM_PYTHON to the interpreter bufsim is installed in",
        interpreter.to_string_lossy()
    );
    ExitCode::from(2)
}
