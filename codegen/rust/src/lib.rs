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
//!     .runtime_path("::bebop_runtime")
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
//! Beyond the runtime path, owned types and their map type, `defmt` and async services, the
//! [`Generator`] adds attributes to chosen types and fields
//! ([`type_attribute`](Generator::type_attribute),
//! [`field_attribute`](Generator::field_attribute) and their view-only and owned-only
//! forms), leaves out definitions another crate generates and refers to them there
//! ([`extern_path`](Generator::extern_path)), and derives serde's traits on the types that
//! own their data ([`serde`](Generator::serde)). Every option is also a plugin parameter
//! ([`Options::from_parameter`]).
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
//! with the files checked in under `tests/expected/`; without the conformance data beside the
//! clone only the hand-built ones are compared (see `bebop-shared-data`). After an intended change, regenerate
//! them with `BEBOP_BLESS=1 cargo test -p bebop-codegen-rust --test golden` and review the
//! diff; the crate `bebop-rust-fixtures` compiles, lints and round-trips them.
#![forbid(unsafe_code)]

mod analysis;
mod emit;
mod error;
mod format;
mod layout;
mod model;
mod names;
mod options;
mod plugin;
mod rules;

use bebop_descriptor::{CodeGeneratorRequest, DescriptorSet, SchemaDescriptor};

pub use error::GenerateError;
pub use options::{AttributeForm, AttributeRule, ExternPath, OPTION_KEYS, Options, OwnedMap};
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
/// The most threads one generation formats on.
const MAX_THREADS: usize = 8;
/// Items per thread below which another thread does not pay for itself.
const ITEMS_PER_THREAD: usize = 64;

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
    /// A separate owned type, reached with `to_owned_value()`; it lends the view back with
    /// `as_view()`.
    Converted,
}

