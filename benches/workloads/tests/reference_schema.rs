//! `schemas/workloads.bop` against the reference's workload schema
//! (`../shared/bench/benchmark.bop`, beside the clone): both compiled with `bebopc`, every
//! definition must have the same wire shape. Definitions are compared by name, on their
//! descriptors with documentation stripped (and schema paths and source info left out), so
//! everything else (kinds, field names, order, types, message tags, union discriminators,
//! enum values and base types, `mut`, fixed sizes, nesting, visibility, decorators) must
//! agree. Without the reference schema the comparison is skipped, or fails when `CI` is set
//! (see `bebop-shared-data`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bebop_descriptor::{DefinitionDescriptor, DescriptorSet, SchemaDescriptor};

fn ours() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/workloads.bop")
}

/// The descriptor set, and the rendered warnings (empty when there are none).
fn compile(path: &Path) -> (DescriptorSet, String) {
    let compilation = bebopc::Compiler::new().compile(&[path]);
    let rendered = compilation.render_terminal(false);
    assert!(!compilation.has_errors(), "{}:\n{rendered}", path.display());
    let warnings = if compilation.warnings().next().is_some() {
        rendered
    } else {
        String::new()
    };
    let set = compilation
        .descriptor_set(&Default::default())
        .expect("no errors, so a descriptor set");
    (set, warnings)
}

/// `text` compiled in memory as `workloads.bop`.
fn compile_text(text: &str) -> DescriptorSet {
    let compilation = bebopc::Compiler::new()
        .compile_in_memory(&[("workloads.bop", text.as_bytes())], &["workloads.bop"]);
    assert!(
        !compilation.has_errors(),
        "{}",
        compilation.render_terminal(false)
    );
    compilation
        .descriptor_set(&Default::default())
        .expect("no errors, so a descriptor set")
}

/// Clears what does not reach the wire: documentation, here and in everything nested.
fn strip(d: &mut DefinitionDescriptor) {
    d.documentation = None;
    if let Some(e) = &mut d.enum_def {
        for m in e.members.iter_mut().flatten() {
            m.documentation = None;
        }
    }
    if let Some(s) = &mut d.struct_def {
        for f in s.fields.iter_mut().flatten() {
            f.documentation = None;
        }
    }
    if let Some(m) = &mut d.message_def {
        for f in m.fields.iter_mut().flatten() {
            f.documentation = None;
        }
    }
    if let Some(u) = &mut d.union_def {
        for b in u.branches.iter_mut().flatten() {
            b.documentation = None;
        }
    }
    if let Some(s) = &mut d.service_def {
        for m in s.methods.iter_mut().flatten() {
            m.documentation = None;
        }
    }
    if let Some(dec) = &mut d.decorator_def {
        for p in dec.params.iter_mut().flatten() {
            p.description = None;
        }
    }
    for n in d.nested.iter_mut().flatten() {
        strip(n);
    }
}

/// The one schema of a set, with its definitions by FQN (stripped) and the rest of the
/// schema descriptor without its path and source info.
fn shapes(set: DescriptorSet) -> (SchemaDescriptor, BTreeMap<String, DefinitionDescriptor>) {
    let mut schemas = set.schemas.unwrap_or_default();
    assert_eq!(schemas.len(), 1, "one schema, no imports");
    let mut schema = schemas.remove(0);
    let mut by_name = BTreeMap::new();
    for mut d in schema.definitions.take().unwrap_or_default() {
        strip(&mut d);
        let fqn = d.fqn.clone().expect("every definition has an FQN");
        assert!(by_name.insert(fqn.clone(), d).is_none(), "{fqn} twice");
    }
    schema.path = None;
    schema.source_code_info = None;
    (schema, by_name)
}

#[test]
fn our_schema_compiles_without_warnings() {
    let (set, warnings) = compile(&ours());
    assert!(warnings.is_empty(), "compiler warnings:\n{warnings}");
    let (_, defs) = shapes(set);
    for name in [
        "Person",
        "Order",
        "Event",
        "TreeNode",
        "JsonValue",
        "Document",
        "ChunkedText",
        "EmbeddingBF16",
        "EmbeddingF32",
        "EmbeddingBatch",
        "LLMStreamChunk",
        "TensorShard",
        "InferenceResponse",
    ] {
        assert!(defs.contains_key(name), "{name} is missing");
    }
}

#[test]
fn every_definition_has_the_reference_wire_shape() {
    let Some(reference) = bebop_shared_data::shared_data("bench/benchmark.bop") else {
        return;
    };
    let (ref_schema, ref_defs) = shapes(compile(&reference).0);
    let (our_schema, our_defs) = shapes(compile(&ours()).0);
    assert_eq!(
        our_schema, ref_schema,
        "package, edition or imports differ from the reference's"
    );
    assert_eq!(
        our_defs.keys().collect::<Vec<_>>(),
        ref_defs.keys().collect::<Vec<_>>(),
        "not the same definitions"
    );
    for (name, theirs) in &ref_defs {
        assert_eq!(
            &our_defs[name], theirs,
            "{name} differs from the reference's"
        );
    }
}

/// The comparison itself: documentation does not count; tags, base types and `mut` do.
#[test]
fn the_comparison_ignores_docs_and_sees_wire_changes() {
    let text = std::fs::read_to_string(ours()).unwrap();
    let (_, base) = shapes(compile_text(&text));
    let edit = |from: &str, to: &str| {
        assert!(text.contains(from), "{from:?} not in workloads.bop");
        shapes(compile_text(&text.replace(from, to))).1
    };
    assert_eq!(edit("/// Account number.", "/// Something else."), base);
    let retagged = edit("children(2): TreeNode[];", "children(3): TreeNode[];");
    assert_ne!(retagged["TreeNode"], base["TreeNode"]);
    let widened = edit("enum ChunkKind : byte", "enum ChunkKind : uint16");
    assert_ne!(widened["ChunkKind"], base["ChunkKind"]);
    let immutable = edit(
        "mut\n/// One embedding vector in bfloat16",
        "/// One embedding vector in bfloat16",
    );
    assert_ne!(immutable["EmbeddingBF16"], base["EmbeddingBF16"]);
}
