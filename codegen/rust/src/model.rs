//! The generator's view of the schemas: every definition with its Rust name and module,
//! its body with types resolved to definition ids, and the analyses the emitters need.

use std::collections::{BTreeMap, BTreeSet};

use bebop_descriptor::{
    DecoratorUsage, DefinitionBody, DefinitionDescriptor, LiteralKind, LiteralValue, MethodType,
    SchemaDescriptor, TypeDescriptor, TypeKind,
};

use crate::GenerateError;
use crate::names::{Namespace, shouty, snake, upper_camel};

/// Index of a definition in [`Model::defs`].
pub(crate) type DefId = usize;

/// A resolved type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Bool,
    U8,
    I8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    I128,
    U128,
    F16,
    BF16,
    F32,
    F64,
    Str,
    Uuid,
    Timestamp,
    Duration,
    Array(Box<Ty>),
    Fixed(Box<Ty>, usize),
    Map(Box<Ty>, Box<Ty>),
    Def(DefId),
}

impl Ty {
    /// True for a map inside an array or a map (`map[K, map[K2, V]]`, `map[K, V][]`,
    /// `map[K, map[K2, V][]]`): Rust types whose depth clippy's `type_complexity` counts
    /// against them, owned ones especially (a map is a `Vec` of pairs there).
    pub(crate) fn nests_map(&self) -> bool {
        fn has_map(ty: &Ty) -> bool {
            match ty {
                Ty::Map(..) => true,
                Ty::Array(e) | Ty::Fixed(e, _) => has_map(e),
                _ => false,
            }
        }
        match self {
            Ty::Array(e) | Ty::Fixed(e, _) => has_map(e) || e.nests_map(),
            // Keys are scalars, strings or enums: never a map.
            Ty::Map(_, v) => has_map(v) || v.nests_map(),
            _ => false,
        }
    }

    /// The wire size of a scalar (everything but strings and compound types).
    pub(crate) fn scalar_size(&self) -> Option<usize> {
        Some(match self {
            Ty::Bool | Ty::U8 | Ty::I8 => 1,
            Ty::I16 | Ty::U16 | Ty::F16 | Ty::BF16 => 2,
            Ty::I32 | Ty::U32 | Ty::F32 => 4,
            Ty::I64 | Ty::U64 | Ty::F64 => 8,
            Ty::I128 | Ty::U128 | Ty::Uuid | Ty::Timestamp => 16,
            Ty::Duration => 12,
            _ => return None,
        })
    }

    pub(crate) fn is_float(&self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
    }
}

/// The integer base of an enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
}

impl Base {
    pub(crate) fn size(self) -> usize {
        match self {
            Base::U8 | Base::I8 => 1,
            Base::U16 | Base::I16 => 2,
            Base::U32 | Base::I32 => 4,
            Base::U64 | Base::I64 => 8,
        }
    }

    pub(crate) fn signed(self) -> bool {
        matches!(self, Base::I8 | Base::I16 | Base::I32 | Base::I64)
    }

    pub(crate) fn rust(self) -> &'static str {
        match self {
            Base::U8 => "u8",
            Base::I8 => "i8",
            Base::U16 => "u16",
            Base::I16 => "i16",
            Base::U32 => "u32",
            Base::I32 => "i32",
            Base::U64 => "u64",
            Base::I64 => "i64",
        }
    }

    /// The descriptor's `u64` member value as this base's value (sign-extended for signed
    /// bases), or `None` when it does not fit.
    pub(crate) fn value(self, raw: u64) -> Option<i128> {
        let bits = self.size() as u32 * 8;
        if self.signed() {
            let v = raw as i64 as i128;
            let min = -(1i128 << (bits - 1));
            let max = (1i128 << (bits - 1)) - 1;
            (min..=max).contains(&v).then_some(v)
        } else {
            let v = raw as i128;
            let max = if bits == 64 {
                u64::MAX as i128
            } else {
                (1i128 << bits) - 1
            };
            (v <= max).then_some(v)
        }
    }

    /// Every bit of the base set, as a value of it.
    pub(crate) fn full_mask(self) -> i128 {
        if self.signed() {
            -1
        } else {
            match self {
                Base::U8 => 0xFF,
                Base::U16 => 0xFFFF,
                Base::U32 => 0xFFFF_FFFF,
                _ => u64::MAX as i128,
            }
        }
    }
}

