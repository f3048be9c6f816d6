//! Byte-for-byte round trips of the reference compiler's descriptors and plugin requests
//! (`../shared/conformance/reference-descriptors/`), and spot checks of their content.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bebop_descriptor::{
    CodeGeneratorRequest, DefinitionBody, DefinitionKind, DescriptorSet, Edition, LiteralKind,
    MethodType, TypeDescriptor, TypeKind, Visibility,
};

/// `../shared/conformance/reference-descriptors`; `None` (the test is skipped) when the
/// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
fn reference_dir() -> Option<PathBuf> {
    bebop_shared_data::conformance_dir("reference-descriptors")
}

/// NAME -> (desc.bin bytes, request.bin bytes).
type ReferenceFiles = BTreeMap<String, (Vec<u8>, Vec<u8>)>;

/// NAME -> (desc.bin bytes, request.bin bytes), for every NAME with both files.
fn reference_files() -> Option<ReferenceFiles> {
    let dir = reference_dir()?;
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("read reference-descriptors") {
        let path = entry.expect("dir entry").path();
        let file = path
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default()
            .to_string();
        if let Some(name) = file.strip_suffix(".desc.bin") {
            let desc = std::fs::read(&path).expect("read desc");
            let req_path = dir.join(format!("{name}.request.bin"));
            let req = std::fs::read(&req_path)
                .unwrap_or_else(|e| panic!("{} missing: {e}", req_path.display()));
            out.insert(name.to_string(), (desc, req));
        }
    }
    assert!(
        out.len() >= 40,
        "expected the ~45 reference descriptors, found {}",
        out.len()
    );
    Some(out)
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |v: &[u8]| {
        v.get(at.saturating_sub(8)..(at + 16).min(v.len()))
            .map(|s| {
                s.iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    format!(
        "lengths {} vs {}, first difference at byte {at}:\n  reference: {}\n  ours:      {}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

#[test]
fn every_reference_descriptor_round_trips_byte_for_byte() {
    let Some(files) = reference_files() else {
        return;
    };
    let mut failures = Vec::new();
    for (name, (desc, req)) in files {
        let set = match DescriptorSet::from_bytes(&desc) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}.desc.bin: decode failed: {e}"));
                continue;
            }
        };
        let again = set.to_vec().expect("encode DescriptorSet");
        if again != desc {
            failures.push(format!(
                "{name}.desc.bin: {}",
                first_difference(&desc, &again)
            ));
        }
        let request = match CodeGeneratorRequest::from_bytes(&req) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}.request.bin: decode failed: {e}"));
                continue;
            }
        };
        let again = request.to_vec().expect("encode request");
        if again != req {
            failures.push(format!(
                "{name}.request.bin: {}",
                first_difference(&req, &again)
            ));
        }
        // Compare as bytes: `PartialEq` would call two NaN constants (const.bop) unequal.
        let request_schemas = bebop_runtime::encode_to_vec(request.schema_list()).expect("encode");
        let set_schemas = bebop_runtime::encode_to_vec(set.schema_list()).expect("encode");
        if request_schemas != set_schemas {
            failures.push(format!(
                "{name}: request.schemas differ from the DescriptorSet's"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The reference descriptor set of fixture `name`; `None` as [`reference_dir`].
fn load(name: &str) -> Option<DescriptorSet> {
    let path = reference_dir()?.join(format!("{name}.desc.bin"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(DescriptorSet::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")))
}

#[test]
fn struct_fixture_content() {
    let Some(set) = load("struct") else {
        return;
    };
    let schema = &set.schema_list()[0];
    assert_eq!(schema.path.as_deref(), Some("struct.bop"));
    assert_eq!(schema.edition, Some(Edition::Edition2026));
    assert_eq!(schema.package, None);
    let first = &schema.definitions.as_ref().expect("definitions")[0];
    assert_eq!(first.name.as_deref(), Some("BasicTypes2"));
    assert_eq!(first.kind(), DefinitionKind::Struct);
    let Some(DefinitionBody::Struct(body)) = first.body() else {
        panic!("BasicTypes2 has no struct body: {first:?}")
    };
    assert_eq!(body.is_mutable, Some(true));
    assert_eq!(body.fixed_size, Some(0), "has a string field");
    let fields: Vec<_> = body
        .fields
        .iter()
        .flatten()
        .map(|f| {
            (
                f.name.as_deref().unwrap_or_default(),
                f.r#type.as_ref().map(|t| t.kind()),
            )
        })
        .collect();
    use TypeKind::*;
    let expected = [
        ("a_bool", Bool),
        ("a_byte", Byte),
        ("a_int16", Int16),
        ("a_uint16", Uint16),
        ("a_int32", Int32),
        ("a_uint32", Uint32),
        ("a_int64", Int64),
        ("a_uint64", Uint64),
        ("a_float32", Float32),
        ("a_float64", Float64),
        ("a_string", String),
        ("a_uuid", Uuid),
        ("a_timestamp", Timestamp),
        ("a_duration", Duration),
    ];
    assert_eq!(
        fields,
        expected
            .iter()
            .map(|(n, k)| (*n, Some(*k)))
            .collect::<Vec<_>>()
    );
    // Struct fields carry index 0, explicitly written.
    assert!(body.fields.iter().flatten().all(|f| f.index == Some(0)));

    // `m3: map[int32, map[bool, S2][]][]`
    let index = set.index();
    let maps = index.get("SomeMaps2").expect("SomeMaps2");
    let Some(DefinitionBody::Struct(maps)) = maps.definition.body() else {
        panic!()
    };
    let m3 = maps.fields.as_ref().expect("fields")[2]
        .r#type
        .clone()
        .expect("type");
    let expected = TypeDescriptor::array(TypeDescriptor::map(
        TypeDescriptor::scalar(Int32),
        TypeDescriptor::array(TypeDescriptor::map(
            TypeDescriptor::scalar(Bool),
            TypeDescriptor::defined("S2"),
        )),
    ));
    assert_eq!(m3, expected);
    assert!(index.resolve(&TypeDescriptor::defined("S2")).is_some());
    let Some(DefinitionBody::Struct(s2)) = index.get("S2").and_then(|e| e.definition.body()) else {
        panic!("S2")
    };
    assert_eq!(s2.fixed_size, Some(8));
    assert_eq!(s2.is_mutable, Some(false), "false is written, not omitted");
    // An empty struct has a body without a `fields` array.
    let Some(DefinitionBody::Struct(empty)) =
        index.get("EmptyStruct").and_then(|e| e.definition.body())
    else {
        panic!("EmptyStruct")
    };
    assert_eq!(empty.fields, None);
    assert_eq!(empty.fixed_size, Some(0));
}

#[test]
fn enum_member_values() {
    let Some(set) = load("enum_size") else {
        return;
    };
    let index = set.index();
    let Some(DefinitionBody::Enum(small)) =
        index.get("SmallEnum").and_then(|e| e.definition.body())
    else {
        panic!("SmallEnum")
    };
    assert_eq!(small.base_type, Some(TypeKind::Byte), "uint8 is BYTE");
    let values: Vec<_> = small
        .members
        .iter()
        .flatten()
        .map(|m| (m.name.clone().unwrap_or_default(), m.value))
        .collect();
    assert_eq!(
        values,
        [
            ("UNSPECIFIED".to_string(), Some(0)),
            ("A".to_string(), Some(1)),
            ("B".to_string(), Some(255))
        ]
    );
    let Some(DefinitionBody::Enum(huge)) = index.get("HugeEnum").and_then(|e| e.definition.body())
    else {
        panic!("HugeEnum")
    };
    assert_eq!(huge.base_type, Some(TypeKind::Int64));
    let members = huge.members.as_ref().expect("members");
    assert_eq!(
        members[1].value,
        Some(u64::MAX),
        "-1 stored as its u64 bits"
    );
    assert_eq!(members[2].value, Some(0x7FFF_FFFF_FFFF_FFFF));
    assert_eq!(huge.is_flags, Some(false));
    assert!(members.iter().all(|m| m.value_expr.is_none()));

    let Some(set) = load("enum") else {
        return;
    };
    let letters = set.find_definition("letters").expect("letters");
    assert_eq!(
        letters.definition.documentation.as_deref(),
        Some("Doc comment on enum")
    );
    let Some(DefinitionBody::Enum(body)) = letters.definition.body() else {
        panic!()
    };
    let members = body.members.as_ref().expect("members");
    assert_eq!(members.len(), 7);
    assert_eq!(members[6].name.as_deref(), Some("h"));
    assert_eq!(members[6].value, Some(6));
    let deprecated = &members[0].decorators.as_ref().expect("@deprecated")[0];
    assert_eq!(deprecated.fqn.as_deref(), Some("deprecated"));
    let arg = &deprecated.args.as_ref().expect("args")[0];
    assert_eq!(arg.value.kind(), LiteralKind::String);
    assert_eq!(
        arg.value.string_value.as_deref(),
        Some("i'm counting that money")
    );
}

#[test]
fn service_methods_carry_their_ids() {
    let Some(set) = load("codegen_all") else {
        return;
    };
    let echo = set
        .find_definition("codegen.all.EchoService")
        .expect("EchoService");
    let Some(DefinitionBody::Service(body)) = echo.definition.body() else {
        panic!()
    };
    let methods = body.methods.as_ref().expect("methods");
    assert_eq!(methods.len(), 3);
    assert_eq!(methods[0].name.as_deref(), Some("Ping"));
    assert_eq!(
        methods[0].id,
        Some(bebop_runtime::method_id("/EchoService/Ping"))
    );
    assert_eq!(methods[0].method_type, Some(MethodType::Unary));
    assert_eq!(
        methods[0].request_type,
        Some(TypeDescriptor::defined("base.SimpleMessage"))
    );
    // Mixins leave no trace: StreamService lists only its own three methods.
    let stream = set
        .find_definition("codegen.all.StreamService")
        .expect("StreamService");
    let Some(DefinitionBody::Service(body)) = stream.definition.body() else {
        panic!()
    };
    let kinds: Vec<_> = body
        .methods
        .iter()
        .flatten()
        .map(|m| {
            let name = m.name.clone().unwrap_or_default();
            assert_eq!(
                m.id,
                Some(bebop_runtime::method_id(&format!("/StreamService/{name}")))
            );
            (name, m.method_type)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Watch".to_string(), Some(MethodType::ServerStream)),
            ("Upload".to_string(), Some(MethodType::ClientStream)),
            ("Chat".to_string(), Some(MethodType::DuplexStream)),
        ]
    );
    // Definitions of the import come in their own schema, found by FQN.
    let point = set.find_definition("base.Point").expect("base.Point");
    assert_eq!(point.schema.path.as_deref(), Some("codegen_base.bop"));
    assert_eq!(point.definition.visibility, Some(Visibility::Default));
}

#[test]
fn nested_definitions_are_walked_with_fqns() {
    let Some(set) = load("union") else {
        return;
    };
    let names: Vec<_> = set
        .all_definitions()
        .map(|e| (e.fqn.into_owned(), e.depth))
        .collect();
    assert!(names.contains(&("U".to_string(), 0)));
    assert!(names.contains(&("U.A".to_string(), 1)));
    assert!(names.contains(&("U.D".to_string(), 1)));
    let u = set.find_definition("U").expect("U");
    let Some(DefinitionBody::Union(body)) = u.definition.body() else {
        panic!()
    };
    let branches = body.branches.as_ref().expect("branches");
    assert_eq!(branches[0].discriminator, Some(1));
    assert_eq!(branches[0].inline_fqn.as_deref(), Some("U.A"));
    // Every inline branch names a definition the walk finds.
    let index = set.index();
    for b in branches {
        let fqn = b.inline_fqn.as_deref().expect("inline");
        assert!(index.get(fqn).is_some(), "{fqn} not found");
    }
}

/// `export_data` keeps the reference's entry order, which is neither source order nor sorted;
/// an ordered map would not reproduce the bytes.
#[test]
fn export_data_order_needs_a_vec_of_pairs() {
    let name = "dec_validate_export";
    let Some(dir) = reference_dir() else {
        return;
    };
    let bytes = std::fs::read(dir.join(format!("{name}.desc.bin"))).expect("read");
    let mut set = DescriptorSet::from_bytes(&bytes).expect("decode");
    let product = set.find_definition("Product").expect("Product");
    let Some(DefinitionBody::Struct(body)) = product.definition.body() else {
        panic!()
    };
    let price = &body.fields.as_ref().expect("fields")[2];
    let range = &price.decorators.as_ref().expect("@range")[0];
    let keys: Vec<_> = range
        .export_data
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["width", "range_min", "range_max", "constraint"]);
    assert_eq!(
        range
            .export("constraint")
            .and_then(|v| v.string_value.as_deref()),
        Some("range")
    );

    // Sorting the entries (what a BTreeMap would do) changes the bytes.
    for schema in set.schemas.iter_mut().flatten() {
        for def in schema.definitions.iter_mut().flatten() {
            for field in def
                .struct_def
                .iter_mut()
                .flat_map(|s| s.fields.iter_mut().flatten())
            {
                for usage in field.decorators.iter_mut().flatten() {
                    if let Some(entries) = &mut usage.export_data {
                        entries.sort_by(|a, b| a.0.cmp(&b.0));
                    }
                }
            }
        }
    }
    assert_ne!(set.to_vec().expect("encode"), bytes);
}
