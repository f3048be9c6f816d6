//! The standard schemas built into bebopc.
//!
//! `import "bebop/decorators.bop"` (and the others listed in [`STANDARD_SCHEMAS`]) work
//! without any `-I` directory: when an import is not found in the include directories,
//! these embedded copies are used.
//!
//! ```
//! let text = bebopc::stdlib::lookup("bebop/empty.bop").unwrap();
//! assert!(text.contains("struct Empty"));
//! ```

/// `(import path, text)` of every standard schema.
pub const STANDARD_SCHEMAS: &[(&str, &str)] = &[
    (
        "bebop/decorators.bop",
        include_str!("../schemas/bebop/decorators.bop"),
    ),
    (
        "bebop/empty.bop",
        include_str!("../schemas/bebop/empty.bop"),
    ),
    ("bebop/any.bop", include_str!("../schemas/bebop/any.bop")),
    ("bebop/json.bop", include_str!("../schemas/bebop/json.bop")),
    ("bebop/rpc.bop", include_str!("../schemas/bebop/rpc.bop")),
    (
        "bebop/descriptor.bop",
        include_str!("../schemas/bebop/descriptor.bop"),
    ),
    (
        "bebop/plugin.bop",
        include_str!("../schemas/bebop/plugin.bop"),
    ),
];

/// The text of a standard schema by its import path.
pub fn lookup(path: &str) -> Option<&'static str> {
    STANDARD_SCHEMAS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// Fully qualified names of the decorators the compiler checks itself.
pub mod builtin {
    /// `@deprecated`
    pub const DEPRECATED: &str = "bebop.deprecated";
    /// `@flags`
    pub const FLAGS: &str = "bebop.flags";
    /// `@forward_compatible`
    pub const FORWARD_COMPATIBLE: &str = "bebop.forward_compatible";
}
