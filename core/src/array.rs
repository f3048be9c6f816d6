//! Array views: [`Array`] for `T[]` and [`FixedArray`] for `T[N]`.
//!
//! A view is either *decoded* (it points at validated wire bytes and decodes elements as they
//! are read) or *built* (it borrows a caller's slice of values, for encoding without a heap).
//! Both behave the same: `len`, `get`, `iter`, equality, `Debug` and encoding.
//!
//! Views of scalars (integers, floats, uuids, structs of them) are created in O(1) whatever
//! their length, with no alignment requirement on the input; views of anything else are
//! validated element by element when decoded, so that reading them later cannot fail.

use core::fmt;
use core::marker::PhantomData;

use crate::scalar::{Scalar, copy_scalars};
use crate::{Decode, Encode, Error, Reader, Sink, WireSize};

/// A view of a dynamic array `T[]`.
///
/// ```
/// use bebop_core::{Array, Decode, Encode};
///
/// // Decode int32[] [1, 2, 3] without copying.
/// let bytes = [3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
/// let arr = Array::<i32>::from_bytes(&bytes)?;
/// assert_eq!(arr.len(), 3);
/// assert_eq!(arr.get(1), Some(2));
/// assert_eq!(arr.iter().sum::<i32>(), 6);
///
/// // Build one from a slice and encode it: same bytes.
/// let built = Array::from_slice(&[1, 2, 3]);
/// assert_eq!(built, arr);
/// let mut out = [0u8; 16];
/// assert_eq!(built.encode_to_slice(&mut out)?, &bytes);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct Array<'a, T> {
    repr: Repr<'a, T>,
}

enum Repr<'a, T> {
    /// Validated wire bytes of `len` elements (without the count prefix).
    Wire {
        bytes: &'a [u8],
        len: usize,
        _t: PhantomData<fn() -> T>,
    },
    /// A caller's values.
    Slice(&'a [T]),
}

impl<T> Clone for Repr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Repr<'_, T> {}

impl<T> Clone for Array<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Array<'_, T> {}

impl<T> Default for Array<'_, T> {
    fn default() -> Self {
        Array::from_slice(&[])
    }
}

impl<'a, T> Array<'a, T> {
    /// A view of a caller's values, for encoding.
    pub const fn from_slice(items: &'a [T]) -> Self {
        Array {
            repr: Repr::Slice(items),
        }
    }

    /// A view of `len` elements whose wire bytes were validated.
    pub(crate) const fn from_wire(bytes: &'a [u8], len: usize) -> Self {
        Array {
            repr: Repr::Wire {
                bytes,
                len,
                _t: PhantomData,
            },
        }
    }

    /// The number of elements.
    #[inline]
    pub const fn len(&self) -> usize {
        match self.repr {
            Repr::Wire { len, .. } => len,
            Repr::Slice(items) => items.len(),
        }
    }

    /// True when there are no elements.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements' wire bytes (without the count prefix) when the view was decoded.
    pub const fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire { bytes, .. } => Some(bytes),
            Repr::Slice(_) => None,
        }
    }

    /// The caller's values when the view was built from a slice.
    pub const fn as_slice(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Wire { .. } => None,
            Repr::Slice(items) => Some(items),
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Array<'a, T> {
    /// The element at `index`: O(1) for fixed-size elements, O(index) otherwise.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        match self.repr {
            Repr::Slice(items) => items.get(index).cloned(),
            Repr::Wire { bytes, len, .. } => {
                if index >= len {
                    return None;
                }
                match T::FIXED_SIZE {
                    Some(size) => {
                        let at = index * size;
                        let chunk = bytes.get(at..at + size)?;
                        T::decode(&mut Reader::trusted(chunk)).ok()
                    }
                    None => self.iter().nth(index),
                }
            }
        }
    }

    /// The first element.
    pub fn first(&self) -> Option<T> {
        self.get(0)
    }

    /// The last element.
    pub fn last(&self) -> Option<T> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// Iterates over the elements, decoding each as it is reached.
    #[inline]
    pub fn iter(&self) -> Iter<'a, T> {
        Iter {
            repr: match self.repr {
                Repr::Wire { bytes, len, .. } => IterRepr::Wire {
                    reader: Reader::trusted(bytes),
                    left: len,
                },
                Repr::Slice(items) => IterRepr::Slice(items.iter()),
            },
        }
    }
}