/// `@deprecated`, with its reason when given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Deprecation(pub Option<String>);

#[derive(Clone, Debug)]
pub(crate) struct Field {
    /// The name as written in the schema.
    pub src_name: String,
    /// The Rust field name (assigned per definition, collisions resolved).
    pub name: String,
    pub doc: Option<String>,
    pub ty: Ty,
    /// The message tag (0 for struct fields).
    pub tag: u8,
    pub deprecated: Option<Deprecation>,
    /// The source text of the type, for docs (`int32[]`, `base.Point`).
    pub ty_text: String,
    /// Held through `Lazy` (views) / `Box` (owned): the field closes a by-value cycle.
    pub lazy: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Branch {
    pub discriminator: u8,
    pub target: DefId,
    pub inline: bool,
    /// The variant name.
    pub name: String,
    pub src_name: String,
    pub doc: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub src_name: String,
    /// The variant (enums) or const (flags) name.
    pub name: String,
    pub value: i128,
    pub doc: Option<String>,
    pub deprecated: Option<Deprecation>,
    /// For enums: the variant this member aliases when an earlier member has its value.
    pub alias_of: Option<usize>,
}

#[derive(Clone, Debug)]
pub(crate) struct Method {
    pub src_name: String,
    /// The `SCREAMING` name of its `MethodInfo` const.
    pub const_name: String,
    /// The `snake_case` name of its handler and client methods.
    pub fn_name: String,
    /// The name of its owned-types client method (`{fn_name}_owned`, unless a method of the
    /// service already has that name).
    pub owned_fn_name: String,
    /// The name of its async client's dispatch method (`dispatch_{fn_name}`, likewise).
    pub dispatch_fn_name: String,
    /// The names of its request and response type aliases.
    pub request_alias: String,
    pub response_alias: String,
    pub doc: Option<String>,
    pub request: Ty,
    pub response: Ty,
    pub request_text: String,
    pub response_text: String,
    pub method_type: MethodType,
    pub id: Option<u32>,
    pub deprecated: Option<Deprecation>,
}

#[derive(Clone, Debug)]
pub(crate) enum Body<'d> {
    Struct {
        fields: Vec<Field>,
        mutable: bool,
    },
    Message {
        fields: Vec<Field>,
    },
    Union {
        branches: Vec<Branch>,
        /// The name of the variant for unknown discriminators (forward-compatible unions).
        unknown: Option<String>,
    },
    Enum {
        base: Base,
        members: Vec<Member>,
        /// The name of the variant holding unknown values (forward-compatible enums).
        unrecognized: Option<String>,
    },
    Flags {
        base: Base,
        members: Vec<Member>,
    },
    Const {
        ty: Ty,
        ty_text: String,
        value: &'d LiteralValue,
    },
    Service {
        methods: Vec<Method>,
    },
    Decorator,
}

/// Which traits a type's Rust form can derive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Traits {
    pub eq: bool,
    pub hash: bool,
    pub default: bool,
}

impl Traits {
    pub(crate) const ALL: Traits = Traits {
        eq: true,
        hash: true,
        default: true,
    };

    pub(crate) fn and(self, other: Traits) -> Traits {
        Traits {
            eq: self.eq && other.eq,
            hash: self.hash && other.hash,
            default: self.default && other.default,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Def<'d> {
    pub desc: &'d DefinitionDescriptor,
    pub schema: &'d SchemaDescriptor,
    pub fqn: String,
    pub src_name: String,
    pub parent: Option<DefId>,
    /// Source-code-info path: `[5, i, 7, j, ...]`.
    pub loc_path: Vec<i32>,
    /// The module holding the item, from the include root.
    pub module: Vec<String>,
    /// The Rust name: a type, a const, or a service's module.
    pub name: String,
    /// The module holding nested definitions, when there are any.
    pub nested_module: Option<String>,
    pub doc: Option<String>,
    pub deprecated: Option<Deprecation>,
    pub forward_compatible: bool,
    pub body: Body<'d>,
    // Analyses.
    /// The view type holds borrowed data (`<'a>`).
    pub lifetime: bool,
    pub view_traits: Traits,
    pub owned_traits: Traits,
    pub min_size: usize,
    pub fixed_size: Option<usize>,
    /// Holds a `float16`/`bfloat16` directly (needs a manual `defmt::Format`).
    pub holds_half: bool,
}

impl Def<'_> {
    pub(crate) fn is_type(&self) -> bool {
        matches!(
            self.body,
            Body::Struct { .. }
                | Body::Message { .. }
                | Body::Union { .. }
                | Body::Enum { .. }
                | Body::Flags { .. }
        )
    }

    /// Structs, messages and unions: the kinds with an owned form.
    pub(crate) fn is_record(&self) -> bool {
        matches!(
            self.body,
            Body::Struct { .. } | Body::Message { .. } | Body::Union { .. }
        )
    }

    pub(crate) fn kind_word(&self) -> &'static str {
        match &self.body {
            Body::Struct { mutable: true, .. } => "mut struct",
            Body::Struct { .. } => "struct",
            Body::Message { .. } => "message",
            Body::Union { .. } => "union",
            Body::Enum { .. } => "enum",
            Body::Flags { .. } => "@flags enum",
            Body::Const { .. } => "const",
            Body::Service { .. } => "service",
            Body::Decorator => "decorator",
        }
    }

