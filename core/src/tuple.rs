//! Pairs: a `(K, V)` encodes as `K` then `V`, so a slice or `Vec` of pairs has exactly the wire
//! form of a map, entries in order. Owned code uses `Vec<(K, V)>` where a map's entry order
//! must survive a round trip.

use crate::{Decode, Encode, Error, FixedSize, Reader, Sink, WireSize};

impl<K: WireSize, V: WireSize> WireSize for (K, V) {
    const FIXED_SIZE: Option<usize> = match (K::FIXED_SIZE, V::FIXED_SIZE) {
        (Some(k), Some(v)) => Some(k + v),
        _ => None,
    };
    const MIN_SIZE: usize = K::MIN_SIZE + V::MIN_SIZE;
}

impl<K: FixedSize, V: FixedSize> FixedSize for (K, V) {
    const SIZE: usize = K::SIZE + V::SIZE;
}

impl<'a, K: Decode<'a>, V: Decode<'a>> Decode<'a> for (K, V) {
    const ALWAYS_VALID: bool = K::ALWAYS_VALID && V::ALWAYS_VALID;
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        Ok((K::decode(reader)?, V::decode(reader)?))
    }
    #[inline]
    fn skip(reader: &mut Reader<'a>) -> Result<(), Error> {
        K::skip(reader)?;
        V::skip(reader)
    }
}

impl<K: Encode, V: Encode> Encode for (K, V) {
    #[inline]
    fn encoded_size(&self) -> usize {
        self.0.encoded_size() + self.1.encoded_size()
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.0.encode(sink)?;
        self.1.encode(sink)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Array, Decode, Encode, Map, WireSize};

    #[test]
    fn pairs_have_the_wire_form_of_map_entries() {
        let entries = [(1u8, 100i32), (2, 200)];
        let mut a = [0u8; 14];
        let mut b = [0u8; 14];
        Map::from_slice(&entries).encode_into(&mut a).unwrap();
        entries[..].encode_into(&mut b).unwrap();
        assert_eq!(a, b);
        let back = Array::<(u8, i32)>::from_bytes(&a).unwrap();
        assert!(back.iter().eq(entries));
        assert_eq!(<(u8, i32)>::FIXED_SIZE, Some(5));
    }
}
