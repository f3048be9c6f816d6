//! Generates `OUT_DIR/bebop.rs` from `schemas/demo.bop`, `schemas/lab.bop` (an RPC
//! service of every method kind), `schemas/pipeline.bop` (the batch tests' service) and
//! `schemas/kv.bop` (the key-value example) and `schemas/jobs.bop` (the futures example): views for
//! every build, owned types (`owned::...`) too since this crate uses `std`, and the tokio
//! services of `bebop-rpc`.

fn main() -> Result<(), bebop_build::Error> {
    bebop_build::Config::new()
        .include("schemas")
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .async_rpc("::bebop_rpc", None)
        .compile(&[
            "schemas/demo.bop",
            "schemas/lab.bop",
            "schemas/pipeline.bop",
            "schemas/kv.bop",
            "schemas/jobs.bop",
        ])?;
    Ok(())
}
