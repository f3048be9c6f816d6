//! The traits every Bebop type implements: [`WireSize`], [`Decode`], [`Encode`] and
//! [`FixedSize`].

use crate::{Error, ErrorKind, Limits, Reader, Sink, SliceWriter};

/// Static facts about a type's wire size, used to reject impossible lengths before reading
/// and to size fixed records at compile time.
pub trait WireSize {
    /// `Some(n)` when every value of the type encodes to exactly `n` bytes.
    const FIXED_SIZE: Option<usize> = None;
    /// The fewest bytes any value of the type encodes to.
    const MIN_SIZE: usize;
}

impl<T: WireSize + ?Sized> WireSize for &T {
    const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
    const MIN_SIZE: usize = T::MIN_SIZE;
}

/// Types whose every value has the same wire size, known at compile time.
///
/// ```
/// use bebop_core::{FixedSize, Uuid, Timestamp};
///
/// assert_eq!(<u32 as FixedSize>::SIZE, 4);
/// assert_eq!(Timestamp::SIZE, 16);
/// assert_eq!(<[Uuid; 2]>::SIZE, 32);
/// let _buf = [0u8; Timestamp::SIZE];
/// ```
pub trait FixedSize: WireSize {
    /// The wire size of every value.
    const SIZE: usize;
}

