//! Running a plugin: request on stdin, response from stdout, with limits.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use bebop_descriptor::{CodeGeneratorRequest, CodeGeneratorResponse, Diagnostic, GeneratedFile};

use crate::PluginError;

/// Limits and settings for one plugin run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The most bytes the plugin may write to stdout; past it the plugin is killed and the run
    /// fails with [`PluginError::ResponseTooLarge`]. Default: 1 GiB.
    pub max_response_bytes: u64,
    /// How much of the plugin's stderr is kept (its end, where a crash report usually is).
    /// Default: 64 KiB.
    pub max_stderr_bytes: usize,
    /// Kill the plugin (with every process it started) and fail with
    /// [`PluginError::TimedOut`] when it has not exited and closed its output this long after
    /// it was started. Default: [`RunOptions::DEFAULT_TIMEOUT`]; `None` waits for ever.
    pub timeout: Option<Duration>,
    /// The plugin's working directory; the compiler's when `None`.
    pub working_dir: Option<PathBuf>,
}

impl RunOptions {
    /// The default response limit: 1 GiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1 << 30;
    /// The default stderr kept: 64 KiB.
    pub const DEFAULT_MAX_STDERR_BYTES: usize = 64 << 10;
    /// The default time limit: 60 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            max_stderr_bytes: Self::DEFAULT_MAX_STDERR_BYTES,
            timeout: Some(Self::DEFAULT_TIMEOUT),
            working_dir: None,
        }
    }
}

/// A plugin to run: its name (for messages) and its executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugin {
    /// The plugin name, `NAME` of `bebopc-gen-NAME` and `--NAME_out`.
    pub name: String,
    /// The executable.
    pub path: PathBuf,
}

