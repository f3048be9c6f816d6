//! Owned values that lend views of themselves, without encoding: the [`ToOwnedValue`] /
//! [`AsView`] pair every generated type implements, [`Lend`], and the constructors
//! [`Array::from_owned`], [`FixedArray::from_owned`], `Map::from_btree_map`,
//! `Map::from_pairs` and [`Lazy::from_owned`].
//!
//! A view of an owned value borrows it. Where the view of an element is the element itself
//! (integers, `Uuid`, enums, records without borrowed data) `Array::from_slice` does the job;
//! where it is not (a `String` lends a `&str`, an owned record lends its view) the view keeps a
//! reference to the owned collection and lends each element as it is read. Generated owned
//! types implement [`Lend`] for their views, so that `Vec<owned::Person>` lends an
//! `Array<'_, Person<'_>>`.

use crate::lent::{Lent, LentOne};
use crate::{Array, FixedArray, Lazy};

/// A view that copies itself into its owned form, which needs no input buffer.
///
/// Every generated view implements it (its owned form is the type of the same name in the
/// generated `owned` module), and so do enums, flags and records without borrowed data, which
/// are their own owned form. [`AsView`] goes the other way.
///
/// ```
/// use bebop_core::{AsView, ToOwnedValue};
///
/// // What the generator writes for `struct Name { string name; }`, in short:
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct NameView<'a> { name: &'a str }
/// #[derive(Clone, Debug, PartialEq)]
/// struct Name { name: String }
/// impl ToOwnedValue for NameView<'_> {
///     type Owned = Name;
///     fn to_owned_value(&self) -> Name { Name { name: self.name.into() } }
/// }
/// impl AsView for Name {
///     type View<'a> = NameView<'a>;
///     fn as_view(&self) -> NameView<'_> { NameView { name: &self.name } }
/// }
///
/// // Code generic over every generated type:
/// fn survives_a_round_trip<O: AsView + PartialEq>(value: &O) -> bool {
///     value.as_view().to_owned_value() == *value
/// }
/// assert!(survives_a_round_trip(&Name { name: "ada".into() }));
/// ```
pub trait ToOwnedValue {
    /// The owned form.
    type Owned;
    /// Copies the view into its owned form. Cannot fail: a decoded view was validated.
    fn to_owned_value(&self) -> Self::Owned;
}

/// An owned value that lends a view of itself, borrowing it: nothing is copied or encoded, and
/// the view encodes to the same bytes as the owned value.
///
/// Every generated owned type implements it; see [`ToOwnedValue`] for the other direction and
/// an example.
pub trait AsView {
    /// The view type.
    type View<'a>: Copy + ToOwnedValue<Owned = Self>
    where
        Self: 'a;
    /// The view, borrowing `self`.
    fn as_view(&self) -> Self::View<'_>;
}

/// An owned value that lends a view of itself: `String` lends `&str`, `Vec<u8>` lends `&[u8]`,
/// a generated owned record lends its view, and every `Copy` value lends itself.
///
/// ```
/// # #[cfg(feature = "alloc")] { // `String` lends `&str` with the `alloc` feature
/// use bebop_core::{Array, Lend};
///
/// let names = vec![String::from("ada"), String::from("grace")];
/// let view: Array<'_, &str> = names.lend();
/// assert_eq!(view.iter().collect::<Vec<_>>(), ["ada", "grace"]);
/// # }
/// ```
pub trait Lend<'a, V> {
    /// The view, borrowing `self`.
    fn lend(&'a self) -> V;
}

impl<T: Copy> Lend<'_, T> for T {
    #[inline]
    fn lend(&self) -> T {
        *self
    }
}

impl<'a, const N: usize> Lend<'a, &'a [u8; N]> for [u8; N] {
    #[inline]
    fn lend(&'a self) -> &'a [u8; N] {
        self
    }
}

impl<'a, T, O: Lend<'a, T> + Sync, const N: usize> Lend<'a, FixedArray<'a, T, N>> for [O; N] {
    #[inline]
    fn lend(&'a self) -> FixedArray<'a, T, N> {
        FixedArray::from_owned(self)
    }
}

/// An owned collection whose elements lend the elements of an [`Array`] or [`FixedArray`]
/// view: `Vec<O>` and `[O; N]` where `O: Lend<'a, T>`.
pub trait LendElements<'a, T> {
    /// The number of elements.
    fn element_count(&self) -> usize;
    /// The view of the element at `index`.
    fn lend_at(&'a self, index: usize) -> Option<T>;
}

impl<'a, T, O: Lend<'a, T>, const N: usize> LendElements<'a, T> for [O; N] {
    #[inline]
    fn element_count(&self) -> usize {
        N
    }
    #[inline]
    fn lend_at(&'a self, index: usize) -> Option<T> {
        self.get(index).map(Lend::lend)
    }
}

