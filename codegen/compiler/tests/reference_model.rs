//! Compares the model built for each valid fixture with the DescriptorSet the reference
//! compiler produced for it (`shared/conformance/reference-descriptors/NAME.desc.bin`):
//! names, FQNs, visibility, documentation, enum values, types, tags, discriminators, method
//! ids, constants, decorator usages and definitions. Definition order is not compared (the
//! reference sorts topologically; this project keeps source order), nor Lua export data
//! (no Lua runtime here yet).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::collections::BTreeMap;
use std::path::PathBuf;

use bebopc::Compiler;
use bebopc::model::*;

// ---- a small decoder for the reference bytes -------------------------------------------

struct R<'a> {
    b: &'a [u8],
    o: usize,
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.b[self.o..self.o + n];
        self.o += n;
        s
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn string(&mut self) -> String {
        let n = self.u32() as usize;
        let s = String::from_utf8(self.take(n).to_vec()).unwrap();
        self.o += 1;
        s
    }
    fn array<T>(&mut self, f: impl Fn(&mut R<'a>) -> T) -> Vec<T> {
        let n = self.u32();
        (0..n).map(|_| f(self)).collect()
    }
    /// Reads a message, calling `f(reader, tag)` for each field.
    fn message(&mut self, mut f: impl FnMut(&mut R<'a>, u8)) {
        let len = self.u32() as usize;
        let end = self.o + len;
        while self.o < end {
            let tag = self.u8();
            if tag == 0 {
                break;
            }
            f(self, tag);
        }
        self.o = end;
    }
}

fn ty(r: &mut R) -> String {
    let mut kind = 0u8;
    let (mut elem, mut fixed, mut size, mut key, mut val, mut fqn) = (
        String::new(),
        String::new(),
        0u32,
        String::new(),
        String::new(),
        String::new(),
    );
    r.message(|r, t| match t {
        1 => kind = r.u8(),
        2 => elem = ty(r),
        3 => fixed = ty(r),
        4 => size = r.u32(),
        5 => key = ty(r),
        6 => val = ty(r),
        7 => fqn = r.string(),
        _ => panic!("type tag {t}"),
    });
    match kind {
        20 => format!("{elem}[]"),
        21 => format!("{fixed}[{size}]"),
        22 => format!("map[{key},{val}]"),
        23 => fqn,
        k => format!("#{k}"),
    }
}

fn lit(r: &mut R) -> String {
    let mut out = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("kind={}", r.u8()),
            2 => format!("bool={}", r.u8()),
            3 => format!("int={}", r.i64()),
            4 => format!("float={:?}", r.f64()),
            5 => format!("str={:?}", r.string()),
            6 => format!("uuid={:02x?}", r.take(16)),
            7 => format!("raw={:?}", r.string()),
            8 => {
                let n = r.u32() as usize;
                format!("bytes={:?}", r.take(n))
            }
            9 => format!("ts={},{},{}", r.i64(), r.i32(), r.i32()),
            10 => format!("dur={},{}", r.i64(), r.i32()),
            _ => panic!("literal tag {t}"),
        };
        out.insert(t, v);
    });
    out.into_values().collect::<Vec<_>>().join(" ")
}

fn usages(r: &mut R) -> Vec<String> {
    r.array(|r| {
        let mut name = String::new();
        let mut args = Vec::new();
        r.message(|r, t| match t {
            1 => name = r.string(),
            2 => {
                args = r.array(|r| {
                    let n = r.string();
                    let v = lit(r);
                    format!("{n}:{v}")
                })
            }
            3 => {
                // export data: skipped (no Lua runtime in this crate).
                let n = r.u32();
                for _ in 0..n {
                    r.string();
                    lit(r);
                }
            }
            _ => panic!("usage tag {t}"),
        });
        format!("@{name}({})", args.join(", "))
    })
}

