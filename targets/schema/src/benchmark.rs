//! Types of `shared/bench/benchmark.bop`.
//!
//! `Person`, `TreeNode` and `EmbeddingBF16` are the ones `bebop-conformance` already has
//! (same schema text); `Order` is written here in the same style.

use bebop_core::{Array, Decode, Encode, Error, Reader, Sink, WireSize};

pub use bebop_conformance::{Embedding as EmbeddingBF16, Person, TreeNode};

/// ```bebop
/// struct Order {
///     order_id: int64;
///     customer_id: int64;
///     item_ids: int64[];
///     quantities: int32[];
///     total: float64;
///     timestamp: int64;
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Order<'a> {
    /// `order_id: int64`
    pub order_id: i64,
    /// `customer_id: int64`
    pub customer_id: i64,
    /// `item_ids: int64[]`
    pub item_ids: Array<'a, i64>,
    /// `quantities: int32[]`
    pub quantities: Array<'a, i32>,
    /// `total: float64`
    pub total: f64,
    /// `timestamp: int64`
    pub timestamp: i64,
}

impl WireSize for Order<'_> {
    const MIN_SIZE: usize = 8 + 8 + 4 + 4 + 8 + 8;
}

impl<'a> Decode<'a> for Order<'a> {
    #[inline]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Order {
            order_id: r.read()?,
            customer_id: r.read()?,
            item_ids: r.read()?,
            quantities: r.read()?,
            total: r.read()?,
            timestamp: r.read()?,
        })
    }
}

impl Encode for Order<'_> {
    #[inline]
    fn encoded_size(&self) -> usize {
        8 + 8 + self.item_ids.encoded_size() + self.quantities.encoded_size() + 8 + 8
    }
    #[inline]
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.order_id.encode(s)?;
        self.customer_id.encode(s)?;
        self.item_ids.encode(s)?;
        self.quantities.encode(s)?;
        self.total.encode(s)?;
        self.timestamp.encode(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_layout_is_fields_back_to_back() {
        let ids = [101i64, 102, 103];
        let qty = [1i32, 2, 1];
        let order = Order {
            order_id: 7,
            customer_id: 9,
            item_ids: Array::from_slice(&ids),
            quantities: Array::from_slice(&qty),
            total: 12.5,
            timestamp: 1_704_067_200_000,
        };
        let mut buf = [0u8; 128];
        let n = order.encode_into(&mut buf).unwrap();
        assert_eq!(n, 8 + 8 + 4 + 24 + 4 + 12 + 8 + 8);
        assert_eq!(&buf[..8], &7i64.to_le_bytes());
        assert_eq!(&buf[16..20], &3u32.to_le_bytes());
        assert_eq!(&buf[20..28], &101i64.to_le_bytes());
        assert_eq!(&buf[n - 8..n], &1_704_067_200_000i64.to_le_bytes());
        let back = Order::from_bytes(&buf[..n]).unwrap();
        assert_eq!(back, order);
        assert_eq!(back.item_ids.iter().sum::<i64>(), 306);
    }
}
