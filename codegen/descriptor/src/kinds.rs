//! The enums of `bebop/descriptor.bop` and `bebop/plugin.bop`.
//!
//! None of them is `@forward_compatible`, so decoding an undeclared value is an
//! [`ErrorKind::InvalidEnumValue`] error at the value's offset. `DecoratorTarget` is a `@flags`
//! enum that declares all eight bits, so every byte is a valid value of it.

use bebop::{Decode, Encode, Error, ErrorKind, FixedSize, Reader, Sink, WireSize};

/// Declares a closed Bebop enum as a Rust enum with its wire impls: `$repr` is the Rust type
/// of the base integer, every member is `Name = value`; the first member is the `Default`.
macro_rules! bebop_enum {
    (
        $(#[$meta:meta])*
        $name:ident : $repr:ty {
            $(#[$fmeta:meta])* $first:ident = $first_value:expr,
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr($repr)]
        pub enum $name {
            $(#[$fmeta])*
            #[default]
            $first = $first_value,
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$name::$first, $($name::$variant),+];

            /// The member with this wire value, `None` for an undeclared value.
            pub const fn from_raw(raw: $repr) -> Option<Self> {
                match raw {
                    v if v == $first_value => Some($name::$first),
                    $( v if v == $value => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// The wire value.
            pub const fn to_raw(self) -> $repr {
                self as $repr
            }
        }

        impl TryFrom<$repr> for $name {
            type Error = $repr;
            /// Fails with the raw value when no member has it.
            fn try_from(raw: $repr) -> Result<Self, $repr> {
                Self::from_raw(raw).ok_or(raw)
            }
        }

        impl From<$name> for $repr {
            fn from(v: $name) -> $repr {
                v.to_raw()
            }
        }

        impl WireSize for $name {
            const FIXED_SIZE: Option<usize> = Some(core::mem::size_of::<$repr>());
            const MIN_SIZE: usize = core::mem::size_of::<$repr>();
        }

        impl FixedSize for $name {
            const SIZE: usize = core::mem::size_of::<$repr>();
        }

        impl<'a> Decode<'a> for $name {
            fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
                let at = r.offset();
                let raw = r.read::<$repr>()?;
                Self::from_raw(raw).ok_or_else(|| {
                    // The detail is the value's unsigned bits, as bebop-core documents.
                    Error::new(ErrorKind::InvalidEnumValue, at).with_detail(raw as u64)
                })
            }
        }

        impl Encode for $name {
            fn encoded_size(&self) -> usize {
                core::mem::size_of::<$repr>()
            }
            fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
                self.to_raw().encode(s)
            }
        }
    };
}

bebop_enum! {
    /// `bebop.TypeKind` (`uint8`): what a [`TypeDescriptor`](crate::TypeDescriptor) describes.
    TypeKind: u8 {
        /// `UNKNOWN = 0`: the sentinel; a valid type never has it.
        Unknown = 0,
        /// `BOOL = 1`.
        Bool = 1,
        /// `BYTE = 2`.
        Byte = 2,
        /// `INT8 = 3`.
        Int8 = 3,
        /// `INT16 = 4`.
        Int16 = 4,
        /// `UINT16 = 5`.
        Uint16 = 5,
        /// `INT32 = 6`.
        Int32 = 6,
        /// `UINT32 = 7`.
        Uint32 = 7,
        /// `INT64 = 8`.
        Int64 = 8,
        /// `UINT64 = 9`.
        Uint64 = 9,
        /// `INT128 = 10`.
        Int128 = 10,
        /// `UINT128 = 11`.
        Uint128 = 11,
        /// `FLOAT16 = 12`.
        Float16 = 12,
        /// `FLOAT32 = 13`.
        Float32 = 13,
        /// `FLOAT64 = 14`.
        Float64 = 14,
        /// `BFLOAT16 = 15`.
        Bfloat16 = 15,
        /// `STRING = 16`.
        String = 16,
        /// `UUID = 17`.
        Uuid = 17,
        /// `TIMESTAMP = 18`.
        Timestamp = 18,
        /// `DURATION = 19`.
        Duration = 19,
        /// `ARRAY = 20`: element type in `array_element`.
        Array = 20,
        /// `FIXED_ARRAY = 21`: element type and size in `fixed_array_element`, `fixed_array_size`.
        FixedArray = 21,
        /// `MAP = 22`: key and value types in `map_key`, `map_value`.
        Map = 22,
        /// `DEFINED = 23`: a named type, in `defined_fqn`.
        Defined = 23,
    }
}

impl TypeKind {
    /// True for the kinds 1..=19, which need no further fields.
    pub const fn is_scalar(self) -> bool {
        matches!(self.to_raw(), 1..=19)
    }

    /// The wire size of a scalar kind, `None` for `STRING`, compound kinds and `UNKNOWN`.
    pub const fn fixed_wire_size(self) -> Option<usize> {
        Some(match self {
            TypeKind::Bool | TypeKind::Byte | TypeKind::Int8 => 1,
            TypeKind::Int16 | TypeKind::Uint16 | TypeKind::Float16 | TypeKind::Bfloat16 => 2,
            TypeKind::Int32 | TypeKind::Uint32 | TypeKind::Float32 => 4,
            TypeKind::Int64 | TypeKind::Uint64 | TypeKind::Float64 => 8,
            TypeKind::Int128 | TypeKind::Uint128 | TypeKind::Uuid | TypeKind::Timestamp => 16,
            TypeKind::Duration => 12,
            _ => return None,
        })
    }
}

bebop_enum! {
    /// `bebop.DefinitionKind` (`uint8`): which body a
    /// [`DefinitionDescriptor`](crate::DefinitionDescriptor) carries.
    DefinitionKind: u8 {
        /// `UNKNOWN = 0`.
        Unknown = 0,
        /// `ENUM = 1`: body in `enum_def`.
        Enum = 1,
        /// `STRUCT = 2`: body in `struct_def`.
        Struct = 2,
        /// `MESSAGE = 3`: body in `message_def`.
        Message = 3,
        /// `UNION = 4`: body in `union_def`.
        Union = 4,
        /// `SERVICE = 5`: body in `service_def`.
        Service = 5,
        /// `CONST = 6`: body in `const_def`.
        Const = 6,
        /// `DECORATOR = 7`: body in `decorator_def`.
        Decorator = 7,
    }
}

bebop_enum! {
    /// `bebop.MethodType` (`uint8`): the streaming mode of a service method.
    MethodType: u8 {
        /// `UNKNOWN = 0`.
        Unknown = 0,
        /// `UNARY = 1`: `M(Req): Res`.
        Unary = 1,
        /// `SERVER_STREAM = 2`: `M(Req): stream Res`.
        ServerStream = 2,
        /// `CLIENT_STREAM = 3`: `M(stream Req): Res`.
        ClientStream = 3,
        /// `DUPLEX_STREAM = 4`: `M(stream Req): stream Res`.
        DuplexStream = 4,
    }
}

bebop_enum! {
    /// `bebop.Visibility` (`uint8`): whether other schemas can see a definition.
    Visibility: u8 {
        /// `DEFAULT = 0`: the scope's default (the reference writes it for top-level
        /// definitions and nested ones without a modifier).
        Default = 0,
        /// `EXPORT = 1`.
        Export = 1,
        /// `LOCAL = 2`.
        Local = 2,
    }
}

bebop_enum! {
    /// `bebop.LiteralKind` (`uint8`): which value field of a
    /// [`LiteralValue`](crate::LiteralValue) is set.
    LiteralKind: u8 {
        /// `UNKNOWN = 0`.
        Unknown = 0,
        /// `BOOL = 1`: `bool_value`.
        Bool = 1,
        /// `INT = 2`: `int_value`.
        Int = 2,
        /// `FLOAT = 3`: `float_value`.
        Float = 3,
        /// `STRING = 4`: `string_value` (and `raw_value` when `$(...)` was expanded).
        String = 4,
        /// `UUID = 5`: `uuid_value`.
        Uuid = 5,
        /// `BYTES = 6`: `bytes_value`.
        Bytes = 6,
        /// `TIMESTAMP = 7`: `timestamp_value`.
        Timestamp = 7,
        /// `DURATION = 8`: `duration_value`.
        Duration = 8,
    }
}

bebop_enum! {
    /// `bebop.Edition` (`int32`): the schema language edition.
    Edition: i32 {
        /// `UNKNOWN = 0`.
        Unknown = 0,
        /// `EDITION_2026 = 1000`.
        Edition2026 = 1000,
        /// `MAX = 0x7FFFFFFF`.
        Max = 0x7FFF_FFFF,
    }
}

bebop_enum! {
    /// `bebop.DiagnosticSeverity` (`uint8`, plugin.bop): how serious a plugin diagnostic is.
    DiagnosticSeverity: u8 {
        /// `ERROR = 0`.
        Error = 0,
        /// `WARNING = 1`.
        Warning = 1,
        /// `INFO = 2`.
        Info = 2,
        /// `HINT = 3`.
        Hint = 3,
    }
}

/// `bebop.DecoratorTarget` (`@flags`, `uint8`): the element kinds a decorator may decorate.
///
/// The schema declares all eight bits, so every byte is a valid value.
///
/// ```
/// use bebop_descriptor::DecoratorTarget;
///
/// let t = DecoratorTarget::STRUCT | DecoratorTarget::MESSAGE;
/// assert_eq!(t.bits(), 6);
/// assert!(t.contains(DecoratorTarget::MESSAGE));
/// assert!(!t.contains(DecoratorTarget::FIELD));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DecoratorTarget(pub u8);

impl DecoratorTarget {
    /// `NONE = 0`.
    pub const NONE: Self = Self(0);
    /// `ENUM = 1 << 0`.
    pub const ENUM: Self = Self(1);
    /// `STRUCT = 1 << 1`.
    pub const STRUCT: Self = Self(1 << 1);
    /// `MESSAGE = 1 << 2`.
    pub const MESSAGE: Self = Self(1 << 2);
    /// `UNION = 1 << 3`.
    pub const UNION: Self = Self(1 << 3);
    /// `FIELD = 1 << 4`.
    pub const FIELD: Self = Self(1 << 4);
    /// `SERVICE = 1 << 5`.
    pub const SERVICE: Self = Self(1 << 5);
    /// `METHOD = 1 << 6`.
    pub const METHOD: Self = Self(1 << 6);
    /// `BRANCH = 1 << 7`.
    pub const BRANCH: Self = Self(1 << 7);
    /// `ALL = 0xFF`.
    pub const ALL: Self = Self(0xFF);

    /// The raw bits.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// True when every bit of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for DecoratorTarget {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl core::ops::BitOrAssign for DecoratorTarget {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl core::ops::BitAnd for DecoratorTarget {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl WireSize for DecoratorTarget {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl FixedSize for DecoratorTarget {
    const SIZE: usize = 1;
}

impl<'a> Decode<'a> for DecoratorTarget {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.read_u8().map(DecoratorTarget)
    }
}

impl Encode for DecoratorTarget {
    fn encoded_size(&self) -> usize {
        1
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write(&[self.0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_every_member() {
        for &k in TypeKind::ALL {
            let bytes = bebop::encode_to_vec(&k).unwrap();
            assert_eq!(bytes, [k.to_raw()]);
            assert_eq!(TypeKind::from_bytes(&bytes), Ok(k));
        }
        for &e in Edition::ALL {
            let bytes = bebop::encode_to_vec(&e).unwrap();
            assert_eq!(bytes, e.to_raw().to_le_bytes());
            assert_eq!(Edition::from_bytes(&bytes), Ok(e));
        }
    }

    #[test]
    fn undeclared_values_are_errors_with_the_value() {
        let err = TypeKind::from_bytes(&[24]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidEnumValue);
        assert_eq!(err.detail(), 24);
        let err = Edition::from_bytes(&999i32.to_le_bytes()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidEnumValue);
        assert_eq!(err.detail(), 999);
        let err = Edition::from_bytes(&(-1i32).to_le_bytes()).unwrap_err();
        assert_eq!(err.detail(), u64::MAX);
        assert_eq!(
            DiagnosticSeverity::from_bytes(&[4]).unwrap_err().detail(),
            4
        );
        assert_eq!(Visibility::try_from(3), Err(3));
    }

    #[test]
    fn every_decorator_target_byte_is_valid() {
        for b in 0..=255u8 {
            assert_eq!(DecoratorTarget::from_bytes(&[b]), Ok(DecoratorTarget(b)));
        }
        assert_eq!(
            DecoratorTarget::ENUM
                | DecoratorTarget::STRUCT
                | DecoratorTarget::MESSAGE
                | DecoratorTarget::UNION
                | DecoratorTarget::FIELD
                | DecoratorTarget::SERVICE
                | DecoratorTarget::METHOD
                | DecoratorTarget::BRANCH,
            DecoratorTarget::ALL
        );
    }

    #[test]
    fn scalar_sizes_follow_the_spec() {
        assert_eq!(TypeKind::Timestamp.fixed_wire_size(), Some(16));
        assert_eq!(TypeKind::Duration.fixed_wire_size(), Some(12));
        assert_eq!(TypeKind::String.fixed_wire_size(), None);
        assert!(TypeKind::String.is_scalar());
        assert!(!TypeKind::Array.is_scalar());
        assert!(!TypeKind::Unknown.is_scalar());
    }
}
