//! The one error type of the wire layer.
//!
//! Every decode and encode failure is an [`Error`]: a [`ErrorKind`], the byte offset where it
//! happened, and for some kinds a detail value (the offending enum value, the size a buffer
//! would have needed, ...). It is `Copy`, 24 bytes on 64-bit targets, and needs no allocation.

use core::fmt;

/// What went wrong while decoding or encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended inside a value. Detail: how many more bytes the value needed.
    UnexpectedEnd,
    /// A length or count prefix claims more bytes than the input (or the enclosing message or
    /// union) has left. Detail: the claimed length or count.
    LengthOutOfBounds,
    /// A string's bytes are not valid UTF-8. The offset is that of the first invalid byte.
    InvalidUtf8,
    /// A string is not followed by its terminating `0x00` byte. Detail: the byte found instead.
    MissingNul,
    /// An enum holds a value none of its members has. Detail: the value (as its unsigned bits).
    InvalidEnumValue,
    /// A flags enum holds bits none of its members declares. Detail: the unknown bits.
    InvalidFlags,
    /// A union's discriminator names no branch. Detail: the discriminator.
    InvalidDiscriminator,
    /// A timestamp's nanoseconds or UTC offset are out of range.
    InvalidTimestamp,
    /// A duration's nanoseconds are out of range or their sign disagrees with the seconds.
    InvalidDuration,
    /// Values are nested deeper than [`Limits::max_depth`](crate::Limits::max_depth) allows.
    TooDeep,
    /// The input declares more zero-sized elements than
    /// [`Limits::max_empty_elements`](crate::Limits::max_empty_elements) allows.
    BudgetExhausted,
    /// Bytes are left over after a complete value. Detail: how many.
    TrailingBytes,
    /// The output buffer is too small. Detail: the size the whole value needs (from
    /// [`Encode::encode_into`](crate::Encode::encode_into)), or the size needed up to the
    /// failed write (from a bare [`SliceWriter`](crate::SliceWriter)).
    BufferTooSmall,
    /// A value is too large for the wire format (a length over `u32::MAX`). Detail: the length.
    TooLarge,
    /// A fixed-capacity container (such as `heapless::Vec`) cannot hold the value. Detail: the
    /// capacity needed.
    CapacityExceeded,
    /// A length-prefixed value wrote a different number of bytes than its size computation
    /// promised (a bug in an `Encode` impl, reported instead of writing a corrupt prefix).
    /// Detail: the promised size.
    SizeMismatch,
}

impl ErrorKind {
    /// A short, lower-case description of the kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnexpectedEnd => "unexpected end of input",
            ErrorKind::LengthOutOfBounds => "length prefix out of bounds",
            ErrorKind::InvalidUtf8 => "invalid UTF-8 in string",
            ErrorKind::MissingNul => "string not terminated by NUL",
            ErrorKind::InvalidEnumValue => "invalid enum value",
            ErrorKind::InvalidFlags => "unknown flag bits",
            ErrorKind::InvalidDiscriminator => "unknown union discriminator",
            ErrorKind::InvalidTimestamp => "invalid timestamp",
            ErrorKind::InvalidDuration => "invalid duration",
            ErrorKind::TooDeep => "nesting too deep",
            ErrorKind::BudgetExhausted => "too many zero-sized elements",
            ErrorKind::TrailingBytes => "trailing bytes after value",
            ErrorKind::BufferTooSmall => "output buffer too small",
            ErrorKind::TooLarge => "value too large for the wire format",
            ErrorKind::CapacityExceeded => "capacity exceeded",
            ErrorKind::SizeMismatch => "encoded size differs from computed size",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decode or encode error: its kind, the byte offset where it was found, and a detail value
/// whose meaning depends on the kind (see [`ErrorKind`]).
///
/// ```
/// use bebop_core::{Decode, ErrorKind};
///
/// // A string that claims 9 bytes but has 2.
/// let err = <&str>::from_bytes(&[9, 0, 0, 0, b'h', b'i']).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
/// assert_eq!(err.offset(), 0);
/// assert_eq!(err.detail(), 9);
/// assert_eq!(err.to_string(), "length prefix out of bounds at byte 0 (9)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Error {
    kind: ErrorKind,
    /// The input ended before the value: a longer input could complete it.
    incomplete: bool,
    /// With `incomplete`: how many more bytes are needed at least, saturated at `u32::MAX`;
    /// 0 when unknown.
    missing: u32,
    offset: usize,
    detail: u64,
}