#[cfg(feature = "alloc")]
mod owned {
    use alloc::boxed::Box;
    use alloc::collections::BTreeMap;
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::{Lend, LendElements};
    use crate::lent::Lent;
    use crate::{Array, Lazy, Map};

    impl<'a> Lend<'a, &'a str> for String {
        #[inline]
        fn lend(&'a self) -> &'a str {
            self
        }
    }

    impl<'a> Lend<'a, &'a [u8]> for Vec<u8> {
        #[inline]
        fn lend(&'a self) -> &'a [u8] {
            self
        }
    }

    impl<'a, T, O: Lend<'a, T> + Sync> Lend<'a, Array<'a, T>> for Vec<O> {
        #[inline]
        fn lend(&'a self) -> Array<'a, T> {
            Array::from_owned(self)
        }
    }

    impl<'a, T, O: Lend<'a, T> + Sync> Lend<'a, Lazy<'a, T>> for Box<O> {
        #[inline]
        fn lend(&'a self) -> Lazy<'a, T> {
            Lazy::from_owned(&**self)
        }
    }

    impl<'a, K, V, OK, OV> Lend<'a, Map<'a, K, V>> for BTreeMap<OK, OV>
    where
        OK: Lend<'a, K> + Ord + Sync,
        OV: Lend<'a, V> + Sync,
    {
        #[inline]
        fn lend(&'a self) -> Map<'a, K, V> {
            Map::from_btree_map(self)
        }
    }

    impl<'a, K, V, OK, OV> Lend<'a, Map<'a, K, V>> for Vec<(OK, OV)>
    where
        OK: Lend<'a, K> + Sync,
        OV: Lend<'a, V> + Sync,
    {
        #[inline]
        fn lend(&'a self) -> Map<'a, K, V> {
            Map::from_pairs(self)
        }
    }

    impl<'a, T, O: Lend<'a, T>> LendElements<'a, T> for Vec<O> {
        #[inline]
        fn element_count(&self) -> usize {
            self.len()
        }
        #[inline]
        fn lend_at(&'a self, index: usize) -> Option<T> {
            self.get(index).map(Lend::lend)
        }
    }

    impl<'a, K, V> Map<'a, K, V> {
        /// A view of an owned `BTreeMap` (entries in key order) whose keys and values lend
        /// views of themselves: `BTreeMap<String, owned::Item>` gives `Map<&str, Item>`.
        /// Nothing is copied or encoded; each step of a walk is one O(log n) search.
        ///
        /// ```
        /// use std::collections::BTreeMap;
        /// use bebop_core::{Decode, Encode, Map};
        ///
        /// let mut owned = BTreeMap::new();
        /// owned.insert(String::from("b"), 2u32);
        /// owned.insert(String::from("a"), 1);
        /// let view: Map<'_, &str, u32> = Map::from_btree_map(&owned);
        /// assert_eq!(view.iter().collect::<Vec<_>>(), [("a", 1), ("b", 2)]);
        /// assert_eq!(view.get("b"), Some(2));
        /// let mut out = [0u8; 32];
        /// let bytes = view.encode_to_slice(&mut out)?;
        /// assert_eq!(Map::<&str, u32>::from_bytes(bytes)?, view);
        /// # Ok::<(), bebop_core::Error>(())
        /// ```
        pub fn from_btree_map<OK, OV>(map: &'a BTreeMap<OK, OV>) -> Self
        where
            OK: Lend<'a, K> + Ord + Sync,
            OV: Lend<'a, V> + Sync,
        {
            Map::from_lent(Lent::btree_map(map))
        }

        /// A view of an owned vector of pairs (entries in vector order, duplicates kept)
        /// whose keys and values lend views of themselves. Where they are their own views,
        /// [`Map::from_slice`] does the same.
        pub fn from_pairs<OK, OV>(pairs: &'a Vec<(OK, OV)>) -> Self
        where
            OK: Lend<'a, K> + Sync,
            OV: Lend<'a, V> + Sync,
        {
            Map::from_lent(Lent::pairs(pairs))
        }
    }
}

impl<'a, T> Array<'a, T> {
    /// A view of an owned collection (`Vec<O>` or `[O; N]`) whose elements lend views of
    /// themselves: `Vec<String>` gives `Array<&str>`, a vector of owned records an array of
    /// their views. Elements are lent as they are read; nothing is copied or encoded.
    ///
    /// For elements that are their own view (integers, `Uuid`, records without borrowed data),
    /// [`from_slice`](Self::from_slice) is the faster choice.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] { // `String` lends `&str` with the `alloc` feature
    /// use bebop_core::{Array, Encode};
    ///
    /// let tags = [String::from("a"), String::from("bc")];
    /// let view: Array<'_, &str> = Array::from_owned(&tags);
    /// assert_eq!(view.get(1), Some("bc"));
    /// assert_eq!(view, Array::from_slice(&["a", "bc"]));
    /// let mut out = [0u8; 32];
    /// assert_eq!(view.encode_to_slice(&mut out)?.len(), 4 + 6 + 7);
    /// # }
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    pub fn from_owned<S: LendElements<'a, T> + Sync>(items: &'a S) -> Self {
        Array::from_lent(Lent::elements(items))
    }
}

impl<'a, T, const N: usize> FixedArray<'a, T, N> {
    /// A view of an owned array whose elements lend views of themselves (`[String; N]` gives
    /// `FixedArray<&str, N>`); see [`Array::from_owned`].
    pub fn from_owned<O: Lend<'a, T> + Sync>(items: &'a [O; N]) -> Self {
        FixedArray::from_inner(Array::from_lent(Lent::elements(items)))
    }
}

impl<'a, T> Lazy<'a, T> {
    /// A lazy value lent by an owned one (the `Box<O>` of an owned recursive record).
    pub fn from_owned<O: Lend<'a, T> + Sync>(value: &'a O) -> Self {
        Lazy::from_lent(LentOne::new(value))
    }
}

/// Lends `T::default()`: what a defaulted [`Lazy`] holds, so that records with lazy fields
/// have a `Default` like their owned forms. Not `Copy`, so that it is not its own view.
struct DefaultValue;

impl<T: Default> Lend<'_, T> for DefaultValue {
    fn lend(&self) -> T {
        T::default()
    }
}

/// Lends `N` elements of `T::default()`: what a defaulted [`FixedArray`] holds.
struct DefaultElements<const N: usize>;

impl<const N: usize> DefaultElements<N> {
    const REF: &'static DefaultElements<N> = &DefaultElements;
}

impl<T: Default, const N: usize> LendElements<'_, T> for DefaultElements<N> {
    fn element_count(&self) -> usize {
        N
    }
    fn lend_at(&self, index: usize) -> Option<T> {
        (index < N).then(T::default)
    }
}

