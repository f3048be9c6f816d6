//! Finding your way around a descriptor: every definition with its fully qualified name,
//! lookup by name, and a definition's body as one Rust enum.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bebop_runtime::{Decode, Error};

use crate::{
    CodeGeneratorRequest, CodeGeneratorResponse, ConstDef, DecoratorDef, DefinitionDescriptor,
    DefinitionKind, DescriptorSet, EnumDef, MessageDef, SchemaDescriptor, ServiceDef, StructDef,
    TypeDescriptor, TypeKind, UnionDef,
};

/// The kind-specific body of a [`DefinitionDescriptor`] (its `enum_def` .. `decorator_def`
/// field), as [`DefinitionDescriptor::body`] returns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefinitionBody<'a> {
    /// `enum_def(8)`.
    Enum(&'a EnumDef),
    /// `struct_def(9)`.
    Struct(&'a StructDef),
    /// `message_def(10)`.
    Message(&'a MessageDef),
    /// `union_def(11)`.
    Union(&'a UnionDef),
    /// `service_def(12)`.
    Service(&'a ServiceDef),
    /// `const_def(13)`.
    Const(&'a ConstDef),
    /// `decorator_def(14)`.
    Decorator(&'a DecoratorDef),
}

impl DefinitionBody<'_> {
    /// The definition kind this body belongs to.
    pub fn kind(&self) -> DefinitionKind {
        match self {
            DefinitionBody::Enum(_) => DefinitionKind::Enum,
            DefinitionBody::Struct(_) => DefinitionKind::Struct,
            DefinitionBody::Message(_) => DefinitionKind::Message,
            DefinitionBody::Union(_) => DefinitionKind::Union,
            DefinitionBody::Service(_) => DefinitionKind::Service,
            DefinitionBody::Const(_) => DefinitionKind::Const,
            DefinitionBody::Decorator(_) => DefinitionKind::Decorator,
        }
    }
}

impl DefinitionDescriptor {
    /// The kind, `UNKNOWN` when absent.
    pub fn kind(&self) -> DefinitionKind {
        self.kind.unwrap_or_default()
    }

    /// The body field that `kind` selects. `None` when `kind` is absent or `UNKNOWN`, or when
    /// the selected field is absent; bodies of other kinds are ignored.
    pub fn body(&self) -> Option<DefinitionBody<'_>> {
        match self.kind? {
            DefinitionKind::Unknown => None,
            DefinitionKind::Enum => self.enum_def.as_ref().map(DefinitionBody::Enum),
            DefinitionKind::Struct => self.struct_def.as_ref().map(DefinitionBody::Struct),
            DefinitionKind::Message => self.message_def.as_ref().map(DefinitionBody::Message),
            DefinitionKind::Union => self.union_def.as_ref().map(DefinitionBody::Union),
            DefinitionKind::Service => self.service_def.as_ref().map(DefinitionBody::Service),
            DefinitionKind::Const => self.const_def.as_ref().map(DefinitionBody::Const),
            DefinitionKind::Decorator => self.decorator_def.as_ref().map(DefinitionBody::Decorator),
        }
    }

    /// The nested definitions (empty when absent).
    pub fn nested_definitions(&self) -> &[DefinitionDescriptor] {
        self.nested.as_deref().unwrap_or_default()
    }
}

/// One definition met while walking a descriptor, with where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct DefinitionEntry<'a> {
    /// The schema (file) that holds it.
    pub schema: &'a SchemaDescriptor,
    /// The definition itself.
    pub definition: &'a DefinitionDescriptor,
    /// Its fully qualified name: its `fqn` field, or when that is absent, the enclosing
    /// definition's name (or the schema's package) joined with its `name` by a dot.
    pub fqn: Cow<'a, str>,
    /// The definition whose `nested` array holds it; `None` at top level.
    pub parent: Option<&'a DefinitionDescriptor>,
    /// 0 for top-level definitions, 1 for those nested in them, and so on.
    pub depth: usize,
}

struct Level<'a> {
    items: core::slice::Iter<'a, DefinitionDescriptor>,
    parent: Option<(&'a DefinitionDescriptor, Cow<'a, str>)>,
}

/// Iterator over every definition of some schemas, nested ones included, in pre-order
/// (a definition comes before the ones nested in it) and in array order otherwise. It walks
/// with an explicit stack, so deep nesting cannot overflow the call stack.
pub struct Definitions<'a> {
    schemas: core::slice::Iter<'a, SchemaDescriptor>,
    schema: Option<&'a SchemaDescriptor>,
    stack: Vec<Level<'a>>,
}

impl<'a> Definitions<'a> {
    /// Walks the definitions of `schemas`, one schema after the other.
    pub fn new(schemas: &'a [SchemaDescriptor]) -> Self {
        Definitions {
            schemas: schemas.iter(),
            schema: None,
            stack: Vec::new(),
        }
    }
}

fn join_name<'a>(scope: Option<&str>, name: &'a str) -> Cow<'a, str> {
    match scope {
        Some(scope) if !scope.is_empty() => Cow::Owned(format!("{scope}.{name}")),
        _ => Cow::Borrowed(name),
    }
}

