//! `TypeDescriptor` and `LiteralValue`: type references and concrete values.

use bebop::{Decode, Duration, Encode, Error, Reader, Sink, Timestamp, Uuid, WireSize, field_size};

use crate::{LiteralKind, TypeKind};

/// `bebop.TypeDescriptor`: a type reference (field type, const type, method request or
/// response, array element, map key or value).
///
/// `kind` says which of the other fields matter. The recursive fields are boxed.
///
/// ```
/// use bebop::Decode;
/// use bebop_descriptor::{TypeDescriptor, TypeKind};
///
/// // map[string, int32[]]
/// let t = TypeDescriptor::map(
///     TypeDescriptor::scalar(TypeKind::String),
///     TypeDescriptor::array(TypeDescriptor::scalar(TypeKind::Int32)),
/// );
/// let bytes = bebop::encode_to_vec(&t)?;
/// assert_eq!(TypeDescriptor::from_bytes(&bytes)?, t);
/// # Ok::<(), bebop::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TypeDescriptor {
    /// `kind(1)`: which fields below are populated.
    pub kind: Option<TypeKind>,
    /// `array_element(2)`: the element type when `kind == ARRAY`.
    pub array_element: Option<Box<TypeDescriptor>>,
    /// `fixed_array_element(3)`: the element type when `kind == FIXED_ARRAY`.
    pub fixed_array_element: Option<Box<TypeDescriptor>>,
    /// `fixed_array_size(4)`: the element count when `kind == FIXED_ARRAY`.
    pub fixed_array_size: Option<u32>,
    /// `map_key(5)`: the key type when `kind == MAP`.
    pub map_key: Option<Box<TypeDescriptor>>,
    /// `map_value(6)`: the value type when `kind == MAP`.
    pub map_value: Option<Box<TypeDescriptor>>,
    /// `defined_fqn(7)`: the referenced definition when `kind == DEFINED`.
    pub defined_fqn: Option<String>,
}

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

    fn body_size(&self) -> usize {
        field_size(&self.kind)
            + field_size(&self.array_element)
            + field_size(&self.fixed_array_element)
            + field_size(&self.fixed_array_size)
            + field_size(&self.map_key)
            + field_size(&self.map_value)
            + field_size(&self.defined_fqn)
            + 1
    }
}

impl WireSize for TypeDescriptor {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for TypeDescriptor {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = TypeDescriptor::default();
            loop {
                match r.read_tag()? {
                    1 => m.kind = Some(r.read()?),
                    2 => m.array_element = Some(r.read()?),
                    3 => m.fixed_array_element = Some(r.read()?),
                    4 => m.fixed_array_size = Some(r.read()?),
                    5 => m.map_key = Some(r.read()?),
                    6 => m.map_value = Some(r.read()?),
                    7 => m.defined_fqn = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for TypeDescriptor {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.kind {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.array_element {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.fixed_array_element {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.fixed_array_size {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.map_key {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.map_value {
                    s.write_field(6, v)?;
                }
                if let Some(v) = &self.defined_fqn {
                    s.write_field(7, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `bebop.LiteralValue`: a concrete value (const value, decorator argument, parameter default
/// or allowed value). `kind` says which value field is set.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LiteralValue {
    /// `kind(1)`: which value field is set.
    pub kind: Option<LiteralKind>,
    /// `bool_value(2)`.
    pub bool_value: Option<bool>,
    /// `int_value(3)`.
    pub int_value: Option<i64>,
    /// `float_value(4)`.
    pub float_value: Option<f64>,
    /// `string_value(5)`.
    pub string_value: Option<String>,
    /// `uuid_value(6)`.
    pub uuid_value: Option<Uuid>,
    /// `raw_value(7)`: the source text before `$(...)` expansion.
    pub raw_value: Option<String>,
    /// `bytes_value(8)`: when `kind == BYTES`.
    pub bytes_value: Option<Vec<u8>>,
    /// `timestamp_value(9)`: when `kind == TIMESTAMP`.
    pub timestamp_value: Option<Timestamp>,
    /// `duration_value(10)`: when `kind == DURATION`.
    pub duration_value: Option<Duration>,
}

impl LiteralValue {
    /// The kind, `UNKNOWN` when absent.
    pub fn kind(&self) -> LiteralKind {
        self.kind.unwrap_or_default()
    }

    fn body_size(&self) -> usize {
        field_size(&self.kind)
            + field_size(&self.bool_value)
            + field_size(&self.int_value)
            + field_size(&self.float_value)
            + field_size(&self.string_value)
            + field_size(&self.uuid_value)
            + field_size(&self.raw_value)
            + field_size(&self.bytes_value)
            + field_size(&self.timestamp_value)
            + field_size(&self.duration_value)
            + 1
    }
}

impl WireSize for LiteralValue {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for LiteralValue {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut m = LiteralValue::default();
            loop {
                match r.read_tag()? {
                    1 => m.kind = Some(r.read()?),
                    2 => m.bool_value = Some(r.read()?),
                    3 => m.int_value = Some(r.read()?),
                    4 => m.float_value = Some(r.read()?),
                    5 => m.string_value = Some(r.read()?),
                    6 => m.uuid_value = Some(r.read()?),
                    7 => m.raw_value = Some(r.read()?),
                    8 => m.bytes_value = Some(r.read()?),
                    9 => m.timestamp_value = Some(r.read()?),
                    10 => m.duration_value = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(m)
        })
    }
}

impl Encode for LiteralValue {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.kind {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.bool_value {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.int_value {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.float_value {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.string_value {
                    s.write_field(5, v)?;
                }
                if let Some(v) = &self.uuid_value {
                    s.write_field(6, v)?;
                }
                if let Some(v) = &self.raw_value {
                    s.write_field(7, v)?;
                }
                if let Some(v) = &self.bytes_value {
                    s.write_field(8, v)?;
                }
                if let Some(v) = &self.timestamp_value {
                    s.write_field(9, v)?;
                }
                if let Some(v) = &self.duration_value {
                    s.write_field(10, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop::ErrorKind;

    #[test]
    fn scalar_type_bytes() {
        // kind(1) = INT32, end.
        let t = TypeDescriptor::scalar(TypeKind::Int32);
        assert_eq!(bebop::encode_to_vec(&t).unwrap(), [3, 0, 0, 0, 1, 6, 0]);
        assert_eq!(
            bebop::encode_to_vec(&TypeDescriptor::default()).unwrap(),
            [1, 0, 0, 0, 0]
        );
    }

    #[test]
    fn absent_is_not_default() {
        let with_zero = TypeDescriptor {
            fixed_array_size: Some(0),
            ..Default::default()
        };
        let bytes = bebop::encode_to_vec(&with_zero).unwrap();
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
        let bytes = bebop::encode_to_vec(&v).unwrap();
        assert_eq!(bytes.len(), v.encoded_size());
        assert_eq!(LiteralValue::from_bytes(&bytes).unwrap(), v);
    }
}
