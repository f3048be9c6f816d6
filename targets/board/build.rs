//! Picks the machine from the target: thumbv6m runs on `microbit` (Cortex-M0, nRF51822),
//! thumbv7m on `lm3s6965evb` (Cortex-M3, LM3S6965). Puts that machine's `memory.x` where
//! cortex-m-rt's `link.x` finds it and sets `cfg(board = "...")`.

use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(board, values(\"microbit\", \"lm3s6965\"))");
    println!("cargo::rerun-if-changed=memory-microbit.x");
    println!("cargo::rerun-if-changed=memory-lm3s6965.x");
    let target = env::var("TARGET").unwrap_or_default();
    let board = if target.starts_with("thumbv6m") {
        "microbit"
    } else if target.starts_with("thumbv7m") {
        "lm3s6965"
    } else {
        // Host builds (docs, `cargo check` of the workspace) compile nothing board-specific.
        return;
    };
    println!("cargo::rustc-cfg=board=\"{board}\"");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let memory = fs::read(format!("memory-{board}.x")).expect("memory.x of the board");
    fs::write(out.join("memory.x"), memory).expect("OUT_DIR is writable");
    println!("cargo::rustc-link-search={}", out.display());
}