impl<'a> Iterator for Definitions<'a> {
    type Item = DefinitionEntry<'a>;

    fn next(&mut self) -> Option<DefinitionEntry<'a>> {
        loop {
            let depth = self.stack.len().saturating_sub(1);
            if let (Some(level), Some(schema)) = (self.stack.last_mut(), self.schema) {
                if let Some(definition) = level.items.next() {
                    let parent = level.parent.as_ref().map(|(d, _)| *d);
                    let fqn = match &definition.fqn {
                        Some(fqn) => Cow::Borrowed(fqn.as_str()),
                        None => {
                            let scope = match &level.parent {
                                Some((_, parent_fqn)) => Some(parent_fqn.as_ref()),
                                None => schema.package.as_deref(),
                            };
                            join_name(scope, definition.name.as_deref().unwrap_or_default())
                        }
                    };
                    let nested = definition.nested_definitions();
                    if !nested.is_empty() {
                        self.stack.push(Level {
                            items: nested.iter(),
                            parent: Some((definition, fqn.clone())),
                        });
                    }
                    return Some(DefinitionEntry {
                        schema,
                        definition,
                        fqn,
                        parent,
                        depth,
                    });
                }
                self.stack.pop();
                continue;
            }
            let schema = self.schemas.next()?;
            self.schema = Some(schema);
            self.stack.push(Level {
                items: schema.definitions.as_deref().unwrap_or_default().iter(),
                parent: None,
            });
        }
    }
}

impl core::iter::FusedIterator for Definitions<'_> {}

/// Every definition of some schemas by fully qualified name, for repeated lookups.
///
/// When two definitions share a name (which a valid descriptor never has), the first one in
/// walk order is kept.
#[derive(Clone, Debug)]
pub struct DefinitionIndex<'a> {
    entries: Vec<DefinitionEntry<'a>>,
    by_fqn: BTreeMap<Cow<'a, str>, usize>,
}

impl<'a> DefinitionIndex<'a> {
    /// Indexes every definition of `schemas`, nested ones included.
    pub fn new(schemas: &'a [SchemaDescriptor]) -> Self {
        let entries: Vec<_> = Definitions::new(schemas).collect();
        let mut by_fqn = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_fqn.entry(e.fqn.clone()).or_insert(i);
        }
        DefinitionIndex { entries, by_fqn }
    }

    /// The definition named `fqn`.
    pub fn get(&self, fqn: &str) -> Option<&DefinitionEntry<'a>> {
        self.by_fqn.get(fqn).and_then(|&i| self.entries.get(i))
    }

    /// The definition a `DEFINED` type refers to; `None` for other kinds or unknown names.
    pub fn resolve(&self, ty: &TypeDescriptor) -> Option<&DefinitionEntry<'a>> {
        if ty.kind? != TypeKind::Defined {
            return None;
        }
        self.get(ty.defined_fqn.as_deref()?)
    }

    /// All definitions, in walk order.
    pub fn entries(&self) -> &[DefinitionEntry<'a>] {
        &self.entries
    }

    /// The number of definitions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no definitions.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl SchemaDescriptor {
    /// Every definition of this schema, nested ones included, with their FQNs.
    pub fn all_definitions(&self) -> Definitions<'_> {
        Definitions::new(core::slice::from_ref(self))
    }
}

impl DescriptorSet {
    /// Decodes a DescriptorSet (the whole input must be one message) under the default
    /// [`bebop_runtime::Limits`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        <Self as Decode<'_>>::from_bytes(bytes)
    }

    /// Encodes into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        bebop_runtime::encode_to_vec(self)
    }

    /// The schemas (empty when the field is absent).
    pub fn schema_list(&self) -> &[SchemaDescriptor] {
        self.schemas.as_deref().unwrap_or_default()
    }

    /// Every definition of every schema, nested ones included, with their FQNs.
    pub fn all_definitions(&self) -> Definitions<'_> {
        Definitions::new(self.schema_list())
    }

    /// The first definition named `fqn` (a linear search; see [`index`](Self::index)).
    pub fn find_definition(&self, fqn: &str) -> Option<DefinitionEntry<'_>> {
        self.all_definitions().find(|e| e.fqn == fqn)
    }

    /// An index of every definition by FQN.
    pub fn index(&self) -> DefinitionIndex<'_> {
        DefinitionIndex::new(self.schema_list())
    }
}

