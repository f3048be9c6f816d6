//! `bebopc`: the Bebop schema compiler front end.
//!
//! It reads `.bop` schema files, checks them against the language rules and produces a
//! resolved [`model::Model`] from which descriptors and code are generated. Every problem is
//! reported as a [`diag::Diagnostic`] with a stable code, a position and a source snippet.
//!
//! The pipeline:
//! 1. [`source`]: files and positions;
//! 2. [`lexer`] and [`parser`]: tokens and the [`ast`], with error recovery;
//! 3. [`resolve`]: imports (include directories and the built-in [`stdlib`]), packages,
//!    name lookup and visibility;
//! 4. [`validate`]: every rule of the language, constants ([`literal`]) and decorators
//!    ([`decorator`]), producing the [`model`];
//! 5. [`descriptor`] (and [`source_info`]): the model lowered to a `DescriptorSet` or a
//!    plugin's `CodeGeneratorRequest`, byte-compatible with the reference compiler.
//!
//! Beside the pipeline, [`format`](mod@crate::format) lays a schema out canonically without changing its tokens
//! or comments (`bebopc fmt`), and [`index`] lists every definition and reference of a
//! compilation, errors or not, for editors (`bebopc lsp`).
//!
//! The `bebopc` command line lives in the `bebopc-cli` package.
//!
//! ```
//! use bebopc::Compiler;
//!
//! let result = Compiler::new().compile_source("bad.bop", "enum E { A = 1; }");
//! assert!(result.has_errors());
//! assert_eq!(result.diagnostics[0].code.as_str(), "E050");
//! ```
#![forbid(unsafe_code)]

pub mod ast;
pub mod compiler;
pub mod decorator;
pub mod descriptor;
pub mod diag;
pub mod format;
pub mod index;
pub mod lexer;
pub mod literal;
pub mod model;
pub mod parser;
pub mod resolve;
pub mod source;
pub mod source_info;
pub mod stdlib;
pub mod validate;

pub use compiler::{Analysis, Compilation, Compiler};
pub use diag::{Code, Diagnostic, Severity};
pub use model::Model;
