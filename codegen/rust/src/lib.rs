//! # bebop-codegen-rust
//!
//! Generates Rust code for Bebop schemas, on top of [`bebop_core`](https://docs.rs/bebop-core):
//! borrowed **views** that decode without copying or allocating and encode into caller
//! buffers (`no_std`, no `alloc`), and optionally **owned types** (`String`, `Vec`, maps,
//! `Box`) with conversions between the two.
//!
//! The input is a compiled schema: a [`CodeGeneratorRequest`] (what `bebopc` sends to
//! plugins) or a [`DescriptorSet`]. The output is one Rust file for the whole request,
//! meant to be `include!`d in one module of a crate:
//!
//! ```no_run
//! use bebop_codegen_rust::Generator;
//! use bebop_descriptor::CodeGeneratorRequest;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let request = CodeGeneratorRequest::from_bytes(&std::fs::read("schema.request.bin")?)?;
//! let code = Generator::new()
//!     .runtime_path("::bebop")
//!     .owned_types(true)
//!     .owned_cfg(Some(r#"feature = "alloc""#))
//!     .generate_request(&request)?;
//! for file in &code.files {
//!     std::fs::write(&file.name, &file.content)?;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! ## What the generated code looks like
//!
//! | Bebop | Rust (view) |
//! |---|---|
//! | `struct` | `pub struct Name<'a> { pub field: T, .. }`, `Copy`; `FixedSize` and `ENCODED_SIZE` when fixed-size |
//! | `message` | every field `Option<T>`; deprecated fields decoded but not written |
//! | `union` | `pub enum Name<'a> { Branch(T), .. }`, inline branches in module `name`; `Unknown { discriminator, body }` when `@forward_compatible` |
//! | `enum` | `#[repr(base)] pub enum` with `TryFrom<base>` / `From<Name> for base`; an `Unrecognized(base)` variant when `@forward_compatible` |
//! | `@flags enum` | `pub struct Name { .. }` with a const per member and bit operators |
//! | `const` | `pub const NAME: T = value;` (floats bit-exact) |
//! | `service` | `pub mod name { NAME, METHOD: MethodInfo, MethodRequest/Response aliases, METHODS }` |
//!
//! Scalars map to Rust scalars (`float16`/`bfloat16` to `half` types re-exported by the
//! runtime), `string` to `&'a str`, `byte[]` to `&'a [u8]`, `T[]` to `Array<'a, T>`,
//! `byte[N]` to `&'a [u8; N]`, small scalar `T[N]` to `[T; N]` (at most
//! 256 bytes), other `T[N]` to `FixedArray<'a, T, N>`, maps to `Map<'a, K, V>`, and a field
//! that closes a by-value cycle to `Lazy<'a, T>`, so views never need a heap.
//!
//! Names are converted to Rust conventions (types `UpperCamelCase`, fields and modules
//! `snake_case`, consts `SCREAMING_SNAKE_CASE`), keywords are escaped (`r#type`; `self` and
//! friends get a trailing `_`), and names that collide after conversion get `_` suffixes in
//! declaration order. Packages become nested modules; definitions nested in a type live in a
//! module named after it. Generated code names everything outside itself by absolute path
//! (`::core::..`, the runtime path), so user items cannot shadow it, and asserts at compile
//! time that the runtime implements the interface version it was generated for
//! ([`CODEGEN_ABI`]).
//!
//! The output is deterministic: the same input and options give the same bytes.
//!
//! ## Tests
//!
//! `tests/golden.rs` compares the output for every reference request of
//! `../shared/conformance` (and a few hand-built descriptor sets, `tests/common/synthetic.rs`)
//! with the files checked in under `tests/expected/`. After an intended change, regenerate
//! them with `BEBOP_BLESS=1 cargo test -p bebop-codegen-rust --test golden` and review the
//! diff; the crate `bebop-rust-fixtures` compiles, lints and round-trips them.
#![forbid(unsafe_code)]

