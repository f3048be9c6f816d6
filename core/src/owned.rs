//! Trait impls for `alloc` types (feature `alloc`): `Vec`, `String`, `Box`, `BTreeMap`, and
//! `Vec<u8>` as an output. They live here because Rust's orphan rule requires it; applications
//! reach them through the `bebop-runtime` crate.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::{Decode, Encode, Error, Reader, Sink, WireSize};

/// The most elements a `Vec` reserves up front for zero-sized wire elements; anything else is
/// bounded by the input length already.
const MAX_EMPTY_PREALLOC: usize = 1024;

impl WireSize for String {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for String {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        <&str>::decode(reader).map(String::from)
    }
}

impl Encode for String {
    #[inline]
    fn encoded_size(&self) -> usize {
        self.as_str().encoded_size()
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.as_str().encode(sink)
    }
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        self.as_str().encode_field(tag, sink)
    }
}

impl<T> WireSize for Vec<T> {
    const MIN_SIZE: usize = 4;
}

/// A dynamic array. Reserves no more than the input can hold, so a short hostile input cannot
/// make it allocate much.
impl<'a, T: Decode<'a>> Decode<'a> for Vec<T> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = reader.read_length(T::MIN_SIZE)?;
        if T::MIN_SIZE == 0 {
            reader.charge_empty(len)?;
        }
        let mut out = Vec::new();
        T::extend_vec(reader, len, &mut out)?;
        Ok(out)
    }
}

/// Decodes `count` elements onto `out` (the default element-by-element loop).
pub(crate) fn extend_vec_default<'a, T: Decode<'a>>(
    reader: &mut Reader<'a>,
    count: usize,
    out: &mut Vec<T>,
) -> Result<(), Error> {
    let reserve = if T::MIN_SIZE == 0 {
        count.min(MAX_EMPTY_PREALLOC)
    } else {
        count
    };
    out.reserve(reserve);
    reader.nested(|r| {
        for _ in 0..count {
            out.push(T::decode(r)?);
        }
        Ok(())
    })
}

impl<T: Encode> Encode for Vec<T> {
    #[inline]
    fn encoded_size(&self) -> usize {
        self.as_slice().encoded_size()
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.as_slice().encode(sink)
    }
}

impl<T: WireSize> WireSize for Box<T> {
    const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
    const MIN_SIZE: usize = T::MIN_SIZE;
}

impl<'a, T: Decode<'a>> Decode<'a> for Box<T> {
    const ALWAYS_VALID: bool = T::ALWAYS_VALID;
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        T::decode(reader).map(Box::new)
    }
}

impl<T: Encode> Encode for Box<T> {
    #[inline]
    fn encoded_size(&self) -> usize {
        (**self).encoded_size()
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        (**self).encode(sink)
    }
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        (**self).encode_field(tag, sink)
    }
}

impl<K, V> WireSize for BTreeMap<K, V> {
    const MIN_SIZE: usize = 4;
}

/// A map; when a key occurs more than once, the last value wins.
impl<'a, K: Decode<'a> + Ord, V: Decode<'a>> Decode<'a> for BTreeMap<K, V> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = reader.read_length(K::MIN_SIZE + V::MIN_SIZE)?;
        if K::MIN_SIZE + V::MIN_SIZE == 0 {
            reader.charge_empty(len)?;
        }
        let mut out = BTreeMap::new();
        reader.nested(|r| {
            for _ in 0..len {
                let k = K::decode(r)?;
                let v = V::decode(r)?;
                out.insert(k, v);
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// Encodes the entries in ascending key order, so equal maps give equal bytes.
impl<K: Encode, V: Encode> Encode for BTreeMap<K, V> {
    fn encoded_size(&self) -> usize {
        4 + self
            .iter()
            .map(|(k, v)| k.encoded_size() + v.encoded_size())
            .sum::<usize>()
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        for (k, v) in self {
            k.encode(sink)?;
            v.encode(sink)?;
        }
        Ok(())
    }
}

/// Appends to the vector; message and union lengths are patched in place.
impl Sink for Vec<u8> {
    type Error = Error;

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn write_prefixed(
        &mut self,
        _body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let at = self.len();
        self.extend_from_slice(&[0; 4]);
        body(self)?;
        let len = self.len() - at - 4;
        let len32 = u32::try_from(len)
            .map_err(|_| Error::new(crate::ErrorKind::TooLarge, at).with_detail(len as u64))?;
        self[at..at + 4].copy_from_slice(&len32.to_le_bytes());
        Ok(())
    }
}
