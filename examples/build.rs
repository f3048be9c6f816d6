//! Generates `OUT_DIR/bebop.rs` from `schemas/demo.bop`: views for every build, owned types
//! (`demo::owned`) too since this crate uses `std`.

fn main() -> Result<(), bebop_build::Error> {
    bebop_build::Config::new()
        .include("schemas")
        .runtime_path("::bebop")
        .owned_types(true)
        .compile(&["schemas/demo.bop"])?;
    Ok(())
}