impl<'a, T: Scalar> Array<'a, T> {
    /// Copies the elements into the front of `out` and returns how many were copied (the
    /// smaller of the two lengths). On little-endian targets this is a `memcpy`.
    ///
    /// ```
    /// use bebop_core::{Array, Decode};
    ///
    /// let arr = Array::<u16>::from_bytes(&[3, 0, 0, 0, 1, 0, 2, 0, 3, 0])?;
    /// let mut out = [0u16; 8];
    /// assert_eq!(arr.copy_to_slice(&mut out), 3);
    /// assert_eq!(&out[..3], &[1, 2, 3]);
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    pub fn copy_to_slice(&self, out: &mut [T]) -> usize {
        let n = self.len().min(out.len());
        match self.repr {
            Repr::Slice(items) => out[..n].copy_from_slice(&items[..n]),
            Repr::Wire { bytes, .. } => {
                copy_scalars(&bytes[..n * core::mem::size_of::<T>()], &mut out[..n]);
            }
        }
        n
    }
}

impl<T> WireSize for Array<'_, T> {
    const MIN_SIZE: usize = 4;
}

impl<'a, T: Decode<'a>> Decode<'a> for Array<'a, T> {
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = reader.read_length(T::MIN_SIZE)?;
        let bytes = reader.elements::<T>(len)?;
        Ok(Array::from_wire(bytes, len))
    }
}

impl<'a, T: Decode<'a> + Encode> Encode for Array<'a, T> {
    #[inline]
    fn encoded_size(&self) -> usize {
        4 + match self.repr {
            Repr::Wire { bytes, .. } => bytes.len(),
            Repr::Slice(items) => T::encoded_size_many(items),
        }
    }

    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        encode_elements(&self.repr, sink)
    }
}

fn encode_elements<T: Encode, S: Sink>(repr: &Repr<'_, T>, sink: &mut S) -> Result<(), S::Error> {
    match repr {
        // Decoded bytes are already in wire form (and keep anything the decoder skipped).
        Repr::Wire { bytes, .. } => sink.write(bytes),
        Repr::Slice(items) => T::encode_many(items, sink),
    }
}

impl<'a, T: Decode<'a> + Clone + PartialEq> PartialEq for Array<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: Decode<'a> + Clone + Eq> Eq for Array<'a, T> {}

impl<'a, T: Decode<'a> + Clone + fmt::Debug> fmt::Debug for Array<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(feature = "defmt")]
impl<'a, T: Decode<'a> + Clone + defmt::Format> defmt::Format for Array<'a, T> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "[");
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                defmt::write!(f, ", ");
            }
            defmt::write!(f, "{}", item);
        }
        defmt::write!(f, "]");
    }
}

impl<'a, T> From<&'a [T]> for Array<'a, T> {
    fn from(items: &'a [T]) -> Self {
        Array::from_slice(items)
    }
}

impl<'a, T, const N: usize> From<&'a [T; N]> for Array<'a, T> {
    fn from(items: &'a [T; N]) -> Self {
        Array::from_slice(items)
    }
}

impl<'a, T: Decode<'a> + Clone> IntoIterator for Array<'a, T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T: Decode<'a> + Clone> IntoIterator for &Array<'a, T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Iterator over the elements of an [`Array`] or [`FixedArray`].
pub struct Iter<'a, T> {
    repr: IterRepr<'a, T>,
}