impl CodeGeneratorRequest {
    /// Decodes a request (the whole input must be one message) under the default
    /// [`bebop_runtime::Limits`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        <Self as Decode<'_>>::from_bytes(bytes)
    }

    /// Encodes into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        bebop_runtime::encode_to_vec(self)
    }

    /// The schemas (empty when the field is absent).
    pub fn schema_list(&self) -> &[SchemaDescriptor] {
        self.schemas.as_deref().unwrap_or_default()
    }

    /// Every definition of every schema, nested ones included, with their FQNs.
    pub fn all_definitions(&self) -> Definitions<'_> {
        Definitions::new(self.schema_list())
    }

    /// The first definition named `fqn` (a linear search; see [`index`](Self::index)).
    pub fn find_definition(&self, fqn: &str) -> Option<DefinitionEntry<'_>> {
        self.all_definitions().find(|e| e.fqn == fqn)
    }

    /// An index of every definition by FQN.
    pub fn index(&self) -> DefinitionIndex<'_> {
        DefinitionIndex::new(self.schema_list())
    }

    /// The schemas whose `path` is in `files_to_generate`, in schema order.
    pub fn schemas_to_generate(&self) -> impl Iterator<Item = &SchemaDescriptor> {
        let files = self.files_to_generate.as_deref().unwrap_or_default();
        self.schema_list()
            .iter()
            .filter(move |s| s.path.as_ref().is_some_and(|p| files.contains(p)))
    }

    /// The host option `key` (the last one when it repeats).
    pub fn host_option(&self, key: &str) -> Option<&str> {
        self.host_options
            .as_deref()?
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl CodeGeneratorResponse {
    /// Decodes a response (the whole input must be one message) under the default
    /// [`bebop_runtime::Limits`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        <Self as Decode<'_>>::from_bytes(bytes)
    }

    /// Encodes into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        bebop_runtime::encode_to_vec(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(
        name: &str,
        fqn: Option<&str>,
        nested: Vec<DefinitionDescriptor>,
    ) -> DefinitionDescriptor {
        DefinitionDescriptor {
            kind: Some(DefinitionKind::Struct),
            name: Some(name.into()),
            fqn: fqn.map(Into::into),
            nested: (!nested.is_empty()).then_some(nested),
            struct_def: Some(StructDef::default()),
            ..Default::default()
        }
    }

    #[test]
    fn walk_is_preorder_and_computes_missing_fqns() {
        let set = DescriptorSet {
            schemas: Some(vec![
                SchemaDescriptor {
                    package: Some("p".into()),
                    definitions: Some(vec![
                        def(
                            "A",
                            None,
                            vec![def("B", None, vec![def("C", None, vec![])])],
                        ),
                        def("D", Some("p.D"), vec![]),
                    ]),
                    ..Default::default()
                },
                SchemaDescriptor {
                    definitions: Some(vec![def("E", None, vec![])]),
                    ..Default::default()
                },
            ]),
        };
        let walked: Vec<_> = set
            .all_definitions()
            .map(|e| {
                (
                    e.fqn.into_owned(),
                    e.depth,
                    e.parent.and_then(|p| p.name.clone()),
                )
            })
            .collect();
        assert_eq!(
            walked,
            [
                ("p.A".to_string(), 0, None),
                ("p.A.B".to_string(), 1, Some("A".to_string())),
                ("p.A.B.C".to_string(), 2, Some("B".to_string())),
                ("p.D".to_string(), 0, None),
                ("E".to_string(), 0, None),
            ]
        );
        let index = set.index();
        assert_eq!(index.len(), 5);
        assert_eq!(index.get("p.A.B.C").map(|e| e.depth), Some(2));
        assert!(index.get("p.C").is_none());
        assert_eq!(
            index
                .resolve(&TypeDescriptor::defined("p.D"))
                .and_then(|e| e.definition.name.as_deref()),
            Some("D")
        );
        assert!(
            index
                .resolve(&TypeDescriptor::scalar(TypeKind::Int32))
                .is_none()
        );
        assert_eq!(set.find_definition("E").map(|e| e.depth), Some(0));
    }

    #[test]
    fn body_follows_kind() {
        let mut d = def("A", None, vec![]);
        assert!(matches!(d.body(), Some(DefinitionBody::Struct(_))));
        d.kind = Some(DefinitionKind::Message);
        assert_eq!(d.body(), None, "message kind without message_def");
        d.kind = None;
        assert_eq!(d.body(), None);
    }

    #[test]
    fn deep_nesting_walks_without_recursion() {
        let mut d = def("L0", None, vec![]);
        for i in 1..2000 {
            d = def(&format!("L{i}"), None, vec![d]);
        }
        let schema = SchemaDescriptor {
            definitions: Some(vec![d]),
            ..Default::default()
        };
        let entries: Vec<_> = schema.all_definitions().collect();
        assert_eq!(entries.len(), 2000);
        assert_eq!(entries[1999].depth, 1999);
        assert!(entries[1999].fqn.ends_with(".L1.L0"));
        // Take the tree apart iteratively so the test's own drop does not recurse deeply.
        let mut stack = schema.definitions.unwrap_or_default();
        while let Some(mut d) = stack.pop() {
            stack.extend(d.nested.take().unwrap_or_default());
        }
    }
}
