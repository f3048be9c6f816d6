//! # bebop-descriptor
//!
//! Owned Rust types for Bebop's compiled schema format (`bebop/descriptor.bop`: a
//! [`DescriptorSet`] of [`SchemaDescriptor`]s) and its code generator plugin protocol
//! (`bebop/plugin.bop`: [`CodeGeneratorRequest`], [`CodeGeneratorResponse`]), encoded and
//! decoded with Bebop's own wire format through [`bebop`].
//!
//! Every message field is an `Option`: absent and zero are different things on the wire, and
//! keeping them apart is what lets a decoded descriptor re-encode to exactly the bytes it came
//! from. Maps are `Vec<(K, V)>` in wire order for the same reason.
//!
//! ```
//! use bebop_descriptor::{
//!     DefinitionBody, DefinitionDescriptor, DefinitionKind, DescriptorSet, FieldDescriptor,
//!     SchemaDescriptor, StructDef, TypeDescriptor, TypeKind,
//! };
//!
//! let set = DescriptorSet {
//!     schemas: Some(vec![SchemaDescriptor {
//!         path: Some("point.bop".into()),
//!         definitions: Some(vec![DefinitionDescriptor {
//!             kind: Some(DefinitionKind::Struct),
//!             name: Some("Point".into()),
//!             fqn: Some("geo.Point".into()),
//!             struct_def: Some(StructDef {
//!                 fields: Some(vec![FieldDescriptor {
//!                     name: Some("x".into()),
//!                     r#type: Some(TypeDescriptor::scalar(TypeKind::Float32)),
//!                     index: Some(0),
//!                     ..Default::default()
//!                 }]),
//!                 fixed_size: Some(4),
//!                 ..Default::default()
//!             }),
//!             ..Default::default()
//!         }]),
//!         ..Default::default()
//!     }]),
//! };
//!
//! let bytes = set.to_vec()?;
//! let back = DescriptorSet::from_bytes(&bytes)?;
//! assert_eq!(back, set);
//!
//! let point = back.find_definition("geo.Point").expect("defined above");
//! match point.definition.body() {
//!     Some(DefinitionBody::Struct(s)) => assert_eq!(s.fixed_size, Some(4)),
//!     other => panic!("unexpected body {other:?}"),
//! }
//! # Ok::<(), bebop::Error>(())
//! ```
//!
//! ## Reproducing the reference compiler's bytes
//!
//! Every DescriptorSet and CodeGeneratorRequest the reference compiler wrote for the
//! conformance fixtures decodes into these types and re-encodes to the same bytes (see
//! `tests/reference_descriptors.rs`). What that takes, and what a compiler producing
//! descriptors must do to match them:
//!
//! - Fields are written in tag order, each at most once, so a decoder that records presence
//!   and an encoder that writes present fields in declaration order reproduce them.
//! - Presence follows the reference's rules, not a "skip zero values" rule. Empty arrays are
//!   omitted (`fields` of an empty struct or message, `definitions` of an empty schema,
//!   `imports`, `nested`, `decorators`, `args`), and so are absent strings (`package`,
//!   `documentation`). Scalars are written even when zero or false: `kind`, `visibility`
//!   (0 for every top-level definition and unmarked nested one), `edition`, `base_type`,
//!   `is_flags`, member `value`, `is_mutable`, `fixed_size`, a struct field's `index` 0,
//!   `method_type`, `id`, `targets`, `allow_multiple`, `required`. A `LiteralValue` carries
//!   `kind` and exactly the one value field of that kind (even `false` or 0).
//!   `value_expr` and `source_code_info` are never written.
//! - `export_data` entries come in the order the reference's Lua table yields them, which is
//!   neither source order nor sorted (`width, range_min, range_max, constraint` for a table
//!   written `constraint, range_min, range_max, width`): maps must keep wire order, hence
//!   `Vec<(K, V)>` instead of an ordered map.
//! - The request's `schemas` are the DescriptorSet's, byte for byte: the schema named on the
//!   command line first, then its imports. The reference sends no `parameter` and no
//!   `host_options`, and `compiler_version` 2026.0.0-alpha.3.
//! - Doc comments are stored trimmed (`/** Doc comment on enum */` gives
//!   `Doc comment on enum`); a block comment starting on its own line keeps a leading `\n`.
//!
//! Decoding follows the project's rules (SPEC.md): an unknown message tag ends the message and
//! decoding continues after it; duplicate tags keep the last value; undeclared enum values are
//! errors; nesting is bounded by [`bebop::Limits`] (64 levels by default), so hostile input
//! gives an error, never a panic or a stack overflow.
#![forbid(unsafe_code)]

mod bodies;
mod decorators;
mod definition;
mod kinds;
mod map_entries;
mod members;
mod navigation;
mod plugin;
mod schema;
mod source_info;
mod types;

pub use bodies::{ConstDef, EnumDef, MessageDef, ServiceDef, StructDef, UnionDef};
pub use decorators::{DecoratorArg, DecoratorDef, DecoratorParamDef, DecoratorUsage};
pub use definition::DefinitionDescriptor;
pub use kinds::{
    DecoratorTarget, DefinitionKind, DiagnosticSeverity, Edition, LiteralKind, MethodType,
    TypeKind, Visibility,
};
pub use members::{EnumMemberDescriptor, FieldDescriptor, MethodDescriptor, UnionBranchDescriptor};
pub use navigation::{DefinitionBody, DefinitionEntry, DefinitionIndex, Definitions};
pub use plugin::{CodeGeneratorRequest, CodeGeneratorResponse, Diagnostic, GeneratedFile, Version};
pub use schema::{DescriptorSet, SchemaDescriptor};
pub use source_info::{Location, SourceCodeInfo};
pub use types::{LiteralValue, TypeDescriptor};
