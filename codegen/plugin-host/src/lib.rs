//! # bebop-plugin-host
//!
//! Runs Bebop code generator plugins the way `docs/plugins.md` describes: a plugin `NAME` is
//! an executable `bebopc-gen-NAME` that reads an encoded
//! [`CodeGeneratorRequest`](bebop_descriptor::CodeGeneratorRequest) from stdin and writes an
//! encoded [`CodeGeneratorResponse`](bebop_descriptor::CodeGeneratorResponse) to stdout.
//!
//! 1. [`PluginLocator`] finds the executable: an explicit path (`--plugin NAME=PATH`), or the
//!    first `bebopc-gen-NAME` next to the running compiler or on `PATH`.
//! 2. [`Plugin::run`] sends the request and collects the generated files and diagnostics,
//!    with a cap on the response size and an optional timeout ([`RunOptions`]).
//! 3. [`OutputTree`] applies the files (with chunked files and insertion points) and writes
//!    them under the output directory, refusing names that would leave it.
//!
//! ```no_run
//! use bebop_descriptor::CodeGeneratorRequest;
//! use bebop_plugin_host::{OutputTree, Plugin, PluginLocator, RunOptions};
//!
//! # fn main() -> Result<(), bebop_plugin_host::PluginError> {
//! let request = CodeGeneratorRequest::default(); // built by the compiler
//! let path = PluginLocator::from_env().locate("rust", None)?;
//! let output = Plugin::new("rust", path).run(&request, &RunOptions::default())?;
//! for d in &output.diagnostics {
//!     eprintln!("[rust] {:?}", d.text);
//! }
//! let mut tree = OutputTree::new("generated");
//! tree.apply("rust", &output.files)?;
//! tree.write()?;
//! # Ok(())
//! # }
//! ```
//!
//! Every failure is a [`PluginError`] whose message names the plugin and what to look at.
#![forbid(unsafe_code)]

mod error;
mod locate;
mod output;
mod process;

pub use error::PluginError;
pub use locate::{PluginLocator, executable_name};
pub use output::{
    OutputTree, insert_at_point, insertion_marker, normalize_file_name, write_generated_files,
};
pub use process::{Plugin, PluginOutput, RunOptions, run_plugin};