/// A definition flattened into comparable lines.
fn definition(r: &mut R, out: &mut BTreeMap<String, Vec<String>>) {
    let mut lines = Vec::new();
    let mut fqn = String::new();
    r.message(|r, t| match t {
        1 => lines.push(format!("kind {}", r.u8())),
        2 => lines.push(format!("name {}", r.string())),
        3 => fqn = r.string(),
        4 => lines.push(format!("doc {:?}", r.string())),
        5 => lines.push(format!("vis {}", r.u8())),
        6 => lines.push(format!("decorators {:?}", usages(r))),
        7 => {
            let n = r.u32();
            for _ in 0..n {
                definition(r, out);
            }
            lines.push(format!("nested {n}"));
        }
        8 => r.message(|r, t| match t {
            1 => lines.push(format!("enum base {}", r.u8())),
            2 => {
                for m in r.array(member) {
                    lines.push(m);
                }
            }
            3 => lines.push(format!("flags {}", r.u8())),
            _ => panic!("enum tag {t}"),
        }),
        9 => r.message(|r, t| match t {
            1 => {
                for f in r.array(field) {
                    lines.push(f);
                }
            }
            2 => lines.push(format!("mut {}", r.u8())),
            3 => lines.push(format!("fixed {}", r.u32())),
            _ => panic!("struct tag {t}"),
        }),
        10 => r.message(|r, t| match t {
            1 => {
                for f in r.array(field) {
                    lines.push(f);
                }
            }
            _ => panic!("message tag {t}"),
        }),
        11 => r.message(|r, t| match t {
            1 => {
                for b in r.array(branch) {
                    lines.push(b);
                }
            }
            _ => panic!("union tag {t}"),
        }),
        12 => r.message(|r, t| match t {
            1 => {
                for m in r.array(method) {
                    lines.push(m);
                }
            }
            _ => panic!("service tag {t}"),
        }),
        13 => r.message(|r, t| match t {
            1 => lines.push(format!("const type {}", ty(r))),
            2 => lines.push(format!("const value {}", lit(r))),
            _ => panic!("const tag {t}"),
        }),
        14 => r.message(|r, t| match t {
            1 => lines.push(format!("targets {}", r.u8())),
            2 => lines.push(format!("multiple {}", r.u8())),
            3 => {
                for p in r.array(param) {
                    lines.push(p);
                }
            }
            4 => lines.push(format!("validate {:?}", r.string())),
            5 => lines.push(format!("export {:?}", r.string())),
            _ => panic!("decorator tag {t}"),
        }),
        _ => panic!("definition tag {t}"),
    });
    out.insert(fqn, lines);
}

fn member(r: &mut R) -> String {
    let mut parts = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("name={}", r.string()),
            2 => format!("doc={:?}", r.string()),
            3 => format!("value={}", r.u64()),
            4 => format!("decorators={:?}", usages(r)),
            5 => {
                r.string();
                return;
            }
            _ => panic!("member tag {t}"),
        };
        parts.insert(t, v);
    });
    format!(
        "member {}",
        parts.into_values().collect::<Vec<_>>().join(" ")
    )
}

fn field(r: &mut R) -> String {
    let mut parts = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("name={}", r.string()),
            2 => format!("doc={:?}", r.string()),
            3 => format!("type={}", ty(r)),
            4 => format!("index={}", r.u32()),
            5 => format!("decorators={:?}", usages(r)),
            _ => panic!("field tag {t}"),
        };
        parts.insert(t, v);
    });
    format!(
        "field {}",
        parts.into_values().collect::<Vec<_>>().join(" ")
    )
}

fn branch(r: &mut R) -> String {
    let mut parts = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("disc={}", r.u8()),
            2 => format!("doc={:?}", r.string()),
            3 => format!("inline={}", r.string()),
            4 => format!("ref={}", r.string()),
            5 => format!("name={}", r.string()),
            6 => format!("decorators={:?}", usages(r)),
            _ => panic!("branch tag {t}"),
        };
        parts.insert(t, v);
    });
    format!(
        "branch {}",
        parts.into_values().collect::<Vec<_>>().join(" ")
    )
}

