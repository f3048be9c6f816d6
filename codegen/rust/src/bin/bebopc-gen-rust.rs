//! `bebopc-gen-rust`: the Rust code generator as a `bebopc` plugin. Reads an encoded
//! `CodeGeneratorRequest` on stdin and writes an encoded `CodeGeneratorResponse` on stdout.
//!
//! Options come from `--rust_opt=key=value,...` (the request's `parameter`): `runtime`,
//! `owned`, `owned_cfg`, `map`, `defmt`, `rustfmt`, `file`, `serde`, `serde_cfg`, the
//! attribute rules (`type_attribute=PATH=ATTR`, ...) and `extern_path=PATH=RUST` (see
//! `bebop_codegen_rust::Options::from_parameter`).

use std::io::{Read, Write};
use std::process::ExitCode;

use bebop_descriptor::CodeGeneratorRequest;

const USAGE: &str = "\
bebopc-gen-rust: Bebop code generator plugin for Rust.

Run by bebopc (`bebopc build schema.bop --rust_out=DIR [--rust_opt=key=value,...]`): reads an
encoded CodeGeneratorRequest on stdin and writes an encoded CodeGeneratorResponse on stdout.

Options (comma-separated key=value):
  runtime=PATH      runtime crate path (default ::bebop_runtime; ::bebop_core for core-only crates)
  owned=BOOL        also generate owned types in module `owned` (default false)
  owned_cfg=PRED    cfg predicate gating the owned types, e.g. feature = \"alloc\"
  map=btree|vec     owned map type (default btree)
  defmt=PRED        derive defmt::Format on views under this cfg predicate
  rustfmt=BOOL      pipe the output through rustfmt when found (default true)
  file=NAME         output file name
  serde=BOOL        derive serde's traits on types owning their data (default false)
  serde_cfg=PRED    cfg predicate gating the serde derives
  type_attribute=PATH=ATTR    add ATTR to the types PATH matches (repeatable; also
                    view_type_attribute, owned_type_attribute)
  field_attribute=PATH=ATTR   add ATTR to the fields PATH matches (repeatable; also
                    view_field_attribute, owned_field_attribute)
  extern_path=PATH=RUST[=OWNED]  PATH is generated elsewhere, at RUST (repeatable)
";

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        return match arg.as_str() {
            "--version" | "-V" => {
                println!("bebopc-gen-rust {}", env!("CARGO_PKG_VERSION"));
                ExitCode::SUCCESS
            }
            "--help" | "-h" => {
                print!("{USAGE}");
                ExitCode::SUCCESS
            }
            other => {
                eprintln!("bebopc-gen-rust: unexpected argument `{other}`\n\n{USAGE}");
                ExitCode::FAILURE
            }
        };
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut input) {
        eprintln!("bebopc-gen-rust: cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    let request = match CodeGeneratorRequest::from_bytes(&input) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "bebopc-gen-rust: stdin ({} bytes) is not an encoded CodeGeneratorRequest: {e}",
                input.len()
            );
            return ExitCode::FAILURE;
        }
    };
    let response = bebop_codegen_rust::respond(&request);
    let bytes = match response.to_vec() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bebopc-gen-rust: cannot encode the response: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(&bytes).and_then(|()| out.flush()) {
        eprintln!("bebopc-gen-rust: cannot write stdout: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
