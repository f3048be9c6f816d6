//! Maps as vectors of `(key, value)` pairs.
//!
//! The descriptor types keep maps (`DecoratorUsage.export_data`,
//! `CodeGeneratorRequest.host_options`) as `Vec<(K, V)>` in wire order, duplicates included,
//! so that a decoded message re-encodes to the very bytes it came from (an ordered map would
//! sort the entries and drop duplicates). These helpers give such vectors the wire form of
//! `map[K, V]`: a `u32` count, then each key followed by its value.

use bebop::{Decode, Encode, Error, Map, Reader, Sink};

/// Decodes a `map[K, V]` into its entries, in wire order.
pub(crate) fn decode<'a, K: Decode<'a>, V: Decode<'a>>(
    r: &mut Reader<'a>,
) -> Result<Vec<(K, V)>, Error> {
    let entry_min = K::MIN_SIZE + V::MIN_SIZE;
    let len = r.read_length(entry_min)?;
    if entry_min == 0 {
        r.charge_empty(len)?;
    }
    // `read_length` bounded `len` by the input size unless entries can be empty.
    let mut out = Vec::with_capacity(if entry_min == 0 { len.min(1024) } else { len });
    r.nested(|r| {
        for _ in 0..len {
            let k = K::decode(r)?;
            let v = V::decode(r)?;
            out.push((k, v));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The wire size of the entries as a `map[K, V]`.
pub(crate) fn encoded_size<'a, K, V>(entries: &'a [(K, V)]) -> usize
where
    K: Decode<'a> + Encode,
    V: Decode<'a> + Encode,
{
    Map::from_slice(entries).encoded_size()
}

/// Writes the entries as a `map[K, V]`, in slice order.
pub(crate) fn encode<'a, K, V, S: Sink>(entries: &'a [(K, V)], s: &mut S) -> Result<(), S::Error>
where
    K: Decode<'a> + Encode,
    V: Decode<'a> + Encode,
{
    Map::from_slice(entries).encode(s)
}
