//! [`Lent`]: an owned collection borrowed by a view, with its type erased, so that the view
//! stays covariant in its lifetime. This module and `utf8` are the crate's only `unsafe` code.
//!
//! Why not `&'a dyn Trait<'a, T>`: a trait object is invariant in its parameters, so every view
//! holding one (`Array`, `Map`, `Lazy`, and through them every generated view) would become
//! invariant in `'a`. Code as ordinary as `fn f(m: Map<'_, &str, &str>) { m.iter() }` or
//! comparing a `Person<'static>` with a decoded `Person<'_>` then stops compiling. Erasing the
//! owner's type behind a pointer and a function pointer that returns `T` keeps `Lent<'a, T>`
//! covariant in both `'a` and `T`, as `&'a [T]` is. (docs/decisions.md, D32.)
#![allow(unsafe_code)]

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::lend::{Lend, LendElements};

/// Where a walk over a lent collection is, for owners that cannot index in O(1): a sorted
/// map keeps a pointer to the last key it handed out and continues after it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Cursor {
    // Only sorted maps (feature `alloc`) read it.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    last_key: Option<NonNull<()>>,
}

// SAFETY: the pointer is only ever turned back into a shared reference to a key of a map that
// is borrowed (shared, and required to be `Sync`) for as long as the `Lent` it came from.
unsafe impl Send for Cursor {}
// SAFETY: as above; a `&Cursor` gives nothing but a copy of the pointer.
unsafe impl Sync for Cursor {}

/// A shared borrow for `'a` producing `T`s: covariant in both, like `&'a [T]`.
type Borrow<'a, T> = PhantomData<(&'a (), fn() -> T)>;

/// The lending function of a [`Lent`], instantiated for the owner's type.
type LendAt<T> = unsafe fn(NonNull<()>, usize, &mut Cursor) -> Option<T>;

/// An owner of type `S`, borrowed for `'a`, and the function that lends the view of its
/// element `index` (`T`). Built only by the constructors below, which pair each owner with the
/// function instantiated for its own type.
pub(crate) struct Lent<'a, T> {
    owner: NonNull<()>,
    len: usize,
    at: LendAt<T>,
    // Covariant in 'a (a shared borrow of the owner) and in T (only ever returned).
    _borrow: Borrow<'a, T>,
}

impl<T> Clone for Lent<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Lent<'_, T> {}

// SAFETY: a `Lent` is a shared borrow of its owner, which every constructor requires to be
// `Sync` (so `&S` is `Send`), plus a plain function pointer. Values of `T` are made on the
// calling thread from that shared borrow, as any thread holding `&S` could; none is stored.
unsafe impl<T> Send for Lent<'_, T> {}
// SAFETY: as above: a `&Lent` allows the same calls on the shared owner.
unsafe impl<T> Sync for Lent<'_, T> {}

impl<'a, T> Lent<'a, T> {
    /// The owner's elements (`Array`, `FixedArray`).
    pub(crate) fn elements<S: LendElements<'a, T> + Sync + 'a>(owner: &'a S) -> Self {
        /// SAFETY (for callers): `owner` must come from a `&'a S` that is still borrowed.
        unsafe fn at<'a, S: LendElements<'a, T> + 'a, T>(
            owner: NonNull<()>,
            index: usize,
            _: &mut Cursor,
        ) -> Option<T> {
            // SAFETY: `Lent::elements` made `owner` from a `&'a S` and paired it with this
            // function for the same `S`; the `Lent` (and any copy) lives no longer than 'a, so
            // the owner is alive and only shared-borrowed.
            let owner: &'a S = unsafe { owner.cast::<S>().as_ref() };
            owner.lend_at(index)
        }
        Lent {
            owner: NonNull::from(owner).cast(),
            len: owner.element_count(),
            at: at::<S, T>,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The view of element `index`; `cursor` must be one this `Lent`'s walks have used (or a
    /// new one), which is why walks go through [`LentIter`].
    #[inline]
    fn at(&self, index: usize, cursor: &mut Cursor) -> Option<T> {
        if index >= self.len {
            return None;
        }
        // SAFETY: `owner` and `at` were paired by a constructor of this type, and `self`
        // lives no longer than the borrow of the owner ('a). The cursor was filled only by
        // this `Lent`'s own function (fields are private; see `LentIter`).
        unsafe { (self.at)(self.owner, index, cursor) }
    }

    /// The view of element `index`, for owners that index in O(1) (vectors, arrays, one
    /// value).
    #[inline]
    pub(crate) fn get(&self, index: usize) -> Option<T> {
        self.at(index, &mut Cursor::default())
    }

    /// A walk from the first element.
    #[inline]
    pub(crate) fn iter(&self) -> LentIter<'a, T> {
        LentIter {
            lent: *self,
            next: 0,
            cursor: Cursor::default(),
        }
    }
}

