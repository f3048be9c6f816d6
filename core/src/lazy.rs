//! [`Lazy`]: one value kept as validated bytes and decoded on access, which lets view types
//! be recursive without a heap.

use core::fmt;

use crate::{Decode, Encode, Error, Reader, Sink, WireSize};

/// A value of `T` held as its validated wire bytes (when decoded) or as a reference to a
/// caller's value (when built), decoded on each [`get`](Self::get).
///
/// Generated views use it where a message refers to itself, such as
/// `message Node { next(1): Node; }`: the view `Node<'a>` holds `Option<Lazy<'a, Node<'a>>>`,
/// whose size does not depend on `Node`.
///
/// ```
/// use bebop_core::{Decode, Encode, Lazy};
///
/// let lazy = Lazy::<&str>::from_bytes(b"\x02\0\0\0hi\0")?;
/// assert_eq!(lazy.get()?, "hi");
/// assert_eq!(lazy.wire_bytes(), Some(&b"\x02\0\0\0hi\0"[..]));
///
/// let built = Lazy::from_ref(&"hi");
/// assert_eq!(built, lazy);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct Lazy<'a, T> {
    repr: Repr<'a, T>,
}

enum Repr<'a, T> {
    Wire(&'a [u8]),
    Ref(&'a T),
}

impl<T> Clone for Lazy<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Lazy<'_, T> {}
impl<T> Clone for Repr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Repr<'_, T> {}

impl<'a, T> Lazy<'a, T> {
    /// Wraps a caller's value, for encoding.
    pub const fn from_ref(value: &'a T) -> Self {
        Lazy {
            repr: Repr::Ref(value),
        }
    }

    /// The value's wire bytes when it was decoded.
    pub const fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire(bytes) => Some(bytes),
            Repr::Ref(_) => None,
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Lazy<'a, T> {
    /// Decodes the value. For a `Lazy` produced by decoding, the bytes were validated then and
    /// this does not fail; the `Result` is there because `T::decode` is arbitrary code.
    pub fn get(&self) -> Result<T, Error> {
        match self.repr {
            Repr::Wire(bytes) => T::decode(&mut Reader::trusted(bytes)),
            Repr::Ref(value) => Ok(value.clone()),
        }
    }
}

impl<T: WireSize> WireSize for Lazy<'_, T> {
    const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
    const MIN_SIZE: usize = T::MIN_SIZE;
}

impl<'a, T: Decode<'a>> Decode<'a> for Lazy<'a, T> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let bytes = reader.span::<T>()?;
        Ok(Lazy {
            repr: Repr::Wire(bytes),
        })
    }
}

impl<T: Encode> Encode for Lazy<'_, T> {
    fn encoded_size(&self) -> usize {
        match self.repr {
            Repr::Wire(bytes) => bytes.len(),
            Repr::Ref(value) => value.encoded_size(),
        }
    }

    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        match self.repr {
            Repr::Wire(bytes) => sink.write(bytes),
            Repr::Ref(value) => value.encode(sink),
        }
    }
}

impl<'a, T: Decode<'a> + Clone + PartialEq> PartialEq for Lazy<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        match (self.get(), other.get()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl<'a, T: Decode<'a> + Clone + fmt::Debug> fmt::Debug for Lazy<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Ok(value) => value.fmt(f),
            Err(e) => write!(f, "<{e}>"),
        }
    }
}

#[cfg(feature = "defmt")]
impl<'a, T: Decode<'a> + Clone + defmt::Format> defmt::Format for Lazy<'a, T> {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self.get() {
            Ok(value) => defmt::write!(f, "{}", value),
            Err(e) => defmt::write!(f, "<{}>", e),
        }
    }
}
