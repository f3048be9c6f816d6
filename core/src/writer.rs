//! Where encoded bytes go: the [`Sink`] trait and the caller-buffer [`SliceWriter`].

use crate::{Encode, Error, ErrorKind};

/// A destination for encoded bytes.
///
/// Implementations exist for caller-supplied slices ([`SliceWriter`]), `embedded_io::Write`
/// ([`IoWriter`](crate::IoWriter), feature `embedded-io`) and, in the `bebop-runtime` crate, `Vec<u8>`
/// and `std::io::Write`. Generated encoders are generic over it.
pub trait Sink {
    /// The error a write can fail with; wire-level errors (a length over `u32::MAX`) convert
    /// into it.
    type Error: From<Error>;

    /// Appends `bytes`.
    fn write(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Writes a `u32` length prefix followed by what `body` writes; the prefix counts the
    /// body's bytes. This is how messages and unions are framed.
    ///
    /// Sinks that cannot seek call `body_size` to learn the length first (it must return
    /// exactly what `body` writes). Sinks that can patch their output, like [`SliceWriter`],
    /// write a placeholder and fill it in afterwards, so nested messages are sized only once.
    fn write_prefixed(
        &mut self,
        body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Self::Error>,
    ) -> Result<(), Self::Error>
    where
        Self: Sized,
    {
        let size = body_size();
        self.write_len(size)?;
        body(self)
    }

    /// Writes a length or count prefix, failing with [`ErrorKind::TooLarge`] over `u32::MAX`.
    #[inline]
    fn write_len(&mut self, len: usize) -> Result<(), Self::Error> {
        // Not through `length_prefix`: that form kept PersonSmall's whole encode from being
        // inlined into its caller (27% more instructions, D52).
        match u32::try_from(len) {
            Ok(n) => self.write(&n.to_le_bytes()),
            Err(_) => Err(Error::new(ErrorKind::TooLarge, 0)
                .with_detail(len as u64)
                .into()),
        }
    }

    /// Writes a present message field: its tag, then its value.
    #[inline]
    fn write_field<T: Encode + ?Sized>(&mut self, tag: u8, value: &T) -> Result<(), Self::Error>
    where
        Self: Sized,
    {
        value.encode_field(tag, self)
    }
}

/// The bytes of a `u32` length or count prefix; [`ErrorKind::TooLarge`] over `u32::MAX`.
#[inline]
pub(crate) fn length_prefix(len: usize) -> Result<[u8; 4], Error> {
    match u32::try_from(len) {
        Ok(n) => Ok(n.to_le_bytes()),
        Err(_) => Err(Error::new(ErrorKind::TooLarge, 0).with_detail(len as u64)),
    }
}

/// Encodes into a caller-supplied buffer.
///
/// A write that does not fit fails with [`ErrorKind::BufferTooSmall`] (detail: the position
/// that write needed to reach) and leaves the buffer's unused part alone. Most code calls
/// [`Encode::encode_into`], which reports the size the whole value needs instead; use a
/// `SliceWriter` directly to put several values back to back.
///
/// ```
/// use bebop_core::{Encode, SliceWriter};
///
/// let mut buf = [0u8; 16];
/// let mut w = SliceWriter::new(&mut buf);
/// 7u8.encode(&mut w)?;
/// "hi".encode(&mut w)?;
/// assert_eq!(w.written(), b"\x07\x02\0\0\0hi\0");
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Debug)]
pub struct SliceWriter<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> SliceWriter<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        SliceWriter { buf, pos: 0 }
    }

    /// How many bytes have been written.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    /// Gives back the written part of the buffer.
    pub fn into_written(self) -> &'b mut [u8] {
        &mut self.buf[..self.pos]
    }

    #[cold]
    fn too_small(&self, len: usize) -> Error {
        Error::new(ErrorKind::BufferTooSmall, self.pos).with_detail((self.pos + len) as u64)
    }
}

impl Sink for SliceWriter<'_> {
    type Error = Error;

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let end = self.pos + bytes.len();
        match self.buf.get_mut(self.pos..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.pos = end;
                Ok(())
            }
            None => Err(self.too_small(bytes.len())),
        }
    }

    fn write_prefixed(
        &mut self,
        _body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let at = self.pos;
        self.write(&[0; 4])?;
        body(self)?;
        let len = self.pos - at - 4;
        let len32 = u32::try_from(len)
            .map_err(|_| Error::new(ErrorKind::TooLarge, at).with_detail(len as u64))?;
        self.buf[at..at + 4].copy_from_slice(&len32.to_le_bytes());
        Ok(())
    }
}

/// A sink that only counts bytes: `encoded_size` by another route, used in tests to check
/// that size computations agree with what is written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SizeCounter {
    /// Bytes written so far.
    pub count: usize,
}

impl Sink for SizeCounter {
    type Error = Error;

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.count += bytes.len();
        Ok(())
    }

    fn write_prefixed(
        &mut self,
        body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // Check the promise `body_size` makes against what `body` writes.
        let promised = body_size();
        self.write_len(promised)?;
        let before = self.count;
        body(self)?;
        if self.count - before != promised {
            return Err(Error::new(ErrorKind::SizeMismatch, before).with_detail(promised as u64));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_regions_are_backpatched() {
        let mut buf = [0xEEu8; 12];
        let mut w = SliceWriter::new(&mut buf);
        w.write_prefixed(
            || unreachable!("a slice writer never asks for the size"),
            |w| {
                w.write(&[1, 2])?;
                w.write_prefixed(|| unreachable!(), |w| w.write(&[3]))
            },
        )
        .unwrap();
        assert_eq!(w.written(), &[7, 0, 0, 0, 1, 2, 1, 0, 0, 0, 3]);
    }

    #[test]
    fn failed_write_reports_position_and_need() {
        let mut buf = [0u8; 3];
        let mut w = SliceWriter::new(&mut buf);
        w.write(&[1, 2]).unwrap();
        let err = w.write(&[3, 4]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BufferTooSmall);
        assert_eq!(err.offset(), 2);
        assert_eq!(err.needed(), Some(4));
        assert_eq!(w.written(), &[1, 2]);
    }

    #[test]
    fn size_counter_catches_broken_size_promises() {
        let mut c = SizeCounter::default();
        let err = c.write_prefixed(|| 3, |c| c.write(&[1, 2])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SizeMismatch);
        let mut c = SizeCounter::default();
        c.write_prefixed(|| 2, |c| c.write(&[1, 2])).unwrap();
        assert_eq!(c.count, 6);
    }
}
