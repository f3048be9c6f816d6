//! # bebop-build
//!
//! Compiles Bebop schemas into Rust code from a build script, in the style of `prost-build`:
//! the schemas are compiled with [`bebopc`] (user-defined decorators' Lua blocks run with
//! `bebop-lua`), the code is generated with [`bebop_codegen_rust`], and one file is written
//! into `OUT_DIR` for the crate to `include!`.
//!
//! ```toml
//! # Cargo.toml
//! [dependencies]
//! bebop-core = "0.1"          # the runtime (no_std, no alloc); or `bebop` for std users
//!
//! [build-dependencies]
//! bebop-build = "0.1"
//! ```
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), bebop_build::Error> {
//!     bebop_build::Config::new()
//!         .include("schemas")
//!         .compile(&["schemas/shop.bop", "schemas/rpc.bop"])?;
//!     Ok(())
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! pub mod shop {
//!     include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
//! }
//! ```
//!
//! or, with the defaults, the one-liner [`compile_schemas`].
//!
//! ## What it does
//!
//! - **Compiles** the schemas and their imports, looked up in the include directories and
//!   among the standard schemas built into the compiler (`bebop/decorators.bop`,
//!   `bebop/descriptor.bop`, ... need no include directory; naming one as a schema to
//!   compile generates code for it). Errors stop the build with [`Error::Schema`], whose
//!   message is the diagnostics as `bebopc` prints them; warnings are printed as
//!   `cargo:warning=` lines.
//! - **Generates** one Rust file for all the schemas given (and what they import) with every
//!   option of the generator: runtime path, owned types and the `cfg` gating them, the owned
//!   map type, the `cfg` of the `defmt` derives, rustfmt.
//! - **Writes** it to `OUT_DIR/bebop.rs` (the name and the directory can be changed), only
//!   when its content changed, and prints `cargo:rerun-if-changed=` for every schema file
//!   read from disk, imports included.
//! - **Returns** an [`Output`]: the file's path, every generated type ([`TypeInfo`]: its
//!   schema name, Rust path, owned form, fixed size), the warnings and the files read.
//!
//! Definitions of different `.bop` files share one Rust module unless they declare
//! packages; schemas whose names clash belong in separate [`Config::compile`] calls with
//! different [`file_name`](Config::file_name)s, included in different modules.
//!
//! ## Example
//!
//! A complete run against a scratch directory (a build script would leave out
//! [`out_dir`](Config::out_dir): cargo sets `OUT_DIR`):
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use bebop_build::{Config, OwnedMap};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("schemas"))?;
//! std::fs::write(
//!     dir.path().join("schemas/geo.bop"),
//!     "struct Point { x: float32; y: float32; }",
//! )?;
//! std::fs::write(
//!     dir.path().join("schemas/shop.bop"),
//!     "import \"geo.bop\"\n\
//!      /// Where to deliver.\n\
//!      message Delivery { to(1): Point; note(2): string; tags(3): map[string, string]; }",
//! )?;
//!
//! let out = Config::new()
//!     .include(dir.path().join("schemas"))
//!     .out_dir(dir.path().join("out"))
//!     .owned_types(true)
//!     .owned_cfg(Some(r#"feature = "alloc""#))
//!     .owned_map(OwnedMap::Vec)
//!     .compile(&[dir.path().join("schemas/shop.bop")])?;
//!
//! assert_eq!(out.path, dir.path().join("out/bebop.rs"));
//! let code = std::fs::read_to_string(&out.path)?;
//! assert!(code.contains("pub struct Delivery<'a>"));
//! assert!(code.contains("pub struct Point"));
//! let delivery = out.types.iter().find(|t| t.fqn == "Delivery").unwrap();
//! assert_eq!(delivery.path, "Delivery");
//! assert_eq!(delivery.owned_path.as_deref(), Some("owned::Delivery"));
//! // The import was read from disk: cargo reruns the build script when it changes.
//! assert_eq!(out.schema_files.len(), 2);
//!
//! // Errors come back rendered as bebopc prints them.
//! std::fs::write(dir.path().join("schemas/bad.bop"), "struct S { x: nope; }")?;
//! let err = Config::new()
//!     .out_dir(dir.path().join("out"))
//!     .compile(&[dir.path().join("schemas/bad.bop")])
//!     .unwrap_err();
//! let message = err.to_string();
//! assert!(message.contains("bad.bop:1:15: error[E"), "{message}");
//! assert!(message.contains("struct S { x: nope; }"), "{message}");
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod config;
mod error;
mod schemas;

use std::path::Path;

pub use bebop_codegen_rust::{ItemKind, Options, OwnedForm, OwnedMap, TypeInfo};
pub use config::{Config, DEFAULT_FILE_NAME, Output};
pub use error::Error;

/// Compiles `schemas` with the import directories `includes` and the default
/// [`Config`]: views for the `::bebop_core` runtime in `OUT_DIR/bebop.rs`.
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), bebop_build::Error> {
///     bebop_build::compile_schemas(&["schemas/shop.bop"], &["schemas"])?;
///     Ok(())
/// }
/// ```
pub fn compile_schemas<P, I>(schemas: &[P], includes: &[I]) -> Result<Output, Error>
where
    P: AsRef<Path>,
    I: AsRef<Path>,
{
    Config::new().includes(includes).compile(schemas)
}
