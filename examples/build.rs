//! Generates `OUT_DIR/bebop.rs` from `schemas/demo.bop` and `schemas/lab.bop` (an RPC
//! service of every method kind): views for every build, owned types (`owned::...`) too since
//! this crate uses `std`.

fn main() -> Result<(), bebop_build::Error> {
    bebop_build::Config::new()
        .include("schemas")
        .runtime_path("::bebop")
        .owned_types(true)
        .compile(&["schemas/demo.bop", "schemas/lab.bop"])?;
    Ok(())
}
