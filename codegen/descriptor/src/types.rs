//! Constructors and accessors for the generated `TypeDescriptor` and `LiteralValue`.

use crate::{LiteralKind, LiteralValue, TypeDescriptor, TypeKind};

/// Builders for the common shapes of a type reference. The recursive fields are boxed.
///
/// ```
/// use bebop_runtime::Decode;
/// use bebop_descriptor::{TypeDescriptor, TypeKind};
///
/// // map[string, int32[]]
/// let t = TypeDescriptor::map(
///     TypeDescriptor::scalar(TypeKind::String),
///     TypeDescriptor::array(TypeDescriptor::scalar(TypeKind::Int32)),
/// );
/// let bytes = bebop_runtime::encode_to_vec(&t)?;
/// assert_eq!(TypeDescriptor::from_bytes(&bytes)?, t);
/// # Ok::<(), bebop_runtime::Error>(())
/// ```
impl TypeDescriptor {
    /// A type of the given kind and nothing else (for scalars and `string`).
    pub fn scalar(kind: TypeKind) -> Self {
        TypeDescriptor {
            kind: Some(kind),
            ..Default::default()
        }
    }

    /// `T[]`.
    pub fn array(element: TypeDescriptor) -> Self {
        TypeDescriptor {
            kind: Some(TypeKind::Array),
            array_element: Some(Box::new(element)),
            ..Default::default()
        }
    }

    /// `T[size]`.
    pub fn fixed_array(element: TypeDescriptor, size: u32) -> Self {
        TypeDescriptor {
            kind: Some(TypeKind::FixedArray),
            fixed_array_element: Some(Box::new(element)),
            fixed_array_size: Some(size),
            ..Default::default()
        }
    }

    /// `map[K, V]`.
    pub fn map(key: TypeDescriptor, value: TypeDescriptor) -> Self {
        TypeDescriptor {
            kind: Some(TypeKind::Map),
            map_key: Some(Box::new(key)),
            map_value: Some(Box::new(value)),
            ..Default::default()
        }
    }

    /// A reference to the definition named `fqn`.
    pub fn defined(fqn: impl Into<String>) -> Self {
        TypeDescriptor {
            kind: Some(TypeKind::Defined),
            defined_fqn: Some(fqn.into()),
            ..Default::default()
        }
    }

    /// The kind, `UNKNOWN` when absent.
    pub fn kind(&self) -> TypeKind {
        self.kind.unwrap_or_default()
    }
}

impl LiteralValue {
    /// The kind, `UNKNOWN` when absent.
    pub fn kind(&self) -> LiteralKind {
        self.kind.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_runtime::{Decode, Duration, Encode, ErrorKind, Timestamp, Uuid};

    #[test]
    fn scalar_type_bytes() {
        // kind(1) = INT32, end.
        let t = TypeDescriptor::scalar(TypeKind::Int32);
        assert_eq!(
            bebop_runtime::encode_to_vec(&t).unwrap(),
            [3, 0, 0, 0, 1, 6, 0]
        );
        assert_eq!(
            bebop_runtime::encode_to_vec(&TypeDescriptor::default()).unwrap(),
            [1, 0, 0, 0, 0]
        );
    }

    #[test]
    fn absent_is_not_default() {
        let with_zero = TypeDescriptor {
            fixed_array_size: Some(0),
            ..Default::default()
        };
        let bytes = bebop_runtime::encode_to_vec(&with_zero).unwrap();
        assert_eq!(bytes, [6, 0, 0, 0, 4, 0, 0, 0, 0, 0]);
        let back = TypeDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(back.fixed_array_size, Some(0));
        assert_ne!(back, TypeDescriptor::default());
    }

    #[test]
    fn unknown_tag_ends_the_message_and_skips_its_rest() {
        // kind = BOOL, then unknown tag 99 with junk, inside an array of two types.
        let mut bytes = vec![2, 0, 0, 0];
        bytes.extend_from_slice(&[6, 0, 0, 0, 1, 1, 99, 0xAA, 0xBB, 0]);
        bytes.extend_from_slice(&[3, 0, 0, 0, 1, 16, 0]);
        let v = Vec::<TypeDescriptor>::from_bytes(&bytes).unwrap();
        assert_eq!(
            v,
            [
                TypeDescriptor::scalar(TypeKind::Bool),
                TypeDescriptor::scalar(TypeKind::String)
            ]
        );
    }

    #[test]
    fn duplicate_tags_keep_the_last() {
        let bytes = [5, 0, 0, 0, 1, 1, 1, 2, 0];
        let t = TypeDescriptor::from_bytes(&bytes).unwrap();
        assert_eq!(t.kind, Some(TypeKind::Byte));
    }

    #[test]
    fn undeclared_kind_is_an_error() {
        let err = TypeDescriptor::from_bytes(&[3, 0, 0, 0, 1, 200, 0]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidEnumValue);
        assert_eq!(err.offset(), 5);
    }

    #[test]
    fn literal_with_every_field_round_trips() {
        let v = LiteralValue {
            kind: Some(LiteralKind::String),
            bool_value: Some(true),
            int_value: Some(-5),
            float_value: Some(1.5),
            string_value: Some("hi".into()),
            uuid_value: Some(Uuid::from_u128(7)),
            raw_value: Some("$(X)".into()),
            bytes_value: Some(vec![1, 2, 3]),
            timestamp_value: Some(Timestamp::new(1, 2, 3).unwrap()),
            duration_value: Some(Duration::new(-4, -5).unwrap()),
        };
        let bytes = bebop_runtime::encode_to_vec(&v).unwrap();
        assert_eq!(bytes.len(), v.encoded_size());
        assert_eq!(LiteralValue::from_bytes(&bytes).unwrap(), v);
    }
}
