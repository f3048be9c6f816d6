//! [`Lazy`]: one value kept as validated bytes and decoded on access, which lets view types
//! be recursive without a heap.

use core::fmt;

use crate::lent::LentOne;
use crate::{Decode, Encode, Error, Reader, Sink, WireSize};

/// A value of `T` held as its validated wire bytes (when decoded), as a reference to a
/// caller's value (when built), or lent by an owned value ([`from_owned`](Self::from_owned));
/// decoded on each [`get`](Self::get).
///
/// Generated views use it where a message refers to itself, such as
/// `message Node { next(1): Node; }`: the view `Node<'a>` holds `Option<Lazy<'a, Node<'a>>>`,
/// whose size does not depend on `Node`.
///
/// ```
/// use bebop_core::{Decode, Encode, Lazy};
///
/// let lazy = Lazy::<&str>::from_bytes(b"\x02\0\0\0hi\0")?;
/// assert_eq!(lazy.get(), "hi");
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
    Lent(LentOne<'a, T>),
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
            Repr::Ref(_) | Repr::Lent(_) => None,
        }
    }

    pub(crate) const fn from_lent(value: LentOne<'a, T>) -> Self {
        Lazy {
            repr: Repr::Lent(value),
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Lazy<'a, T> {
    /// The value: decoded from its bytes, which were validated when the enclosing value was
    /// decoded, so this cannot fail; or the caller's value; or the owned value's view.
    ///
    /// # Panics
    ///
    /// Never for the runtime's and the generated types. Decoding is a function of the bytes
    /// (the [`Decode`] contract), so bytes that decoded once decode again; only a `Decode`
    /// impl that breaks that contract (one that fails the second time on the same bytes)
    /// reaches the panic. [`try_get`](Self::try_get) reports that case as an error instead.
    pub fn get(&self) -> T {
        match self.try_get() {
            Ok(value) => value,
            Err(_) => panic!("Lazy::get: a Decode impl rejected bytes it had accepted"),
        }
    }

    /// [`get`](Self::get), with a `Decode` impl that breaks its contract reported as the
    /// error it returned rather than as a panic.
    pub fn try_get(&self) -> Result<T, Error> {
        match self.repr {
            Repr::Wire(bytes) => T::decode(&mut Reader::trusted(bytes)),
            Repr::Ref(value) => Ok(value.clone()),
            Repr::Lent(owned) => Ok(owned.get()),
        }
    }
}

impl<T: WireSize> WireSize for Lazy<'_, T> {
    const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
    const MIN_SIZE: usize = T::MIN_SIZE;
}

impl<'a, T: Decode<'a>> Decode<'a> for Lazy<'a, T> {
    #[inline]
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
            Repr::Lent(owned) => owned.get().encoded_size(),
        }
    }

    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        match self.repr {
            Repr::Wire(bytes) => sink.write(bytes),
            Repr::Ref(value) => value.encode(sink),
            Repr::Lent(owned) => owned.get().encode(sink),
        }
    }
}

impl<'a, T: Decode<'a> + Clone + PartialEq> PartialEq for Lazy<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        match (self.try_get(), other.try_get()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl<'a, T: Decode<'a> + Clone + fmt::Debug> fmt::Debug for Lazy<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.try_get() {
            Ok(value) => value.fmt(f),
            Err(e) => write!(f, "<{e}>"),
        }
    }
}

#[cfg(feature = "defmt")]
impl<'a, T: Decode<'a> + Clone + defmt::Format> defmt::Format for Lazy<'a, T> {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self.try_get() {
            Ok(value) => defmt::write!(f, "{}", value),
            Err(e) => defmt::write!(f, "<{}>", e),
        }
    }
}
