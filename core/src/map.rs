//! The map view, [`Map`], for `map[K, V]`.

use core::borrow::Borrow;
use core::fmt;
use core::marker::PhantomData;

use crate::lent::{Lent, LentIter};
use crate::{Decode, Encode, Error, Reader, Sink, WireSize};

/// A view of a map `map[K, V]`: decoded (validated wire bytes, entries decoded as they are
/// read) or built from a caller's slice of pairs.
///
/// Entries come out in wire order, duplicates included. [`get`](Self::get) returns the value of
/// the *last* entry with the key, which is what converting to an owned map keeps.
///
/// ```
/// use bebop_core::{Decode, Encode, Map};
///
/// // map[uint8, int32] {1: 100, 2: 200}
/// let bytes = [2, 0, 0, 0, 1, 100, 0, 0, 0, 2, 200, 0, 0, 0];
/// let map = Map::<u8, i32>::from_bytes(&bytes)?;
/// assert_eq!(map.len(), 2);
/// assert_eq!(map.get(&2), Some(200));
/// assert_eq!(map.iter().collect::<Vec<_>>(), [(1, 100), (2, 200)]);
///
/// let built = Map::from_slice(&[(1u8, 100i32), (2, 200)]);
/// let mut out = [0u8; 14];
/// assert_eq!(built.encode_to_slice(&mut out)?, &bytes);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct Map<'a, K, V> {
    repr: Repr<'a, K, V>,
}

enum Repr<'a, K, V> {
    Wire {
        bytes: &'a [u8],
        len: usize,
        _kv: PhantomData<fn() -> (K, V)>,
    },
    Slice(&'a [(K, V)]),
    /// An owned map lending each entry's view (`Map::from_btree_map`, `Map::from_pairs`:
    /// owned maps need the `alloc` feature).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    Lent(Lent<'a, (K, V)>),
}

impl<K, V> Clone for Repr<'_, K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for Repr<'_, K, V> {}

impl<K, V> Clone for Map<'_, K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for Map<'_, K, V> {}

impl<K, V> Default for Map<'_, K, V> {
    fn default() -> Self {
        Map::from_slice(&[])
    }
}

impl<'a, K, V> Map<'a, K, V> {
    /// A view of a caller's entries, for encoding. They are written in slice order.
    pub const fn from_slice(entries: &'a [(K, V)]) -> Self {
        Map {
            repr: Repr::Slice(entries),
        }
    }

    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) const fn from_lent(entries: Lent<'a, (K, V)>) -> Self {
        Map {
            repr: Repr::Lent(entries),
        }
    }

    /// The number of entries (duplicates included).
    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Wire { len, .. } => len,
            Repr::Slice(entries) => entries.len(),
            Repr::Lent(entries) => entries.len(),
        }
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries' wire bytes (without the count prefix) when the view was decoded.
    pub const fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Wire { bytes, .. } => Some(bytes),
            Repr::Slice(_) | Repr::Lent(_) => None,
        }
    }
}

impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> Map<'a, K, V> {
    /// Iterates over the entries in wire order.
    #[inline]
    pub fn iter(&self) -> Iter<'a, K, V> {
        Iter {
            repr: match self.repr {
                Repr::Wire { bytes, len, .. } => IterRepr::Wire {
                    bytes,
                    left: len,
                    _kv: PhantomData,
                },
                Repr::Slice(entries) => IterRepr::Slice(entries.iter()),
                Repr::Lent(entries) => IterRepr::Lent(entries.iter()),
            },
        }
    }

    /// The value of the last entry whose key equals `key` (a linear scan).
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: PartialEq + ?Sized,
    {
        let mut found = None;
        for (k, v) in self.iter() {
            if k.borrow() == key {
                found = Some(v);
            }
        }
        found
    }

    /// True when some entry has the key.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: PartialEq + ?Sized,
    {
        self.iter().any(|(k, _)| k.borrow() == key)
    }

    /// Iterates over the keys in wire order.
    pub fn keys(&self) -> impl Iterator<Item = K> + 'a {
        self.iter().map(|(k, _)| k)
    }

    /// Iterates over the values in wire order.
    pub fn values(&self) -> impl Iterator<Item = V> + 'a {
        self.iter().map(|(_, v)| v)
    }
}

impl<K, V> WireSize for Map<'_, K, V> {
    const MIN_SIZE: usize = 4;
}

