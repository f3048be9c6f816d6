//! `Config::extern_path` across two crates, built and run with cargo: crate `common-types`
//! generates the types of `common.bop`; crate `app`, whose schema imports `common.bop` (and
//! the built-in `bebop/rpc.bop`), generates only its own and reaches the others in
//! `common-types` (and in the runtime's `rpc::types`). A value built in `common-types`'
//! types is embedded in an `app` type, encoded and decoded.
//!
//! The scratch workspace is written to a temporary directory and built offline (with the
//! versions of this workspace's `Cargo.lock`) into a target directory under cargo's
//! `CARGO_TARGET_TMPDIR`, kept between runs so that only the two scratch crates rebuild.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::{Path, PathBuf};
use std::process::Command;

use bebop_build::Config;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn repo_root() -> PathBuf {
    std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap()
}

const COMMON: &str = r#"package common

/// A point in the plane.
struct Point { x: int32; y: int32; }

/// A label with borrowed text in views.
message Label { text(1): string; color(2): uint32; }

enum Kind : byte { A = 0; B = 1; }
"#;

const APP: &str = r#"package app

import "common.bop"
import "bebop/rpc.bop"

message Placed {
    at(1): common.Point;
    label(2): common.Label;
    labels(3): common.Label[];
    kind(4): common.Kind;
    status(5): bebop.StatusCode;
}

struct Pin { label: common.Label; spot: common.Point; }
"#;

const MAIN: &str = r#"
pub mod generated {
    include!("bebop.rs");
}

use bebop_runtime::{Decode, Encode};
use common_types::common;
use common_types::owned::common as common_owned;
use generated::app;
use generated::owned::app as app_owned;

fn main() {
    // Values built in the other crate's types...
    let label = common_owned::Label { text: Some("hi".into()), color: Some(7) };
    let point = common::Point { x: 1, y: -2 };
    // ...embedded in this crate's, with a type of the runtime.
    let placed = app_owned::Placed {
        at: Some(point),
        label: Some(label.clone()),
        labels: Some(vec![label.clone(), common_owned::Label::default()]),
        kind: Some(common::Kind::B),
        status: Some(bebop_runtime::rpc::types::StatusCode::NotFound),
    };
    let bytes = placed.encode_to_vec().unwrap();
    let view = app::Placed::from_bytes(&bytes).unwrap();
    assert_eq!(view.label.unwrap().text, Some("hi"));
    assert_eq!(view.at, Some(point));
    assert_eq!(view.to_owned_value(), placed);
    assert_eq!(app_owned::Placed::from_bytes(&bytes).unwrap(), placed);
    // The embedded label is the other crate's encoding of it.
    let label_bytes = label.encode_to_vec().unwrap();
    assert!(bytes.windows(label_bytes.len()).any(|w| w == label_bytes.as_slice()));
    assert_eq!(common::Label::from_bytes(&label_bytes).unwrap().to_owned_value(), label);

    // A view of this crate holding a view of the other's, encoded into a buffer.
    let pin = app::Pin { label: label.as_view(), spot: point };
    let mut buf = [0u8; 64];
    let n = pin.encode_into(&mut buf).unwrap();
    let owned_pin = app_owned::Pin::from_bytes(&buf[..n]).unwrap();
    assert_eq!(owned_pin.label, label);
    assert_eq!(owned_pin.as_view(), pin);
    println!("extern types round-tripped");
}
"#;

#[test]
fn a_crate_uses_the_types_another_crate_generated() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let runtime = repo_root().join("alloc-ext");
    let runtime = runtime.to_string_lossy();
    write(
        &root.join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"common-types\", \"app\"]\n",
    );
    // The same dependency versions as this workspace, so that the build works offline.
    std::fs::copy(repo_root().join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    write(
        &root.join("common-types/Cargo.toml"),
        &format!(
            "[package]\nname = \"common-types\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nbebop-runtime = {{ path = {runtime:?}, features = [\"alloc\"] }}\n"
        ),
    );
    write(&root.join("common-types/schemas/common.bop"), COMMON);
    write(
        &root.join("common-types/src/lib.rs"),
        "//! The common types.\ninclude!(\"bebop.rs\");\n",
    );
    write(
        &root.join("app/Cargo.toml"),
        &format!(
            "[package]\nname = \"app\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nbebop-runtime = {{ path = {runtime:?}, features = [\"alloc\"] }}\n\
             common-types = {{ path = \"../common-types\" }}\n"
        ),
    );
    write(&root.join("app/schemas/app.bop"), APP);
    write(&root.join("app/src/main.rs"), MAIN);

    // What the two build scripts would do.
    let config = |dir: &str| {
        let mut c = Config::new();
        c.out_dir(root.join(dir).join("src"))
            .emit_rerun_if_changed(false)
            .emit_warnings(false)
            .owned_types(true);
        c
    };
    let common = config("common-types")
        .include(root.join("common-types/schemas"))
        .compile(&[root.join("common-types/schemas/common.bop")])
        .unwrap();
    assert!(common.warnings.is_empty(), "{:?}", common.warnings);
    let app = config("app")
        .include(root.join("app/schemas"))
        .include(root.join("common-types/schemas"))
        .extern_path(".common", "::common_types::common")
        .extern_path(".bebop", "::bebop_runtime::rpc::types")
        .compile(&[root.join("app/schemas/app.bop")])
        .unwrap();
    assert!(app.warnings.is_empty(), "{:?}", app.warnings);
    let code = std::fs::read_to_string(&app.path).unwrap();
    assert!(!code.contains("pub struct Label"), "{code}");
    assert!(!code.contains("pub enum StatusCode"), "{code}");
    assert!(
        code.contains("::common_types::owned::common::Label"),
        "{code}"
    );
    let fqns: Vec<&str> = app.types.iter().map(|t| t.fqn.as_str()).collect();
    assert_eq!(fqns, ["app.Placed", "app.Pin"]);

    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("extern-crates-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--offline", "--quiet", "-p", "app"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the scratch crates failed:\n{stdout}\n{stderr}\n--- app's generated code:\n{code}"
    );
    assert!(stdout.contains("extern types round-tripped"), "{stdout}");
    // The generated code compiled without warnings.
    assert!(!stderr.contains("warning"), "{stderr}");
}
