//! `bebopc watch`: `bebopc build`, then again whenever something it depends on changes.
//!
//! Each round loads the project afresh (so a changed configuration, or a new file matching
//! the `sources` globs, takes effect) and builds it exactly as `bebopc build` does (the same
//! options, diagnostics, outputs and plugins). Then it watches, with the `notify` crate:
//!
//! - the directory of every file the compilation read (the schemas and their imports);
//! - recursively, the directory each glob of the `sources` (or of the FILES arguments)
//!   starts in, so that new schemas are noticed;
//! - the import directories (`include`, `-I`), not recursively;
//! - the configuration file's directory.
//!
//! A change of a `.bop` file or of a configuration file (`bebop.yml`, `bebop.yaml`,
//! `bebop.json`, or the `-c` file) in those directories starts the next round, once no
//! further change has come for `--debounce` milliseconds (changes keep coming: at most
//! twenty times that). Generated files (anything else) never do, so outputs inside watched
//! directories cause no loop. Errors (syntax errors, a broken configuration, a failing
//! plugin) are reported and watching goes on. Ctrl-C, SIGTERM or SIGHUP stop the watch after
//! the round in progress, with exit status 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::args::{GlobalArgs, WatchArgs};
use crate::build;
use crate::config;
use crate::exit;
use crate::project;
use crate::report::Reporter;
use crate::sources;

/// What reaches the watch loop.
enum Msg {
    /// A file system event.
    Fs(notify::Result<notify::Event>),
    /// Ctrl-C, SIGTERM or SIGHUP.
    Stop,
}

/// How waiting for a change ended.
enum Wait {
    /// These relevant paths changed.
    Changed(Vec<PathBuf>),
    /// Stop watching.
    Stop,
}

/// `bebopc watch`.
pub fn watch(args: &WatchArgs, global: &GlobalArgs) -> u8 {
    let reporter = Reporter::new(global);
    let (tx, rx) = mpsc::channel::<Msg>();
    let stop = tx.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        let _ = stop.send(Msg::Stop);
    }) {
        reporter.error(&format!("cannot handle Ctrl-C: {e}"));
        return exit::USAGE;
    }
    let mut watcher = match notify::recommended_watcher(move |event| {
        let _ = tx.send(Msg::Fs(event));
    }) {
        Ok(w) => w,
        Err(e) => {
            reporter.error(&format!("cannot watch files: {e}"));
            return exit::USAGE;
        }
    };
    let debounce = Duration::from_millis(args.debounce);
    let config_path = config_file(global);
    let mut watched: BTreeMap<PathBuf, RecursiveMode> = BTreeMap::new();
    let mut changed: Vec<PathBuf> = Vec::new();
    loop {
        if let Some(first) = changed.first() {
            let more = match changed.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            reporter.summary(&format!("{} changed{more}; building", shown(first)));
        }
        let wanted = match round(args, global, &reporter) {
            Some(dirs) => dirs,
            // The project could not be loaded: keep watching what was watched.
            None => watched.clone(),
        };
        let mut wanted = wanted;
        if let Some(dir) = config_path.as_deref().and_then(Path::parent) {
            add(&mut wanted, dir, RecursiveMode::NonRecursive);
        }
        let wanted = simplify(wanted);
        update(&mut watcher, &mut watched, wanted, &reporter);
        if watched.is_empty() {
            reporter.error("nothing to watch: no schema, import directory or configuration file");
            return exit::USAGE;
        }
        reporter.summary(&format!(
            "watching {} director{} for changes (Ctrl-C stops)",
            watched.len(),
            if watched.len() == 1 { "y" } else { "ies" }
        ));
        match wait(&rx, debounce, config_path.as_deref(), &reporter) {
            Wait::Changed(paths) => changed = paths,
            Wait::Stop => break,
        }
    }
    reporter.summary("stopped watching");
    exit::OK
}

/// `path` relative to the working directory when it is inside it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize);
    match cwd.as_deref().map(|cwd| path.strip_prefix(cwd)) {
        Ok(Ok(rel)) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The configuration file in use, if any (absolute).
fn config_file(global: &GlobalArgs) -> Option<PathBuf> {
    let path = match &global.config {
        Some(p) => p.clone(),
        None => config::discover(Path::new("."))?,
    };
    std::fs::canonicalize(&path).ok().or(Some(path))
}

/// One build; returns the directories to watch, or `None` when the project could not be
/// loaded (the error is reported).
fn round(
    args: &WatchArgs,
    global: &GlobalArgs,
    reporter: &Reporter,
) -> Option<BTreeMap<PathBuf, RecursiveMode>> {
    let project = match project::load(global, &args.build.input, reporter) {
        Ok(p) => p,
        Err(e) => {
            reporter.error(&e);
            return None;
        }
    };
    let run = build::build_project(&args.build, global, &project, reporter);
    let mut dirs = BTreeMap::new();
    for file in run.read.iter().chain(&project.files) {
        if let Some(dir) = Path::new(file).parent() {
            add(&mut dirs, dir, RecursiveMode::NonRecursive);
        }
    }
    let globs: Vec<(PathBuf, &String)> = if args.build.input.files.is_empty() {
        project
            .config
            .iter()
            .flat_map(|c| c.sources.iter().map(|s| (c.root.clone(), s)))
            .collect()
    } else {
        args.build
            .input
            .files
            .iter()
            .map(|s| (PathBuf::from("."), s))
            .collect()
    };
    for (root, pattern) in globs {
        if sources::is_pattern(pattern) {
            add(
                &mut dirs,
                &root.join(sources::base_dir(pattern)),
                RecursiveMode::Recursive,
            );
        }
    }
    for dir in &project.include {
        add(&mut dirs, dir, RecursiveMode::NonRecursive);
    }
    Some(dirs)
}

/// Adds `dir` (made absolute; an empty path is the working directory) if it exists.
fn add(dirs: &mut BTreeMap<PathBuf, RecursiveMode>, dir: &Path, mode: RecursiveMode) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return;
    };
    if !dir.is_dir() {
        return;
    }
    let entry = dirs.entry(dir).or_insert(mode);
    if mode == RecursiveMode::Recursive {
        *entry = mode;
    }
}

