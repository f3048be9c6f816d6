//! Strings, byte arrays and plain Rust arrays and slices.
//!
//! - `string` decodes to `&'a str` (validated UTF-8, NUL checked, no copy) and encodes from
//!   `str`.
//! - `byte[]` decodes to `&'a [u8]`; any `[T]` encodes as a dynamic array (`u32` count, then
//!   the elements).
//! - `T[N]` decodes to `[T; N]` (copied) or `&'a [u8; N]` (for bytes, no copy), and `[T; N]`
//!   encodes as a fixed array (elements only, no count).

use crate::{Decode, Encode, Error, ErrorKind, FixedSize, Reader, Sink, WireSize};

impl WireSize for str {
    const MIN_SIZE: usize = 5;
}

impl Encode for str {
    #[inline]
    fn encoded_size(&self) -> usize {
        self.len() + 5
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        sink.write(self.as_bytes())?;
        sink.write(&[0])
    }
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        let [a, b, c, d] = crate::writer::length_prefix(self.len())?;
        sink.write(&[tag, a, b, c, d])?;
        sink.write(self.as_bytes())?;
        sink.write(&[0])
    }
}

impl<'a> Decode<'a> for &'a str {
    // Always inlined on 64-bit targets: left to itself the compiler called it out of line from
    // records with several strings, and the call cost more than the work (PersonSmall, two
    // strings, decoded in 13.4 ns that way and in 4.6 ns inlined). The body is small: bounds,
    // the NUL, and the ASCII check of short strings; longer or non-ASCII text is checked out
    // of line. Microcontrollers, built for size, leave the choice to the compiler.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        // The prefix counts the UTF-8 bytes; the NUL terminator follows them.
        let len = reader.read_length(1)?;
        let start = reader.offset();
        let bytes = reader.take(len)?;
        let nul = reader.read_u8()?;
        if nul != 0 {
            return Err(missing_nul(start + len, nul));
        }
        crate::utf8::from_utf8(bytes).map_err(|e| invalid_utf8(start, e))
    }

    /// Hops over the text and its NUL without checking them.
    #[inline]
    fn skip(reader: &mut Reader<'a>) -> Result<(), Error> {
        let len = reader.read_u32()? as usize;
        reader.take(len.saturating_add(1)).map(drop)
    }
}

/// The error for a string whose terminator at `at` is `found`, not NUL.
#[cold]
fn missing_nul(at: usize, found: u8) -> Error {
    Error::new(ErrorKind::MissingNul, at).with_detail(u64::from(found))
}

/// The error for a string starting at `start` that is not UTF-8.
#[cold]
fn invalid_utf8(start: usize, e: core::str::Utf8Error) -> Error {
    Error::new(ErrorKind::InvalidUtf8, start + e.valid_up_to())
}

impl<T> WireSize for [T] {
    const MIN_SIZE: usize = 4;
}

/// A slice encodes as a dynamic array: a `u32` count, then the elements.
impl<T: Encode> Encode for [T] {
    #[inline]
    fn encoded_size(&self) -> usize {
        4 + T::encoded_size_many(self)
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        T::encode_many(self, sink)
    }
}

/// `byte[]` without a copy.
impl<'a> Decode<'a> for &'a [u8] {
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = reader.read_length(1)?;
        reader.take(len)
    }
}

impl<T: WireSize, const N: usize> WireSize for [T; N] {
    const FIXED_SIZE: Option<usize> = match T::FIXED_SIZE {
        Some(size) => Some(size * N),
        None => None,
    };
    const MIN_SIZE: usize = T::MIN_SIZE * N;
}

impl<T: FixedSize, const N: usize> FixedSize for [T; N] {
    const SIZE: usize = T::SIZE * N;
}

/// An array encodes as a fixed array: its elements, no count.
impl<T: Encode, const N: usize> Encode for [T; N] {
    #[inline]
    fn encoded_size(&self) -> usize {
        T::encoded_size_many(self)
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        T::encode_many(self, sink)
    }
}

/// A fixed array decoded into a Rust array (the elements are copied; see
/// [`FixedArray`](crate::FixedArray) for a view and `&'a [u8; N]` for bytes).
impl<'a, T: Decode<'a> + Default, const N: usize> Decode<'a> for [T; N] {
    const ALWAYS_VALID: bool = T::ALWAYS_VALID;

    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        if T::FIXED_SIZE == Some(0) {
            reader.charge_empty(N)?;
        }
        let mut failed = None;
        let out = core::array::from_fn(|_| {
            if failed.is_some() {
                return T::default();
            }
            T::decode(reader).unwrap_or_else(|e| {
                failed = Some(e);
                T::default()
            })
        });
        match failed {
            None => Ok(out),
            Some(e) => Err(e),
        }
    }
}

/// `byte[N]` without a copy.
impl<'a, const N: usize> Decode<'a> for &'a [u8; N] {
    const ALWAYS_VALID: bool = true;
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        reader.read_array::<N>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_strings() {
        let mut buf = [0u8; 16];
        let n = "hello".encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"\x05\0\0\0hello\0");
        assert_eq!(<&str>::from_bytes(&buf[..n]), Ok("hello"));
        let n = "".encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[0, 0, 0, 0, 0]);
        assert_eq!(<&str>::from_bytes(&buf[..n]), Ok(""));
    }

    #[test]
    fn string_errors_point_at_the_problem() {
        // Missing NUL: the byte after the content is 'x'.
        let err = <&str>::from_bytes(b"\x02\0\0\0hix").unwrap_err();
        assert_eq!((err.kind(), err.offset()), (ErrorKind::MissingNul, 6));
        // Content fits but the NUL does not.
        let err = <&str>::from_bytes(b"\x02\0\0\0hi").unwrap_err();
        assert_eq!(
            (err.kind(), err.offset(), err.detail()),
            (ErrorKind::UnexpectedEnd, 6, 1)
        );
        // Invalid UTF-8 at the second content byte.
        let err = <&str>::from_bytes(b"\x02\0\0\0a\xff\0").unwrap_err();
        assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, 5));
        // Interior NUL bytes are fine: the length delimits the string.
        assert_eq!(<&str>::from_bytes(b"\x03\0\0\0a\0b\0"), Ok("a\0b"));
    }

    #[test]
    fn byte_arrays_borrow_their_input() {
        let input = [3, 0, 0, 0, 0xde, 0xad, 0xbe];
        let bytes = <&[u8]>::from_bytes(&input).unwrap();
        assert_eq!(bytes, &[0xde, 0xad, 0xbe]);
        assert!(core::ptr::eq(bytes.as_ptr(), input[4..].as_ptr()));
        let fixed = <&[u8; 4]>::from_bytes(&[0xde, 0xad, 0xbe, 0xef]).unwrap();
        assert_eq!(fixed, &[0xde, 0xad, 0xbe, 0xef]);
    }

    #[test]
    fn slices_and_arrays_encode_dynamic_and_fixed() {
        let mut buf = [0u8; 32];
        let n = [1i32, 2, 3][..].encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        let n = [0xdeu8, 0xad, 0xbe, 0xef].encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(<[u16; 2]>::from_bytes(&[1, 0, 2, 0]), Ok([1, 2]));
        let err = <[u16; 2]>::from_bytes(&[1, 0, 2]).unwrap_err();
        assert_eq!((err.kind(), err.offset()), (ErrorKind::UnexpectedEnd, 2));
    }
}
