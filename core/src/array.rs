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

use crate::lent::{Lent, LentIter};
use crate::scalar::{Scalar, copy_scalars};
use crate::{Decode, Encode, Error, Reader, Sink, WireSize};
use half::{bf16, f16};

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
    /// An owned collection lending each element's view ([`Array::from_owned`]).
    Lent(Lent<'a, T>),
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

    /// A view of an owned collection lending its elements (`crate::lend`).
    pub(crate) const fn from_lent(items: Lent<'a, T>) -> Self {
        Array {
            repr: Repr::Lent(items),
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
    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Wire { len, .. } => len,
            Repr::Slice(items) => items.len(),
            Repr::Lent(items) => items.len(),
        }
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements' wire bytes (without the count prefix) when the view was decoded.
    pub const fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire { bytes, .. } => Some(bytes),
            Repr::Slice(_) | Repr::Lent(_) => None,
        }
    }

    /// The caller's values when the view was built from a slice.
    pub const fn as_slice(&self) -> Option<&'a [T]> {
        match self.repr {
            Repr::Wire { .. } | Repr::Lent(_) => None,
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
            Repr::Lent(items) => items.get(index),
            Repr::Wire { bytes, len, .. } => {
                if index >= len {
                    return None;
                }
                match T::FIXED_SIZE {
                    Some(size) => {
                        let at = index * size;
                        T::decode_exact(bytes.get(at..at + size)?)
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
                Repr::Wire { bytes, .. } if fixed_size::<T>().is_some() => IterRepr::Fixed(bytes),
                Repr::Wire { bytes, len, .. } => IterRepr::Wire { bytes, left: len },
                Repr::Slice(items) => IterRepr::Slice(items.iter()),
                Repr::Lent(items) => IterRepr::Lent(items.iter()),
            },
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Array<'a, T> {
    /// The elements in blocks of `size` (the last may be shorter), each an iterator of its
    /// own, in order, like [`slice::chunks`]; a `size` of 0 is taken as 1.
    ///
    /// For processing a long array block by block: a sum of `u16` elements, for example,
    /// vectorises in 32-bit lanes when each block is short enough not to overflow them.
    /// Moving from one block to the next is O(1) for elements of a fixed size (scalars,
    /// uuids, structs of them) and for views built from a slice or an owned collection;
    /// other decoded elements are skipped over once more.
    ///
    /// ```
    /// use bebop_core::{Array, Decode};
    ///
    /// let arr = Array::<u16>::from_bytes(&[5, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0])?;
    /// let sums: Vec<u32> = arr.chunks(2).map(|block| block.map(u32::from).sum()).collect();
    /// assert_eq!(sums, [3, 7, 5]);
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    #[inline]
    pub fn chunks(&self, size: usize) -> Chunks<'a, T> {
        Chunks {
            rest: self.iter(),
            size: size.max(1),
        }
    }
}

/// Iterator over the blocks of an [`Array`] or [`FixedArray`] ([`Array::chunks`]).
pub struct Chunks<'a, T> {
    rest: Iter<'a, T>,
    size: usize,
}

impl<T> Clone for Chunks<'_, T> {
    fn clone(&self) -> Self {
        Chunks {
            rest: self.rest.clone(),
            size: self.size,
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Iterator for Chunks<'a, T> {
    type Item = Iter<'a, T>;

    #[inline]
    fn next(&mut self) -> Option<Iter<'a, T>> {
        self.rest.take_front(self.size)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rest.size_hint().0.div_ceil(self.size);
        (n, Some(n))
    }
}

impl<'a, T: Decode<'a> + Clone> ExactSizeIterator for Chunks<'a, T> {}
impl<'a, T: Decode<'a> + Clone> core::iter::FusedIterator for Chunks<'a, T> {}

/// `T`'s wire size when it is fixed and not zero: such elements are iterated by slicing the
/// validated bytes into chunks of that size.
#[inline(always)]
const fn fixed_size<'a, T: Decode<'a>>() -> Option<usize> {
    match T::FIXED_SIZE {
        Some(0) | None => None,
        Some(size) => Some(size),
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
            Repr::Lent(_) => {
                for (slot, item) in out.iter_mut().zip(self.iter()) {
                    *slot = item;
                }
            }
        }
        n
    }
}