mod analysis;
mod emit;
mod error;
mod format;
mod model;
mod names;
mod options;
mod plugin;

use bebop_descriptor::{CodeGeneratorRequest, DescriptorSet, SchemaDescriptor};

pub use error::GenerateError;
pub use options::{OPTION_KEYS, Options, OwnedMap};
pub use plugin::respond;

use model::{Body, Model, OWNED_MODULE};

/// The runtime interface version this generator writes code for. Generated files check at
/// compile time that `<runtime>::CODEGEN_ABI` equals it.
pub const CODEGEN_ABI: u32 = 1;

/// Something that holds schema descriptors: a [`CodeGeneratorRequest`], a
/// [`DescriptorSet`], or a slice of [`SchemaDescriptor`]s.
pub trait SchemaSource {
    /// The schemas, in order.
    fn schemas(&self) -> &[SchemaDescriptor];
}

impl SchemaSource for CodeGeneratorRequest {
    fn schemas(&self) -> &[SchemaDescriptor] {
        self.schema_list()
    }
}

impl SchemaSource for DescriptorSet {
    fn schemas(&self) -> &[SchemaDescriptor] {
        self.schema_list()
    }
}

impl SchemaSource for [SchemaDescriptor] {
    fn schemas(&self) -> &[SchemaDescriptor] {
        self
    }
}

impl SchemaSource for Vec<SchemaDescriptor> {
    fn schemas(&self) -> &[SchemaDescriptor] {
        self
    }
}

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The file name, relative to the output directory (`/`-separated).
    pub name: String,
    /// The Rust source.
    pub content: String,
}

/// The kind of a generated type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// A struct.
    Struct,
    /// A message.
    Message,
    /// A union.
    Union,
    /// An enum.
    Enum,
    /// A `@flags` enum.
    Flags,
}

/// How a view converts to its owned form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnedForm {
    /// Owned types are off.
    None,
    /// The owned form is the view type itself (it holds no borrowed data).
    Same,
    /// A separate owned type, reached with `to_owned_value()`.
    Converted {
        /// `to_owned_value()` returns a `Result` (the type reaches a `Lazy` field).
        fallible: bool,
        /// The owned type has `as_view()`.
        as_view: bool,
    },
}

/// A type the generated code defines: where to find it and how it behaves, for build
/// scripts and tools that work with the generated code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// The schema's fully qualified name.
    pub fqn: String,
    /// What kind of type it is.
    pub kind: ItemKind,
    /// The Rust path of the view type from the include root, like `base::Point`.
    pub path: String,
    /// The view type has a lifetime parameter (`Name<'a>`).
    pub has_lifetime: bool,
    /// The Rust path of the owned form (`owned::base::Point`, or the view path when it is
    /// the same type); `None` when owned types are off or for enums (which are their own owned form).
    pub owned_path: Option<String>,
    /// How the view converts to the owned form.
    pub owned_form: OwnedForm,
    /// The fixed wire size, for fixed-size types.
    pub fixed_size: Option<usize>,
    /// The `@deprecated` message fields' Rust names (decoded but not encoded).
    pub deprecated_fields: Vec<String>,
}

/// What [`Generator::generate`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedCode {
    /// The generated files (one per request).
    pub files: Vec<GeneratedFile>,
    /// Things the user should know that did not stop generation (such as rustfmt not being
    /// found).
    pub warnings: Vec<String>,
    /// Every type defined by the generated code.
    pub types: Vec<TypeInfo>,
}

/// The code generator. Configure it with the builder methods (or [`Options`]), then call
/// [`generate`](Self::generate) or [`generate_request`](Self::generate_request).
#[derive(Clone, Debug, Default)]
pub struct Generator {
    options: Options,
}

impl Generator {
    /// A generator with [`Options::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A generator with the given options.
    pub fn with_options(options: Options) -> Self {
        Generator { options }
    }