impl Plugin {
    /// A plugin named `name` run from `path`.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Plugin {
            name: name.into(),
            path: path.into(),
        }
    }

    /// Encodes `request`, runs the plugin with it and returns what it generated.
    pub fn run(
        &self,
        request: &CodeGeneratorRequest,
        options: &RunOptions,
    ) -> Result<PluginOutput, PluginError> {
        let bytes = request.to_vec().map_err(|e| PluginError::Io {
            plugin: self.name.clone(),
            action: "encoding the request",
            source: io::Error::new(io::ErrorKind::InvalidData, e),
        })?;
        self.run_with_bytes(bytes, options)
    }

    /// Runs the plugin with an already encoded `CodeGeneratorRequest` on its stdin.
    ///
    /// The request is written on a separate thread while this one reads stdout, so a plugin
    /// that answers before reading all of its input cannot deadlock the host. The run fails
    /// when the plugin exits unsuccessfully, writes something that is not a
    /// `CodeGeneratorResponse`, sets the response's `error`, writes more than
    /// [`RunOptions::max_response_bytes`] or outlives [`RunOptions::timeout`].
    pub fn run_with_bytes(
        &self,
        request: Vec<u8>,
        options: &RunOptions,
    ) -> Result<PluginOutput, PluginError> {
        let raw = self.exchange(request, options)?;
        let response = CodeGeneratorResponse::from_bytes(&raw.stdout).map_err(|source| {
            PluginError::Undecodable {
                plugin: self.name.clone(),
                len: raw.stdout.len(),
                source,
            }
        })?;
        let diagnostics = response.diagnostics.unwrap_or_default();
        if let Some(message) = response.error.filter(|m| !m.is_empty()) {
            return Err(PluginError::Reported {
                plugin: self.name.clone(),
                message,
                diagnostics,
            });
        }
        Ok(PluginOutput {
            files: response.files.unwrap_or_default(),
            diagnostics,
            stderr: raw.stderr,
        })
    }

    /// Spawns the plugin, feeds it `request` and collects its stdout, stderr and exit status.
    fn exchange(&self, request: Vec<u8>, options: &RunOptions) -> Result<RawOutput, PluginError> {
        let started = Instant::now();
        let deadline = options.timeout.map(|t| started + t);
        let mut command = Command::new(&self.path);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &options.working_dir {
            command.current_dir(dir);
        }
        // A process group of its own, so that a timeout kills whatever the plugin started
        // too (a child holding the output pipe would otherwise outlive it).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().map_err(|source| PluginError::Spawn {
            plugin: self.name.clone(),
            path: self.path.clone(),
            source,
        })?;
        let mut child = KillOnDrop(child);
        let (stdin, stdout, stderr) = match (
            child.0.stdin.take(),
            child.0.stdout.take(),
            child.0.stderr.take(),
        ) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                return Err(self.io_error(
                    "connecting to the plugin",
                    io::Error::other("a standard stream was not piped"),
                ));
            }
        };

        let writer = spawn_with_result(move || write_request(stdin, &request));
        let stderr_reader = {
            let keep = options.max_stderr_bytes;
            spawn_with_result(move || Ok::<_, io::Error>(read_tail(stderr, keep)))
        };
        let limit = options.max_response_bytes;
        let stdout_reader = spawn_with_result(move || read_capped(stdout, limit));

        // 1. The response: stdout closes when the plugin exits (or closes it).
        let stdout = match receive(&stdout_reader, deadline) {
            Received::Value(Ok(Some(bytes))) => bytes,
            Received::Value(Ok(None)) => {
                child.kill();
                return Err(PluginError::ResponseTooLarge {
                    plugin: self.name.clone(),
                    limit,
                });
            }
            Received::Value(Err(e)) => {
                child.kill();
                return Err(self.io_error("reading the response from stdout", e));
            }
            Received::TimedOut => return Err(self.timed_out(&mut child, options, &stderr_reader)),
            Received::Gone => {
                child.kill();
                return Err(self.io_error(
                    "reading the response from stdout",
                    io::Error::other("the reader thread stopped"),
                ));
            }
        };

        // 2. The exit status.
        let status = match wait_until(&mut child.0, deadline) {
            Ok(Some(status)) => status,
            Ok(None) => return Err(self.timed_out(&mut child, options, &stderr_reader)),
            Err(e) => return Err(self.io_error("waiting for the plugin to exit", e)),
        };

        // 3. Its stderr, and how writing the request went. A process that holds on to the
        // pipes after the plugin exited (a leftover grandchild) gets a short grace period.
        let grace = Some(Instant::now() + Duration::from_secs(2));
        let stderr = match receive(&stderr_reader, grace) {
            Received::Value(Ok(text)) => text,
            _ => String::from("[stderr unavailable]"),
        };
        if !status.success() {
            return Err(PluginError::Exited {
                plugin: self.name.clone(),
                path: self.path.clone(),
                status,
                stderr,
            });
        }
        if let Received::Value(Err(e)) = receive(&writer, grace) {
            return Err(self.io_error("writing the request to stdin", e));
        }
        Ok(RawOutput { stdout, stderr })
    }

    fn io_error(&self, action: &'static str, source: io::Error) -> PluginError {
        PluginError::Io {
            plugin: self.name.clone(),
            action,
            source,
        }
    }

    fn timed_out(
        &self,
        child: &mut KillOnDrop,
        options: &RunOptions,
        stderr_reader: &mpsc::Receiver<io::Result<String>>,
    ) -> PluginError {
        child.kill();
        let grace = Some(Instant::now() + Duration::from_millis(500));
        let stderr = match receive(stderr_reader, grace) {
            Received::Value(Ok(text)) => text,
            _ => String::new(),
        };
        PluginError::TimedOut {
            plugin: self.name.clone(),
            after: options.timeout.unwrap_or_default(),
            stderr,
        }
    }
}

/// What a successful plugin run produced.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PluginOutput {
    /// The generated files and insertions, in response order.
    pub files: Vec<GeneratedFile>,
    /// The diagnostics, to show the user (warnings and notes on success).
    pub diagnostics: Vec<Diagnostic>,
    /// The end of what the plugin wrote to stderr (empty when nothing).
    pub stderr: String,
}

struct RawOutput {
    stdout: Vec<u8>,
    stderr: String,
}

/// Kills and reaps the child unless it was already waited for, so no early return leaves a
/// plugin running. On Unix the plugin leads a process group of its own, and the whole group
/// is killed: processes the plugin started go too.
struct KillOnDrop(Child);

