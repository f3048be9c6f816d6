//! `bebopc init`: a starter `bebop.yml` and schema in the working directory.

use std::path::Path;

use crate::exit;
use crate::report::Reporter;

/// The configuration written by `init`.
pub const CONFIG: &str = r#"# Bebop compiler configuration (read by `bebopc build`, `check`, `fmt` and
# `watch` when no files are named on the command line).

# Schemas to compile (globs, relative to this file).
sources:
  - "schemas/**/*.bop"

# Files to leave out of `sources`.
exclude:
  - "**/vendor/**"

# Directories in which imports are searched.
include: []

# Code generators to run: NAME: OUTPUT_DIR runs `bebopc-gen-NAME`.
# Give a plugin its own options with NAME: { out: DIR, options: { key: value } }.
plugins: {}
#  rust: ./generated/rust

# Options passed to every plugin (as with -D KEY=VALUE).
options: {}

# The layout `bebopc fmt` writes.
format:
  indent: 4
  line_width: 100
"#;

/// Where `init` writes the starter schema.
pub const SCHEMA_PATH: &str = "schemas/example.bop";

/// The starter schema.
pub const SCHEMA: &str = r#"edition = "2026"

package example;

/// What a greeting is for.
enum Occasion : byte {
    UNKNOWN = 0;
    BIRTHDAY = 1;
    HOLIDAY = 2;
}

/// A fixed-size position.
struct Point {
    x: float32;
    y: float32;
}

/// A message: every field is optional and can be added to later.
message Greeting {
    text(1): string;
    occasion(2): Occasion;
    sent(3): timestamp;
    where(4): Point;
}

/// A service exchanging greetings.
service Greeter {
    Greet(Greeting): Greeting;
}
"#;

/// Writes `bebop.yml` and [`SCHEMA_PATH`] into `dir`, refusing to overwrite either.
pub fn init(dir: &Path, reporter: &Reporter) -> u8 {
    let config = dir.join("bebop.yml");
    let schema = dir.join(SCHEMA_PATH);
    for existing in [&config, &schema] {
        if existing.exists() {
            reporter.error(&format!(
                "{} already exists; `bebopc init` does not overwrite files",
                existing.display()
            ));
            return exit::SCHEMA_ERRORS;
        }
    }
    let write = |path: &Path, text: &str| -> Result<(), String> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // `create_new` so that a file appearing meanwhile is not overwritten either.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        std::io::Write::write_all(&mut f, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    for (path, text) in [(&config, CONFIG), (&schema, SCHEMA)] {
        if let Err(e) = write(path, text) {
            reporter.error(&e);
            return exit::GENERATION;
        }
        reporter.summary(&format!("created {}", path.display()));
    }
    exit::OK
}
