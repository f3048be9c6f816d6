//! Test support: the fixtures' descriptors, and a generator of random **canonical** wire
//! bytes for any type of them (what a correct encoder writes: fields in declaration order,
//! no unknown tags, no deprecated message fields, bools as 0/1, map keys unique and in
//! ascending order, finite floats). Decoding such bytes into a generated type and encoding
//! it again must give the same bytes, in view and owned form.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use bebop_descriptor::{
    CodeGeneratorRequest, DefinitionBody, DefinitionIndex, DescriptorSet, SchemaDescriptor,
    TypeDescriptor, TypeKind,
};
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Cases per type.
pub const CASES: u32 = 48;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The schemas of a fixture: a reference request from `../shared/conformance` (optional:
/// see [`Fixture::reference`]), or a synthetic descriptor set from
/// `codegen/rust/tests/expected/extra`.
pub struct Fixture {
    pub name: String,
    pub schemas: Vec<SchemaDescriptor>,
}

impl Fixture {
    /// The reference compiler's request for fixture `name`; `None` (after a notice) when the
    /// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
    pub fn reference(name: &str) -> Option<Self> {
        let path = bebop_shared_data::conformance_dir("reference-descriptors")?
            .join(format!("{name}.request.bin"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let request = CodeGeneratorRequest::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Some(Fixture {
            name: name.into(),
            schemas: request.schemas.unwrap_or_default(),
        })
    }

    pub fn extra(name: &str) -> Self {
        let path = repo_root()
            .join("codegen/rust/tests/expected/extra")
            .join(format!("{name}.desc.bin"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let set =
            DescriptorSet::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Fixture {
            name: name.into(),
            schemas: set.schemas.unwrap_or_default(),
        }
    }

    /// Runs `check` on random canonical encodings of `fqn` under proptest (the seed is the
    /// input, so a failure prints the seed that reproduces it).
    pub fn check(&self, fqn: &str, check: impl Fn(&[u8]) -> Result<(), String>) {
        let index = DefinitionIndex::new(&self.schemas);
        assert!(
            index.get(fqn).is_some(),
            "{}: no definition `{fqn}`",
            self.name
        );
        let mut runner = TestRunner::new(Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&proptest::num::u64::ANY, |seed| {
            let bytes = WireGen::new(&index, seed).defined(fqn);
            check(&bytes).map_err(|e| {
                TestCaseError::fail(format!(
                    "{}: {fqn} (seed {seed}, bytes {}): {e}",
                    self.name,
                    hex(&bytes)
                ))
            })
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// One random canonical encoding of `fqn`.
    pub fn sample(&self, fqn: &str, seed: u64) -> Vec<u8> {
        let index = DefinitionIndex::new(&self.schemas);
        WireGen::new(&index, seed).defined(fqn)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    if bytes.len() > 96 {
        let head: String = bytes[..96].iter().map(|b| format!("{b:02x}")).collect();
        return format!("{head}... ({} bytes)", bytes.len());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A small deterministic PRNG (xorshift64*), seeded per case.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A map key's order, as the owned `BTreeMap` key type orders it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SortKey {
    Int(i128),
    Bytes(Vec<u8>),
}

pub struct WireGen<'i, 'a> {
    index: &'i DefinitionIndex<'a>,
    rng: Rng,
    depth: usize,
}

const STRING_CHARS: &[&str] = &[
    "a", "b", "Z", "0", " ", "\"", "é", "ß", "中", "😀", "\u{0}", "\n",
];

impl<'i, 'a> WireGen<'i, 'a> {
    pub fn new(index: &'i DefinitionIndex<'a>, seed: u64) -> Self {
        WireGen {
            index,
            rng: Rng::new(seed),
            depth: 0,
        }
    }

    pub fn defined(&mut self, fqn: &str) -> Vec<u8> {
        let mut out = Vec::new();
        self.def(fqn, &mut out);
        out
    }

    fn deep(&self) -> bool {
        self.depth >= 4
    }

    fn count(&mut self) -> usize {
        if self.deep() {
            0
        } else {
            self.rng.below(4) as usize
        }
    }

    fn string(&mut self) -> String {
        let n = self.rng.below(7);
        (0..n)
            .map(|_| STRING_CHARS[self.rng.below(STRING_CHARS.len() as u64) as usize])
            .collect()
    }

    fn float(&mut self) -> f64 {
        // Finite, and exactly representable in every float width used.
        (self.rng.below(2001) as f64 - 1000.0) / 8.0
    }

    /// Writes a random value of `ty`; returns its sort key when it is a scalar or string.
    fn value(&mut self, ty: &TypeDescriptor, out: &mut Vec<u8>) -> Option<SortKey> {
        let r = &mut self.rng;
        let int = |out: &mut Vec<u8>, bytes: Vec<u8>, signed: bool| {
            let mut wide = [0u8; 16];
            wide[..bytes.len()].copy_from_slice(&bytes);
            if signed && bytes.last().is_some_and(|b| b & 0x80 != 0) {
                wide[bytes.len()..].fill(0xff);
            }
            out.extend_from_slice(&bytes);
            Some(SortKey::Int(i128::from_le_bytes(wide)))
        };
        match ty.kind() {
            TypeKind::Bool => {
                let b = r.below(2) as u8;
                out.push(b);
                Some(SortKey::Int(b.into()))
            }
            TypeKind::Byte => int(out, r.bytes(1), false),
            TypeKind::Int8 => int(out, r.bytes(1), true),
            TypeKind::Int16 => int(out, r.bytes(2), true),
            TypeKind::Uint16 => int(out, r.bytes(2), false),
            TypeKind::Int32 => int(out, r.bytes(4), true),
            TypeKind::Uint32 => int(out, r.bytes(4), false),
            TypeKind::Int64 => int(out, r.bytes(8), true),
            TypeKind::Uint64 => int(out, r.bytes(8), false),
            TypeKind::Int128 => int(out, r.bytes(16), true),
            TypeKind::Uint128 => {
                let bytes = r.bytes(16);
                out.extend_from_slice(&bytes);
                // Order of u128 keys: big-endian bytes compare like the numbers.
                let mut be = bytes;
                be.reverse();
                Some(SortKey::Bytes(be))
            }
            TypeKind::Float16 => {
                let v = half::f16::from_f64(self.float());
                out.extend_from_slice(&v.to_le_bytes());
                None
            }
            TypeKind::Bfloat16 => {
                let v = half::bf16::from_f64(self.float());
                out.extend_from_slice(&v.to_le_bytes());
                None
            }
            TypeKind::Float32 => {
                out.extend_from_slice(&(self.float() as f32).to_le_bytes());
                None
            }
            TypeKind::Float64 => {
                out.extend_from_slice(&self.float().to_le_bytes());
                None
            }
            TypeKind::String => {
                let s = self.string();
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
                out.push(0);
                Some(SortKey::Bytes(s.into_bytes()))
            }
            TypeKind::Uuid => {
                let b = r.bytes(16);
                out.extend_from_slice(&b);
                Some(SortKey::Bytes(b))
            }
            TypeKind::Timestamp => {
                let secs = (r.next() as i64) >> 20;
                let nanos = r.below(1_000_000_000) as i32;
                let offset = r.below(2 * 86_400_000 + 1) as i32 - 86_400_000;
                out.extend_from_slice(&secs.to_le_bytes());
                out.extend_from_slice(&nanos.to_le_bytes());
                out.extend_from_slice(&offset.to_le_bytes());
                None
            }
            TypeKind::Duration => {
                let secs = (r.next() as i64) >> 24;
                let nanos = r.below(1_000_000_000) as i32;
                let nanos = match secs.cmp(&0) {
                    Ordering::Less => -nanos,
                    Ordering::Greater => nanos,
                    Ordering::Equal if r.chance(50) => -nanos,
                    Ordering::Equal => nanos,
                };
                out.extend_from_slice(&secs.to_le_bytes());
                out.extend_from_slice(&nanos.to_le_bytes());
                None
            }
            TypeKind::Array => {
                let el = ty.array_element.as_deref().expect("array element");
                let n = self.count();
                out.extend_from_slice(&(n as u32).to_le_bytes());
                self.depth += 1;
                for _ in 0..n {
                    self.value(el, out);
                }
                self.depth -= 1;
                None
            }
            TypeKind::FixedArray => {
                let el = ty.fixed_array_element.as_deref().expect("fixed element");
                let n = ty.fixed_array_size.expect("fixed size");
                self.depth += 1;
                for _ in 0..n {
                    self.value(el, out);
                }
                self.depth -= 1;
                None
            }
            TypeKind::Map => {
                let k = ty.map_key.as_deref().expect("map key");
                let v = ty.map_value.as_deref().expect("map value");
                let n = self.count();
                let mut keys: Vec<(SortKey, Vec<u8>)> = Vec::new();
                for _ in 0..n {
                    let mut kb = Vec::new();
                    let key = self
                        .value(k, &mut kb)
                        .expect("map keys are ordered scalars");
                    if !keys.iter().any(|(s, _)| *s == key) {
                        keys.push((key, kb));
                    }
                }
                keys.sort();
                out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
                self.depth += 1;
                for (_, kb) in keys {
                    out.extend_from_slice(&kb);
                    self.value(v, out);
                }
                self.depth -= 1;
                None
            }
            TypeKind::Defined => {
                let fqn = ty.defined_fqn.as_deref().expect("defined name");
                self.def(fqn, out)
            }
            TypeKind::Unknown => panic!("type of kind UNKNOWN"),
        }
    }

    fn def(&mut self, fqn: &str, out: &mut Vec<u8>) -> Option<SortKey> {
        let entry = self
            .index
            .get(fqn)
            .unwrap_or_else(|| panic!("unknown type `{fqn}`"));
        let definition = entry.definition;
        match definition
            .body()
            .unwrap_or_else(|| panic!("{fqn} has no body"))
        {
            DefinitionBody::Struct(s) => {
                for f in s.fields.as_deref().unwrap_or_default() {
                    self.value(f.r#type.as_ref().expect("field type"), out);
                }
                None
            }
            DefinitionBody::Message(m) => {
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                self.depth += 1;
                for f in m.fields.as_deref().unwrap_or_default() {
                    let deprecated = f
                        .decorators
                        .as_deref()
                        .unwrap_or_default()
                        .iter()
                        .any(|d| d.fqn.as_deref().is_some_and(|n| n.ends_with("deprecated")));
                    if deprecated || self.deep() || !self.rng.chance(60) {
                        continue;
                    }
                    out.push(f.index.expect("tag") as u8);
                    self.value(f.r#type.as_ref().expect("field type"), out);
                }
                self.depth -= 1;
                out.push(0);
                let len = (out.len() - at - 4) as u32;
                out[at..at + 4].copy_from_slice(&len.to_le_bytes());
                None
            }
            DefinitionBody::Union(u) => {
                let branches = u.branches.as_deref().unwrap_or_default();
                let b = if self.depth >= 8 {
                    &branches[0]
                } else {
                    &branches[self.rng.below(branches.len() as u64) as usize]
                };
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                out.push(b.discriminator.expect("discriminator"));
                let target = b
                    .inline_fqn
                    .as_deref()
                    .or(b.type_ref_fqn.as_deref())
                    .expect("branch type");
                self.depth += 1;
                self.def(target, out);
                self.depth -= 1;
                let len = (out.len() - at - 4) as u32;
                out[at..at + 4].copy_from_slice(&len.to_le_bytes());
                None
            }
            DefinitionBody::Enum(e) => {
                let size = TypeKind::fixed_wire_size(e.base_type.unwrap_or(TypeKind::Uint32))
                    .expect("integer base");
                let members = e.members.as_deref().unwrap_or_default();
                let value = if e.is_flags.unwrap_or(false) {
                    members
                        .iter()
                        .filter(|_| self.rng.chance(40))
                        .fold(0u64, |acc, m| acc | m.value.unwrap_or(0))
                } else {
                    members[self.rng.below(members.len() as u64) as usize]
                        .value
                        .unwrap_or(0)
                };
                out.extend_from_slice(&value.to_le_bytes()[..size]);
                let signed = matches!(
                    e.base_type,
                    Some(TypeKind::Int8 | TypeKind::Int16 | TypeKind::Int32 | TypeKind::Int64)
                );
                let v = if signed {
                    value as i64 as i128
                } else {
                    value as i128
                };
                Some(SortKey::Int(v))
            }
            other => panic!("{fqn}: not a type ({:?})", other.kind()),
        }
    }
}