fn method(r: &mut R) -> String {
    let mut parts = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("name={}", r.string()),
            2 => format!("doc={:?}", r.string()),
            3 => format!("req={}", ty(r)),
            4 => format!("res={}", ty(r)),
            5 => format!("type={}", r.u8()),
            6 => format!("id={}", r.u32()),
            7 => format!("decorators={:?}", usages(r)),
            _ => panic!("method tag {t}"),
        };
        parts.insert(t, v);
    });
    format!(
        "method {}",
        parts.into_values().collect::<Vec<_>>().join(" ")
    )
}

fn param(r: &mut R) -> String {
    let mut parts = BTreeMap::new();
    r.message(|r, t| {
        let v = match t {
            1 => format!("name={}", r.string()),
            2 => format!("desc={:?}", r.string()),
            3 => format!("type={}", r.u8()),
            4 => format!("required={}", r.u8()),
            5 => format!("default={}", lit(r)),
            6 => format!("allowed={:?}", r.array(lit)),
            _ => panic!("param tag {t}"),
        };
        parts.insert(t, v);
    });
    format!(
        "param {}",
        parts.into_values().collect::<Vec<_>>().join(" ")
    )
}

struct RefSchema {
    package: Option<String>,
    imports: Vec<String>,
    defs: BTreeMap<String, Vec<String>>,
}

fn reference(bytes: &[u8]) -> BTreeMap<String, RefSchema> {
    let mut r = R { b: bytes, o: 0 };
    let mut schemas = BTreeMap::new();
    r.message(|r, t| {
        assert_eq!(t, 1);
        let n = r.u32();
        for _ in 0..n {
            let mut path = String::new();
            let mut s = RefSchema {
                package: None,
                imports: Vec::new(),
                defs: BTreeMap::new(),
            };
            r.message(|r, t| match t {
                1 => path = r.string(),
                2 => s.package = Some(r.string()),
                3 => assert_eq!(r.i32(), 1000),
                4 => s.imports = r.array(|r| r.string()),
                5 => {
                    let n = r.u32();
                    for _ in 0..n {
                        definition(r, &mut s.defs);
                    }
                }
                _ => panic!("schema tag {t}"),
            });
            schemas.insert(path, s);
        }
    });
    schemas
}

// ---- the same lines from the model ------------------------------------------------------

fn type_line(t: &Type) -> String {
    match t {
        Type::Scalar(s) => format!("#{}", s.type_kind()),
        Type::Array(e) => format!("{}[]", type_line(e)),
        Type::FixedArray(e, n) => format!("{}[{n}]", type_line(e)),
        Type::Map(k, v) => format!("map[{},{}]", type_line(k), type_line(v)),
        Type::Defined { fqn, .. } => fqn.clone(),
    }
}

fn value_line(v: &Value) -> String {
    match v {
        Value::Bool(b) => format!("kind=1 bool={}", u8::from(*b)),
        Value::Int(i) => format!("kind=2 int={}", *i as i64),
        Value::UInt(u) => format!("kind=2 int={}", *u as u64 as i64),
        Value::Float(f) => format!("kind=3 float={f:?}"),
        Value::String { value, raw } => match raw {
            Some(raw) => format!("kind=4 str={value:?} raw={raw:?}"),
            None => format!("kind=4 str={value:?}"),
        },
        Value::Uuid(u) => format!("kind=5 uuid={:02x?}", u.as_bytes()),
        Value::Bytes(b) => format!("kind=6 bytes={b:?}"),
        Value::Timestamp(t) => format!("kind=7 ts={},{},{}", t.seconds(), t.nanos(), t.offset_ms()),
        Value::Duration(d) => format!("kind=8 dur={},{}", d.seconds(), d.nanos()),
    }
}

