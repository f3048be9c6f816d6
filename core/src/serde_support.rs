//! serde support (feature `serde`): `Serialize` and `Deserialize` for the runtime's value
//! types, and `with` helpers that generated serde code uses for long fixed arrays. Nothing
//! here allocates.
//!
//! | Type | serialized as |
//! |---|---|
//! | [`Uuid`] | the canonical hyphenated lower-case string in human-readable formats (JSON, ...), its 16 bytes (`serialize_bytes`) in the others; either is read back, as is a sequence of 16 bytes |
//! | [`Timestamp`] | a struct `{ seconds, nanos, offset_ms }` (the wire fields); `nanos` and `offset_ms` default to 0 when absent, and out-of-range parts are rejected |
//! | [`Duration`] | a struct `{ seconds, nanos }`; `nanos` defaults to 0, and mixed signs or out-of-range nanoseconds are rejected |
//! | [`f16`](crate::f16), [`bf16`](crate::bf16) | as the `half` crate serializes them (the bits, as a `u16` newtype) |
//!
//! Timestamps are structs rather than RFC 3339 strings because the wire form carries a UTC
//! offset in milliseconds, which RFC 3339 (minutes) cannot always express: the struct keeps
//! every value exactly.
//!
//! ```
//! use bebop_core::{Duration, Timestamp, Uuid};
//!
//! let id = Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000");
//! assert_eq!(serde_json::to_string(&id)?, r#""550e8400-e29b-41d4-a716-446655440000""#);
//! let t = Timestamp::new(1_700_000_000, 5, 3_600_000)?;
//! let json = serde_json::to_string(&t)?;
//! assert_eq!(json, r#"{"seconds":1700000000,"nanos":5,"offset_ms":3600000}"#);
//! assert_eq!(serde_json::from_str::<Timestamp>(&json)?, t);
//! assert!(serde_json::from_str::<Duration>(r#"{"seconds":1,"nanos":-5}"#).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeStruct, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use crate::{Duration, Timestamp, Uuid};

impl Serialize for Uuid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            let mut buf = [0u8; 36];
            serializer.serialize_str(self.encode_hyphenated(&mut buf))
        } else {
            serializer.serialize_bytes(self.as_bytes())
        }
    }
}

struct UuidVisitor;

impl<'de> Visitor<'de> for UuidVisitor {
    type Value = Uuid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a UUID: a hyphenated hexadecimal string or 16 bytes")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Uuid, E> {
        Uuid::parse(v).map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Uuid, E> {
        <[u8; 16]>::try_from(v)
            .map(Uuid::from_array)
            .map_err(|_| E::invalid_length(v.len(), &self))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Uuid, A::Error> {
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(i, &self))?;
        }
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(17, &self));
        }
        Ok(Uuid::from_array(bytes))
    }
}

impl<'de> Deserialize<'de> for Uuid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(UuidVisitor)
        } else {
            deserializer.deserialize_bytes(UuidVisitor)
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Timestamp", 3)?;
        s.serialize_field("seconds", &self.seconds())?;
        s.serialize_field("nanos", &self.nanos())?;
        s.serialize_field("offset_ms", &self.offset_ms())?;
        s.end()
    }
}

/// The fields of a [`Timestamp`] as read, before their ranges are checked.
#[derive(Deserialize)]
#[serde(rename = "Timestamp")]
struct TimestampParts {
    seconds: i64,
    #[serde(default)]
    nanos: i32,
    #[serde(default)]
    offset_ms: i32,
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let p = TimestampParts::deserialize(deserializer)?;
        Timestamp::new(p.seconds, p.nanos, p.offset_ms).map_err(|_| {
            de::Error::custom(format_args!(
                "timestamp out of range: nanos {} (0..=999999999), offset_ms {} (-86400000..=86400000)",
                p.nanos, p.offset_ms
            ))
        })
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Duration", 2)?;
        s.serialize_field("seconds", &self.seconds())?;
        s.serialize_field("nanos", &self.nanos())?;
        s.end()
    }
}