/// Decoding from borrowed bytes.
///
/// `'a` is the lifetime of the input: views such as `&'a str` and [`Array<'a, T>`](crate::Array)
/// point into it instead of copying. Decoding validates everything (bounds, UTF-8, NUL
/// terminators, enum values, discriminators, nesting and element limits), so a decoded value
/// can be read without further checks.
///
/// Implementations must decode as a function of the bytes: bytes that decoded once decode
/// again to an equal value, also through a reader made for bytes already validated
/// ([`Reader::is_validated`]). Views rely on it to hand out values without a `Result`
/// ([`Array::iter`](crate::Array::iter), [`Lazy::get`](crate::Lazy::get)).
///
/// ```
/// use bebop_core::{Decode, ErrorKind};
///
/// assert_eq!(<&str>::from_bytes(b"\x05\0\0\0hello\0"), Ok("hello"));
/// // The whole input must be one value.
/// let err = u16::from_bytes(&[1, 0, 0]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::TrailingBytes);
/// ```
pub trait Decode<'a>: WireSize + Sized {
    /// True when every `FIXED_SIZE`-byte pattern is a valid value, decoding it reads exactly
    /// those bytes, and it touches neither depth nor budget (integers, floats, uuids and
    /// structs made only of such fields). Arrays of such types are views created in O(1).
    const ALWAYS_VALID: bool = false;

    /// Reads one value from `reader`.
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error>;

    /// Moves `reader` past one value whose bytes an earlier decode validated, as cheaply as
    /// the wire format allows: fixed-size values and values with a length prefix (strings,
    /// byte arrays, messages, unions) are hopped over without being read.
    ///
    /// Views call this when they re-read their own validated bytes (iterating an array of
    /// records must find where each record's nested arrays end), so that a walk over a
    /// decoded view reads each byte about once. On bytes nobody validated it may accept what
    /// [`decode`](Self::decode) rejects; it still never panics. The default decodes the value
    /// and drops it, or takes `FIXED_SIZE` bytes.
    ///
    /// ```
    /// use bebop_core::{Decode, Reader};
    ///
    /// let mut r = Reader::new(b"\x02\0\0\0hi\0\x07");
    /// <&str>::skip(&mut r)?;
    /// assert_eq!(r.read_u8()?, 7);
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    #[inline]
    fn skip(reader: &mut Reader<'a>) -> Result<(), Error> {
        match Self::FIXED_SIZE {
            Some(size) => reader.take(size).map(drop),
            None => Self::decode(reader).map(drop),
        }
    }

    /// Validates the next value exactly as [`decode`](Self::decode) does, without building
    /// it: how arrays and maps check their elements when decoded (their views decode each
    /// element again when it is read). An implementation must accept what `decode` accepts,
    /// fail with the same error, and leave the reader where `decode` leaves it.
    ///
    /// Generated message and union views check field by field, so that validating an array
    /// of them assembles no view. The default decodes the value and drops it.
    #[doc(hidden)]
    #[inline]
    fn check(reader: &mut Reader<'a>) -> Result<(), Error> {
        Self::decode(reader).map(drop)
    }

    /// True when [`check`](Self::check) is the type's own, not the default: where it is not,
    /// arrays decode their elements instead (the same work; see `Reader::check_elements`).
    #[doc(hidden)]
    const OWN_CHECK: bool = false;

    /// Decodes one value of a fixed, non-zero size from exactly its wire bytes, which an
    /// earlier decode validated: how views iterate arrays of fixed-size elements.
    ///
    /// Scalars override it with a conversion that cannot fail, so that a loop over an array
    /// of them has no early exit and compiles to vector code whatever the caller's loop
    /// inlines: reading every bfloat16 of a 64 KiB to 4 MiB record through
    /// [`Array::iter`](crate::Array::iter) went from 52-61% of `memcpy`'s bandwidth to
    /// 76-89% (`benches/workloads`, "Bandwidth against memcpy").
    #[doc(hidden)]
    #[inline(always)]
    fn decode_exact(bytes: &'a [u8]) -> Option<Self> {
        Self::decode(&mut Reader::trusted(bytes)).ok()
    }

    /// Decodes `bytes` as exactly one value under [`Limits::DEFAULT`].
    #[inline]
    fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::from_bytes_with_limits(bytes, Limits::DEFAULT)
    }

    /// Decodes `bytes` as exactly one value under the given limits.
    // Inline, so that the reader lives in registers and the value is built where the caller
    // keeps it. Out of line, the value came back through memory and was copied with wider
    // loads than the stores that wrote it, which stalls store forwarding: OrderSmall
    // decode + walk took 20.7 ns out of line and 8.2 ns inlined (default release profile).
    #[inline]
    fn from_bytes_with_limits(bytes: &'a [u8], limits: Limits) -> Result<Self, Error> {
        let mut reader = Reader::with_limits(bytes, limits);
        let value = Self::decode(&mut reader)?;
        reader.finish()?;
        Ok(value)
    }

    /// Decodes one value from the start of `bytes` and returns it with the number of bytes it
    /// used; whatever follows is left alone (for streams of back-to-back values).
    ///
    /// ```
    /// use bebop_core::Decode;
    ///
    /// let (v, used) = u16::decode_prefix(&[1, 0, 0xff]).unwrap();
    /// assert_eq!((v, used), (1, 2));
    /// ```
    fn decode_prefix(bytes: &'a [u8]) -> Result<(Self, usize), Error> {
        let mut reader = Reader::new(bytes);
        let value = Self::decode(&mut reader)?;
        Ok((value, reader.offset()))
    }

    /// Decodes `count` consecutive values onto `out`. Scalars override this with a bulk copy.
    #[cfg(feature = "alloc")]
    #[doc(hidden)]
    fn extend_vec(
        reader: &mut Reader<'a>,
        count: usize,
        out: &mut alloc::vec::Vec<Self>,
    ) -> Result<(), Error> {
        crate::owned::extend_vec_default(reader, count, out)
    }
}

/// The error of [`Encode::encode_into`] when `value` does not fit: the size it needs, worked
/// out only now, off the path of every encode that fits.
#[cfg(not(target_os = "none"))]
#[cold]
#[inline(never)]
fn too_small_for<T: Encode + ?Sized>(value: &T) -> Error {
    Error::new(ErrorKind::BufferTooSmall, 0).with_detail(value.encoded_size() as u64)
}

/// Encoding into a [`Sink`]: a caller-supplied buffer, an `embedded_io::Write`, or (with the
/// `bebop-runtime` crate) a `Vec` or `std::io::Write`.
///
/// ```
/// use bebop_core::{Encode, ErrorKind};
///
/// let mut buf = [0u8; 16];
/// let n = "hello".encode_into(&mut buf).unwrap();
/// assert_eq!(&buf[..n], b"\x05\0\0\0hello\0");
///
/// // Too small: the error says how much is needed.
/// let err = "hello".encode_into(&mut buf[..4]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::BufferTooSmall);
/// assert_eq!(err.needed(), Some(10));
/// ```
pub trait Encode: WireSize {
    /// The exact number of bytes [`encode`](Self::encode) writes.
    fn encoded_size(&self) -> usize;

