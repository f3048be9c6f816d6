//! Fixed-width scalars: `bool`, the integers up to 128 bits, and the IEEE floats (with
//! `half::f16` and `half::bf16` for `float16` and `bfloat16`).

use crate::{Decode, Encode, Error, FixedSize, Reader, Sink, WireSize};
use half::{bf16, f16};

/// Scalars whose wire form is their little-endian memory form: the integers and floats. On
/// little-endian targets arrays of them are copied in and out as plain bytes.
///
/// This trait is sealed; it exists so that views can offer bulk copies.
pub trait Scalar: Copy + Default + bytemuck::Pod + private::Sealed + for<'a> Decode<'a> {
    /// Reads one value from its little-endian bytes; missing bytes read as zero and extra
    /// bytes are ignored.
    fn from_le(bytes: &[u8]) -> Self;
}

mod private {
    pub trait Sealed {}
}

/// Copies little-endian scalar bytes into `out` (lengths must agree).
#[inline]
pub(crate) fn copy_scalars<T: Scalar>(bytes: &[u8], out: &mut [T]) {
    #[cfg(target_endian = "little")]
    {
        bytemuck::cast_slice_mut::<T, u8>(out).copy_from_slice(bytes);
    }
    #[cfg(not(target_endian = "little"))]
    {
        let size = core::mem::size_of::<T>();
        for (dst, src) in out.iter_mut().zip(bytes.chunks_exact(size)) {
            *dst = T::from_le(src);
        }
    }
}

macro_rules! scalar {
    ($($t:ty => $n:expr),* $(,)?) => {$(
        impl WireSize for $t {
            const FIXED_SIZE: Option<usize> = Some($n);
            const MIN_SIZE: usize = $n;
        }
        impl FixedSize for $t {
            const SIZE: usize = $n;
        }
        impl<'a> Decode<'a> for $t {
            const ALWAYS_VALID: bool = true;
            #[inline]
            fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
                reader.read_array::<$n>().map(|b| <$t>::from_le_bytes(*b))
            }
            #[inline(always)]
            fn decode_exact(bytes: &'a [u8]) -> Option<Self> {
                Some(<Self as Scalar>::from_le(bytes))
            }
            #[cfg(feature = "alloc")]
            fn extend_vec(
                reader: &mut Reader<'a>,
                count: usize,
                out: &mut alloc::vec::Vec<Self>,
            ) -> Result<(), Error> {
                let size = count.checked_mul($n).ok_or_else(|| {
                    reader.error(crate::ErrorKind::LengthOutOfBounds).with_detail(count as u64)
                })?;
                let bytes = reader.take(size)?;
                let start = out.len();
                out.resize(start + count, <$t>::default());
                copy_scalars(bytes, &mut out[start..]);
                Ok(())
            }
        }
        impl Encode for $t {
            #[inline]
            fn encoded_size(&self) -> usize {
                $n
            }
            #[inline]
            fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
                sink.write(&self.to_le_bytes())
            }
            #[inline]
            fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
                let mut field = [tag; 1 + $n];
                field[1..].copy_from_slice(&self.to_le_bytes());
                sink.write(&field)
            }
            #[inline]
            fn encode_many<S: Sink>(items: &[Self], sink: &mut S) -> Result<(), S::Error> {
                #[cfg(target_endian = "little")]
                {
                    sink.write(bytemuck::cast_slice(items))
                }
                #[cfg(not(target_endian = "little"))]
                {
                    for item in items {
                        sink.write(&item.to_le_bytes())?;
                    }
                    Ok(())
                }
            }
        }
        impl private::Sealed for $t {}
        impl Scalar for $t {
            #[inline]
            fn from_le(bytes: &[u8]) -> Self {
                if let Ok(raw) = <[u8; $n]>::try_from(bytes) {
                    return <$t>::from_le_bytes(raw);
                }
                let mut raw = [0u8; $n];
                for (dst, src) in raw.iter_mut().zip(bytes) {
                    *dst = *src;
                }
                <$t>::from_le_bytes(raw)
            }
        }
    )*};
}

scalar! {
    u8 => 1, i8 => 1,
    u16 => 2, i16 => 2, f16 => 2, bf16 => 2,
    u32 => 4, i32 => 4, f32 => 4,
    u64 => 8, i64 => 8, f64 => 8,
    u128 => 16, i128 => 16,
}