    pub(crate) fn fields(&self) -> &[Field] {
        match &self.body {
            Body::Struct { fields, .. } | Body::Message { fields } => fields,
            _ => &[],
        }
    }
}

/// All definitions to generate, named and analysed.
#[derive(Debug)]
pub(crate) struct Model<'d> {
    pub defs: Vec<Def<'d>>,
    /// The schemas whose definitions are generated, in request order.
    pub schemas: Vec<&'d SchemaDescriptor>,
    /// Module paths of packages, in first-seen order (for module docs).
    pub packages: Vec<(Vec<String>, String)>,
}

/// The reserved module name at the include root for owned types.
pub(crate) const OWNED_MODULE: &str = "owned";

impl<'d> Model<'d> {
    /// Collects the definitions of the schemas in `files` and everything they import
    /// (all schemas when `files` is empty), names them and runs the analyses.
    pub(crate) fn build(
        all_schemas: &'d [SchemaDescriptor],
        files: &[&str],
    ) -> Result<Self, GenerateError> {
        let schemas = select_schemas(all_schemas, files)?;
        let mut model = Model {
            defs: Vec::new(),
            schemas: schemas.clone(),
            packages: Vec::new(),
        };
        model.collect(&schemas)?;
        let by_fqn = model.index()?;
        model.name_definitions();
        model.parse_bodies(&by_fqn)?;
        crate::analysis::run(&mut model)?;
        Ok(model)
    }