/// The fields of a [`Duration`] as read, before they are checked.
#[derive(Deserialize)]
#[serde(rename = "Duration")]
struct DurationParts {
    seconds: i64,
    #[serde(default)]
    nanos: i32,
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let p = DurationParts::deserialize(deserializer)?;
        Duration::new(p.seconds, p.nanos).map_err(|_| {
            de::Error::custom(format_args!(
                "invalid duration: {} s and {} ns (nanos within ±999999999, with the sign of the seconds)",
                p.seconds, p.nanos
            ))
        })
    }
}

/// `#[serde(with = "...::serde_support::fixed_array")]` for a `[T; N]` of any length (serde
/// implements its traits for arrays of up to 32 elements only): written as a tuple of `N`
/// elements, exactly as serde writes shorter arrays. Reading needs `T: Default` (the array
/// is filled in place).
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
/// struct Samples {
///     #[serde(with = "bebop_core::serde_support::fixed_array")]
///     values: [u16; 40],
/// }
///
/// let s = Samples { values: [7; 40] };
/// let json = serde_json::to_string(&s)?;
/// assert_eq!(serde_json::from_str::<Samples>(&json)?, s);
/// assert!(serde_json::from_str::<Samples>(r#"{"values":[1,2]}"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod fixed_array {
    use super::*;

    /// Writes the array as a tuple of its `N` elements.
    pub fn serialize<S, T, const N: usize>(array: &[T; N], serializer: S) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        T: Serialize,
    {
        let mut tuple = serializer.serialize_tuple(N)?;
        for element in array {
            tuple.serialize_element(element)?;
        }
        tuple.end()
    }

    /// Reads a tuple of `N` elements.
    pub fn deserialize<'de, D, T, const N: usize>(deserializer: D) -> Result<[T; N], D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de> + Default,
    {
        deserializer.deserialize_tuple(N, ArrayVisitor::<T, N>(PhantomData))
    }

    struct ArrayVisitor<T, const N: usize>(PhantomData<T>);

    impl<'de, T: Deserialize<'de> + Default, const N: usize> Visitor<'de> for ArrayVisitor<T, N> {
        type Value = [T; N];

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "an array of {N} elements")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
            let mut out: [T; N] = core::array::from_fn(|_| T::default());
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(i, &self))?;
            }
            Ok(out)
        }
    }
}

/// `#[serde(default, with = "...::serde_support::optional_fixed_array")]` for an
/// `Option<[T; N]>` of any length (a message field): `None`, or the array as
/// [`fixed_array`] writes it.
pub mod optional_fixed_array {
    use super::*;