fn usage_lines(us: &[DecoratorUsage]) -> Vec<String> {
    us.iter()
        .map(|u| {
            let args: Vec<String> = u
                .args
                .iter()
                .map(|a| format!("{}:{}", a.name, value_line(&a.value)))
                .collect();
            format!("@{}({})", u.name, args.join(", "))
        })
        .collect()
}

fn doc_part(doc: &Option<String>) -> Option<String> {
    doc.as_ref().map(|d| format!("doc={d:?}"))
}

fn decorated(parts: &mut Vec<String>, us: &[DecoratorUsage]) {
    if !us.is_empty() {
        parts.push(format!("decorators={:?}", usage_lines(us)));
    }
}

fn field_line(f: &Field) -> String {
    let mut parts = vec![format!("name={}", f.name)];
    parts.extend(doc_part(&f.documentation));
    parts.push(format!("type={}", type_line(&f.ty)));
    parts.push(format!("index={}", f.index));
    decorated(&mut parts, &f.decorators);
    format!("field {}", parts.join(" "))
}

fn model_lines(model: &Model, d: &Definition) -> Vec<String> {
    let mut lines = vec![
        format!("kind {}", d.kind() as u8),
        format!("name {}", d.name),
    ];
    if let Some(doc) = &d.documentation {
        lines.push(format!("doc {doc:?}"));
    }
    lines.push(format!("vis {}", d.visibility as u8));
    if !d.decorators.is_empty() {
        lines.push(format!("decorators {:?}", usage_lines(&d.decorators)));
    }
    if !d.nested.is_empty() {
        lines.push(format!("nested {}", d.nested.len()));
    }
    match &d.body {
        DefBody::Enum(e) => {
            lines.push(format!("enum base {}", e.base.type_kind()));
            for m in &e.members {
                let mut parts = vec![format!("name={}", m.name)];
                parts.extend(doc_part(&m.documentation));
                parts.push(format!("value={}", m.value));
                decorated(&mut parts, &m.decorators);
                lines.push(format!("member {}", parts.join(" ")));
            }
            lines.push(format!("flags {}", u8::from(e.is_flags)));
        }
        DefBody::Struct(s) => {
            lines.extend(s.fields.iter().map(field_line));
            lines.push(format!("mut {}", u8::from(s.is_mutable)));
            lines.push(format!("fixed {}", s.fixed_size));
        }
        DefBody::Message(m) => lines.extend(m.fields.iter().map(field_line)),
        DefBody::Union(u) => {
            for b in &u.branches {
                let mut parts = vec![format!("disc={}", b.discriminator)];
                parts.extend(doc_part(&b.documentation));
                match &b.target {
                    BranchTarget::Inline { fqn, .. } => parts.push(format!("inline={fqn}")),
                    BranchTarget::Reference { fqn, .. } => {
                        parts.push(format!("ref={fqn}"));
                        parts.push(format!("name={}", b.name));
                    }
                }
                decorated(&mut parts, &b.decorators);
                lines.push(format!("branch {}", parts.join(" ")));
            }
        }
        DefBody::Service(s) => {
            for m in &s.methods {
                let mut parts = vec![format!("name={}", m.name)];
                parts.extend(doc_part(&m.documentation));
                parts.push(format!("req={}", type_line(&m.request)));
                parts.push(format!("res={}", type_line(&m.response)));
                parts.push(format!("type={}", m.kind as u8));
                parts.push(format!("id={}", m.id));
                decorated(&mut parts, &m.decorators);
                lines.push(format!("method {}", parts.join(" ")));
            }
        }
        DefBody::Const(c) => {
            lines.push(format!("const type {}", type_line(&c.ty)));
            lines.push(format!("const value {}", value_line(&c.value)));
        }
        DefBody::Decorator(dd) => {
            lines.push(format!("targets {}", dd.targets.0));
            lines.push(format!("multiple {}", u8::from(dd.allow_multiple)));
            for p in &dd.params {
                let mut parts = vec![format!("name={}", p.name)];
                if let Some(desc) = &p.description {
                    parts.push(format!("desc={desc:?}"));
                }
                let kind = match p.ty {
                    ParamType::Scalar(s) => s.type_kind(),
                    ParamType::Type => 23,
                };
                parts.push(format!("type={kind}"));
                parts.push(format!("required={}", u8::from(p.required)));
                if let Some(v) = &p.default {
                    parts.push(format!("default={}", value_line(v)));
                }
                if !p.allowed_values.is_empty() {
                    let vs: Vec<String> = p.allowed_values.iter().map(value_line).collect();
                    parts.push(format!("allowed={vs:?}"));
                }
                lines.push(format!("param {}", parts.join(" ")));
            }
            if let Some(v) = &dd.validate_source {
                lines.push(format!("validate {v:?}"));
            }
            if let Some(v) = &dd.export_source {
                lines.push(format!("export {v:?}"));
            }
        }
    }
    let _ = model;
    lines
}