impl WireSize for bool {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl FixedSize for bool {
    const SIZE: usize = 1;
}

/// Any non-zero byte decodes as `true`; encoding writes 0 or 1.
impl<'a> Decode<'a> for bool {
    const ALWAYS_VALID: bool = true;
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        reader.read_u8().map(|b| b != 0)
    }
}

impl Encode for bool {
    #[inline]
    fn encoded_size(&self) -> usize {
        1
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write(&[u8::from(*self)])
    }
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        sink.write(&[tag, u8::from(*self)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_decodes_any_nonzero_as_true() {
        assert_eq!(bool::from_bytes(&[0]), Ok(false));
        assert_eq!(bool::from_bytes(&[1]), Ok(true));
        assert_eq!(bool::from_bytes(&[0x80]), Ok(true));
        let mut buf = [9u8; 1];
        true.encode_into(&mut buf).unwrap();
        assert_eq!(buf, [1]);
    }

    #[test]
    fn integers_are_little_endian() {
        let mut buf = [0u8; 16];
        let n = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128
            .encode_into(&mut buf)
            .unwrap();
        assert_eq!(n, 16);
        assert_eq!(buf[0], 0x10);
        assert_eq!(buf[8], 0x08);
        assert_eq!(buf[15], 0x01);
        assert_eq!(i128::from_bytes(&(-2i128).to_le_bytes()), Ok(-2i128),);
    }

    #[test]
    fn half_floats_round_trip() {
        let v = bf16::from_f32(1.0);
        let mut buf = [0u8; 2];
        v.encode_into(&mut buf).unwrap();
        assert_eq!(buf, [0x80, 0x3f]);
        assert_eq!(bf16::from_bytes(&buf), Ok(v));
        let h = f16::from_f32(-2.5);
        h.encode_into(&mut buf).unwrap();
        assert_eq!(f16::from_bytes(&buf), Ok(h));
    }

    /// `decode_exact` (how arrays iterate) agrees with `decode` for every scalar type, on
    /// every bit pattern tried, including the `Reader`-based default it overrides.
    fn exact_agrees<T: Scalar + PartialEq + core::fmt::Debug>(bytes: &[u8]) {
        let size = core::mem::size_of::<T>();
        for chunk in bytes.chunks_exact(size) {
            let by_reader = T::decode(&mut Reader::trusted(chunk)).ok();
            let exact = T::decode_exact(chunk);
            let bytes_of = |v: &T| bytemuck::bytes_of(v).to_vec();
            assert_eq!(
                exact.as_ref().map(bytes_of),
                by_reader.as_ref().map(bytes_of)
            );
            assert_eq!(exact.as_ref().map(bytes_of), Some(chunk.to_vec()));
        }
    }

    proptest::proptest! {
        #[test]
        fn decode_exact_agrees_with_decode(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            exact_agrees::<u8>(&bytes);
            exact_agrees::<i8>(&bytes);
            exact_agrees::<u16>(&bytes);
            exact_agrees::<i16>(&bytes);
            exact_agrees::<f16>(&bytes);
            exact_agrees::<bf16>(&bytes);
            exact_agrees::<u32>(&bytes);
            exact_agrees::<i32>(&bytes);
            exact_agrees::<f32>(&bytes);
            exact_agrees::<u64>(&bytes);
            exact_agrees::<i64>(&bytes);
            exact_agrees::<f64>(&bytes);
            exact_agrees::<u128>(&bytes);
            exact_agrees::<i128>(&bytes);
        }
    }

    #[test]
    fn from_le_reads_missing_bytes_as_zero_and_ignores_extra_ones() {
        assert_eq!(<u32 as Scalar>::from_le(&[1, 2]), 0x0201);
        assert_eq!(<u16 as Scalar>::from_le(&[1, 2, 3]), 0x0201);
        assert_eq!(<u64 as Scalar>::from_le(&[]), 0);
        assert_eq!(<u16 as Scalar>::from_le(&[1, 2]), 0x0201);
    }

    #[test]
    fn short_input_says_how_much_is_missing() {
        let err = u64::from_bytes(&[1, 2, 3]).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::UnexpectedEnd);
        assert_eq!(err.offset(), 0);
        assert_eq!(err.detail(), 5);
    }
}