/// `bfloat16[]` and `float16[]` widened to `f32` in bulk (see the `float16` module).
macro_rules! widen_to_f32 {
    ($($t:ident => $convert:path, $wide:path, $example:expr, $wire:expr, $values:expr;)*) => {$(
        impl Array<'_, $t> {
            /// Widens the elements to `f32` into the front of `out` and returns how many were
            /// written (the smaller of the two lengths). The result is `half`'s `to_f32` of
            /// each element, NaN payloads included, but the loop has no branches, so over a
            /// decoded view it vectorises straight from the wire bytes.
            ///
            /// ```
            /// use bebop_core::{Array, Decode};
            #[doc = concat!("use bebop_core::", stringify!($t), ";")]
            ///
            #[doc = concat!("// ", $example)]
            #[doc = concat!("let bytes = ", stringify!($wire), ";")]
            #[doc = concat!("let arr = Array::<", stringify!($t), ">::from_bytes(&bytes)?;")]
            /// let mut out = [0.0f32; 4];
            /// assert_eq!(arr.to_f32_slice(&mut out), 3);
            #[doc = concat!("assert_eq!(out, ", stringify!($values), ");")]
            /// # Ok::<(), bebop_core::Error>(())
            /// ```
            pub fn to_f32_slice(&self, out: &mut [f32]) -> usize {
                match self.repr {
                    // The bytes are exactly the elements' (validated at decode).
                    Repr::Wire { bytes, .. } => $wide(bytes, out),
                    Repr::Slice(items) => crate::float16::widen_values(
                        items.iter().map(|v| v.to_bits()),
                        out,
                        $convert,
                    ),
                    Repr::Lent(_) => crate::float16::widen_values(
                        self.iter().map(|v| v.to_bits()),
                        out,
                        $convert,
                    ),
                }
            }
        }

        impl<const N: usize> FixedArray<'_, $t, N> {
            /// Widens the elements to `f32` into the front of `out`, as
            /// [`Array::to_f32_slice`], and returns how many were written.
            pub fn to_f32_slice(&self, out: &mut [f32]) -> usize {
                self.inner.to_f32_slice(out)
            }

            /// The elements widened to `f32`, as [`Array::to_f32_slice`].
            pub fn to_f32_array(&self) -> [f32; N] {
                let mut out = [0.0; N];
                self.inner.to_f32_slice(&mut out);
                out
            }
        }
    )*};
}

widen_to_f32! {
    bf16 => crate::float16::bf16_to_f32, crate::float16::widen_bf16_wire, "bfloat16[] [1.0, -2.0, 0.5]",
        [3, 0, 0, 0, 0x80, 0x3f, 0x00, 0xc0, 0x00, 0x3f], [1.0, -2.0, 0.5, 0.0];
    f16 => crate::float16::f16_to_f32, crate::float16::widen_f16_wire, "float16[] [1.0, -2.0, 0.5]",
        [3, 0, 0, 0, 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38], [1.0, -2.0, 0.5, 0.0];
}

impl<T> WireSize for Array<'_, T> {
    const MIN_SIZE: usize = 4;
}

impl<'a, T: Decode<'a>> Decode<'a> for Array<'a, T> {
    // Always inlined on 64-bit targets, and so is `check` below (the default `check` is
    // merely `#[inline]`). Both were inlined before as well; forced, LLVM inlines them
    // earlier, and the records around them work out fewer error offsets ahead of need:
    // OrderSmall decode (two arrays of scalars) went from 69 to 66 instructions,
    // LLMChunkSmall's from 426 to 412 and TensorShardSmall's from 140 to 137, and no row
    // rose (`scripts/instr-report`). Microcontrollers, built for size, leave the choice to
    // the compiler.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = reader.read_length(T::MIN_SIZE)?;
        let bytes = reader.elements::<T>(len)?;
        Ok(Array::from_wire(bytes, len))
    }

    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn check(reader: &mut Reader<'a>) -> Result<(), Error> {
        Self::decode(reader).map(drop)
    }
}