fn normalize(mut lines: Vec<String>) -> Vec<String> {
    // The reference writes some zero values; drop the ones this comparison cannot tell
    // apart from absence.
    lines.retain(|l| l != "vis 0" && l != "nested 0");
    lines.sort();
    lines
}

/// The valid fixtures and the reference descriptors; `None` (the test is skipped) when the
/// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
fn dirs() -> Option<(PathBuf, PathBuf)> {
    let base = bebop_shared_data::conformance_dir("")?;
    let valid = base.join("reference-fixtures/valid");
    let descs = base.join("reference-descriptors");
    assert!(
        valid.is_dir() && descs.is_dir(),
        "conformance data incomplete under {}",
        base.display()
    );
    Some((valid, descs))
}

#[test]
fn models_match_the_reference_descriptors() {
    let Some((valid, descs)) = dirs() else {
        return;
    };
    let mut compared = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&descs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".desc.bin"))
        .collect();
    entries.sort();
    assert!(entries.len() >= 40);
    for desc in entries {
        let name = desc
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".desc.bin")
            .to_string();
        let reference = reference(&std::fs::read(&desc).unwrap());
        // Compile from inside the fixtures folder so paths are relative, as the reference was run.
        let result = Compiler::new()
            .include_dir(&valid)
            .compile(&[valid.join(format!("{name}.bop"))]);
        assert!(
            !result.has_errors(),
            "{name}: {}",
            result.render_terminal(false)
        );
        let model = result.model.as_ref().unwrap();
        for (path, rs) in &reference {
            if path.starts_with("bebop/") {
                // Our standard schemas have their own documentation (docs/decisions.md D18).
                continue;
            }
            let schema = model
                .schemas
                .iter()
                .find(|s| s.path == *path || s.path.ends_with(&format!("/{path}")))
                .unwrap_or_else(|| panic!("{name}: schema {path} missing"));
            assert_eq!(schema.package, rs.package, "{name}/{path}: package");
            let imports: Vec<&str> = schema.imports.iter().map(|i| i.path.as_str()).collect();
            assert_eq!(imports, rs.imports, "{name}/{path}: imports");
            let mine: BTreeMap<String, Vec<String>> = model
                .definitions
                .iter()
                .filter(|d| d.schema == schema.id)
                .map(|d| (d.fqn.clone(), normalize(model_lines(model, d))))
                .collect();
            let theirs: BTreeMap<String, Vec<String>> = rs
                .defs
                .iter()
                .map(|(k, v)| (k.clone(), normalize(v.clone())))
                .collect();
            assert_eq!(
                mine.keys().collect::<Vec<_>>(),
                theirs.keys().collect::<Vec<_>>(),
                "{name}/{path}: definitions"
            );
            for (fqn, lines) in &theirs {
                assert_eq!(&mine[fqn], lines, "{name}/{path}: {fqn}");
            }
            compared += mine.len();
        }
    }
    assert!(compared > 300, "compared only {compared} definitions");
}