/// `T::default()` (encoded as the default value).
impl<T: Default> Default for Lazy<'_, T> {
    fn default() -> Self {
        Lazy::from_lent(LentOne::new(&DefaultValue))
    }
}

/// `N` times `T::default()`, like `[T; N]::default()`.
impl<T: Default, const N: usize> Default for FixedArray<'_, T, N> {
    fn default() -> Self {
        FixedArray::from_inner(Array::from_lent(Lent::elements(DefaultElements::<N>::REF)))
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use crate::{Array, Decode, Encode, FixedArray, Lazy};

    #[test]
    fn fixed_arrays_of_owned_strings_lend_and_encode_like_slices() {
        let owned = [
            std::string::String::from("x"),
            std::string::String::from("yz"),
        ];
        let lent: FixedArray<'_, &str, 2> = FixedArray::from_owned(&owned);
        let built = FixedArray::from_array(&["x", "yz"]);
        assert_eq!(lent, built);
        assert_eq!(lent.get(1), Some("yz"));
        assert_eq!(lent.get(2), None);
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        assert_eq!(
            lent.encode_to_slice(&mut a).unwrap(),
            built.encode_to_slice(&mut b).unwrap()
        );
    }

    #[test]
    fn nested_owned_vectors_lend_nested_views() {
        use std::vec;
        use std::vec::Vec;
        let owned: Vec<Vec<std::string::String>> =
            vec![vec!["a".into()], vec![], vec!["b".into(), "c".into()]];
        let view: Array<'_, Array<'_, &str>> = Array::from_owned(&owned);
        let mut out = [0u8; 64];
        let bytes = view.encode_to_slice(&mut out).unwrap();
        let decoded = Array::<Array<&str>>::from_bytes(bytes).unwrap();
        assert_eq!(decoded, view);
        assert_eq!(
            decoded.iter().map(|a| a.len()).collect::<Vec<_>>(),
            [1, 0, 2]
        );
        let mut it = view.iter();
        assert_eq!(it.len(), 3);
        assert_eq!(it.nth(2).and_then(|a| a.last()), Some("c"));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn defaults_hold_default_values() {
        let lazy = Lazy::<u32>::default();
        assert_eq!(lazy.get(), 0);
        let mut out = [0u8; 8];
        assert_eq!(lazy.encode_to_slice(&mut out).unwrap(), [0, 0, 0, 0]);
        let fixed = FixedArray::<&str, 3>::default();
        assert_eq!(fixed, FixedArray::from_array(&["", "", ""]));
        let mut out = [0u8; 16];
        assert_eq!(fixed.encode_to_slice(&mut out).unwrap().len(), 15);
    }

    #[test]
    fn boxed_values_lend_lazy_views() {
        let owned = std::boxed::Box::new(std::string::String::from("deep"));
        let lazy: Lazy<'_, &str> = crate::Lend::lend(&owned);
        assert_eq!(lazy.get(), "deep");
        let mut out = [0u8; 16];
        let bytes = lazy.encode_to_slice(&mut out).unwrap();
        assert_eq!(Lazy::<&str>::from_bytes(bytes).unwrap(), lazy);
    }
}