/// Leaves out directories that a recursively watched one already covers.
fn simplify(dirs: BTreeMap<PathBuf, RecursiveMode>) -> BTreeMap<PathBuf, RecursiveMode> {
    let recursive: Vec<PathBuf> = dirs
        .iter()
        .filter(|(_, m)| **m == RecursiveMode::Recursive)
        .map(|(d, _)| d.clone())
        .collect();
    dirs.into_iter()
        .filter(|(d, _)| !recursive.iter().any(|r| d != r && d.starts_with(r)))
        .collect()
}

/// Makes the watcher watch `wanted`.
fn update(
    watcher: &mut impl Watcher,
    watched: &mut BTreeMap<PathBuf, RecursiveMode>,
    wanted: BTreeMap<PathBuf, RecursiveMode>,
    reporter: &Reporter,
) {
    for (dir, mode) in watched.iter() {
        if wanted.get(dir) != Some(mode) {
            let _ = watcher.unwatch(dir);
        }
    }
    let mut now = BTreeMap::new();
    for (dir, mode) in wanted {
        if watched.get(&dir) == Some(&mode) {
            now.insert(dir, mode);
            continue;
        }
        match watcher.watch(&dir, mode) {
            Ok(()) => {
                reporter.verbose(&format!("watching {}", dir.display()));
                now.insert(dir, mode);
            }
            Err(e) => reporter.warning(&format!("cannot watch {}: {e}", dir.display())),
        }
    }
    *watched = now;
}

/// Whether a change of `path` calls for a build.
fn relevant(path: &Path, config_path: Option<&Path>) -> bool {
    path.extension().is_some_and(|e| e == "bop")
        || config_path == Some(path)
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| config::FILE_NAMES.contains(&n))
}

/// The relevant paths of one event.
fn relevant_paths(
    msg: notify::Result<notify::Event>,
    config_path: Option<&Path>,
    reporter: &Reporter,
) -> Vec<PathBuf> {
    match msg {
        Ok(event) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return Vec::new();
            }
            event
                .paths
                .into_iter()
                .filter(|p| relevant(p, config_path))
                .collect()
        }
        Err(e) => {
            reporter.warning(&format!("watching: {e}"));
            Vec::new()
        }
    }
}

/// Waits for a relevant change, then until none has come for `debounce` (at most twenty
/// times `debounce` in all).
fn wait(
    rx: &Receiver<Msg>,
    debounce: Duration,
    config_path: Option<&Path>,
    reporter: &Reporter,
) -> Wait {
    let mut changed: Vec<PathBuf> = Vec::new();
    while changed.is_empty() {
        match rx.recv() {
            Ok(Msg::Fs(event)) => changed = relevant_paths(event, config_path, reporter),
            Ok(Msg::Stop) | Err(_) => return Wait::Stop,
        }
    }
    let started = Instant::now();
    let limit = debounce.saturating_mul(20);
    let mut quiet_from = Instant::now();
    loop {
        let now = Instant::now();
        let deadline = (quiet_from + debounce).min(started + limit);
        if now >= deadline {
            break;
        }
        match rx.recv_timeout(deadline - now) {
            Ok(Msg::Fs(event)) => {
                let paths = relevant_paths(event, config_path, reporter);
                if !paths.is_empty() {
                    quiet_from = Instant::now();
                }
                for p in paths {
                    if !changed.contains(&p) {
                        changed.push(p);
                    }
                }
            }
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return Wait::Stop,
            Err(RecvTimeoutError::Timeout) => break,
        }
    }
    Wait::Changed(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevant_changes() {
        let config = Path::new("/p/custom.yaml");
        assert!(relevant(Path::new("/p/schemas/a.bop"), Some(config)));
        assert!(relevant(Path::new("/p/custom.yaml"), Some(config)));
        assert!(relevant(Path::new("/p/bebop.yml"), None));
        assert!(!relevant(Path::new("/p/gen/a.rs"), Some(config)));
        assert!(!relevant(Path::new("/p/schemas/.a.bop.swp"), None));
    }

    #[test]
    fn nested_directories_are_covered_by_recursive_ones() {
        let mut dirs = BTreeMap::new();
        dirs.insert(PathBuf::from("/p/schemas"), RecursiveMode::Recursive);
        dirs.insert(PathBuf::from("/p/schemas/sub"), RecursiveMode::NonRecursive);
        dirs.insert(PathBuf::from("/p"), RecursiveMode::NonRecursive);
        dirs.insert(PathBuf::from("/p/schemas2"), RecursiveMode::NonRecursive);
        let kept: Vec<PathBuf> = simplify(dirs).into_keys().collect();
        assert_eq!(
            kept,
            vec![
                PathBuf::from("/p"),
                PathBuf::from("/p/schemas"),
                PathBuf::from("/p/schemas2")
            ]
        );
    }
}