/// A type the generated code defines: where to find it and how it behaves, for build
/// scripts and tools that work with the generated code.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TypeInfo {
    /// The schema's fully qualified name.
    pub fqn: String,
    /// What kind of type it is.
    pub kind: ItemKind,
    /// The Rust path of the view type from the include root, like `base::Point`.
    pub path: String,
    /// The view type has a lifetime parameter (`Name<'a>`).
    pub has_lifetime: bool,
    /// The Rust path of the owned form in the `owned` module (`owned::base::Point`: an alias
    /// when the view type is its own owned form, as enums and flags are); `None` when owned
    /// types are off.
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
#[non_exhaustive]
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

    /// The runtime crate path (default `::bebop_runtime`; `::bebop_core` for crates that
    /// depend on the core alone).
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

    /// How many threads format the output of a big schema at most (by default as many as
    /// the machine has, up to 8; small schemas always use one). The output is the same
    /// whatever the number.
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = Some(threads.max(1));
        self
    }

    /// The output file name (instead of one derived from the schema).
    #[must_use]
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.options.file_name = Some(name.into());
        self
    }

    /// Derives `serde::Serialize` and `serde::Deserialize` on every type that owns its data:
    /// the owned forms of records (with [`owned_types`](Self::owned_types)), enums, `@flags`
    /// enums, and records without borrowed data (whose owned form is the view type itself;
    /// they get the derives with or without owned types). Views that borrow their input get
    /// none. Off by default.
    ///
    /// The including crate must depend on `serde` with its `derive` feature (and `std` or
    /// `alloc` for owned types), reached as `::serde`, and enable the runtime's `serde`
    /// feature (`bebop-runtime/serde`), which implements the traits for the runtime's types.
    /// The serialized forms:
    ///
    /// | Bebop | serde |
    /// |---|---|
    /// | struct, message | a struct; an absent message field is `None` (`null` in JSON; a missing key reads as absent) |
    /// | union | an externally tagged enum: `{"Branch": {..}}` |
    /// | enum | the variant name (`"Warn"`); a `@forward_compatible` enum's unknown value `{"Unrecognized": 7}` |
    /// | `@flags` enum | the raw bits as the base integer (undeclared bits rejected unless `@forward_compatible`) |
    /// | `uuid` | the hyphenated string in human-readable formats, 16 bytes in others |
    /// | `timestamp`, `duration` | `{seconds, nanos, offset_ms}` and `{seconds, nanos}`, checked on reading |
    /// | `float16`, `bfloat16` | as the `half` crate does (the bits as `u16`) |
    /// | maps, arrays | maps (or sequences of pairs with [`OwnedMap::Vec`]) and sequences; fixed arrays as tuples |
    ///
    /// ```
    /// let set = bebopc::Compiler::new()
    ///     .compile_source("shop.bop", "message Item { id(1): uuid; name(2): string; }")
    ///     .descriptor_set(&Default::default())
    ///     .expect("compiles");
    /// let code = bebop_codegen_rust::Generator::new()
    ///     .owned_types(true)
    ///     .serde(true)
    ///     .rustfmt(false)
    ///     .generate(&set, &[])?;
    /// let text = &code.files[0].content;
    /// // On the owned form only (the view borrows its strings from the input), merged into
    /// // the generated derive as rustfmt merges derives.
    /// assert_eq!(text.matches("::serde::Deserialize,").count(), 1);
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    #[must_use]
    pub fn serde(mut self, on: bool) -> Self {
        self.options.serde = on;
        self
    }

    /// A `cfg` predicate gating the serde derives and impls, such as `feature = "serde"`
    /// (`#[cfg_attr(feature = "serde", derive(..))]`); `None` (the default) for no gate.
    /// Only used with [`serde`](Self::serde).
    #[must_use]
    pub fn serde_cfg(mut self, predicate: Option<impl Into<String>>) -> Self {
        self.options.serde_cfg = predicate.map(Into::into);
        self
    }

    /// Also generates one-pass reading for every struct, message and union view: an enum
    /// `NamePart` of what reading it hands a callback (a struct's or message's fields, a
    /// union's branch; nested records as handles) and impls of the runtime's `once::Parts`
    /// and `once::ReadOnce`, so that `once::read_once::<Name, _>(bytes, |part| ..)` reads a
    /// value once, validating it exactly as `Name::from_bytes` does (docs/decisions.md D47).
    /// Off by default; nothing of it is compiled into a program that does not call it.
    ///
    /// ```
    /// let set = bebopc::Compiler::new()
    ///     .compile_source("tree.bop", "message Node { value(1): int32; children(2): Node[]; }")
    ///     .descriptor_set(&Default::default())
    ///     .expect("compiles");
    /// let code = bebop_codegen_rust::Generator::new()
    ///     .one_pass(true)
    ///     .rustfmt(false)
    ///     .generate(&set, &[])?;
    /// let text = &code.files[0].content;
    /// assert!(text.contains("pub enum NodePart<'a, 'r>"));
    /// assert!(text.contains("Children(::bebop_runtime::once::Records<'a, 'r, Node<'a>>)"));
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    #[must_use]
    pub fn one_pass(mut self, on: bool) -> Self {
        self.options.one_pass = on;
        self
    }

    /// Adds `attribute` (one or more outer attributes, such as `#[derive(Hash)]` or
    /// `#[cfg_attr(feature = "x", derive(PartialOrd))]`) to every generated type `path`
    /// matches: structs, messages, unions, enums and `@flags` enums. A record with
    /// borrowed data gets it on both its view and its owned form; see
    /// [`view_type_attribute`](Self::view_type_attribute) and
    /// [`owned_type_attribute`](Self::owned_type_attribute) for one of them. Attributes are
    /// written after the generator's own derives, in the order added, so helper attributes
    /// (`#[serde(rename_all = "camelCase")]`) may follow a derive added before them.
    ///
    /// Paths are schema names, matched as prost-build matches protobuf paths:
    ///
    /// - `.` matches every type;
    /// - a path with a leading dot is fully qualified: `.shop.Item` is type `Item` of package
    ///   `shop` (and the types nested in it), `.shop` every type of package `shop` (and of
    ///   `shop.sub`), `.Item` type `Item` outside any package;
    /// - a path without one is matched against the trailing segments: `Item` is every type
    ///   named `Item` in any package (and the types nested in it), `Order.Line` every type
    ///   `Line` nested in a type `Order`.
    ///
    /// A path that matches nothing is reported in [`GeneratedCode::warnings`]; an attribute
    /// that does not parse is an [`InvalidOption`](GenerateError::InvalidOption) error.
    ///
    /// ```
    /// let set = bebopc::Compiler::new()
    ///     .compile_source(
    ///         "shop.bop",
    ///         "package shop\nstruct Item { id: uint32; }\nenum Kind : byte { A = 0; }",
    ///     )
    ///     .descriptor_set(&Default::default())
    ///     .expect("compiles");
    /// let code = bebop_codegen_rust::Generator::new()
    ///     .type_attribute(".shop.Item", "#[derive(PartialOrd)]")
    ///     .type_attribute("Kind", r#"#[cfg_attr(feature = "x", doc = "A kind.")]"#)
    ///     .generate(&set, &[])?;
    /// let text = &code.files[0].content;
    /// // After the generated derives, merged into them as rustfmt merges derives.
    /// assert!(text.contains("Default, PartialOrd)]\n    pub struct Item"));
    /// assert!(text.contains(r#"#[cfg_attr(feature = "x", doc = "A kind.")]"#));
    ///
    /// let bad = bebop_codegen_rust::Generator::new()
    ///     .type_attribute(".", "derive(Hash)")
    ///     .generate(&set, &[]);
    /// assert!(bad.unwrap_err().to_string().contains("is not an outer attribute"));
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    #[must_use]
    pub fn type_attribute(self, path: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.type_rule(path, attribute, AttributeForm::Both)
    }

    /// [`type_attribute`](Self::type_attribute) for view types only: records with borrowed
    /// data get it on the view, not on the owned form; types that are their own owned form
    /// (enums, flags, records without borrowed data) get it too.
    #[must_use]
    pub fn view_type_attribute(
        self,
        path: impl Into<String>,
        attribute: impl Into<String>,
    ) -> Self {
        self.type_rule(path, attribute, AttributeForm::View)
    }

    /// [`type_attribute`](Self::type_attribute) for owned forms only: records with borrowed
    /// data get it on the owned form (in module `owned`), not on the view; types that are
    /// their own owned form (enums, flags, records without borrowed data) get it too. For
    /// derives a view cannot have, such as `#[derive(serde::Deserialize)]` of a type that
    /// holds a string.
    #[must_use]
    pub fn owned_type_attribute(
        self,
        path: impl Into<String>,
        attribute: impl Into<String>,
    ) -> Self {
        self.type_rule(path, attribute, AttributeForm::Owned)
    }

    fn type_rule(
        mut self,
        path: impl Into<String>,
        attribute: impl Into<String>,
        form: AttributeForm,
    ) -> Self {
        self.options
            .type_attributes
            .push(AttributeRule::new(path, attribute, form));
        self
    }

    /// Adds `attribute` to every generated field `path` matches: fields of structs and
    /// messages, branches of unions (the variants) and members of enums (the variants;
    /// aliases and the members of `@flags` enums are constants and get none). The path is
    /// the type's followed by the member's name as written in the schema:
    /// `.shop.Item.name`, `Item.name`, or just `name` for every member so named; a type's
    /// path (`.shop.Item`, `.shop`, `.`) matches all of its members. Matching and placement
    /// follow [`type_attribute`](Self::type_attribute); a record with borrowed data gets the
    /// attribute on both forms, see [`view_field_attribute`](Self::view_field_attribute) and
    /// [`owned_field_attribute`](Self::owned_field_attribute) for one of them. An inline
    /// union branch has the path of its inline type (`.shop.Shape.Circle`), so a path for the
    /// branch also matches the fields of that type.
    ///
    /// ```
    /// let set = bebopc::Compiler::new()
    ///     .compile_source("shop.bop", "struct Item { id: uint32; name: string; }")
    ///     .descriptor_set(&Default::default())
    ///     .expect("compiles");
    /// let code = bebop_codegen_rust::Generator::new()
    ///     .owned_types(true)
    ///     .serde(true)
    ///     .owned_field_attribute("Item.name", r#"#[serde(rename = "title")]"#)
    ///     .generate(&set, &[])?;
    /// let text = &code.files[0].content;
    /// // Once: on the owned form, which derives serde, not on the view.
    /// assert_eq!(text.matches(r#"#[serde(rename = "title")]"#).count(), 1);
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    #[must_use]
    pub fn field_attribute(self, path: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.field_rule(path, attribute, AttributeForm::Both)
    }

    /// [`field_attribute`](Self::field_attribute) for the fields of view types only (see
    /// [`view_type_attribute`](Self::view_type_attribute)).
    #[must_use]
    pub fn view_field_attribute(
        self,
        path: impl Into<String>,
        attribute: impl Into<String>,
    ) -> Self {
        self.field_rule(path, attribute, AttributeForm::View)
    }

    /// [`field_attribute`](Self::field_attribute) for the fields of owned forms only (see
    /// [`owned_type_attribute`](Self::owned_type_attribute)).
    #[must_use]
    pub fn owned_field_attribute(
        self,
        path: impl Into<String>,
        attribute: impl Into<String>,
    ) -> Self {
        self.field_rule(path, attribute, AttributeForm::Owned)
    }

    fn field_rule(
        mut self,
        path: impl Into<String>,
        attribute: impl Into<String>,
        form: AttributeForm,
    ) -> Self {
        self.options
            .field_attributes
            .push(AttributeRule::new(path, attribute, form));
        self
    }

    /// Declares the definitions under `bebop_path` generated elsewhere (usually by the crate
    /// that owns their schema) and reached at `rust_path`: they are not generated, and the
    /// generated code refers to them by that path.
    ///
    /// - `bebop_path` is fully qualified: a package (`.common`: every definition in it and in
    ///   its sub-packages) or a definition (`.common.Point`, with the definitions nested in
    ///   it). When several paths match, the longest wins.
    /// - `rust_path` is absolute (`::common_types::common`, `crate::shared`): the module
    ///   holding the package's types in the other crate (or the type itself), laid out as
    ///   this generator lays it out. `.common.geo.Point` under `(".common", "::c::common")`
    ///   is `::c::common::geo::Point` (`::c::common::geo::Point<'a>` for a view with borrowed
    ///   data).
    /// - The owned form of a record with borrowed data lives in the other crate's `owned`
    ///   module tree: when `rust_path` ends with the modules this generator gives the package
    ///   (or type), the owned path is derived by putting `owned` in front of them:
    ///   `::c::common` for package `common` gives `::c::owned::common::Point`. Otherwise give
    ///   it with [`extern_path_with_owned`](Self::extern_path_with_owned); generating owned
    ///   code that needs an owned path nobody gave is an error. Other types are their own
    ///   owned form and need none.
    ///
    /// The other crate must generate the types with the options this code relies on: owned
    /// types (with the same [`OwnedMap`]) when these use them, serde when these derive it,
    /// `defmt` when these implement it; and from the same schemas, so that its names are the
    /// ones computed here.
    ///
    /// The RPC protocol types of `bebop/rpc.bop` and `bebop/empty.bop` are in the runtime as
    /// views: `extern_path(".bebop.StatusCode", "::bebop_runtime::rpc::types::StatusCode")`
    /// uses the runtime's instead of generating a copy (the runtime has no owned forms of the
    /// records with borrowed data, so with owned types map only the types without, such as
    /// `StatusCode`, `FrameFlags`, `MethodType`, `FrameHeader` and `Empty`; package `bebop` is
    /// also the package of `bebop/descriptor.bop`).
    ///
    /// ```
    /// let set = bebopc::Compiler::new()
    ///     .compile_in_memory(
    ///         &[
    ///             ("common.bop", b"package common\nmessage Label { text(1): string; }".as_slice()),
    ///             (
    ///                 "app.bop",
    ///                 b"package app\nimport \"common.bop\"\nstruct Tagged { label: common.Label; }".as_slice(),
    ///             ),
    ///         ],
    ///         &["app.bop"],
    ///     )
    ///     .descriptor_set(&Default::default())
    ///     .expect("compiles");
    /// let code = bebop_codegen_rust::Generator::new()
    ///     .owned_types(true)
    ///     .extern_path(".common", "::common_types::common")
    ///     .generate(&set, &["app.bop"])?;
    /// let text = &code.files[0].content;
    /// assert!(!text.contains("pub struct Label"));
    /// assert!(text.contains("pub label: ::common_types::common::Label<'a>"));
    /// assert!(text.contains("pub label: ::common_types::owned::common::Label"));
    /// assert!(code.types.iter().all(|t| t.fqn != "common.Label"));
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    #[must_use]
    pub fn extern_path(
        mut self,
        bebop_path: impl Into<String>,
        rust_path: impl Into<String>,
    ) -> Self {
        self.options
            .extern_paths
            .push(ExternPath::new(bebop_path, rust_path));
        self
    }

    /// [`extern_path`](Self::extern_path) with the owned forms at `owned_path`: the module of
    /// the package's owned types (or the owned type itself) in the other crate.
    #[must_use]
    pub fn extern_path_with_owned(
        mut self,
        bebop_path: impl Into<String>,
        rust_path: impl Into<String>,
        owned_path: impl Into<String>,
    ) -> Self {
        self.options
            .extern_paths
            .push(ExternPath::new(bebop_path, rust_path).with_owned_path(owned_path));
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
        let model = Model::build(source.schemas(), files_to_generate)?;
        let externs = rules::resolve_externs(&model, &self.options)?;
        let emitter = emit::Emitter::new(&model, &self.options, &externs)?;
        let plan = emitter.plan()?;
        let mut texts = self.format_items(&model, &plan, &emitter)?;
        let body = emitter.assemble(&plan, &mut texts)?;
        drop(texts);
        let header = self.header(&model);
        let pretty = format::finish(&header, &body);
        let mut warnings = rules::unmatched(&model, &self.options, &externs);
        let content = if self.options.rustfmt {
            match format::rustfmt(&pretty) {
                Ok(s) => s,
                Err(why) => {
                    warnings.push(format!(
                        "rustfmt was not used ({why}); the output is laid out by the generator only"
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
            types: self.type_infos(&model, &externs),
        })
    }

    /// The formatted text of every item of `plan`, in order. Big files are formatted on
    /// several threads, each with an emitter of its own (token trees cannot cross threads);
    /// the text is the same whatever the number of threads.
    fn format_items(
        &self,
        model: &Model<'_>,
        plan: &emit::Plan,
        emitter: &emit::Emitter<'_, '_>,
    ) -> Result<Vec<String>, GenerateError> {
        let one = |emitter: &emit::Emitter<'_, '_>, source: emit::Source| {
            let depth = plan.depth(model, source);
            match emitter.emit_source(source, depth)? {
                emit::Item::Tokens(tokens) => format::items(depth, tokens),
                emit::Item::Text(text) => Ok(text),
            }
        };
        let threads = self
            .options
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .min(MAX_THREADS)
            .min(plan.sources.len() / ITEMS_PER_THREAD)
            .max(1);
        if threads == 1 {
            return plan.sources.iter().map(|&s| one(emitter, s)).collect();
        }
        // Each worker stops at its first error and reports it with the item's index.
        type Done = Result<Vec<(usize, String)>, (usize, GenerateError)>;
        let results: Vec<Done> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    scope.spawn(move || -> Done {
                        let externs =
                            rules::resolve_externs(model, &self.options).map_err(|e| (0, e))?;
                        let emitter = emit::Emitter::new(model, &self.options, &externs)
                            .map_err(|e| (0, e))?;
                        // Every `threads`-th item, so that each thread gets a fair share
                        // of every kind of definition.
                        plan.sources
                            .iter()
                            .enumerate()
                            .skip(k)
                            .step_by(threads)
                            .map(|(i, &s)| one(&emitter, s).map(|t| (i, t)).map_err(|e| (i, e)))
                            .collect()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        let e = GenerateError::Internal("a formatting thread panicked".into());
                        Err((0, e))
                    })
                })
                .collect()
        });
        let mut texts = vec![String::new(); plan.sources.len()];
        // The error of the earliest item, as a single thread would report it.
        let mut first_error: Option<(usize, GenerateError)> = None;
        for result in results {
            match result {
                Ok(done) => {
                    for (i, text) in done {
                        texts[i] = text;
                    }
                }
                Err((i, e)) => {
                    if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_error = Some((i, e));
                    }
                }
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(texts),
        }
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
        let serde = if o.serde {
            let gate = match &o.serde_cfg {
                Some(p) => format!(" under `cfg({p})`"),
                None => String::new(),
            };
            format!(
                "\n// Types owning their data implement serde's traits{gate} (depend on `serde` with `derive` and enable the runtime's `serde` feature)."
            )
        } else {
            String::new()
        };
        let externs: Vec<String> = o
            .extern_paths
            .iter()
            .map(|e| format!("`{}` at `{}`", e.bebop_path, e.rust_path))
            .collect();
        let externs = if externs.is_empty() {
            String::new()
        } else {
            format!(
                "\n// Generated elsewhere, not here: {}.",
                externs.join(", ")
            )
        };
        format!(
            "// Generated by bebopc-gen-rust {version} from {files}.\n\
             // Do not edit: regenerate from the schemas instead.\n\
             //\n\
             // Include this file in one module of a crate (`include!`); it uses the runtime at `{rt}`.{owned}{defmt}{serde}{externs}\n\
             // A `mut` struct in the schema has the same Rust type as any other: fields are always `pub`.\n\
             // Lints allowed on some items, because the names and values come from the schema:\n\
             // `clippy::enum_variant_names`, `clippy::module_inception`, `clippy::approx_constant`,\n\
             // `clippy::excessive_precision`, `deprecated` (items using deprecated definitions),\n\
             // `clippy::large_enum_variant` (views are plain data; boxing would need a heap) and\n\
             // `clippy::type_complexity` (records holding a map inside an array or a map).\n",
            version = env!("CARGO_PKG_VERSION"),
            files = files.join(", "),
            rt = o.runtime_path,
        )
    }

    fn type_infos(
        &self,
        model: &Model<'_>,
        externs: &std::collections::BTreeMap<model::DefId, rules::ExternTarget>,
    ) -> Vec<TypeInfo> {
        let path = |module: &[String], name: &str| {
            let mut segs: Vec<String> =
                module.iter().map(|s| names::ident(s).to_string()).collect();
            segs.push(names::ident(name).to_string());
            segs.join("::")
        };
        model
            .defs
            .iter()
            .enumerate()
            .filter(|(id, d)| d.is_type() && !externs.contains_key(id))
            .map(|(_, d)| {
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
                } else if !d.lifetime {
                    let mut m = vec![OWNED_MODULE.to_string()];
                    m.extend(d.module.iter().cloned());
                    (Some(path(&m, &d.name)), OwnedForm::Same)
                } else {
                    let mut m = vec![OWNED_MODULE.to_string()];
                    m.extend(d.module.iter().cloned());
                    (Some(path(&m, &d.name)), OwnedForm::Converted)
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
            // A schema named by an absolute path outside the working directory: its file name
            // alone, not a mirror of the whole path under the output directory.
            let absolute = stem.starts_with('/')
                || stem.starts_with('\\')
                || stem.as_bytes().get(1) == Some(&b':');
            let stem = match absolute {
                true => stem.rsplit(['/', '\\']).next().unwrap_or(stem),
                false => stem,
            };
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
