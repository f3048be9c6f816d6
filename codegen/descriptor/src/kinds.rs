//! Helpers on the generated enums of `bebop/descriptor.bop` and `bebop/plugin.bop`.
//!
//! The enums themselves (members, `TryFrom`/`From` for the base integer, the wire impls) are
//! generated. None of them is `@forward_compatible`, so decoding an undeclared value is an
//! [`ErrorKind::InvalidEnumValue`](bebop_runtime::ErrorKind::InvalidEnumValue) error at the value's
//! offset. `DecoratorTarget` is a generated `@flags` type that declares all eight bits, so
//! every byte is a valid value of it.

use crate::{
    DefinitionKind, DiagnosticSeverity, Edition, LiteralKind, MethodType, TypeKind, Visibility,
};

/// Adds `ALL`, `from_raw` and `to_raw` to a generated enum. The member list is checked
/// against the enum by an exhaustive `match`, so a member added to the schema (and the
/// regenerated code) without being added here is a compile error.
macro_rules! enum_helpers {
    ($name:ident : $repr:ty { $($member:ident),+ $(,)? }) => {
        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$member),+];

            /// The member with this wire value, `None` for an undeclared value.
            pub const fn from_raw(raw: $repr) -> Option<Self> {
                let mut i = 0;
                while i < Self::ALL.len() {
                    if Self::ALL[i] as $repr == raw {
                        return Some(Self::ALL[i]);
                    }
                    i += 1;
                }
                None
            }

            /// The wire value.
            pub const fn to_raw(self) -> $repr {
                // `ALL` must list every member: this match stops compiling otherwise.
                match self {
                    $($name::$member)|+ => self as $repr,
                }
            }
        }
    };
}

enum_helpers!(TypeKind: u8 {
    Unknown, Bool, Byte, Int8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Int128, Uint128,
    Float16, Float32, Float64, Bfloat16, String, Uuid, Timestamp, Duration, Array, FixedArray,
    Map, Defined,
});
enum_helpers!(DefinitionKind: u8 {
    Unknown, Enum, Struct, Message, Union, Service, Const, Decorator,
});
enum_helpers!(MethodType: u8 { Unknown, Unary, ServerStream, ClientStream, DuplexStream });
enum_helpers!(Visibility: u8 { Default, Export, Local });
enum_helpers!(LiteralKind: u8 {
    Unknown, Bool, Int, Float, String, Uuid, Bytes, Timestamp, Duration,
});
enum_helpers!(Edition: i32 { Unknown, Edition2026, Max });
enum_helpers!(DiagnosticSeverity: u8 { Error, Warning, Info, Hint });

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DecoratorTarget;
    use bebop_runtime::{Decode, ErrorKind};

    #[test]
    fn enums_round_trip_every_member() {
        for &k in TypeKind::ALL {
            let bytes = bebop_runtime::encode_to_vec(&k).unwrap();
            assert_eq!(bytes, [k.to_raw()]);
            assert_eq!(TypeKind::from_bytes(&bytes), Ok(k));
        }
        for &e in Edition::ALL {
            let bytes = bebop_runtime::encode_to_vec(&e).unwrap();
            assert_eq!(bytes, e.to_raw().to_le_bytes());
            assert_eq!(Edition::from_bytes(&bytes), Ok(e));
        }
    }

    #[test]
    fn from_raw_agrees_with_the_generated_try_from() {
        for raw in 0..=u8::MAX {
            assert_eq!(TypeKind::from_raw(raw), TypeKind::try_from(raw).ok());
            assert_eq!(
                DefinitionKind::from_raw(raw),
                DefinitionKind::try_from(raw).ok()
            );
            assert_eq!(MethodType::from_raw(raw), MethodType::try_from(raw).ok());
            assert_eq!(Visibility::from_raw(raw), Visibility::try_from(raw).ok());
            assert_eq!(LiteralKind::from_raw(raw), LiteralKind::try_from(raw).ok());
            assert_eq!(
                DiagnosticSeverity::from_raw(raw),
                DiagnosticSeverity::try_from(raw).ok()
            );
        }
        for raw in [i32::MIN, -1, 0, 1, 999, 1000, 1001, i32::MAX - 1, i32::MAX] {
            assert_eq!(Edition::from_raw(raw), Edition::try_from(raw).ok());
        }
        assert_eq!(TypeKind::ALL.len(), 24);
        assert_eq!(TypeKind::from_raw(23), Some(TypeKind::Defined));
        assert_eq!(Edition::Max.to_raw(), 0x7FFF_FFFF);
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
            assert_eq!(
                DecoratorTarget::from_bytes(&[b]),
                Ok(DecoratorTarget::from_bits_retain(b))
            );
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