    /// Writes the value to `sink`.
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error>;

    /// Encodes into the front of `buf` and returns the number of bytes written.
    ///
    /// When the value does not fit, the error ([`ErrorKind::BufferTooSmall`]) carries the
    /// size needed, and the front of `buf` may hold part of an encoding: treat it as garbage.
    ///
    /// On hosts the value is written in one pass, straight into `buf`, and sized only when it
    /// does not fit: sizing it first is a second walk over it, 20-30% of the instructions of
    /// encoding a tree or a JSON document (D51). On bare-metal targets (`target_os = "none"`)
    /// it is sized first, as flash counts more there: knowing that the buffer holds the whole
    /// value lets the compiler drop the bounds check of every write, which made the RPC server
    /// of the size report 900 bytes smaller on Cortex-M0.
    fn encode_into(&self, buf: &mut [u8]) -> Result<usize, Error> {
        #[cfg(target_os = "none")]
        {
            let needed = self.encoded_size();
            let Some(dst) = buf.get_mut(..needed) else {
                return Err(Error::new(ErrorKind::BufferTooSmall, 0).with_detail(needed as u64));
            };
            let mut writer = SliceWriter::new(dst);
            self.encode(&mut writer)?;
            Ok(writer.position())
        }
        #[cfg(not(target_os = "none"))]
        {
            let mut writer = SliceWriter::new(buf);
            match self.encode(&mut writer) {
                Ok(()) => Ok(writer.position()),
                Err(e) if e.kind() == ErrorKind::BufferTooSmall => Err(too_small_for(self)),
                Err(e) => Err(e),
            }
        }
    }

    /// Encodes into the front of `buf` and returns the written bytes.
    fn encode_to_slice<'b>(&self, buf: &'b mut [u8]) -> Result<&'b mut [u8], Error> {
        let n = self.encode_into(buf)?;
        Ok(&mut buf[..n])
    }

    /// Writes the value straight into an `embedded_io::Write`, without an intermediate
    /// buffer, and returns the number of bytes written.
    #[cfg(feature = "embedded-io")]
    fn encode_to_io<W: embedded_io::Write>(
        &self,
        writer: &mut W,
    ) -> Result<usize, crate::IoError<W::Error>> {
        let mut sink = crate::IoWriter::new(writer);
        self.encode(&mut sink)?;
        Ok(sink.written())
    }

    /// Writes a message field: `tag`, then the value ([`Sink::write_field`] calls this).
    /// Scalars and strings override it to write the tag together with their bytes or their
    /// length prefix, one write (one bounds check) fewer per field.
    #[doc(hidden)]
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        sink.write(&[tag])?;
        self.encode(sink)
    }

    /// Writes a run of values back to back. Scalars override this to write their bytes in
    /// one piece; everything else loops.
    #[doc(hidden)]
    #[inline]
    fn encode_many<S: Sink>(items: &[Self], sink: &mut S) -> Result<(), S::Error>
    where
        Self: Sized,
    {
        for item in items {
            item.encode(sink)?;
        }
        Ok(())
    }

    /// The encoded size of a run of values, in O(1) for fixed-size types.
    #[doc(hidden)]
    #[inline]
    fn encoded_size_many(items: &[Self]) -> usize
    where
        Self: Sized,
    {
        match Self::FIXED_SIZE {
            Some(size) => size * items.len(),
            None => items.iter().map(Encode::encoded_size).sum(),
        }
    }
}

impl<T: Encode + ?Sized> Encode for &T {
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

/// The wire size of a message field: its tag byte and value when present, nothing when absent.
/// For generated message encoders.
#[inline]
pub fn field_size<T: Encode>(field: &Option<T>) -> usize {
    match field {
        Some(v) => 1 + v.encoded_size(),
        None => 0,
    }
}