    /// The options in use.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The runtime crate path (default `::bebop_core`; `::bebop` for std users).
    #[must_use]
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.options.runtime_path = path.into();
        self
    }

    /// Whether to generate owned types (module `owned`).
    #[must_use]
    pub fn owned_types(mut self, on: bool) -> Self {
        self.options.owned_types = on;
        self
    }

    /// The `cfg` predicate gating the owned types, e.g. `feature = "alloc"`.
    #[must_use]
    pub fn owned_cfg(mut self, predicate: Option<impl Into<String>>) -> Self {
        self.options.owned_cfg = predicate.map(Into::into);
        self
    }

    /// The map type of owned types.
    #[must_use]
    pub fn owned_map(mut self, map: OwnedMap) -> Self {
        self.options.owned_map = map;
        self
    }

    /// The `cfg` predicate under which views derive `defmt::Format`, e.g.
    /// `feature = "defmt"`; `None` for no defmt support.
    #[must_use]
    pub fn defmt(mut self, predicate: Option<impl Into<String>>) -> Self {
        self.options.defmt = predicate.map(Into::into);
        self
    }

    /// Also generate tokio services reaching `bebop-rpc` by `path` (usually
    /// `::bebop_rpc`), gated by `cfg` if given; needs owned types.
    #[must_use]
    pub fn async_rpc(mut self, path: impl Into<String>, cfg: Option<impl Into<String>>) -> Self {
        self.options.async_rpc = Some(path.into());
        self.options.async_rpc_cfg = cfg.map(Into::into);
        self
    }

    /// Whether to run `rustfmt` on the output when it is found.
    #[must_use]
    pub fn rustfmt(mut self, on: bool) -> Self {
        self.options.rustfmt = on;
        self
    }

    /// The output file name (instead of one derived from the schema).
    #[must_use]
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.options.file_name = Some(name.into());
        self
    }

    /// Generates the files of `request.files_to_generate` (and whatever they import).
    pub fn generate_request(
        &self,
        request: &CodeGeneratorRequest,
    ) -> Result<GeneratedCode, GenerateError> {
        let files: Vec<&str> = request
            .files_to_generate
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(String::as_str)
            .collect();
        self.generate(request, &files)
    }

    /// Generates one file holding the definitions of the schemas named in
    /// `files_to_generate` and of every schema they import (all schemas when it is empty).
    pub fn generate<S: SchemaSource + ?Sized>(
        &self,
        source: &S,
        files_to_generate: &[&str],
    ) -> Result<GeneratedCode, GenerateError> {
        self.options.validate()?;
        let model = Model::build(
            source.schemas(),
            files_to_generate,
            self.options.owned_map == OwnedMap::Vec,
        )?;
        let emitted = emit::Emitter::new(&model, &self.options)?.emit()?;
        let header = self.header(&model);
        let pretty = format::pretty(&header, emitted.tokens)?;
        let mut warnings = Vec::new();
        let content = if self.options.rustfmt {
            match format::rustfmt(&pretty) {
                Ok(s) => s,
                Err(why) => {
                    warnings.push(format!(
                        "rustfmt was not used ({why}); the output is formatted by prettyplease only"
                    ));
                    pretty
                }
            }
        } else {
            pretty
        };
        let name = match &self.options.file_name {
            Some(n) => n.clone(),
            None => default_file_name(&model, files_to_generate),
        };
        Ok(GeneratedCode {
            files: vec![GeneratedFile { name, content }],
            warnings,
            types: self.type_infos(&model),
        })
    }

    fn header(&self, model: &Model<'_>) -> String {
        let files: Vec<String> = model
            .schemas
            .iter()
            .map(|s| format!("`{}`", s.path.as_deref().unwrap_or("<schema>")))
            .collect();
        let o = &self.options;
        let owned = if o.owned_types {
            let gate = match &o.owned_cfg {
                Some(p) => format!(", under `cfg({p})`"),
                None => String::new(),
            };
            format!("\n// Owned types (module `owned`{gate}) need the runtime's `alloc` feature.")
        } else {
            String::new()
        };
        let defmt = match &o.defmt {
            Some(p) => format!(
                "\n// Views implement `defmt::Format` under `cfg({p})` (depend on `defmt` and enable the runtime's `defmt` feature)."
            ),
            None => String::new(),
        };
        format!(
            "// Generated by bebopc-gen-rust {version} from {files}.\n\
             // Do not edit: regenerate from the schemas instead.\n\
             //\n\
             // Include this file in one module of a crate (`include!`); it uses the runtime at `{rt}`.{owned}{defmt}\n\
             // A `mut` struct in the schema has the same Rust type as any other: fields are always `pub`.\n\
             // Lints allowed on some items, because the names and values come from the schema:\n\
             // `clippy::enum_variant_names`, `clippy::module_inception`, `clippy::approx_constant`,\n\
             // `clippy::excessive_precision`, `deprecated` (items using deprecated definitions), and\n\
             // `clippy::large_enum_variant` (views are plain data; boxing would need a heap).\n",
            version = env!("CARGO_PKG_VERSION"),
            files = files.join(", "),
            rt = o.runtime_path,
        )
    }

    fn type_infos(&self, model: &Model<'_>) -> Vec<TypeInfo> {
        let path = |module: &[String], name: &str| {
            let mut segs: Vec<String> =
                module.iter().map(|s| names::ident(s).to_string()).collect();
            segs.push(names::ident(name).to_string());
            segs.join("::")
        };
        model
            .defs
            .iter()
            .filter(|d| d.is_type())
            .map(|d| {
                let kind = match d.body {
                    Body::Struct { .. } => ItemKind::Struct,
                    Body::Message { .. } => ItemKind::Message,
                    Body::Union { .. } => ItemKind::Union,
                    Body::Enum { .. } => ItemKind::Enum,
                    _ => ItemKind::Flags,
                };
                let view_path = path(&d.module, &d.name);
                let (owned_path, owned_form) = if !self.options.owned_types {
                    (None, OwnedForm::None)
                } else if !d.is_record() {
                    (None, OwnedForm::Same)
                } else if !d.lifetime {
                    let mut m = vec![OWNED_MODULE.to_string()];
                    m.extend(d.module.iter().cloned());
                    (Some(path(&m, &d.name)), OwnedForm::Same)
                } else {
                    let mut m = vec![OWNED_MODULE.to_string()];
                    m.extend(d.module.iter().cloned());
                    (
                        Some(path(&m, &d.name)),
                        OwnedForm::Converted {
                            fallible: d.owned_fallible,
                            as_view: d.can_view,
                        },
                    )
                };
                let deprecated_fields = match &d.body {
                    Body::Message { fields } => fields
                        .iter()
                        .filter(|f| f.deprecated.is_some())
                        .map(|f| names::ident(&f.name).to_string())
                        .collect(),
                    _ => Vec::new(),
                };
                TypeInfo {
                    fqn: d.fqn.clone(),
                    kind,
                    path: view_path,
                    has_lifetime: d.lifetime,
                    owned_path,
                    owned_form,
                    fixed_size: d.fixed_size,
                    deprecated_fields,
                }
            })
            .collect()
    }
}

fn default_file_name(model: &Model<'_>, files: &[&str]) -> String {
    let single = match files {
        [one] => Some(*one),
        [] if model.schemas.len() == 1 => model.schemas[0].path.as_deref(),
        _ => None,
    };
    match single {
        Some(path) => {
            let stem = path.strip_suffix(".bop").unwrap_or(path);
            let stem: String = stem
                .split('/')
                .filter(|s| !s.is_empty() && *s != "..")
                .collect::<Vec<_>>()
                .join("/");
            if stem.is_empty() {
                "bebop_generated.rs".into()
            } else {
                format!("{stem}.rs")
            }
        }
        None => "bebop_generated.rs".into(),
    }
}