    fn collect(&mut self, schemas: &[&'d SchemaDescriptor]) -> Result<(), GenerateError> {
        // Explicit stack: (schema, definition, parent, loc path).
        for schema in schemas {
            let mut stack: Vec<(&'d DefinitionDescriptor, Option<DefId>, Vec<i32>)> = schema
                .definitions
                .as_deref()
                .unwrap_or_default()
                .iter()
                .enumerate()
                .rev()
                .map(|(i, d)| (d, None, vec![5, i as i32]))
                .collect();
            while let Some((desc, parent, loc_path)) = stack.pop() {
                let src_name = desc.name.clone().unwrap_or_default();
                let fqn = match (&desc.fqn, parent) {
                    (Some(fqn), _) => fqn.clone(),
                    (None, Some(p)) => format!("{}.{}", self.defs[p].fqn, src_name),
                    (None, None) => match schema.package.as_deref() {
                        Some(pkg) if !pkg.is_empty() => format!("{pkg}.{src_name}"),
                        _ => src_name.clone(),
                    },
                };
                if src_name.is_empty() {
                    return Err(GenerateError::invalid(
                        schema_at(schema),
                        "a definition has no name",
                    ));
                }
                let id = self.defs.len();
                self.defs.push(Def {
                    desc,
                    schema,
                    fqn,
                    src_name,
                    parent,
                    loc_path: loc_path.clone(),
                    module: Vec::new(),
                    name: String::new(),
                    nested_module: None,
                    doc: clean_doc(desc.documentation.as_deref()),
                    deprecated: deprecation(desc.decorators.as_deref()),
                    forward_compatible: has_decorator(
                        desc.decorators.as_deref(),
                        "forward_compatible",
                    ),
                    body: Body::Decorator,
                    lifetime: false,
                    view_traits: Traits::ALL,
                    owned_traits: Traits::ALL,
                    min_size: 0,
                    fixed_size: None,
                    holds_half: false,
                });
                for (j, nested) in desc.nested_definitions().iter().enumerate().rev() {
                    let mut path = loc_path.clone();
                    path.extend([7, j as i32]);
                    stack.push((nested, Some(id), path));
                }
            }
        }
        Ok(())
    }

    fn index(&self) -> Result<BTreeMap<String, DefId>, GenerateError> {
        let mut by_fqn = BTreeMap::new();
        for (id, def) in self.defs.iter().enumerate() {
            if by_fqn.insert(def.fqn.clone(), id).is_some() {
                return Err(GenerateError::invalid(
                    &def.fqn,
                    "defined more than once in the request",
                ));
            }
        }
        Ok(by_fqn)
    }

    /// Assigns module paths and Rust names, scope by scope in walk order.
    fn name_definitions(&mut self) {
        // Type namespace (types and modules) and value namespace (consts) per module path.
        let mut types: BTreeMap<Vec<String>, Namespace> = BTreeMap::new();
        let mut values: BTreeMap<Vec<String>, Namespace> = BTreeMap::new();
        types.insert(Vec::new(), Namespace::with_reserved(&[OWNED_MODULE]));
        // Package modules first, so that they keep their names.
        let mut package_paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for schema in &self.schemas {
            let Some(pkg) = schema.package.as_deref().filter(|p| !p.is_empty()) else {
                continue;
            };
            if package_paths.contains_key(pkg) {
                continue;
            }
            // Reuse the modules of a package prefix already created.
            let segments: Vec<&str> = pkg.split('.').collect();
            let mut path: Vec<String> = Vec::new();
            for k in 0..segments.len() {
                let prefix = segments[..=k].join(".");
                if let Some(existing) = package_paths.get(&prefix) {
                    path = existing.clone();
                    continue;
                }
                let name = types
                    .entry(path.clone())
                    .or_default()
                    .claim(snake(segments[k]));
                path.push(name);
                package_paths.insert(prefix.clone(), path.clone());
                self.packages.push((path.clone(), prefix));
            }
        }
        for id in 0..self.defs.len() {
            let module = match self.defs[id].parent {
                Some(p) => {
                    let parent = &self.defs[p];
                    let mut m = parent.module.clone();
                    if let Some(n) = &parent.nested_module {
                        m.push(n.clone());
                    }
                    m
                }
                None => match self.defs[id].schema.package.as_deref() {
                    Some(pkg) if !pkg.is_empty() => {
                        package_paths.get(pkg).cloned().unwrap_or_default()
                    }
                    _ => Vec::new(),
                },
            };
            let def = &self.defs[id];
            let src = def.src_name.clone();
            let kind = def.desc.kind();
            let name = match def.desc.body() {
                Some(DefinitionBody::Const(_)) => values
                    .entry(module.clone())
                    .or_default()
                    .claim(shouty(&src)),
                Some(DefinitionBody::Service(_)) => {
                    types.entry(module.clone()).or_default().claim(snake(&src))
                }
                Some(DefinitionBody::Decorator(_)) => String::new(),
                _ => types
                    .entry(module.clone())
                    .or_default()
                    .claim(upper_camel(&src)),
            };
            let nested_module = (!def.desc.nested_definitions().is_empty()
                && kind != bebop_descriptor::DefinitionKind::Decorator)
                .then(|| types.entry(module.clone()).or_default().claim(snake(&src)));
            let def = &mut self.defs[id];
            def.module = module;
            def.name = name;
            def.nested_module = nested_module;
        }
    }

    fn parse_bodies(&mut self, by_fqn: &BTreeMap<String, DefId>) -> Result<(), GenerateError> {
        for id in 0..self.defs.len() {
            let body = self.parse_body(id, by_fqn)?;
            self.defs[id].body = body;
        }
        Ok(())
    }

    fn parse_body(
        &self,
        id: DefId,
        by_fqn: &BTreeMap<String, DefId>,
    ) -> Result<Body<'d>, GenerateError> {
        let def = &self.defs[id];
        let at = def.fqn.as_str();
        let Some(body) = def.desc.body() else {
            return Err(GenerateError::invalid(
                at,
                format!("kind {:?} without its body", def.desc.kind()),
            ));
        };
        Ok(match body {
            DefinitionBody::Struct(s) => Body::Struct {
                fields: self.fields(id, s.fields.as_deref().unwrap_or_default(), false, by_fqn)?,
                mutable: s.is_mutable.unwrap_or(false),
            },
            DefinitionBody::Message(m) => Body::Message {
                fields: self.fields(id, m.fields.as_deref().unwrap_or_default(), true, by_fqn)?,
            },
            DefinitionBody::Union(u) => {
                let mut ns = Namespace::default();
                let mut seen = BTreeSet::new();
                let mut branches = Vec::new();
                for b in u.branches.as_deref().unwrap_or_default() {
                    let discriminator = b.discriminator.filter(|d| *d != 0).ok_or_else(|| {
                        GenerateError::invalid(at, "a branch has no discriminator")
                    })?;
                    if !seen.insert(discriminator) {
                        return Err(GenerateError::invalid(
                            at,
                            format!("discriminator {discriminator} used twice"),
                        ));
                    }
                    let (target_fqn, inline) = match (&b.inline_fqn, &b.type_ref_fqn) {
                        (Some(f), _) => (f, true),
                        (None, Some(f)) => (f, false),
                        (None, None) => {
                            return Err(GenerateError::invalid(
                                at,
                                format!("branch {discriminator} has no type"),
                            ));
                        }
                    };
                    let target = *by_fqn.get(target_fqn.as_str()).ok_or_else(|| {
                        GenerateError::UnknownType {
                            fqn: target_fqn.clone(),
                            from: format!("{at} branch {discriminator}"),
                        }
                    })?;
                    let src_name = match (&b.name, inline) {
                        (Some(n), _) => n.clone(),
                        (None, true) => self.defs[target].src_name.clone(),
                        (None, false) => target_fqn
                            .rsplit('.')
                            .next()
                            .unwrap_or(target_fqn)
                            .to_string(),
                    };
                    if !matches!(
                        self.defs[target].desc.kind(),
                        bebop_descriptor::DefinitionKind::Struct
                            | bebop_descriptor::DefinitionKind::Message
                    ) {
                        return Err(GenerateError::unsupported(
                            at,
                            format!(
                                "branch {discriminator} holds `{target_fqn}`, which is not a struct or message"
                            ),
                        ));
                    }
                    branches.push(Branch {
                        discriminator,
                        target,
                        inline,
                        name: ns.claim(upper_camel(&src_name)),
                        src_name,
                        doc: clean_doc(b.documentation.as_deref()),
                    });
                }
                let unknown = def
                    .forward_compatible
                    .then(|| ns.claim("Unknown".to_string()));
                Body::Union { branches, unknown }
            }
            DefinitionBody::Enum(e) => {
                let base = match e.base_type.unwrap_or(TypeKind::Uint32) {
                    TypeKind::Byte => Base::U8,
                    TypeKind::Int8 => Base::I8,
                    TypeKind::Uint16 => Base::U16,
                    TypeKind::Int16 => Base::I16,
                    TypeKind::Uint32 => Base::U32,
                    TypeKind::Int32 => Base::I32,
                    TypeKind::Uint64 => Base::U64,
                    TypeKind::Int64 => Base::I64,
                    other => {
                        return Err(GenerateError::invalid(
                            at,
                            format!("enum base type {other:?} is not an integer of up to 64 bits"),
                        ));
                    }
                };
                let flags = e.is_flags.unwrap_or(false)
                    || has_decorator(def.desc.decorators.as_deref(), "flags");
                let mut ns = Namespace::default();
                let mut members: Vec<Member> = Vec::new();
                for m in e.members.as_deref().unwrap_or_default() {
                    let src_name = m.name.clone().unwrap_or_default();
                    let raw = m.value.unwrap_or(0);
                    let value = base.value(raw).ok_or_else(|| {
                        GenerateError::invalid(
                            at,
                            format!(
                                "member `{src_name}` = {raw} does not fit the base type {}",
                                base.rust()
                            ),
                        )
                    })?;
                    let alias_of = if flags {
                        None
                    } else {
                        members
                            .iter()
                            .position(|o| o.value == value && o.alias_of.is_none())
                    };
                    let name = if flags || alias_of.is_some() {
                        ns.claim(shouty(&src_name))
                    } else {
                        ns.claim(upper_camel(&src_name))
                    };
                    members.push(Member {
                        src_name,
                        name,
                        value,
                        doc: clean_doc(m.documentation.as_deref()),
                        deprecated: deprecation(m.decorators.as_deref()),
                        alias_of,
                    });
                }
                if flags {
                    Body::Flags { base, members }
                } else if members.is_empty() {
                    return Err(GenerateError::unsupported(at, "an enum without members"));
                } else {
                    let unrecognized = def
                        .forward_compatible
                        .then(|| ns.claim("Unrecognized".to_string()));
                    Body::Enum {
                        base,
                        members,
                        unrecognized,
                    }
                }
            }
            DefinitionBody::Const(c) => {
                let td = c
                    .r#type
                    .as_ref()
                    .ok_or_else(|| GenerateError::invalid(at, "const without a type"))?;
                let value = c
                    .value
                    .as_ref()
                    .ok_or_else(|| GenerateError::invalid(at, "const without a value"))?;
                if value.kind() == LiteralKind::Unknown {
                    return Err(GenerateError::invalid(at, "const value of unknown kind"));
                }
                Body::Const {
                    ty: self.resolve(td, at, by_fqn)?,
                    ty_text: type_text(td),
                    value,
                }
            }
            DefinitionBody::Service(s) => {
                let mut consts = Namespace::with_reserved(&["NAME", "METHODS", "INFO"]);
                let mut aliases = Namespace::default();
                // Handler and client methods; `new` is the client's constructor.
                let mut fns = Namespace::with_reserved(&["new"]);
                let mut methods = Vec::new();
                for m in s.methods.as_deref().unwrap_or_default() {
                    let src_name = m.name.clone().unwrap_or_default();
                    let mat = format!("{at}.{src_name}");
                    let req = m
                        .request_type
                        .as_ref()
                        .ok_or_else(|| GenerateError::invalid(&mat, "no request type"))?;
                    let res = m
                        .response_type
                        .as_ref()
                        .ok_or_else(|| GenerateError::invalid(&mat, "no response type"))?;
                    let alias = upper_camel(&src_name);
                    let request_alias = aliases.claim(format!("{alias}Request"));
                    let response_alias = aliases.claim(format!("{alias}Response"));
                    methods.push(Method {
                        const_name: consts.claim(shouty(&src_name)),
                        fn_name: fns.claim(snake(&src_name)),
                        // Claimed below, once every method has its own name.
                        owned_fn_name: String::new(),
                        dispatch_fn_name: String::new(),
                        request_alias,
                        response_alias,
                        src_name,
                        doc: clean_doc(m.documentation.as_deref()),
                        request: self.resolve(req, &mat, by_fqn)?,
                        response: self.resolve(res, &mat, by_fqn)?,
                        request_text: type_text(req),
                        response_text: type_text(res),
                        method_type: m.method_type.unwrap_or_default(),
                        id: m.id,
                        deprecated: deprecation(m.decorators.as_deref()),
                    });
                }
                // The names derived from method names come second, so that a method named
                // like one (`fooOwned`, `dispatchFoo`) keeps its name and the derived one
                // gets the suffix.
                for m in &mut methods {
                    // (`new_`, renamed for the constructor, gives `new_owned`: no `__`.)
                    let base = m.fn_name.trim_start_matches("r#").trim_end_matches('_');
                    m.owned_fn_name = fns.claim(format!("{base}_owned"));
                    m.dispatch_fn_name = fns.claim(format!("dispatch_{base}"));
                }
                Body::Service { methods }
            }
            DefinitionBody::Decorator(_) => Body::Decorator,
        })
    }

    fn fields(
        &self,
        id: DefId,
        fields: &[bebop_descriptor::FieldDescriptor],
        message: bool,
        by_fqn: &BTreeMap<String, DefId>,
    ) -> Result<Vec<Field>, GenerateError> {
        let at = &self.defs[id].fqn;
        let mut ns = Namespace::default();
        let mut tags = BTreeSet::new();
        let mut out = Vec::new();
        for f in fields {
            let src_name = f.name.clone().unwrap_or_default();
            let fat = format!("{at}.{src_name}");
            let td = f
                .r#type
                .as_ref()
                .ok_or_else(|| GenerateError::invalid(&fat, "field without a type"))?;
            let tag = if message {
                let index = f.index.unwrap_or(0);
                let tag = u8::try_from(index)
                    .ok()
                    .filter(|t| *t != 0)
                    .ok_or_else(|| {
                        GenerateError::invalid(&fat, format!("message tag {index} is not 1..=255"))
                    })?;
                if !tags.insert(tag) {
                    return Err(GenerateError::invalid(
                        &fat,
                        format!("tag {tag} used twice"),
                    ));
                }
                tag
            } else {
                0
            };
            out.push(Field {
                name: ns.claim(snake(&src_name)),
                src_name,
                doc: clean_doc(f.documentation.as_deref()),
                ty: self.resolve(td, &fat, by_fqn)?,
                tag,
                deprecated: deprecation(f.decorators.as_deref()),
                ty_text: type_text(td),
                lazy: false,
            });
        }
        Ok(out)
    }

    /// Resolves a type descriptor. Recursion follows the nesting of element types, which the
    /// descriptor decoder's depth limit already bounds.
    fn resolve(
        &self,
        td: &TypeDescriptor,
        at: &str,
        by_fqn: &BTreeMap<String, DefId>,
    ) -> Result<Ty, GenerateError> {
        let missing = |what: &str| GenerateError::invalid(at, format!("type without its {what}"));
        Ok(match td.kind() {
            TypeKind::Bool => Ty::Bool,
            TypeKind::Byte => Ty::U8,
            TypeKind::Int8 => Ty::I8,
            TypeKind::Int16 => Ty::I16,
            TypeKind::Uint16 => Ty::U16,
            TypeKind::Int32 => Ty::I32,
            TypeKind::Uint32 => Ty::U32,
            TypeKind::Int64 => Ty::I64,
            TypeKind::Uint64 => Ty::U64,
            TypeKind::Int128 => Ty::I128,
            TypeKind::Uint128 => Ty::U128,
            TypeKind::Float16 => Ty::F16,
            TypeKind::Float32 => Ty::F32,
            TypeKind::Float64 => Ty::F64,
            TypeKind::Bfloat16 => Ty::BF16,
            TypeKind::String => Ty::Str,
            TypeKind::Uuid => Ty::Uuid,
            TypeKind::Timestamp => Ty::Timestamp,
            TypeKind::Duration => Ty::Duration,
            TypeKind::Array => Ty::Array(Box::new(
                self.resolve(
                    td.array_element
                        .as_deref()
                        .ok_or_else(|| missing("array element"))?,
                    at,
                    by_fqn,
                )?,
            )),
            TypeKind::FixedArray => {
                let n = td
                    .fixed_array_size
                    .ok_or_else(|| missing("fixed array size"))?;
                if !(1..=65535).contains(&n) {
                    return Err(GenerateError::invalid(
                        at,
                        format!("fixed array size {n} is not 1..=65535"),
                    ));
                }
                Ty::Fixed(
                    Box::new(
                        self.resolve(
                            td.fixed_array_element
                                .as_deref()
                                .ok_or_else(|| missing("fixed array element"))?,
                            at,
                            by_fqn,
                        )?,
                    ),
                    n as usize,
                )
            }
            TypeKind::Map => Ty::Map(
                Box::new(self.resolve(
                    td.map_key.as_deref().ok_or_else(|| missing("map key"))?,
                    at,
                    by_fqn,
                )?),
                Box::new(
                    self.resolve(
                        td.map_value
                            .as_deref()
                            .ok_or_else(|| missing("map value"))?,
                        at,
                        by_fqn,
                    )?,
                ),
            ),
            TypeKind::Defined => {
                let fqn = td.defined_fqn.as_deref().ok_or_else(|| missing("name"))?;
                let id = *by_fqn.get(fqn).ok_or_else(|| GenerateError::UnknownType {
                    fqn: fqn.to_string(),
                    from: at.to_string(),
                })?;
                if !self.defs[id].is_type_kind() {
                    return Err(GenerateError::invalid(
                        at,
                        format!("`{fqn}` is a {:?}, not a type", self.defs[id].desc.kind()),
                    ));
                }
                Ty::Def(id)
            }
            TypeKind::Unknown => return Err(GenerateError::invalid(at, "type of kind UNKNOWN")),
        })
    }
}

impl Def<'_> {
    /// True for definitions that name a type, judged from the descriptor kind (bodies may not
    /// be parsed yet).
    fn is_type_kind(&self) -> bool {
        use bebop_descriptor::DefinitionKind as K;
        matches!(
            self.desc.kind(),
            K::Struct | K::Message | K::Union | K::Enum
        )
    }
}