/// One owned value of type `O`, borrowed for `'a`, and the function that lends its view
/// (`T`): what a `Lazy` built from a `Box` holds.
pub(crate) struct LentOne<'a, T> {
    owner: NonNull<()>,
    lend: unsafe fn(NonNull<()>) -> T,
    _borrow: Borrow<'a, T>,
}

impl<T> Clone for LentOne<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for LentOne<'_, T> {}

// SAFETY: as for `Lent`: a shared borrow of a `Sync` owner and a function pointer.
unsafe impl<T> Send for LentOne<'_, T> {}
// SAFETY: as for `Lent`.
unsafe impl<T> Sync for LentOne<'_, T> {}

impl<'a, T> LentOne<'a, T> {
    pub(crate) fn new<O: Lend<'a, T> + Sync + 'a>(owner: &'a O) -> Self {
        /// SAFETY (for callers): `owner` must come from a `&'a O` that is still borrowed.
        unsafe fn lend<'a, O: Lend<'a, T> + 'a, T>(owner: NonNull<()>) -> T {
            // SAFETY: as in `Lent::elements`, for `LentOne::new` and `O`.
            let owner: &'a O = unsafe { owner.cast::<O>().as_ref() };
            owner.lend()
        }
        LentOne {
            owner: NonNull::from(owner).cast(),
            lend: lend::<O, T>,
            _borrow: PhantomData,
        }
    }

    /// The owner's view.
    #[inline]
    pub(crate) fn get(&self) -> T {
        // SAFETY: `owner` and `lend` were paired by `new`, and `self` lives no longer than
        // the borrow of the owner ('a).
        unsafe { (self.lend)(self.owner) }
    }
}

/// A walk over a [`Lent`] collection.
pub(crate) struct LentIter<'a, T> {
    lent: Lent<'a, T>,
    next: usize,
    cursor: Cursor,
}

impl<T> Clone for LentIter<'_, T> {
    fn clone(&self) -> Self {
        LentIter {
            lent: self.lent,
            next: self.next,
            cursor: self.cursor,
        }
    }
}

impl<T> LentIter<'_, T> {
    /// How many elements are left.
    #[inline]
    pub(crate) fn left(&self) -> usize {
        self.lent.len.saturating_sub(self.next)
    }

    /// The next `n` elements (fewer when fewer are left) as a walk of their own, and this
    /// walk moved past them; `None` when no element is left. For owners that index in O(1)
    /// (the elements of an `Array`), like [`LentIter::skip_indexed`].
    #[inline]
    pub(crate) fn take_front(&mut self, n: usize) -> Option<Self> {
        if self.left() == 0 {
            return None;
        }
        let end = self.next.saturating_add(n).min(self.lent.len);
        let front = LentIter {
            lent: Lent {
                len: end,
                ..self.lent
            },
            next: self.next,
            cursor: self.cursor,
        };
        self.next = end;
        self.cursor = Cursor::default();
        Some(front)
    }

    /// Skips `n` elements of an owner that indexes in O(1) (not a sorted map, whose walk
    /// needs every key).
    #[inline]
    pub(crate) fn skip_indexed(&mut self, n: usize) {
        self.next = self.next.saturating_add(n).min(self.lent.len);
        // (A sorted map given a new cursor would count from its start: slow, still right.)
        self.cursor = Cursor::default();
    }
}

impl<T> Iterator for LentIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        // The owner's function gets a copy of the cursor, not the address of this one: an
        // iterator whose address reached that call would stay in memory whatever it walks
        // (an `Array`'s iterator holds a `LentIter` as one of its forms), and every element
        // of a decoded array would be read through memory.
        let mut cursor = self.cursor;
        let item = self.lent.at(self.next, &mut cursor);
        self.cursor = cursor;
        self.next = match item {
            Some(_) => self.next + 1,
            None => self.lent.len,
        };
        item
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left(), Some(self.left()))
    }
}

#[cfg(feature = "alloc")]
mod maps {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;
    use core::ops::Bound;
    use core::ptr::NonNull;

    use super::{Cursor, Lent, PhantomData};
    use crate::lend::Lend;

    impl<'a, K, V> Lent<'a, (K, V)> {
        /// A sorted map's entries, in key order. The cursor remembers the last key handed
        /// out, so that each step is one O(log n) search.
        pub(crate) fn btree_map<OK, OV>(owner: &'a BTreeMap<OK, OV>) -> Self
        where
            OK: Lend<'a, K> + Ord + Sync + 'a,
            OV: Lend<'a, V> + Sync + 'a,
        {
            /// SAFETY (for callers): `owner` must come from a `&'a BTreeMap<OK, OV>` that is
            /// still borrowed, and `cursor` must be new or filled by this function for it.
            unsafe fn at<'a, OK, OV, K, V>(
                owner: NonNull<()>,
                index: usize,
                cursor: &mut Cursor,
            ) -> Option<(K, V)>
            where
                OK: Lend<'a, K> + Ord + 'a,
                OV: Lend<'a, V> + 'a,
            {
                // SAFETY: as in `Lent::elements`, for `Lent::btree_map` and this map type.
                let map: &'a BTreeMap<OK, OV> =
                    unsafe { owner.cast::<BTreeMap<OK, OV>>().as_ref() };
                let entry = match cursor.last_key {
                    Some(key) if index > 0 => {
                        // SAFETY: the cursor holds a key of this same map (filled below, by this
                        // function only), which is borrowed shared for 'a and so unchanged.
                        let key: &'a OK = unsafe { key.cast::<OK>().as_ref() };
                        map.range((Bound::Excluded(key), Bound::Unbounded)).next()
                    }
                    _ => map.iter().nth(index),
                };
                let (k, v) = entry?;
                cursor.last_key = Some(NonNull::from(k).cast());
                Some((k.lend(), v.lend()))
            }
            Lent {
                owner: NonNull::from(owner).cast(),
                len: owner.len(),
                at: at::<OK, OV, K, V>,
                _borrow: PhantomData,
            }
        }

