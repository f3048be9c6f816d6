//! Generates the Bebop types of `schemas/workloads.bop` (views and owned types) with
//! `bebopc` and `bebop-codegen-rust` into `$OUT_DIR/benchmark.rs` (module `benchmark`), and
//! the prost types of `proto/benchmark.proto` (parsed by `protox`, so no `protoc` is needed)
//! into `$OUT_DIR/bench.rs`.

use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set"));
    println!("cargo:rerun-if-changed=build.rs");
    bebop(&manifest, &out);
    protobuf(&manifest, &out);
}

fn bebop(manifest: &std::path::Path, out: &std::path::Path) {
    let schema = manifest.join("schemas/workloads.bop");
    println!("cargo:rerun-if-changed={}", schema.display());
    let compilation = bebopc::Compiler::new().compile(&[&schema]);
    if compilation.has_errors() {
        panic!(
            "bebopc rejected {}:\n{}",
            schema.display(),
            compilation.render_terminal(false)
        );
    }
    if compilation.warnings().next().is_some() {
        for line in compilation.render_terminal(false).lines() {
            println!("cargo:warning={line}");
        }
    }
    let request = compilation
        .code_generator_request(&Default::default(), None, &[])
        .expect("a compilation without errors has a request");
    let code = bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .one_pass(true)
        .rustfmt(false)
        .file_name("benchmark.rs")
        .generate_request(&request)
        .unwrap_or_else(|e| panic!("bebop-codegen-rust failed on {}: {e}", schema.display()));
    for warning in &code.warnings {
        println!("cargo:warning={warning}");
    }
    let [file] = code.files.as_slice() else {
        panic!("expected one generated file, got {}", code.files.len());
    };
    std::fs::write(out.join("benchmark.rs"), &file.content).expect("write benchmark.rs");
}

fn protobuf(manifest: &std::path::Path, out: &std::path::Path) {
    let dir = manifest.join("proto");
    println!("cargo:rerun-if-changed={}", dir.display());
    let files = protox::compile(["benchmark.proto"], [&dir])
        .unwrap_or_else(|e| panic!("protox failed on proto/benchmark.proto: {e:?}"));
    prost_build::Config::new()
        .btree_map(["."])
        .out_dir(out)
        .compile_fds(files)
        .unwrap_or_else(|e| panic!("prost-build failed: {e}"));
}
