//! Golden files: for every reference request, the generated code is checked in under
//! `tests/expected/NAME.rs` and must match exactly.
//!
//! After an intended change to the generator, regenerate them with
//! `BEBOP_BLESS=1 cargo test -p bebop-codegen-rust --test golden` and review the diff.

mod common;

use std::collections::BTreeSet;

#[test]
fn generated_code_matches_the_expected_files() {
    let bless = std::env::var_os("BEBOP_BLESS").is_some_and(|v| v != "0");
    let dir = common::expected_dir();
    let generator = common::golden_generator();
    let mut failures = Vec::new();
    let mut names = BTreeSet::new();
    // Without the conformance data, only the synthetic schemas below are checked.
    let references = common::reference_requests();
    for (name, request) in references.clone().unwrap_or_default() {
        let code = generator
            .generate_request(&request)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            code.warnings.is_empty(),
            "{name}: warnings {:?} (is rustfmt installed?)",
            code.warnings
        );
        assert_eq!(code.files.len(), 1, "{name}: one file per request");
        let file = &code.files[0];
        assert_eq!(file.name, format!("{name}.rs"));
        names.insert(format!("{name}.rs"));
        let path = dir.join(&file.name);
        if bless {
            std::fs::create_dir_all(&dir).expect("create tests/expected");
            std::fs::write(&path, &file.content).expect("write expected file");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == file.content => {}
            Ok(expected) => {
                let line = expected
                    .lines()
                    .zip(file.content.lines())
                    .position(|(a, b)| a != b)
                    .map_or_else(
                        || expected.lines().count().min(file.content.lines().count()) + 1,
                        |i| i + 1,
                    );
                failures.push(format!("{name}.rs differs first at line {line}"));
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    // The synthetic schemas: code and descriptors under tests/expected/extra/.
    let extra = dir.join("extra");
    for (name, set) in common::synthetic::all() {
        let code = generator
            .generate(&set, &[])
            .unwrap_or_else(|e| panic!("extra/{name}: {e}"));
        let file = &code.files[0];
        assert_eq!(file.name, format!("{name}.rs"));
        let desc = set.to_vec().expect("encode descriptor set");
        let (rs_path, desc_path) = (
            extra.join(&file.name),
            extra.join(format!("{name}.desc.bin")),
        );
        if bless {
            std::fs::create_dir_all(&extra).expect("create tests/expected/extra");
            std::fs::write(&rs_path, &file.content).expect("write expected file");
            std::fs::write(&desc_path, &desc).expect("write descriptor");
            continue;
        }
        if std::fs::read_to_string(&rs_path).ok().as_deref() != Some(file.content.as_str()) {
            failures.push(format!("extra/{name}.rs differs"));
        }
        if std::fs::read(&desc_path).ok() != Some(desc) {
            failures.push(format!("extra/{name}.desc.bin differs"));
        }
    }
    // Other options: `::bebop` runtime, ungated owned types with `Vec` maps, no rustfmt.
    let variants = dir.join("variants");
    let variant_generator = bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .owned_map(bebop_codegen_rust::OwnedMap::Vec)
        .rustfmt(false);
    for (name, set) in common::synthetic::all()
        .into_iter()
        .filter(|(n, _)| ["spec", "recursion", "forward"].contains(n))
    {
        let code = variant_generator
            .generate(&set, &[])
            .unwrap_or_else(|e| panic!("variants/{name}: {e}"));
        let path = variants.join(&code.files[0].name);
        if bless {
            std::fs::create_dir_all(&variants).expect("create tests/expected/variants");
            std::fs::write(&path, &code.files[0].content).expect("write expected file");
        } else if std::fs::read_to_string(&path).ok().as_deref()
            != Some(code.files[0].content.as_str())
        {
            failures.push(format!("variants/{name}.rs differs"));
        }
    }
    // One-pass reading (`one_pass`) of every synthetic schema: awkward names, forward-
    // compatible unions, recursion, empty records.
    let one_pass_generator = bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .one_pass(true);
    for (name, set) in common::synthetic::all() {
        let code = one_pass_generator
            .generate(&set, &[])
            .unwrap_or_else(|e| panic!("variants/{name}_one_pass: {e}"));
        let path = variants.join(format!("{name}_one_pass.rs"));
        if bless {
            std::fs::write(&path, &code.files[0].content).expect("write expected file");
        } else if std::fs::read_to_string(&path).ok().as_deref()
            != Some(code.files[0].content.as_str())
        {
            failures.push(format!("variants/{name}_one_pass.rs differs"));
        }
    }
    // Async services (tokio, `bebop-rpc`) of the service with awkward type names.
    let async_generator = bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .async_rpc("::bebop_rpc", Some(r#"feature = "rpc""#));
    for (name, set) in common::synthetic::all()
        .into_iter()
        .filter(|(n, _)| *n == "naming")
    {
        let code = async_generator
            .generate(&set, &[])
            .unwrap_or_else(|e| panic!("variants/{name}_async: {e}"));
        let path = variants.join(format!("{name}_async.rs"));
        if bless {
            std::fs::write(&path, &code.files[0].content).expect("write expected file");
        } else if std::fs::read_to_string(&path).ok().as_deref()
            != Some(code.files[0].content.as_str())
        {
            failures.push(format!("variants/{name}_async.rs differs"));
        }
    }
    // serde, type and field attributes, extern paths: `common.bop` on its own (serde gated by
    // a cfg), then `app.bop` with `.common` reached in the module the fixtures include the
    // first file in (`crate::serde_common`).
    let serde_set = common::synthetic::serde_set();
    for (name, file, generator) in [
        ("serde_common", "common.bop", serde_common_generator()),
        ("serde_app", "app.bop", serde_app_generator()),
    ] {
        let code = generator
            .generate(&serde_set, &[file])
            .unwrap_or_else(|e| panic!("variants/{name}: {e}"));
        assert!(
            code.warnings.is_empty(),
            "variants/{name}: {:?}",
            code.warnings
        );
        let path = variants.join(format!("{name}.rs"));
        if bless {
            std::fs::write(&path, &code.files[0].content).expect("write expected file");
        } else if std::fs::read_to_string(&path).ok().as_deref()
            != Some(code.files[0].content.as_str())
        {
            failures.push(format!("variants/{name}.rs differs"));
        }
    }
    // No stale files either (known only with the reference requests).
    for entry in std::fs::read_dir(&dir)
        .expect("read tests/expected")
        .filter(|_| references.is_some())
    {
        let file = entry.expect("entry").file_name();
        let file = file.to_string_lossy();
        if file.ends_with(".rs") && !names.contains(file.as_ref()) {
            failures.push(format!("{file} has no reference request"));
        }
    }
    assert!(
        failures.is_empty(),
        "golden files out of date (rerun with BEBOP_BLESS=1 and review the diff):\n{}",
        failures.join("\n")
    );
}

#[test]
fn output_is_deterministic() {
    let generator = common::golden_generator();
    let Some(requests) = common::reference_requests() else {
        return;
    };
    for (name, request) in requests
        .into_iter()
        .filter(|(n, _)| ["codegen_all", "union", "document"].contains(&n.as_str()))
    {
        let a = generator.generate_request(&request).unwrap();
        let b = generator.generate_request(&request).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

/// The options of `variants/serde_common.rs`: owned types, serde under `feature = "alloc"`.
fn serde_common_generator() -> bebop_codegen_rust::Generator {
    bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .serde(true)
        .serde_cfg(Some(r#"feature = "alloc""#))
}

/// The options of `variants/serde_app.rs`: owned types, serde, `.common` generated elsewhere,
/// and type and field attributes for every form and kind.
fn serde_app_generator() -> bebop_codegen_rust::Generator {
    bebop_codegen_rust::Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .serde(true)
        .extern_path(".common", "crate::serde_common::common")
        .type_attribute(".app.Point", "#[derive(PartialOrd)]")
        .type_attribute(
            "Samples",
            r#"#[cfg_attr(feature = "alloc", derive(PartialOrd))]"#,
        )
        .view_type_attribute("Record", r#"#[doc(alias = "rec")]"#)
        .owned_type_attribute("Record", r#"#[serde(rename_all = "camelCase")]"#)
        .field_attribute(".app.Event.note", r#"#[doc(alias = "comment")]"#)
        .owned_field_attribute("Record.name", r#"#[serde(rename = "title")]"#)
        .owned_field_attribute(".app.Level.Warn", r#"#[serde(rename = "warning")]"#)
        .owned_field_attribute(".app.Shape.Stamped", r#"#[serde(alias = "stamp")]"#)
}
