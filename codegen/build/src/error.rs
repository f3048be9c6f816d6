//! [`Error`]: why a schema could not be compiled into Rust code.

use std::fmt;
use std::path::PathBuf;

use bebop_codegen_rust::GenerateError;

/// Everything that can stop [`Config::compile`](crate::Config::compile).
///
/// `Display` gives a readable message; for [`Error::Schema`] it is the compiler's diagnostics
/// rendered as `bebopc` prints them (file, line, column, the source line underlined). `Debug`
/// prints the same text, so that a build script's `fn main() -> Result<(), Box<dyn Error>>`
/// (which shows errors with `Debug`) or an `.unwrap()` shows readable diagnostics rather than
/// an escaped string.
#[non_exhaustive]
pub enum Error {
    /// The schemas have errors.
    Schema {
        /// How many errors.
        errors: usize,
        /// Every diagnostic (errors and warnings), rendered for a terminal without colour.
        rendered: String,
    },
    /// The schemas are valid but no Rust code could be generated for them, or a generator
    /// option has a bad value.
    Generate(GenerateError),
    /// No output directory: neither [`Config::out_dir`](crate::Config::out_dir) nor the
    /// `OUT_DIR` environment variable (set by cargo for build scripts) is set.
    NoOutDir,
    /// The configuration asks for something this build of the crate cannot do.
    Config(String),
    /// Reading or writing a file failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Schema { errors, rendered } => {
                let plural = if *errors == 1 { "" } else { "s" };
                write!(
                    f,
                    "bebop-build: {errors} error{plural} in the schemas\n\n{}",
                    rendered.trim_end()
                )
            }
            Error::Generate(e) => write!(f, "bebop-build: cannot generate Rust code: {e}"),
            Error::NoOutDir => f.write_str(
                "bebop-build: no output directory: OUT_DIR is not set (it is when cargo runs a \
                 build script); call Config::out_dir elsewhere",
            ),
            Error::Config(message) => write!(f, "bebop-build: {message}"),
            Error::Io { path, source } => {
                write!(f, "bebop-build: {}: {source}", path.display())
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Generate(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<GenerateError> for Error {
    fn from(e: GenerateError) -> Self {
        Error::Generate(e)
    }
}