impl KillOnDrop {
    fn kill(&mut self) {
        #[cfg(unix)]
        {
            // Errors mean the group is gone already.
            let group = rustix::process::Pid::from_child(&self.0);
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        // Errors mean the process already exited; reaping it is all that is left.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        match self.0.try_wait() {
            Ok(None) => self.kill(),
            // The plugin exited; anything it left behind in its group goes now.
            #[cfg(unix)]
            Ok(Some(_)) => {
                let group = rustix::process::Pid::from_child(&self.0);
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            _ => {}
        }
    }
}

/// Runs `f` on its own thread and returns a receiver for its result. The thread is never
/// joined: if a stream stays open forever (a grandchild holds it), the host moves on.
fn spawn_with_result<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> mpsc::Receiver<io::Result<T>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // The receiver may be gone (the host gave up); nothing to do then.
        let _ = tx.send(f());
    });
    rx
}

enum Received<T> {
    Value(T),
    TimedOut,
    Gone,
}

fn receive<T>(rx: &mpsc::Receiver<T>, deadline: Option<Instant>) -> Received<T> {
    match deadline {
        None => rx.recv().map_or(Received::Gone, Received::Value),
        Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
            Ok(v) => Received::Value(v),
            Err(mpsc::RecvTimeoutError::Timeout) => Received::TimedOut,
            Err(mpsc::RecvTimeoutError::Disconnected) => Received::Gone,
        },
    }
}

/// Waits for the child to exit; `Ok(None)` when the deadline passes first.
fn wait_until(child: &mut Child, deadline: Option<Instant>) -> io::Result<Option<ExitStatus>> {
    let Some(deadline) = deadline else {
        return child.wait().map(Some);
    };
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Writes the request and closes stdin. A plugin that exits without reading all of its input
/// breaks the pipe; that is not an error of the host (its exit status and response decide).
fn write_request(mut stdin: impl Write, request: &[u8]) -> io::Result<()> {
    match stdin.write_all(request).and_then(|()| stdin.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Reads all of `r`, or `None` as soon as it holds more than `limit` bytes.
fn read_capped(r: impl Read, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Ok(None);
    }
    Ok(Some(out))
}

/// Reads all of `r` and keeps its last `keep` bytes, as text; says how much was dropped.
fn read_tail(mut r: impl Read, keep: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut dropped: u64 = 0;
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > keep.saturating_mul(2).max(8192) {
                    let cut = kept.len() - keep;
                    dropped += cut as u64;
                    kept.drain(..cut);
                }
            }
        }
    }
    if kept.len() > keep {
        let cut = kept.len() - keep;
        dropped += cut as u64;
        kept.drain(..cut);
    }
    let text = String::from_utf8_lossy(&kept);
    if dropped > 0 {
        format!("[... {dropped} earlier bytes of stderr omitted ...]\n{text}")
    } else {
        text.into_owned()
    }
}

/// Finds and runs plugin `name` in one call: [`PluginLocator::locate`](crate::PluginLocator)
/// then [`Plugin::run`].
pub fn run_plugin(
    locator: &crate::PluginLocator,
    name: &str,
    explicit_path: Option<&Path>,
    request: &CodeGeneratorRequest,
    options: &RunOptions,
) -> Result<PluginOutput, PluginError> {
    let path = locator.locate(name, explicit_path)?;
    Plugin::new(name, path).run(request, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_reads_stop_past_the_limit() {
        assert_eq!(
            read_capped(&[1u8, 2, 3][..], 3).unwrap(),
            Some(vec![1, 2, 3])
        );
        assert_eq!(read_capped(&[1u8, 2, 3, 4][..], 3).unwrap(), None);
        assert_eq!(read_capped(io::repeat(0), 1 << 16).unwrap(), None);
    }

    #[test]
    fn stderr_keeps_its_end() {
        let text = "a".repeat(100_000) + "the end";
        let tail = read_tail(text.as_bytes(), 1000);
        assert!(tail.ends_with("the end"));
        assert!(
            tail.starts_with("[... 99007 earlier bytes of stderr omitted ...]\n"),
            "{}",
            &tail[..60]
        );
        assert_eq!(read_tail(&b"short"[..], 1000), "short");
    }

    #[test]
    fn broken_pipes_are_not_write_errors() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        assert!(write_request(Broken, b"abc").is_ok());
    }
}
