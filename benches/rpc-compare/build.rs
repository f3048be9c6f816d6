//! Generates both sides of the benchmark from the same schema, written twice:
//!
//! - `schemas/bench.bop` with bebop-build: views, owned types and the tokio services of
//!   `bebop-rpc`, into `$OUT_DIR/bebop.rs`;
//! - `proto/bench.proto`, parsed by `protox` (so no `protoc` is needed), with
//!   tonic-prost-build: prost messages (`bytes` fields as `bytes::Bytes`) and the tonic
//!   client and server, into `$OUT_DIR/bench.rs`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    bebop_build::Config::new()
        .include("schemas")
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .async_rpc("::bebop_rpc", None)
        .compile(&["schemas/bench.bop"])?;

    println!("cargo:rerun-if-changed=proto/bench.proto");
    let fds = protox::compile(["bench.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .bytes(".")
        .emit_rerun_if_changed(false)
        .compile_fds(fds)?;
    Ok(())
}
