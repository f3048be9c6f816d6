//! [`GenerateError`]: why code could not be generated.

use core::fmt;

/// A problem that stops code generation. Every variant names the schema element (by fully
/// qualified name) or the option it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GenerateError {
    /// A file named in `files_to_generate` is not among the request's schemas.
    UnknownFile(String),
    /// A type reference names a definition that is not in the schemas given.
    UnknownType {
        /// The name referred to.
        fqn: String,
        /// The definition (or member) that refers to it.
        from: String,
    },
    /// The descriptor is malformed: a required field is missing or a value is out of range.
    InvalidDescriptor {
        /// The definition concerned (or the schema path).
        at: String,
        /// What is wrong.
        message: String,
    },
    /// The schema is valid but cannot be expressed in the generated Rust code.
    Unsupported {
        /// The definition concerned.
        at: String,
        /// What cannot be generated and why.
        message: String,
    },
    /// A generator option has a bad value (from [`Options::from_parameter`](crate::Options::from_parameter)
    /// or a builder call).
    InvalidOption {
        /// The option's key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// The generated code did not parse as Rust: a bug in the generator. The message says
    /// where.
    Internal(String),
}

impl GenerateError {
    pub(crate) fn invalid(at: impl Into<String>, message: impl Into<String>) -> Self {
        GenerateError::InvalidDescriptor {
            at: at.into(),
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(at: impl Into<String>, message: impl Into<String>) -> Self {
        GenerateError::Unsupported {
            at: at.into(),
            message: message.into(),
        }
    }

    pub(crate) fn option(key: impl Into<String>, message: impl Into<String>) -> Self {
        GenerateError::InvalidOption {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::UnknownFile(path) => write!(
                f,
                "`{path}` is in files_to_generate but the request has no schema with that path"
            ),
            GenerateError::UnknownType { fqn, from } => {
                write!(f, "{from}: refers to `{fqn}`, which is not defined")
            }
            GenerateError::InvalidDescriptor { at, message } => {
                write!(f, "{at}: invalid descriptor: {message}")
            }
            GenerateError::Unsupported { at, message } => {
                write!(f, "{at}: cannot generate Rust code: {message}")
            }
            GenerateError::InvalidOption { key, message } => {
                write!(f, "option `{key}`: {message}")
            }
            GenerateError::Internal(message) => {
                write!(f, "internal error in bebop-codegen-rust: {message}")
            }
        }
    }
}

impl std::error::Error for GenerateError {}