        /// A vector of pairs, in vector order.
        pub(crate) fn pairs<OK, OV>(owner: &'a Vec<(OK, OV)>) -> Self
        where
            OK: Lend<'a, K> + Sync + 'a,
            OV: Lend<'a, V> + Sync + 'a,
        {
            /// SAFETY (for callers): `owner` must come from a `&'a Vec<(OK, OV)>` that is
            /// still borrowed.
            unsafe fn at<'a, OK, OV, K, V>(
                owner: NonNull<()>,
                index: usize,
                _: &mut Cursor,
            ) -> Option<(K, V)>
            where
                OK: Lend<'a, K> + 'a,
                OV: Lend<'a, V> + 'a,
            {
                // SAFETY: as in `Lent::elements`, for `Lent::pairs` and this vector type.
                let pairs: &'a Vec<(OK, OV)> = unsafe { owner.cast::<Vec<(OK, OV)>>().as_ref() };
                pairs.get(index).map(|(k, v)| (k.lend(), v.lend()))
            }
            Lent {
                owner: NonNull::from(owner).cast(),
                len: owner.len(),
                at: at::<OK, OV, K, V>,
                _borrow: PhantomData,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles only if `Lent` is covariant in its lifetime and element type.
    #[allow(dead_code)]
    fn covariant<'long: 'short, 'short>(l: Lent<'long, &'long str>) -> Lent<'short, &'short str> {
        l
    }

    /// Compiles only if `Lent` is `Send` and `Sync`.
    #[allow(dead_code)]
    fn thread_safe<'a, T: 'a>(l: Lent<'a, T>) -> impl Send + Sync + 'a {
        l
    }

    #[allow(dead_code)]
    fn one_is_covariant<'long: 'short, 'short>(
        l: LentOne<'long, &'long str>,
    ) -> LentOne<'short, &'short str> {
        l
    }

    #[allow(dead_code)]
    fn one_is_thread_safe<'a, T: 'a>(l: LentOne<'a, T>) -> impl Send + Sync + 'a {
        l
    }

    // `String` lends `&str` through the `alloc` impls.
    #[cfg(feature = "alloc")]
    #[test]
    fn elements_and_one_value_lend_views() {
        let owned = [
            std::string::String::from("a"),
            std::string::String::from("bc"),
        ];
        let lent: Lent<'_, &str> = Lent::elements(&owned);
        assert_eq!(lent.len(), 2);
        assert_eq!(lent.get(1), Some("bc"));
        assert_eq!(lent.get(2), None);
        assert_eq!(lent.iter().collect::<std::vec::Vec<_>>(), ["a", "bc"]);
        let mut it = lent.iter();
        it.skip_indexed(1);
        assert_eq!((it.left(), it.next(), it.next()), (1, Some("bc"), None));
        let one: LentOne<'_, u64> = LentOne::new(&7u64);
        assert_eq!(one.get(), 7);
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn sorted_maps_walk_in_key_order_from_the_cursor() {
        use std::collections::BTreeMap;
        use std::string::String;
        let map: BTreeMap<String, u32> = (0..100).map(|i| (std::format!("k{i:03}"), i)).collect();
        let lent: Lent<'_, (&str, u32)> = Lent::btree_map(&map);
        let walked: std::vec::Vec<_> = lent.iter().collect();
        let expected: std::vec::Vec<_> = map.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(walked, expected);
        // The walk keeps its cursor from step to step: each step continues from the key
        // before it rather than counting from the start.
        let mut it = lent.iter();
        assert!(it.cursor.last_key.is_none());
        assert_eq!(it.next(), Some(("k000", 0)));
        let first = it.cursor.last_key;
        assert!(first.is_some());
        assert_eq!(it.next(), Some(("k001", 1)));
        assert!(it.cursor.last_key.is_some() && it.cursor.last_key != first);
        // A fresh cursor with a later index counts from the start.
        assert_eq!(lent.get(42), Some(("k042", 42)));
        // Walks on other threads share the map.
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| assert_eq!(lent.iter().count(), 100));
            }
        });
    }
}
