//! Builds Lua 5.4 from the `lua-src` crate's sources with a fixed string-hash seed.
//!
//! Stock Lua 5.4 seeds its string hashes from addresses and the clock, so the order in which
//! `pairs`/`next` visit a table's string keys changes from run to run. Decorator export
//! tables become descriptor maps in that order, and a compiler must give the same bytes for
//! the same input; so this crate compiles Lua itself with `luai_makeseed` defined to a
//! constant (see `src/lib.rs`, "Export order") and tells `mlua-sys` (feature `external`) not
//! to link a Lua of its own.
//!
//! `lua-src` offers no way to add a C definition, but the `cc` crate it uses reads extra
//! flags from `CFLAGS_<target>`. Rather than changing this process's environment, the
//! script runs itself again as a child with that variable set and passes on what the child
//! prints to Cargo.

use std::env;
use std::process::Command;

/// The string-hash seed; must match `HASH_SEED` in `src/lib.rs`.
const HASH_SEED: u32 = 42;

/// Set in the child's environment.
const CHILD_MARK: &str = "BEBOP_LUA_BUILD_CHILD";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os(CHILD_MARK).is_some() {
        let artifacts = lua_src::Build::new().build(lua_src::Lua54);
        println!(
            "cargo:rustc-link-search=native={}",
            artifacts.lib_dir().display()
        );
        for lib in artifacts.libs() {
            // `+whole-archive` so that the symbols are there whatever order the linker
            // meets this library and `mlua` in.
            println!("cargo:rustc-link-lib=static:+whole-archive,-bundle={lib}");
        }
        return;
    }

    let target = env::var("TARGET").unwrap_or_default();
    let var = format!("CFLAGS_{target}");
    println!("cargo:rerun-if-env-changed={var}");
    let mut flags = env::var(&var).unwrap_or_default();
    if !flags.is_empty() {
        flags.push(' ');
    }
    flags.push_str(&format!("-Dluai_makeseed(L)={HASH_SEED}u"));

    let exe = match env::current_exe() {
        Ok(exe) => exe,
        Err(e) => panic!("bebop-lua build script: cannot find its own executable: {e}"),
    };
    let output = Command::new(exe)
        .env(CHILD_MARK, "1")
        .env(&var, flags)
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => panic!("bebop-lua build script: cannot run the Lua build: {e}"),
    };
    if !output.status.success() {
        panic!(
            "bebop-lua build script: building Lua failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    print!("{}", String::from_utf8_lossy(&output.stdout));
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
}