impl<'a, T: Decode<'a> + Encode> Encode for Array<'a, T> {
    #[inline]
    fn encoded_size(&self) -> usize {
        4 + match self.repr {
            Repr::Wire { bytes, .. } => bytes.len(),
            Repr::Slice(items) => T::encoded_size_many(items),
            Repr::Lent(items) => items.iter().map(|item| item.encoded_size()).sum(),
        }
    }

    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        encode_elements(self, sink)
    }
}

#[inline]
fn encode_elements<T: Encode, S: Sink>(array: &Array<'_, T>, sink: &mut S) -> Result<(), S::Error> {
    match array.repr {
        // Decoded bytes are already in wire form (and keep anything the decoder skipped).
        Repr::Wire { bytes, .. } => sink.write(bytes),
        Repr::Slice(items) => T::encode_many(items, sink),
        Repr::Lent(items) => items.iter().try_for_each(|item| item.encode(sink)),
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
    /// Elements of a fixed, non-zero size: the validated bytes of those not yet read.
    Fixed(&'a [u8]),
    /// Other elements: the validated bytes of those not yet read, and how many are left.
    Wire {
        bytes: &'a [u8],
        left: usize,
    },
    Slice(core::slice::Iter<'a, T>),
    /// Elements lent by an owned collection.
    Lent(LentIter<'a, T>),
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            repr: match &self.repr {
                IterRepr::Fixed(bytes) => IterRepr::Fixed(bytes),
                IterRepr::Wire { bytes, left } => IterRepr::Wire { bytes, left: *left },
                IterRepr::Slice(it) => IterRepr::Slice(it.clone()),
                IterRepr::Lent(it) => IterRepr::Lent(it.clone()),
            },
        }
    }
}

impl<'a, T: Decode<'a> + Clone> Iterator for Iter<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match &mut self.repr {
            IterRepr::Fixed(bytes) => {
                let size = fixed_size::<T>()?;
                let (chunk, rest) = bytes.split_at_checked(size)?;
                *bytes = rest;
                let item = T::decode_exact(chunk);
                if item.is_none() {
                    // Only a broken `Decode` impl fails on validated bytes; stop there.
                    *bytes = &[];
                }
                item
            }
            IterRepr::Slice(it) => it.next().cloned(),
            IterRepr::Lent(it) => it.next(),
            IterRepr::Wire { bytes, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // The bytes were validated when the view was decoded, so this cannot fail;
                // if a broken `Decode` impl makes it fail anyway, the iteration ends.
                match Reader::read_trusted(bytes, T::decode) {
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
            IterRepr::Fixed(bytes) => fixed_size::<T>().map_or(0, |size| bytes.len() / size),
            IterRepr::Wire { left, .. } => *left,
            IterRepr::Slice(it) => it.len(),
            IterRepr::Lent(it) => it.left(),
        };
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<T> {
        match &mut self.repr {
            IterRepr::Fixed(bytes) => {
                let size = fixed_size::<T>()?;
                match n.checked_mul(size).and_then(|skip| bytes.get(skip..)) {
                    Some(rest) => *bytes = rest,
                    None => {
                        *bytes = &[];
                        return None;
                    }
                }
            }
            IterRepr::Wire { bytes, left } => {
                // Hop over the elements in between without decoding them.
                let skip = n.min(*left);
                for _ in 0..skip {
                    if Reader::read_trusted(bytes, T::skip).is_err() {
                        *left = 0;
                        return None;
                    }
                }
                *left -= skip;
            }
            IterRepr::Slice(it) => return it.nth(n).cloned(),
            IterRepr::Lent(it) => it.skip_indexed(n),
        }
        self.next()
    }

    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, mut f: F) -> B {
        match self.repr {
            IterRepr::Fixed(bytes) => {
                let Some(size) = fixed_size::<T>() else {
                    return init;
                };
                let mut acc = init;
                for chunk in bytes.chunks_exact(size) {
                    match T::decode_exact(chunk) {
                        Some(item) => acc = f(acc, item),
                        None => break,
                    }
                }
                acc
            }
            // The other kinds fold out of line, each given its fields by value: handing
            // the whole iterator over made every caller store it to the stack first, fast
            // arm included (OrderSmall decode + walk: 175 instructions so, 152 this way).
            IterRepr::Wire { bytes, left } => fold_wire(bytes, left, init, f),
            IterRepr::Slice(it) => fold_slice(it, init, f),
            IterRepr::Lent(it) => fold_lent(it, init, f),
        }
    }
}

/// [`Iter::fold`] over anything but validated fixed-size elements is out of line, so that
/// the fold of a decoded scalar array stays small enough to inline into its caller, as a
/// slice's does. Measured with `scripts/instr-report`: Embedding384 decode + walk went from
/// 575 to 533 instructions, InferenceResponse's from 4,333 to 4,165, EmbeddingBatch's from
/// 15,284 to 14,948. This one folds elements of variable size, still on the wire.
#[cold]
#[inline(never)]
fn fold_wire<'a, T: Decode<'a> + Clone + 'a, B, F: FnMut(B, T) -> B>(
    bytes: &'a [u8],
    left: usize,
    init: B,
    f: F,
) -> B {
    fold_by_next(
        Iter {
            repr: IterRepr::Wire { bytes, left },
        },
        init,
        f,
    )
}

/// [`fold_wire`] for an array over a slice.
#[cold]
#[inline(never)]
fn fold_slice<'a, T: Decode<'a> + Clone + 'a, B, F: FnMut(B, T) -> B>(
    it: core::slice::Iter<'a, T>,
    init: B,
    f: F,
) -> B {
    it.cloned().fold(init, f)
}