impl<'a, K: Decode<'a>, V: Decode<'a>> Decode<'a> for Map<'a, K, V> {
    /// Always inlined on 64-bit targets, like `check`: called out of line, it received the
    /// enclosing message's body reader by address, which kept that reader in memory for the
    /// whole message.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let len = read_count::<K, V>(reader)?;
        let start = reader.remaining_bytes();
        read_entries::<K, V>(reader, len)?;
        let used = start.len() - reader.remaining();
        Ok(Map {
            repr: Repr::Wire {
                bytes: &start[..used],
                len,
                _kv: PhantomData,
            },
        })
    }

    /// What `decode` checks, without measuring the entries' bytes for a view: always
    /// inlined on 64-bit targets, so that a message holding a map checks its entries with
    /// one call (`check_entries`) rather than two.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn check(reader: &mut Reader<'a>) -> Result<(), Error> {
        let len = read_count::<K, V>(reader)?;
        read_entries::<K, V>(reader, len)
    }
}

/// Reads a map's entry count, checks that the input can hold that many entries and charges
/// zero-sized ones to the budget.
#[inline(always)]
pub(crate) fn read_count<'a, K: Decode<'a>, V: Decode<'a>>(
    reader: &mut Reader<'a>,
) -> Result<usize, Error> {
    let entry_min = K::MIN_SIZE + V::MIN_SIZE;
    let len = reader.read_length(entry_min)?;
    if entry_min == 0 {
        reader.charge_empty(len)?;
    }
    Ok(len)
}

/// Moves past `len` entries: a view re-reading its own bytes hops over them, anything else
/// checks them.
#[inline(always)]
fn read_entries<'a, K: Decode<'a>, V: Decode<'a>>(
    reader: &mut Reader<'a>,
    len: usize,
) -> Result<(), Error> {
    if reader.is_validated() {
        for _ in 0..len {
            K::skip(reader)?;
            V::skip(reader)?;
        }
        Ok(())
    } else {
        // Through a copy, as `Reader::elements` does for arrays: given this reader's
        // address, the out-of-line check kept a message's whole body reader in memory,
        // loaded and stored at every field (D49).
        reader.through_copy(|copy| check_entries::<K, V>(copy, len))
    }
}

/// Decodes (so validates) `len` entries one nesting level deeper. Out of line: for a
/// recursive value type (a JSON object's values) this is the one call through which decoding
/// recurses, so the value's own decoder stays small enough to inline into the loops that
/// re-read validated entries.
#[inline(never)]
fn check_entries<'a, K: Decode<'a>, V: Decode<'a>>(
    reader: &mut Reader<'a>,
    len: usize,
) -> Result<(), Error> {
    reader.nested(|r| {
        for _ in 0..len {
            K::check(r)?;
            V::check(r)?;
        }
        Ok(())
    })
}

impl<'a, K: Decode<'a> + Encode, V: Decode<'a> + Encode> Encode for Map<'a, K, V> {
    fn encoded_size(&self) -> usize {
        4 + match self.repr {
            Repr::Wire { bytes, .. } => bytes.len(),
            Repr::Slice(entries) => entries
                .iter()
                .map(|(k, v)| k.encoded_size() + v.encoded_size())
                .sum(),
            Repr::Lent(entries) => entries
                .iter()
                .map(|(k, v)| k.encoded_size() + v.encoded_size())
                .sum(),
        }
    }

    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_len(self.len())?;
        match self.repr {
            Repr::Wire { bytes, .. } => sink.write(bytes),
            Repr::Slice(entries) => {
                for (k, v) in entries {
                    k.encode(sink)?;
                    v.encode(sink)?;
                }
                Ok(())
            }
            Repr::Lent(entries) => entries.iter().try_for_each(|(k, v)| {
                k.encode(sink)?;
                v.encode(sink)
            }),
        }
    }
}

impl<'a, K, V> PartialEq for Map<'a, K, V>
where
    K: Decode<'a> + Clone + PartialEq,
    V: Decode<'a> + Clone + PartialEq,
{
    /// Entry-by-entry equality in wire order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, K, V> fmt::Debug for Map<'a, K, V>
where
    K: Decode<'a> + Clone + fmt::Debug,
    V: Decode<'a> + Clone + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(feature = "defmt")]
impl<'a, K, V> defmt::Format for Map<'a, K, V>
where
    K: Decode<'a> + Clone + defmt::Format,
    V: Decode<'a> + Clone + defmt::Format,
{
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{{");
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                defmt::write!(f, ", ");
            }
            defmt::write!(f, "{}: {}", k, v);
        }
        defmt::write!(f, "}}");
    }
}

impl<'a, K, V> From<&'a [(K, V)]> for Map<'a, K, V> {
    fn from(entries: &'a [(K, V)]) -> Self {
        Map::from_slice(entries)
    }
}

impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> IntoIterator for Map<'a, K, V> {
    type Item = (K, V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> IntoIterator for &Map<'a, K, V> {
    type Item = (K, V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

/// Iterator over the entries of a [`Map`].
pub struct Iter<'a, K, V> {
    repr: IterRepr<'a, K, V>,
}

enum IterRepr<'a, K, V> {
    /// The validated bytes of the entries not yet read, and how many are left.
    Wire {
        bytes: &'a [u8],
        left: usize,
        _kv: PhantomData<fn() -> (K, V)>,
    },
    Slice(core::slice::Iter<'a, (K, V)>),
    /// Entries lent by an owned map.
    Lent(LentIter<'a, (K, V)>),
}

impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> Iterator for Iter<'a, K, V> {
    type Item = (K, V);

    // Inline: out of line, each entry came back through memory and was copied with wider
    // loads than the stores that wrote it, a store-forwarding stall that took 60% of the
    // time of walking a decoded JsonLarge.
    #[inline]
    fn next(&mut self) -> Option<(K, V)> {
        match &mut self.repr {
            IterRepr::Slice(it) => it.next().cloned(),
            IterRepr::Lent(it) => it.next(),
            IterRepr::Wire { bytes, left, .. } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // Validated when decoded; a failure here can only come from a broken impl.
                match Reader::read_trusted(bytes, |r| Ok((K::decode(r)?, V::decode(r)?))) {
                    Ok(entry) => Some(entry),
                    Err(_) => {
                        *left = 0;
                        None
                    }
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.repr {
            IterRepr::Wire { left, .. } => *left,
            IterRepr::Slice(it) => it.len(),
            IterRepr::Lent(it) => it.left(),
        };
        (n, Some(n))
    }
}

impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> ExactSizeIterator for Iter<'a, K, V> {}
impl<'a, K: Decode<'a> + Clone, V: Decode<'a> + Clone> core::iter::FusedIterator
    for Iter<'a, K, V>
{
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Where `f` leaves a reader over `bytes` (validated or not), and what it returns.
    fn run<'a, R>(
        bytes: &'a [u8],
        validated: bool,
        f: impl FnOnce(&mut Reader<'a>) -> Result<R, Error>,
    ) -> (Result<(), Error>, usize) {
        let mut reader = if validated {
            Reader::trusted(bytes)
        } else {
            Reader::new(bytes)
        };
        let out = f(&mut reader).map(drop);
        (out, reader.offset())
    }

    /// `check` of a map accepts what `decode` accepts, fails with the same error and leaves
    /// the reader where `decode` does; also on a validated reader, for the bytes a validated
    /// reader is ever given (those `decode` accepted).
    fn agree<'a, K: Decode<'a> + 'a, V: Decode<'a> + 'a>(bytes: &'a [u8]) {
        let checked = run(bytes, false, <Map<'a, K, V>>::check);
        let decoded = run(bytes, false, <Map<'a, K, V>>::decode);
        assert_eq!(checked, decoded, "bytes: {bytes:?}");
        if decoded.0.is_ok() {
            let valid = &bytes[..decoded.1];
            let checked = run(valid, true, <Map<'a, K, V>>::check);
            assert_eq!(checked, (Ok(()), valid.len()), "validated: {valid:?}");
        }
    }

    fn map_bytes(entries: &[(&str, u32)]) -> Vec<u8> {
        let mut out = (entries.len() as u32).to_le_bytes().to_vec();
        for (k, v) in entries {
            out.extend((k.len() as u32).to_le_bytes());
            out.extend(k.as_bytes());
            out.push(0);
            out.extend(v.to_le_bytes());
        }
        out
    }

    #[test]
    fn check_agrees_with_decode_on_maps_and_their_damage() {
        let good = map_bytes(&[("a", 1), ("", 2), ("\u{e9}t\u{e9}", 3)]);
        agree::<&str, u32>(&good);
        for cut in 0..good.len() {
            agree::<&str, u32>(&good[..cut]);
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x80;
            agree::<&str, u32>(&bad);
        }
        // Zero-sized entries are charged to the budget by both.
        type Empty<'a> = crate::FixedArray<'a, u8, 0>;
        agree::<Empty<'_>, Empty<'_>>(&u32::MAX.to_le_bytes());
        agree::<Empty<'_>, Empty<'_>>(&3u32.to_le_bytes());
    }

    proptest::proptest! {
        #[test]
        fn check_agrees_with_decode_on_any_bytes(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        ) {
            agree::<&str, u32>(&bytes);
            agree::<u8, Map<'_, u8, u16>>(&bytes);
        }
    }
}