enum IterRepr<'a, T> {
    Wire { reader: Reader<'a>, left: usize },
    Slice(core::slice::Iter<'a, T>),
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            repr: match &self.repr {
                IterRepr::Wire { reader, left } => IterRepr::Wire {
                    reader: reader.clone(),
                    left: *left,
                },
                IterRepr::Slice(it) => IterRepr::Slice(it.clone()),
            },
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Iterator for Iter<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match &mut self.repr {
            IterRepr::Slice(it) => it.next().cloned(),
            IterRepr::Wire { reader, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // The bytes were validated when the view was decoded, so this cannot fail;
                // if a broken `Decode` impl makes it fail anyway, the iteration ends.
                match T::decode(reader) {
                    Ok(item) => Some(item),
                    Err(_) => {
                        *left = 0;
                        None
                    }
                }
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.repr {
            IterRepr::Wire { left, .. } => *left,
            IterRepr::Slice(it) => it.len(),
        };
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<T> {
        if let IterRepr::Wire { reader, left } = &mut self.repr {
            if let Some(size) = T::FIXED_SIZE {
                // Skip fixed-size elements without decoding them.
                let skip = n.min(*left);
                if reader.take(skip * size).is_err() {
                    *left = 0;
                    return None;
                }
                *left -= skip;
                return self.next();
            }
        }
        for _ in 0..n {
            self.next()?;
        }
        self.next()
    }
}

impl<'a, T: Decode<'a> + Clone> ExactSizeIterator for Iter<'a, T> {}
impl<'a, T: Decode<'a> + Clone> core::iter::FusedIterator for Iter<'a, T> {}

/// A view of a fixed array `T[N]`: like [`Array`], with the length in the type and no count
/// on the wire.
///
/// ```
/// use bebop_core::{Decode, FixedArray};
///
/// let v = FixedArray::<u16, 3>::from_bytes(&[1, 0, 2, 0, 3, 0])?;
/// assert_eq!(v.iter().collect::<Vec<_>>(), [1, 2, 3]);
/// assert_eq!(v, FixedArray::from_array(&[1, 2, 3]));
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct FixedArray<'a, T, const N: usize> {
    inner: Array<'a, T>,
}

impl<T, const N: usize> Clone for FixedArray<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for FixedArray<'_, T, N> {}

impl<'a, T, const N: usize> FixedArray<'a, T, N> {
    /// A view of a caller's array, for encoding.
    pub const fn from_array(items: &'a [T; N]) -> Self {
        FixedArray {
            inner: Array::from_slice(items),
        }
    }

    /// The number of elements, `N`.
    pub const fn len(&self) -> usize {
        N
    }

    /// True when `N` is 0 (which Bebop schemas do not allow).
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The view as a dynamic-array view (same elements).
    pub const fn as_array(&self) -> Array<'a, T> {
        self.inner
    }

    /// The elements' wire bytes when the view was decoded.
    pub const fn wire_bytes(&self) -> Option<&'a [u8]> {
        self.inner.wire_bytes()
    }
}

impl<'a, T: Decode<'a> + Clone, const N: usize> FixedArray<'a, T, N> {
    /// The element at `index`.
    pub fn get(&self, index: usize) -> Option<T> {
        self.inner.get(index)
    }

    /// Iterates over the elements.
    pub fn iter(&self) -> Iter<'a, T> {
        self.inner.iter()
    }
}

impl<T: Scalar, const N: usize> FixedArray<'_, T, N> {
    /// Copies the elements out into a Rust array.
    pub fn to_array(&self) -> [T; N] {
        let mut out = [T::default(); N];
        self.inner.copy_to_slice(&mut out);
        out
    }
}

impl<T: WireSize, const N: usize> WireSize for FixedArray<'_, T, N> {
    const FIXED_SIZE: Option<usize> = <[T; N]>::FIXED_SIZE;
    const MIN_SIZE: usize = T::MIN_SIZE * N;
}

impl<'a, T: Decode<'a>, const N: usize> Decode<'a> for FixedArray<'a, T, N> {
    const ALWAYS_VALID: bool = T::ALWAYS_VALID;

    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let bytes = reader.elements::<T>(N)?;
        Ok(FixedArray {
            inner: Array::from_wire(bytes, N),
        })
    }
}

impl<'a, T: Decode<'a> + Encode, const N: usize> Encode for FixedArray<'a, T, N> {
    #[inline]
    fn encoded_size(&self) -> usize {
        self.inner.encoded_size() - 4
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        encode_elements(&self.inner.repr, sink)
    }
}

impl<'a, T: Decode<'a> + Clone + PartialEq, const N: usize> PartialEq for FixedArray<'a, T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl<'a, T: Decode<'a> + Clone + Eq, const N: usize> Eq for FixedArray<'a, T, N> {}

impl<'a, T: Decode<'a> + Clone + fmt::Debug, const N: usize> fmt::Debug for FixedArray<'a, T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

#[cfg(feature = "defmt")]
impl<'a, T: Decode<'a> + Clone + defmt::Format, const N: usize> defmt::Format
    for FixedArray<'a, T, N>
{
    fn format(&self, f: defmt::Formatter<'_>) {
        self.inner.format(f)
    }
}

impl<'a, T, const N: usize> From<&'a [T; N]> for FixedArray<'a, T, N> {
    fn from(items: &'a [T; N]) -> Self {
        FixedArray::from_array(items)
    }
}

impl<'a, T: Decode<'a> + Clone, const N: usize> IntoIterator for FixedArray<'a, T, N> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}