/// [`fold_wire`] for elements lent by an owned collection.
#[cold]
#[inline(never)]
fn fold_lent<'a, T: Decode<'a> + Clone + 'a, B, F: FnMut(B, T) -> B>(
    it: LentIter<'a, T>,
    init: B,
    f: F,
) -> B {
    fold_by_next(
        Iter {
            repr: IterRepr::Lent(it),
        },
        init,
        f,
    )
}

/// Folds by calling `next`, never `fold`, so the folds above do not recurse.
#[inline(always)]
fn fold_by_next<'a, T: Decode<'a> + Clone + 'a, B, F: FnMut(B, T) -> B>(
    it: Iter<'a, T>,
    init: B,
    mut f: F,
) -> B {
    let mut acc = init;
    for item in it {
        acc = f(acc, item);
    }
    acc
}

impl<'a, T: Decode<'a>> Iter<'a, T> {
    /// The next `n` elements (fewer when fewer are left) as an iterator of their own, and
    /// this one moved past them; `None` when no element is left.
    #[inline]
    fn take_front(&mut self, n: usize) -> Option<Self> {
        let repr = match &mut self.repr {
            IterRepr::Fixed(bytes) => {
                if bytes.is_empty() {
                    return None;
                }
                let at = fixed_size::<T>()
                    .map_or(bytes.len(), |size| n.saturating_mul(size).min(bytes.len()));
                let (front, rest) = bytes.split_at(at);
                *bytes = rest;
                IterRepr::Fixed(front)
            }
            IterRepr::Wire { bytes, left } => {
                if *left == 0 {
                    return None;
                }
                let count = n.min(*left);
                let front = IterRepr::Wire { bytes, left: count };
                *left -= count;
                for _ in 0..count {
                    // As in `nth`: only a broken `Decode` impl fails on validated bytes.
                    if Reader::read_trusted(bytes, T::skip).is_err() {
                        *left = 0;
                        break;
                    }
                }
                front
            }
            IterRepr::Slice(it) => {
                let items = it.as_slice();
                if items.is_empty() {
                    return None;
                }
                let (front, rest) = items.split_at(n.min(items.len()));
                *it = rest.iter();
                IterRepr::Slice(front.iter())
            }
            IterRepr::Lent(it) => IterRepr::Lent(it.take_front(n)?),
        };
        Some(Iter { repr })
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

    pub(crate) const fn from_inner(inner: Array<'a, T>) -> Self {
        FixedArray { inner }
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
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        self.inner.get(index)
    }

    /// Iterates over the elements.
    #[inline]
    pub fn iter(&self) -> Iter<'a, T> {
        self.inner.iter()
    }

    /// The elements in blocks of `size`, as [`Array::chunks`].
    pub fn chunks(&self, size: usize) -> Chunks<'a, T> {
        self.inner.chunks(size)
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
        encode_elements(&self.inner, sink)
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

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use std::string::String;
    use std::vec::Vec;

    /// Counts full decodes, to show that walking a view does not validate again.
    static DECODES: AtomicUsize = AtomicUsize::new(0);

    /// A message-framed record: `u32` length, then that many bytes.
    #[derive(Clone, Debug, PartialEq)]
    struct Rec<'a>(&'a [u8]);

    impl WireSize for Rec<'_> {
        const MIN_SIZE: usize = 4;
    }

    impl<'a> Decode<'a> for Rec<'a> {
        fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
            DECODES.fetch_add(1, Ordering::Relaxed);
            r.read::<&'a [u8]>().map(Rec)
        }
        fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
            r.skip_prefixed()
        }
    }

    #[test]
    fn walking_nested_arrays_hops_over_validated_records() {
        // Rec[][]: [[r"ab", r""], [r"c"]]
        let bytes = [
            2, 0, 0, 0, // outer count
            2, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0, // [ab, ""]
            1, 0, 0, 0, 1, 0, 0, 0, b'c', // [c]
        ];
        let before = DECODES.load(Ordering::Relaxed);
        let outer = Array::<Array<Rec>>::from_bytes(&bytes).unwrap();
        assert_eq!(
            DECODES.load(Ordering::Relaxed) - before,
            3,
            "validated once"
        );
        let before = DECODES.load(Ordering::Relaxed);
        let inner: Vec<Array<Rec>> = outer.iter().collect();
        assert_eq!(inner.len(), 2);
        assert_eq!(inner[0].len(), 2);
        assert_eq!(inner[1].len(), 1);
        assert_eq!(
            DECODES.load(Ordering::Relaxed) - before,
            0,
            "no record decoded"
        );
        // Reading a record decodes it, and only it.
        assert_eq!(inner[0].get(1), Some(Rec(b"")));
        assert_eq!(inner[1].first(), Some(Rec(b"c")));
        assert_eq!(DECODES.load(Ordering::Relaxed) - before, 2);
    }

    #[test]
    fn nth_hops_over_variable_size_elements() {
        let bytes = b"\x03\0\0\0\x01\0\0\0a\0\x02\0\0\0bc\0\x03\0\0\0def\0";
        let arr = Array::<&str>::from_bytes(bytes).unwrap();
        assert_eq!(arr.iter().nth(2), Some("def"));
        assert_eq!(arr.iter().nth(3), None);
        let mut it = arr.iter();
        assert_eq!(it.nth(1), Some("bc"));
        assert_eq!(it.len(), 1);
        assert_eq!(arr.get(0), Some("a"));
    }

    #[test]
    fn fixed_size_iteration_agrees_with_get_fold_and_nth() {
        let values: Vec<i32> = (-50..50).map(|i| i * 1_000_003).collect();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&(values.len() as u32).to_le_bytes());
        for v in &values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let arr = Array::<i32>::from_bytes(&bytes).unwrap();
        assert_eq!(arr.iter().collect::<Vec<_>>(), values);
        assert_eq!(
            arr.iter().fold(0i64, |a, v| a + i64::from(v)),
            values.iter().map(|&v| i64::from(v)).sum::<i64>()
        );
        let mut it = arr.iter();
        assert_eq!(it.len(), 100);
        assert_eq!(it.nth(10), Some(values[10]));
        assert_eq!(it.len(), 89);
        assert_eq!(it.nth(88), Some(values[99]));
        assert_eq!(it.next(), None);
        assert_eq!(arr.iter().nth(usize::MAX), None);
        assert_eq!(arr.get(99), Some(values[99]));
        assert_eq!(arr.get(100), None);
    }

    /// `fold` (which sums, `for_each` and the walks use) yields what `next` does, for every
    /// kind of array: decoded fixed-size elements (folded inline) and the others (folded out
    /// of line), whole and in blocks.
    #[test]
    fn fold_agrees_with_next_for_every_kind_of_array() {
        /// The elements `it` yields, gathered through `fold` alone.
        fn by_fold<'a, T: Decode<'a> + Clone>(it: Iter<'a, T>) -> Vec<T> {
            it.fold(Vec::new(), |mut out, v| {
                out.push(v);
                out
            })
        }
        fn check<'a, T: Decode<'a> + Clone + PartialEq + fmt::Debug>(arr: Array<'a, T>) {
            let by_next: Vec<T> = arr.iter().collect();
            assert_eq!(by_fold(arr.iter()), by_next);
            let mut it = arr.iter();
            let first = it.next();
            let rest = by_fold(it);
            assert_eq!(first.into_iter().chain(rest).collect::<Vec<_>>(), by_next);
            let blocks: Vec<T> = arr.chunks(3).flat_map(by_fold).collect();
            assert_eq!(blocks, by_next);
        }
        let ints = [7i32, -1, 0, i32::MAX, 5, 6, 9];
        let mut bytes = (ints.len() as u32).to_le_bytes().to_vec();
        for v in ints {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        check(Array::<i32>::from_bytes(&bytes).unwrap());
        check(Array::from_slice(&ints));
        let words = ["a", "", "bc", "def", "g"];
        let mut bytes = (words.len() as u32).to_le_bytes().to_vec();
        for w in words {
            bytes.extend_from_slice(&(w.len() as u32).to_le_bytes());
            bytes.extend_from_slice(w.as_bytes());
            bytes.push(0);
        }
        check(Array::<&str>::from_bytes(&bytes).unwrap());
        check(Array::from_slice(&words));
        #[cfg(feature = "alloc")]
        {
            let owned: Vec<String> = words.iter().map(|w| String::from(*w)).collect();
            check(Array::<&str>::from_owned(&owned));
        }
    }

    #[test]
    fn zero_sized_elements_iterate_by_count() {
        // fixed arrays of zero length are not Bebop, but `()`-like records are: use [u8; 0].
        let arr = Array::<[u8; 0]>::from_bytes(&[3, 0, 0, 0]).unwrap();
        assert_eq!(arr.iter().count(), 3);
        assert_eq!(arr.iter().nth(2), Some([]));
    }

    /// Encodes a view into a new buffer.
    fn wire<'a, T: Decode<'a> + Encode>(view: &Array<'a, T>) -> Vec<u8> {
        let mut out = std::vec![0u8; view.encoded_size()];
        let n = view.encode_to_slice(&mut out).unwrap().len();
        out.truncate(n);
        out
    }

    /// Checks `chunks` of `arr` against `chunks` of `values`.
    fn check_chunks<'a, T>(arr: Array<'a, T>, values: &[T], size: usize)
    where
        T: Decode<'a> + Clone + PartialEq + fmt::Debug,
    {
        let expected: Vec<Vec<T>> = values.chunks(size.max(1)).map(<[T]>::to_vec).collect();
        let chunks = arr.chunks(size);
        assert_eq!(chunks.len(), expected.len());
        let blocks: Vec<Vec<T>> = chunks.clone().map(Iterator::collect).collect();
        assert_eq!(blocks, expected);
        // Each block is exact about its length; reading only some of the blocks, or a
        // block only in part, leaves the others intact.
        for (block, want) in chunks.clone().zip(&expected) {
            assert_eq!(block.len(), want.len());
        }
        let odd: Vec<Vec<T>> = chunks.skip(1).step_by(2).map(Iterator::collect).collect();
        let want: Vec<Vec<T>> = expected.iter().skip(1).step_by(2).cloned().collect();
        assert_eq!(odd, want);
    }

    proptest::proptest! {
        #[test]
        fn chunks_agree_with_slices(
            numbers in proptest::collection::vec(proptest::num::u16::ANY, 0..100),
            words in proptest::collection::vec("[a-z\\u{e9}\\u{2014}]{0,4}", 0..30),
            size in 0usize..40,
        ) {
            // Fixed-size elements, decoded and built.
            let bytes = wire(&Array::from_slice(&numbers));
            check_chunks(Array::<u16>::from_bytes(&bytes).unwrap(), &numbers, size);
            check_chunks(Array::from_slice(&numbers), &numbers, size);
            // Variable-size elements, decoded, built and lent by an owned vector.
            let strs: Vec<&str> = words.iter().map(String::as_str).collect();
            let bytes = wire(&Array::from_slice(&strs));
            check_chunks(Array::<&str>::from_bytes(&bytes).unwrap(), &strs, size);
            check_chunks(Array::from_slice(&strs), &strs, size);
            #[cfg(feature = "alloc")]
            check_chunks(Array::<&str>::from_owned(&words), &strs, size);
        }
    }
}
