//! Encoding into growable outputs: `Vec<u8>` and (feature `std`) any `std::io::Write`.

use alloc::vec::Vec;

use bebop_core::{Encode, Error};

#[cfg(feature = "std")]
use crate::stdio::{self, StdWriter};

/// Encoding into growable outputs, for every [`Encode`] type.
pub trait EncodeExt: Encode {
    /// Encodes into a new `Vec<u8>` of exactly the right capacity.
    fn encode_to_vec(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(self.encoded_size());
        self.encode(&mut out)?;
        Ok(out)
    }

    /// Appends the encoding to `out` and returns how many bytes were added.
    fn append_to(&self, out: &mut Vec<u8>) -> Result<usize, Error> {
        let before = out.len();
        out.reserve(self.encoded_size());
        self.encode(out)?;
        Ok(out.len() - before)
    }

    /// Encodes into a `std::io::Write` without an intermediate buffer and returns the number
    /// of bytes written. Wrap unbuffered writers (files, sockets) in a `BufWriter`.
    #[cfg(feature = "std")]
    fn write_to<W: std::io::Write>(&self, writer: &mut W) -> std::io::Result<usize> {
        let mut sink = StdWriter::new(writer);
        self.encode(&mut sink).map_err(stdio::into_io_error)?;
        Ok(sink.written())
    }
}

impl<T: Encode + ?Sized> EncodeExt for T {}

/// Encodes `value` into a new `Vec<u8>`.
///
/// ```
/// assert_eq!(bebop_runtime::encode_to_vec("hi")?, b"\x02\0\0\0hi\0");
/// # Ok::<(), bebop_runtime::Error>(())
/// ```
pub fn encode_to_vec<T: Encode + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    value.encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::boxed::Box;
    use alloc::collections::BTreeMap;
    use alloc::string::String;
    use alloc::vec;
    use bebop_core::{Decode, ErrorKind, Map, Sink};

    #[test]
    fn vec_output_backpatches_message_lengths() {
        let mut out = Vec::new();
        out.write_prefixed(
            || unreachable!("Vec<u8> patches the prefix"),
            |o| {
                o.write_field(1, &42i32)?;
                o.write(&[0])
            },
        )
        .unwrap();
        assert_eq!(out, [6, 0, 0, 0, 1, 42, 0, 0, 0, 0]);
    }

    #[test]
    fn owned_types_round_trip() {
        let v: Vec<String> = vec!["ab".into(), "cde".into()];
        let bytes = v.encode_to_vec().unwrap();
        assert_eq!(
            bytes,
            [
                2, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0, 3, 0, 0, 0, b'c', b'd', b'e', 0
            ]
        );
        assert_eq!(Vec::<String>::from_bytes(&bytes).unwrap(), v);
        let nested: Vec<Vec<i32>> = vec![vec![1, 2], vec![3]];
        let bytes = nested.encode_to_vec().unwrap();
        assert_eq!(Vec::<Vec<i32>>::from_bytes(&bytes).unwrap(), nested);
        let boxed: Box<u16> = Box::new(7);
        assert_eq!(
            Box::<u16>::from_bytes(&boxed.encode_to_vec().unwrap()).unwrap(),
            boxed
        );
    }

    #[test]
    fn owned_map_keeps_the_last_duplicate() {
        // map[uint8, uint8] {1: 10, 1: 20}
        let bytes = [2, 0, 0, 0, 1, 10, 1, 20];
        let m = BTreeMap::<u8, u8>::from_bytes(&bytes).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[&1], 20);
        // The view keeps both, and its `get` agrees with the owned map.
        let view = Map::<u8, u8>::from_bytes(&bytes).unwrap();
        assert_eq!(view.len(), 2);
        assert_eq!(view.get(&1), Some(20));
    }

    #[test]
    fn hostile_counts_do_not_allocate_much() {
        // A vector claiming u32::MAX strings in 8 bytes fails before reserving anything.
        let bytes = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        let err = Vec::<String>::from_bytes(&bytes).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
    }
}
