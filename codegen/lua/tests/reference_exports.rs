//! Export data against the reference compiler's descriptors, for every valid conformance
//! fixture: keys, value kinds, values and order of every decorator usage.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::fs;

use bebop_descriptor::{DecoratorUsage, DefinitionBody, DescriptorSet, LiteralKind, LiteralValue};
use bebop_lua::LuaRuntime;
use bebopc::Compiler;
use bebopc::model::Value;

/// A comparable form of one export entry: key, kind, value.
type Entry = (String, &'static str, String);

fn from_reference(v: &LiteralValue) -> (&'static str, String) {
    match v.kind() {
        LiteralKind::Bool => ("bool", format!("{:?}", v.bool_value)),
        LiteralKind::Int => ("int", format!("{:?}", v.int_value)),
        LiteralKind::Float => ("float", format!("{:?}", v.float_value.map(f64::to_bits))),
        LiteralKind::String => ("string", format!("{:?}", v.string_value)),
        other => ("other", format!("{other:?} {v:?}")),
    }
}

fn from_model(v: &Value) -> (&'static str, String) {
    match v {
        Value::Bool(b) => ("bool", format!("{:?}", Some(*b))),
        Value::Int(i) => ("int", format!("{:?}", i64::try_from(*i).ok())),
        Value::UInt(u) => ("int", format!("{:?}", i64::try_from(*u).ok())),
        Value::Float(f) => ("float", format!("{:?}", Some(f.to_bits()))),
        Value::String { value, .. } => ("string", format!("{:?}", Some(value))),
        other => ("other", format!("{other:?}")),
    }
}

/// Every usage of a reference descriptor, by path (as `support::usages` names them).
fn reference_usages(set: &DescriptorSet) -> BTreeMap<String, Vec<Entry>> {
    let mut out = BTreeMap::new();
    let mut add = |path: String, list: &Option<Vec<DecoratorUsage>>| {
        for (i, u) in list.iter().flatten().enumerate() {
            let entries = u
                .export_data
                .iter()
                .flatten()
                .map(|(k, v)| {
                    let (kind, value) = from_reference(v);
                    (k.clone(), kind, value)
                })
                .collect();
            out.insert(format!("{path}#{i}"), entries);
        }
    };
    for e in set.all_definitions() {
        let fqn = e.fqn.to_string();
        add(fqn.clone(), &e.definition.decorators);
        match e.definition.body() {
            Some(DefinitionBody::Struct(s)) => s.fields.iter().flatten().for_each(|f| {
                add(
                    format!("{fqn}.{}", f.name.clone().unwrap_or_default()),
                    &f.decorators,
                )
            }),
            Some(DefinitionBody::Message(m)) => m.fields.iter().flatten().for_each(|f| {
                add(
                    format!("{fqn}.{}", f.name.clone().unwrap_or_default()),
                    &f.decorators,
                )
            }),
            Some(DefinitionBody::Enum(en)) => en.members.iter().flatten().for_each(|m| {
                add(
                    format!("{fqn}.{}", m.name.clone().unwrap_or_default()),
                    &m.decorators,
                )
            }),
            Some(DefinitionBody::Union(u)) => u.branches.iter().flatten().for_each(|b| {
                add(
                    format!("{fqn}.{}", b.name.clone().unwrap_or_default()),
                    &b.decorators,
                )
            }),
            Some(DefinitionBody::Service(s)) => s.methods.iter().flatten().for_each(|m| {
                add(
                    format!("{fqn}.{}", m.name.clone().unwrap_or_default()),
                    &m.decorators,
                )
            }),
            _ => {}
        }
    }
    out
}

#[test]
fn export_data_matches_the_reference_descriptors() {
    let Some(root) = support::conformance() else {
        return;
    };
    let valid = root.join("reference-fixtures/valid");
    let descriptors = root.join("reference-descriptors");
    let mut names: Vec<String> = fs::read_dir(&valid)
        .expect("valid fixtures")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bop"))
        .collect();
    names.sort();
    assert!(names.len() > 30, "only {} valid fixtures", names.len());

    let mut compared_usages = 0;
    let mut compared_entries = 0;
    let mut failures = Vec::new();
    for name in &names {
        let stem = name.trim_end_matches(".bop");
        let desc_path = descriptors.join(format!("{stem}.desc.bin"));
        let bytes = fs::read(&desc_path).unwrap_or_else(|e| {
            panic!("missing reference descriptor {}: {e}", desc_path.display())
        });
        let set = DescriptorSet::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("cannot decode {}: {e:?}", desc_path.display()));
        let reference = reference_usages(&set);

        let result = Compiler::new()
            .include_dir(&valid)
            .decorator_runtime(LuaRuntime::new())
            .compile(&[valid.join(name)]);
        let Some(model) = result.model.as_ref() else {
            failures.push(format!(
                "{name} does not compile:\n{}",
                result.render_terminal(false)
            ));
            continue;
        };
        let ours: BTreeMap<String, Vec<Entry>> = support::usages(model)
            .into_iter()
            .map(|(path, u)| {
                let entries = u
                    .export_data
                    .iter()
                    .map(|(k, v)| {
                        let (kind, value) = from_model(v);
                        (k.clone(), kind, value)
                    })
                    .collect();
                (path, entries)
            })
            .collect();

        for (path, expected) in &reference {
            match ours.get(path) {
                Some(actual) if actual == expected => {
                    compared_usages += 1;
                    compared_entries += expected.len();
                }
                Some(actual) => failures.push(format!(
                    "{name}: usage {path}: export data {actual:?}, reference {expected:?}"
                )),
                None => failures.push(format!("{name}: usage {path} is missing")),
            }
        }
        for (path, entries) in &ours {
            if !entries.is_empty() && !reference.contains_key(path) {
                failures.push(format!(
                    "{name}: usage {path} exports {entries:?}; the reference has no such usage"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The fixtures hold five usages with export data (13 entries): make sure they were seen.
    assert!(
        compared_entries >= 13,
        "only {compared_entries} export entries compared"
    );
    assert!(
        compared_usages >= 5,
        "only {compared_usages} usages compared"
    );
}

#[test]
fn the_fixture_table_order_is_lua_next_order_with_the_fixed_seed() {
    // `return { constraint = ..., range_min = ..., range_max = ..., width = ... }` is written
    // by the reference as width, range_min, range_max, constraint.
    let c = support::compile(
        "#decorator(range) { targets = FIELD param min!: int32 param max!: int32
           export [[ return { constraint = \"range\", range_min = min, range_max = max, width = max - min } ]] }
         struct S { @range(min: 1, max: 5) x: int32; }",
    );
    let keys: Vec<String> = support::export_of(&c, "S.x#0")
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(keys, ["width", "range_min", "range_max", "constraint"]);
}

#[test]
fn the_build_script_uses_the_documented_seed() {
    let build = include_str!("../build.rs");
    assert!(
        build.contains(&format!("const HASH_SEED: u32 = {};", bebop_lua::HASH_SEED)),
        "build.rs and HASH_SEED disagree"
    );
}

#[test]
fn should_fail_fixtures_still_fail() {
    let Some(root) = support::conformance() else {
        return;
    };
    let dir = root.join("reference-fixtures/should_fail");
    let valid = root.join("reference-fixtures/valid");
    let mut count = 0;
    for entry in fs::read_dir(&dir).expect("should_fail fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "bop") {
            continue;
        }
        let result = Compiler::new()
            .include_dir(&valid)
            .include_dir(&dir)
            .decorator_runtime(LuaRuntime::new())
            .compile(&[&path]);
        assert!(result.has_errors(), "{} compiled", path.display());
        count += 1;
    }
    assert!(count > 10, "only {count} should_fail fixtures");
}