impl Error {
    /// An error of `kind` at byte `offset`, without detail.
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Error {
            kind,
            incomplete: false,
            missing: 0,
            offset,
            detail: 0,
        }
    }

    /// The same error marked as *incomplete input*: the bytes so far are a valid beginning
    /// and at least `missing` more (when known) would be needed. Set by [`Reader`](crate::Reader)
    /// when a value runs past the end of the whole input rather than past an enclosing
    /// length.
    #[must_use]
    pub const fn incomplete(mut self, missing: Option<usize>) -> Self {
        self.incomplete = true;
        self.missing = match missing {
            Some(n) if n > u32::MAX as usize => u32::MAX,
            Some(n) => n as u32,
            None => 0,
        };
        self
    }

    /// The same error with its detail value set.
    #[must_use]
    pub const fn with_detail(mut self, detail: u64) -> Self {
        self.detail = detail;
        self
    }

    /// What went wrong.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The byte offset in the input (decoding) or output (encoding) where it went wrong.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The kind-specific detail value (0 when the kind has none).
    pub const fn detail(&self) -> u64 {
        self.detail
    }

    /// True when the input ended before the value did, so that more bytes could complete it:
    /// a reader of a byte stream should wait for more input. False for corrupt input, which
    /// no amount of further bytes repairs (a bad UTF-8 byte, an unknown enum value, a field
    /// running past the end of its enclosing message...).
    ///
    /// ```
    /// use bebop_core::{Decode, ErrorKind};
    ///
    /// // A 5-byte string of which 3 bytes have arrived.
    /// let err = <&str>::from_bytes(&[5, 0, 0, 0, b'a', b'b', b'c']).unwrap_err();
    /// assert!(err.is_incomplete());
    /// // At least the two missing characters (the NUL is asked for once they are there).
    /// assert_eq!(err.bytes_missing(), Some(2));
    ///
    /// // A whole 1-byte string whose byte is not UTF-8: corrupt, more bytes would not help.
    /// let err = <&str>::from_bytes(&[1, 0, 0, 0, 0xff, 0]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidUtf8);
    /// assert!(!err.is_incomplete());
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    pub const fn is_incomplete(&self) -> bool {
        self.incomplete
    }

    /// For [incomplete](Self::is_incomplete) input: how many more bytes the value needs at
    /// least (the value may need more once they arrive), when the decoder could tell.
    pub const fn bytes_missing(&self) -> Option<usize> {
        match (self.incomplete, self.missing) {
            (true, n) if n > 0 => Some(n as usize),
            _ => None,
        }
    }

    /// For [`ErrorKind::BufferTooSmall`] and [`ErrorKind::CapacityExceeded`]: the size needed.
    pub const fn needed(&self) -> Option<usize> {
        match self.kind {
            ErrorKind::BufferTooSmall | ErrorKind::CapacityExceeded => Some(self.detail as usize),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)?;
        match self.kind {
            ErrorKind::UnexpectedEnd => write!(f, " ({} more bytes needed)", self.detail),
            ErrorKind::InvalidFlags => write!(f, " (bits {:#x})", self.detail),
            ErrorKind::BufferTooSmall | ErrorKind::CapacityExceeded => {
                write!(f, " ({} bytes needed)", self.detail)
            }
            ErrorKind::LengthOutOfBounds
            | ErrorKind::InvalidEnumValue
            | ErrorKind::InvalidDiscriminator
            | ErrorKind::TrailingBytes
            | ErrorKind::TooLarge
            | ErrorKind::SizeMismatch => write!(f, " ({})", self.detail),
            _ => Ok(()),
        }
    }
}

impl core::error::Error for Error {}

/// A failure while encoding into an I/O writer: the writer's own error, or a wire-level one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IoError<E> {
    /// The writer failed.
    Io(E),
    /// The value cannot be encoded (a length over `u32::MAX`, an inconsistent size).
    Encode(Error),
}

impl<E> From<Error> for IoError<E> {
    fn from(e: Error) -> Self {
        IoError::Encode(e)
    }
}

impl<E: fmt::Debug> fmt::Display for IoError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoError::Io(e) => write!(f, "I/O error: {e:?}"),
            IoError::Encode(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for IoError<E> {}

#[cfg(feature = "embedded-io")]
impl<E: embedded_io::Error> embedded_io::Error for IoError<E> {
    fn kind(&self) -> embedded_io::ErrorKind {
        match self {
            IoError::Io(e) => e.kind(),
            IoError::Encode(_) => embedded_io::ErrorKind::InvalidData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn error_is_small_and_copy() {
        fn assert_copy<T: Copy + Send + Sync + 'static>() {}
        assert_copy::<Error>();
        assert!(core::mem::size_of::<Error>() <= 24);
    }

    #[test]
    fn display_names_kind_offset_and_detail() {
        let e = Error::new(ErrorKind::InvalidEnumValue, 7).with_detail(42);
        assert_eq!(e.to_string(), "invalid enum value at byte 7 (42)");
        let e = Error::new(ErrorKind::BufferTooSmall, 0).with_detail(12);
        assert_eq!(e.needed(), Some(12));
        assert_eq!(
            e.to_string(),
            "output buffer too small at byte 0 (12 bytes needed)"
        );
        let e = Error::new(ErrorKind::InvalidUtf8, 3);
        assert_eq!(e.to_string(), "invalid UTF-8 in string at byte 3");
        assert_eq!(e.needed(), None);
    }
}
