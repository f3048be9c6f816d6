//! The one error type of the plugin host.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use bebop_descriptor::Diagnostic;

/// Everything that can go wrong while finding, running or writing the output of a plugin.
/// Every variant names the plugin and says what to look at.
#[derive(Debug)]
#[non_exhaustive]
pub enum PluginError {
    /// The plugin name cannot name an executable (empty, or holding a path separator).
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// No `bebopc-gen-NAME` executable was found.
    NotFound {
        /// The plugin name.
        plugin: String,
        /// The executable file name looked for (`bebopc-gen-NAME`, plus `.exe` on Windows).
        executable: String,
        /// Every place looked at, in order: the explicit path, or the search directories.
        searched: Vec<PathBuf>,
    },
    /// The plugin executable could not be started.
    Spawn {
        /// The plugin name.
        plugin: String,
        /// The executable.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Talking to the running plugin failed (writing its stdin, reading its stdout).
    Io {
        /// The plugin name.
        plugin: String,
        /// What the host was doing.
        action: &'static str,
        /// Why.
        source: io::Error,
    },
    /// The plugin exited unsuccessfully (a plugin bug or an environment problem).
    Exited {
        /// The plugin name.
        plugin: String,
        /// The executable.
        path: PathBuf,
        /// How it exited.
        status: ExitStatus,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// The plugin did not finish within the configured time and was killed.
    TimedOut {
        /// The plugin name.
        plugin: String,
        /// The time limit.
        after: Duration,
        /// The end of what it wrote to stderr before being killed.
        stderr: String,
    },
    /// The plugin wrote more than the configured maximum to stdout and was killed.
    ResponseTooLarge {
        /// The plugin name.
        plugin: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The plugin's stdout is not an encoded `CodeGeneratorResponse`.
    Undecodable {
        /// The plugin name.
        plugin: String,
        /// How many bytes it wrote.
        len: usize,
        /// The decode error (kind and byte offset).
        source: bebop_runtime::Error,
    },
    /// The plugin set the response's `error` field: it could not generate code for these
    /// schemas.
    Reported {
        /// The plugin name.
        plugin: String,
        /// The `error` text.
        message: String,
        /// The diagnostics that came with it.
        diagnostics: Vec<Diagnostic>,
    },
    /// A generated file's name is not a safe relative path inside the output directory.
    BadFileName {
        /// The plugin name.
        plugin: String,
        /// The name as the plugin gave it.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An insertion names a file that neither this run produced nor the output directory holds.
    InsertionTargetMissing {
        /// The plugin name.
        plugin: String,
        /// The file named by the insertion.
        file: String,
        /// The insertion point.
        point: String,
    },
    /// The target file has no `@@bebopc_insertion_point(NAME)` marker for the insertion.
    MissingInsertionPoint {
        /// The plugin name.
        plugin: String,
        /// The target file.
        file: String,
        /// The insertion point.
        point: String,
    },
    /// Reading or writing a file of the output directory failed.
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::InvalidName { name } => write!(
                f,
                "invalid plugin name `{name}`: it must be non-empty and contain no path separator"
            ),
            PluginError::NotFound {
                plugin,
                executable,
                searched,
            } => {
                write!(
                    f,
                    "plugin `{plugin}` not found: no executable `{executable}` in "
                )?;
                if searched.is_empty() {
                    f.write_str("any directory (the search list is empty)")?;
                } else {
                    for (i, p) in searched.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{}", p.display())?;
                    }
                }
                write!(
                    f,
                    " (install it, or give its location with --plugin {plugin}=PATH)"
                )
            }
            PluginError::Spawn {
                plugin,
                path,
                source,
            } => write!(
                f,
                "plugin `{plugin}` failed to start ({}): {source}",
                path.display()
            ),
            PluginError::Io {
                plugin,
                action,
                source,
            } => write!(f, "plugin `{plugin}`: failed {action}: {source}"),
            PluginError::Exited {
                plugin,
                path,
                status,
                stderr,
            } => {
                write!(f, "plugin `{plugin}` ({}) failed: {status}", path.display())?;
                write_stderr(f, stderr)
            }
            PluginError::TimedOut {
                plugin,
                after,
                stderr,
            } => {
                write!(
                    f,
                    "plugin `{plugin}` did not finish within {after:?} and was killed"
                )?;
                write_stderr(f, stderr)
            }
            PluginError::ResponseTooLarge { plugin, limit } => write!(
                f,
                "plugin `{plugin}` wrote more than {limit} bytes to stdout and was killed"
            ),
            PluginError::Undecodable {
                plugin,
                len,
                source,
            } => write!(
                f,
                "plugin `{plugin}` wrote {len} bytes that are not a CodeGeneratorResponse: {source}"
            ),
            PluginError::Reported {
                plugin, message, ..
            } => write!(f, "plugin `{plugin}` reported an error: {message}"),
            PluginError::BadFileName {
                plugin,
                name,
                reason,
            } => write!(
                f,
                "plugin `{plugin}` produced a file with a bad name {name:?}: {reason}"
            ),
            PluginError::InsertionTargetMissing {
                plugin,
                file,
                point,
            } => write!(
                f,
                "plugin `{plugin}` inserts at `{point}` in `{file}`, but no such file was \
                 generated or exists in the output directory"
            ),
            PluginError::MissingInsertionPoint {
                plugin,
                file,
                point,
            } => write!(
                f,
                "plugin `{plugin}` inserts at `{point}` in `{file}`, but the file has no \
                 `@@bebopc_insertion_point({point})` marker"
            ),
            PluginError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

fn write_stderr(f: &mut fmt::Formatter<'_>, stderr: &str) -> fmt::Result {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        f.write_str(" (no stderr output)")
    } else {
        write!(f, "; its stderr:\n{stderr}")
    }
}

impl std::error::Error for PluginError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PluginError::Spawn { source, .. }
            | PluginError::Io { source, .. }
            | PluginError::Write { source, .. } => Some(source),
            PluginError::Undecodable { source, .. } => Some(source),
            _ => None,
        }
    }
}