fn schema_at(schema: &SchemaDescriptor) -> String {
    schema.path.clone().unwrap_or_else(|| "<schema>".into())
}

/// The schemas in `files` and, transitively, the schemas they import.
fn select_schemas<'d>(
    all: &'d [SchemaDescriptor],
    files: &[&str],
) -> Result<Vec<&'d SchemaDescriptor>, GenerateError> {
    if files.is_empty() {
        return Ok(all.iter().collect());
    }
    let by_path: BTreeMap<&str, usize> = all
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.path.as_deref().map(|p| (p, i)))
        .collect();
    let mut wanted = BTreeSet::new();
    let mut stack = Vec::new();
    for f in files {
        let i = *by_path
            .get(f)
            .ok_or_else(|| GenerateError::UnknownFile(f.to_string()))?;
        stack.push(i);
    }
    while let Some(i) = stack.pop() {
        if !wanted.insert(i) {
            continue;
        }
        for import in all[i].imports.as_deref().unwrap_or_default() {
            // An import the request does not carry cannot define anything we refer to
            // without the reference failing to resolve later, with a clear error.
            if let Some(&j) = by_path.get(import.as_str()) {
                stack.push(j);
            }
        }
    }
    Ok(wanted.into_iter().map(|i| &all[i]).collect())
}

