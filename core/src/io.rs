//! Encoding straight into an `embedded_io::Write` (feature `embedded-io`).

use crate::{Error, IoError, Sink};

/// A [`Sink`] over an `embedded_io::Write`: bytes go to the writer as they are produced, with
/// no intermediate buffer. Message and union lengths are computed before their bodies (the
/// writer cannot seek back), and checked against what the body writes.
///
/// ```
/// use bebop_core::{Encode, IoWriter};
///
/// // `&mut [u8]` is an embedded_io::Write.
/// let mut buf = [0u8; 10];
/// let mut out: &mut [u8] = &mut buf;
/// let n = "hello".encode_to_io(&mut out)?;
/// assert_eq!(n, 10);
/// assert_eq!(&buf, b"\x05\0\0\0hello\0");
/// # Ok::<(), bebop_core::IoError<embedded_io::SliceWriteError>>(())
/// ```
#[derive(Debug)]
pub struct IoWriter<'w, W> {
    inner: &'w mut W,
    written: usize,
}

impl<'w, W: embedded_io::Write> IoWriter<'w, W> {
    /// A sink writing into `inner`.
    pub fn new(inner: &'w mut W) -> Self {
        IoWriter { inner, written: 0 }
    }

    /// How many bytes have been written.
    pub fn written(&self) -> usize {
        self.written
    }
}

impl<W: embedded_io::Write> Sink for IoWriter<'_, W> {
    type Error = IoError<W::Error>;

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.inner.write_all(bytes).map_err(IoError::Io)?;
        self.written += bytes.len();
        Ok(())
    }

    fn write_prefixed(
        &mut self,
        body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Self::Error>,
    ) -> Result<(), Self::Error> {
        let promised = body_size();
        self.write_len(promised)?;
        let start = self.written;
        body(self)?;
        if self.written - start != promised {
            // The prefix already went out wrong: report it rather than carry on silently.
            return Err(IoError::Encode(
                Error::new(crate::ErrorKind::SizeMismatch, start).with_detail(promised as u64),
            ));
        }
        Ok(())
    }
}