    /// Writes `None`, or `Some` of the array as a tuple.
    #[allow(clippy::ref_option)] // the signature serde's `with` calls
    pub fn serialize<S, T, const N: usize>(
        value: &Option<[T; N]>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        T: Serialize,
    {
        struct Tuple<'a, T, const N: usize>(&'a [T; N]);
        impl<T: Serialize, const N: usize> Serialize for Tuple<'_, T, N> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                super::fixed_array::serialize(self.0, serializer)
            }
        }
        match value {
            Some(array) => serializer.serialize_some(&Tuple(array)),
            None => serializer.serialize_none(),
        }
    }

    /// Reads `None`, or `Some` of a tuple of `N` elements.
    pub fn deserialize<'de, D, T, const N: usize>(
        deserializer: D,
    ) -> Result<Option<[T; N]>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de> + Default,
    {
        deserializer.deserialize_option(OptionVisitor::<T, N>(PhantomData))
    }

    struct OptionVisitor<T, const N: usize>(PhantomData<T>);

    impl<'de, T: Deserialize<'de> + Default, const N: usize> Visitor<'de> for OptionVisitor<T, N> {
        type Value = Option<[T; N]>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "nothing, or an array of {N} elements")
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            super::fixed_array::deserialize(deserializer).map(Some)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::string::{String, ToString};

    use super::*;
    use crate::{bf16, f16};

    fn json<T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug>(
        value: &T,
    ) -> String {
        let text = serde_json::to_string(value).unwrap();
        assert_eq!(&serde_json::from_str::<T>(&text).unwrap(), value, "{text}");
        text
    }

    fn binary<T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug>(
        value: &T,
    ) -> usize {
        let mut buf = [0u8; 512];
        let used = postcard::to_slice(value, &mut buf).unwrap();
        let n = used.len();
        assert_eq!(&postcard::from_bytes::<T>(&buf[..n]).unwrap(), value);
        n
    }

    #[test]
    fn uuids_are_strings_for_people_and_bytes_for_machines() {
        let id = Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000");
        assert_eq!(json(&id), r#""550e8400-e29b-41d4-a716-446655440000""#);
        // Upper case reads too; a bad string is an error naming the position.
        let upper: Uuid =
            serde_json::from_str(r#""550E8400-E29B-41D4-A716-446655440000""#).unwrap();
        assert_eq!(upper, id);
        let err = serde_json::from_str::<Uuid>(r#""550e8400-e29b""#).unwrap_err();
        assert!(err.to_string().contains("invalid UUID"), "{err}");
        // postcard: a length byte and the 16 bytes.
        assert_eq!(binary(&id), 17);
        assert!(postcard::from_bytes::<Uuid>(&[3, 1, 2, 3]).is_err());
    }

    #[test]
    fn times_are_their_wire_fields_checked_on_reading() {
        let t = Timestamp::new(-5, 999_999_999, -86_400_000).unwrap();
        assert_eq!(
            json(&t),
            r#"{"seconds":-5,"nanos":999999999,"offset_ms":-86400000}"#
        );
        binary(&t);
        let utc: Timestamp = serde_json::from_str(r#"{"seconds":7}"#).unwrap();
        assert_eq!(utc, Timestamp::from_unix_seconds(7));
        for bad in [
            r#"{"seconds":1,"nanos":1000000000}"#,
            r#"{"seconds":1,"nanos":-1}"#,
            r#"{"seconds":1,"offset_ms":86400001}"#,
        ] {
            let err = serde_json::from_str::<Timestamp>(bad).unwrap_err();
            assert!(err.to_string().contains("out of range"), "{bad}: {err}");
        }
        let d = Duration::new(-1, -500_000_000).unwrap();
        assert_eq!(json(&d), r#"{"seconds":-1,"nanos":-500000000}"#);
        binary(&d);
        assert!(serde_json::from_str::<Duration>(r#"{"seconds":1,"nanos":-1}"#).is_err());
        assert!(serde_json::from_str::<Duration>(r#"{"seconds":0,"nanos":1000000000}"#).is_err());
    }

    #[test]
    fn half_floats_keep_their_bits() {
        let h = f16::from_f32(1.5);
        let b = bf16::from_f32(-2.0);
        json(&h);
        json(&b);
        binary(&(h, b));
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Long {
        #[serde(with = "crate::serde_support::fixed_array")]
        plain: [i32; 40],
        #[serde(default, with = "crate::serde_support::optional_fixed_array")]
        maybe: Option<[u8; 33]>,
        short: [u8; 2],
    }

    #[test]
    fn long_fixed_arrays_are_tuples() {
        let mut plain = [0i32; 40];
        plain[39] = -7;
        let v = Long {
            plain,
            maybe: Some([9; 33]),
            short: [1, 2],
        };
        let text = json(&v);
        assert!(text.starts_with(r#"{"plain":[0,0,"#), "{text}");
        // postcard writes tuples without a length: 40 zig-zag varints (one byte each), the
        // option tag and 33 bytes, and the short array.
        assert_eq!(binary(&v), 40 + 1 + 33 + 2);
        let none = Long {
            plain,
            maybe: None,
            short: [0, 0],
        };
        json(&none);
        binary(&none);
        // An absent key reads as None; a wrong length is an error.
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value.as_object_mut().unwrap().remove("maybe");
        let no_key: Long = serde_json::from_value(value).unwrap();
        assert_eq!(no_key.maybe, None);
        assert!(serde_json::from_str::<Long>(r#"{"plain":[1],"short":[1,2]}"#).is_err());
    }
}