/// The schema text of a type, for docs.
pub(crate) fn type_text(td: &TypeDescriptor) -> String {
    let el = |t: Option<&TypeDescriptor>| t.map(type_text).unwrap_or_else(|| "?".into());
    match td.kind() {
        TypeKind::Array => format!("{}[]", el(td.array_element.as_deref())),
        TypeKind::FixedArray => format!(
            "{}[{}]",
            el(td.fixed_array_element.as_deref()),
            td.fixed_array_size.unwrap_or(0)
        ),
        TypeKind::Map => format!(
            "map[{}, {}]",
            el(td.map_key.as_deref()),
            el(td.map_value.as_deref())
        ),
        TypeKind::Defined => td.defined_fqn.clone().unwrap_or_default(),
        TypeKind::Byte => "byte".into(),
        TypeKind::Bool => "bool".into(),
        TypeKind::Int8 => "int8".into(),
        TypeKind::Int16 => "int16".into(),
        TypeKind::Uint16 => "uint16".into(),
        TypeKind::Int32 => "int32".into(),
        TypeKind::Uint32 => "uint32".into(),
        TypeKind::Int64 => "int64".into(),
        TypeKind::Uint64 => "uint64".into(),
        TypeKind::Int128 => "int128".into(),
        TypeKind::Uint128 => "uint128".into(),
        TypeKind::Float16 => "float16".into(),
        TypeKind::Float32 => "float32".into(),
        TypeKind::Float64 => "float64".into(),
        TypeKind::Bfloat16 => "bfloat16".into(),
        TypeKind::String => "string".into(),
        TypeKind::Uuid => "uuid".into(),
        TypeKind::Timestamp => "timestamp".into(),
        TypeKind::Duration => "duration".into(),
        TypeKind::Unknown => "?".into(),
    }
}

/// The bare name of a decorator usage: `bebop.deprecated` and `deprecated` are both
/// `deprecated`; names qualified by another package are not the standard decorators.
fn decorator_is(u: &DecoratorUsage, name: &str) -> bool {
    match u.fqn.as_deref() {
        Some(f) => f == name || f.strip_prefix("bebop.") == Some(name),
        None => false,
    }
}

pub(crate) fn has_decorator(decorators: Option<&[DecoratorUsage]>, name: &str) -> bool {
    decorators
        .unwrap_or_default()
        .iter()
        .any(|u| decorator_is(u, name))
}

pub(crate) fn deprecation(decorators: Option<&[DecoratorUsage]>) -> Option<Deprecation> {
    let u = decorators
        .unwrap_or_default()
        .iter()
        .find(|u| decorator_is(u, "deprecated"))?;
    let reason = u
        .args
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find_map(|a| a.value.string_value.clone())
        .filter(|s| !s.is_empty());
    Some(Deprecation(reason))
}

/// Normalises a doc comment: trailing spaces and blank first/last lines removed; `None`
/// when nothing is left.
pub(crate) fn clean_doc(doc: Option<&str>) -> Option<String> {
    let lines: Vec<&str> = doc?.lines().map(str::trim_end).collect();
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    Some(lines[start..=end].join("\n"))
}
