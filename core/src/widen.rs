//! `bfloat16[]` and `float16[]` widened to `f32` in bulk: [`Array::to_f32_slice`] and
//! [`FixedArray::to_f32_slice`].
//!
//! Model payloads travel as 16-bit floats and are computed on as `f32`, so widening a whole
//! array is the first thing most readers of an embedding or a tensor do. Element by element,
//! `half`'s `to_f32` branches on NaN (bfloat16) or on the exponent (float16), which keeps
//! the compiler from vectorising the loop. The conversions here give exactly `half`'s
//! results, NaN payloads included (the tests compare all 65,536 bit patterns of both
//! types), but are written without branches so that a loop of them vectorises, straight
//! from the wire bytes of a decoded view, whatever their alignment. bfloat16 needs only
//! 16-bit operations and a shift. float16 is widened eight at a time in 16-bit operations
//! on the two halves of each result, except in a block of eight holding a subnormal, which
//! takes a branch-free 32-bit path (docs/decisions.md D48 has the measurements).
//!
//! [`Array::to_f32_slice`]: crate::Array::to_f32_slice
//! [`FixedArray::to_f32_slice`]: crate::FixedArray::to_f32_slice

/// Elements converted per step: sixteen wire bytes, one SSE register or half an AVX one.
const BLOCK: usize = 8;

/// `half::bf16::to_f32` of `bits`, without branches or selects. `half` keeps a NaN's payload
/// and sets its quiet bit (the mantissa's top bit, `0x40` here); every other value is the 16
/// bits shifted up. The magnitude is a NaN when it exceeds `0x7f80`, that is when adding
/// `0x7f` carries it into bit 15 (it stays below `0x807f`), so the quiet bit is that carry
/// moved down to bit 6: five 16-bit operations, eight elements to an SSE register.
#[inline(always)]
pub(crate) fn bf16_to_f32(bits: u16) -> f32 {
    let quiet = (((bits & 0x7fff) + 0x7f) >> 9) & 0x40;
    f32::from_bits(u32::from(bits | quiet) << 16)
}

/// `half::f16::to_f32` of `bits`, without branches (each case is computed and one kept).
///
/// The exponent and mantissa move up to `f32`'s places and the exponent is rebiased by
/// 127 - 15. Infinities and NaNs (exponent all ones) are rebiased once more, to `f32`'s
/// all-ones exponent, and a NaN gets its quiet bit, as `half` does. Zeros and subnormals
/// (exponent zero) are `m · 2⁻²⁴`: the rebiased bits with the implicit one added are
/// `2⁻¹⁴ · (1 + m/1024)`, and subtracting `2⁻¹⁴` leaves exactly that (an exact difference
/// of two normal floats, so no rounding mode or flush-to-zero setting can change it).
#[inline(always)]
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    const REBIAS: u32 = (127 - 15) << 23;
    let bits = u32::from(bits);
    let sign = (bits & 0x8000) << 16;
    let magnitude = bits & 0x7fff;
    let exponent = magnitude & 0x7c00;
    let normal = (magnitude << 13) + REBIAS;
    let quiet = if magnitude & 0x03ff != 0 {
        0x0040_0000
    } else {
        0
    };
    let special = (normal + REBIAS) | quiet;
    let two_to_minus_14 = f32::from_bits(113 << 23);
    let small = (f32::from_bits(normal + (1 << 23)) - two_to_minus_14).to_bits();
    let widened = if exponent == 0x7c00 {
        special
    } else if exponent == 0 {
        small
    } else {
        normal
    };
    f32::from_bits(widened | sign)
}

/// `half::f16::to_f32` of `bits` for every value but the subnormals (nonzero with a zero
/// exponent), in 16-bit operations on the result's two halves, so that eight fit an SSE
/// register. The low half is the mantissa's last three bits moved up (`bits << 13`); the
/// high half is the sign, the rest of the mantissa and the exponent rebiased by 127 - 15
/// (`0x3800` added), once more for infinities and NaNs (an exponent of all ones: the
/// magnitude plus `0x400` reaches bit 15), with a NaN's quiet bit (the magnitude plus
/// `0x3ff` reaches bit 15 only for a NaN); zero stays zero.
#[inline(always)]
fn f16_to_f32_unless_subnormal(bits: u16) -> f32 {
    let magnitude = bits & 0x7fff;
    let all_ones = (((magnitude + 0x400) as i16) >> 15) as u16;
    let quiet = ((magnitude + 0x3ff) >> 9) & 0x40;
    let high = ((magnitude >> 3) + 0x3800 + (all_ones & 0x3800)) | quiet;
    let high = if magnitude == 0 { 0 } else { high } | (bits & 0x8000);
    f32::from_bits((u32::from(high) << 16) | u32::from(bits << 13))
}

/// Whether `bits` is a subnormal `float16` (exponent zero, mantissa not).
#[inline(always)]
fn is_subnormal(bits: u16) -> bool {
    (bits & 0x7fff).wrapping_sub(1) < 0x3ff
}

/// Widens the little-endian `float16` values of `bytes` into the front of `out` as
/// [`widen_wire`] does with [`f16_to_f32`], but each block of eight without a subnormal
/// (nearly all of them in real data) takes the 16-bit path.
#[inline(always)]
pub(crate) fn widen_f16_wire(bytes: &[u8], out: &mut [f32]) -> usize {
    let n = out.len().min(bytes.len() / 2);
    let (bytes, out) = (&bytes[..2 * n], &mut out[..n]);
    let mut blocks = out.chunks_exact_mut(BLOCK);
    let mut wire = bytes.chunks_exact(2 * BLOCK);
    for (dst, src) in (&mut blocks).zip(&mut wire) {
        let halves: [u16; BLOCK] = bytemuck::pod_read_unaligned(src);
        let halves = halves.map(u16::from_le);
        if halves.iter().fold(false, |any, &h| any | is_subnormal(h)) {
            for (slot, half) in dst.iter_mut().zip(halves) {
                *slot = f16_to_f32(half);
            }
        } else {
            for (slot, half) in dst.iter_mut().zip(halves) {
                *slot = f16_to_f32_unless_subnormal(half);
            }
        }
    }
    let tail = wire.remainder().chunks_exact(2);
    for (slot, pair) in blocks.into_remainder().iter_mut().zip(tail) {
        *slot = f16_to_f32(u16::from_le_bytes([pair[0], pair[1]]));
    }
    n
}

/// Widens the little-endian 16-bit floats of `bytes` into the front of `out` with
/// `convert`, as many as both hold (an odd last byte is ignored), and returns how many.
#[inline(always)]
pub(crate) fn widen_wire(bytes: &[u8], out: &mut [f32], convert: impl Fn(u16) -> f32) -> usize {
    let n = out.len().min(bytes.len() / 2);
    let (bytes, out) = (&bytes[..2 * n], &mut out[..n]);
    let mut blocks = out.chunks_exact_mut(BLOCK);
    let mut wire = bytes.chunks_exact(2 * BLOCK);
    for (dst, src) in (&mut blocks).zip(&mut wire) {
        // One unaligned 16-byte load; byte by byte, the compiler gathers the bytes singly.
        let halves: [u16; BLOCK] = bytemuck::pod_read_unaligned(src);
        for (slot, half) in dst.iter_mut().zip(halves) {
            *slot = convert(u16::from_le(half));
        }
    }
    let tail = wire.remainder().chunks_exact(2);
    for (slot, pair) in blocks.into_remainder().iter_mut().zip(tail) {
        *slot = convert(u16::from_le_bytes([pair[0], pair[1]]));
    }
    n
}

/// Widens the values of `items` into the front of `out`, as many as both hold.
#[inline(always)]
pub(crate) fn widen_values<T: Copy>(
    items: impl Iterator<Item = T>,
    out: &mut [f32],
    convert: impl Fn(T) -> f32,
) -> usize {
    let mut n = 0;
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = convert(item);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};
    use proptest::prelude::*;

    #[test]
    fn bfloat16_agrees_with_half_on_every_bit_pattern() {
        for bits in 0..=u16::MAX {
            let ours = bf16_to_f32(bits).to_bits();
            let theirs = bf16::from_bits(bits).to_f32().to_bits();
            assert_eq!(ours, theirs, "bfloat16 {bits:#06x}");
        }
    }

    #[test]
    fn float16_agrees_with_half_on_every_bit_pattern() {
        for bits in 0..=u16::MAX {
            let theirs = f16::from_bits(bits).to_f32().to_bits();
            assert_eq!(f16_to_f32(bits).to_bits(), theirs, "float16 {bits:#06x}");
            let value = f16::from_bits(bits);
            let subnormal = value.classify() == core::num::FpCategory::Subnormal;
            assert_eq!(is_subnormal(bits), subnormal, "{bits:#06x}");
            if !subnormal {
                let fast = f16_to_f32_unless_subnormal(bits).to_bits();
                assert_eq!(fast, theirs, "float16 {bits:#06x} on the 16-bit path");
            }
        }
    }

    fn wire(bits: &[u16]) -> std::vec::Vec<u8> {
        bits.iter().flat_map(|b| b.to_le_bytes()).collect()
    }

    proptest! {
        #[test]
        fn decoded_and_built_views_widen_like_their_elements(
            bits in proptest::collection::vec(any::<u16>(), 0..40),
            room in 0usize..48,
        ) {
            use crate::{Array, Decode, FixedArray};
            let mut bytes = std::vec::Vec::from((bits.len() as u32).to_le_bytes());
            bytes.extend(wire(&bits));
            let brain: std::vec::Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
            let half: std::vec::Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
            let decoded_brain = Array::<bf16>::from_bytes(&bytes).map_err(|e| TestCaseError::fail(std::format!("{e}")))?;
            let decoded_half = Array::<f16>::from_bytes(&bytes).map_err(|e| TestCaseError::fail(std::format!("{e}")))?;
            let n = bits.len().min(room);
            let widened = |fill: &dyn Fn(&mut [f32]) -> usize| {
                let mut out = std::vec![-7.0f32; room];
                let count = fill(&mut out);
                (count, out.iter().map(|f| f.to_bits()).collect::<std::vec::Vec<_>>())
            };
            let want = |convert: fn(u16) -> f32| {
                let mut out: std::vec::Vec<u32> = bits[..n].iter().map(|&b| convert(b).to_bits()).collect();
                out.resize(room, (-7.0f32).to_bits());
                (n, out)
            };
            let brain_want = want(|b| bf16::from_bits(b).to_f32());
            let half_want = want(|b| f16::from_bits(b).to_f32());
            prop_assert_eq!(widened(&|out| decoded_brain.to_f32_slice(out)), brain_want.clone());
            prop_assert_eq!(widened(&|out| Array::from_slice(&brain).to_f32_slice(out)), brain_want);
            prop_assert_eq!(widened(&|out| decoded_half.to_f32_slice(out)), half_want.clone());
            prop_assert_eq!(widened(&|out| Array::from_slice(&half).to_f32_slice(out)), half_want);

            // A fixed array of three, decoded and built.
            if let Some(first) = bits.get(..3) {
                let first_wire = wire(first);
                let fixed = FixedArray::<bf16, 3>::from_bytes(&first_wire).map_err(|e| TestCaseError::fail(std::format!("{e}")))?;
                let want: std::vec::Vec<u32> = first.iter().map(|&b| bf16::from_bits(b).to_f32().to_bits()).collect();
                prop_assert_eq!(fixed.to_f32_array().map(f32::to_bits).to_vec(), want.clone());
                let values = [brain[0], brain[1], brain[2]];
                prop_assert_eq!(FixedArray::from_array(&values).to_f32_array().map(f32::to_bits).to_vec(), want);
                let fixed = FixedArray::<f16, 3>::from_bytes(&first_wire).map_err(|e| TestCaseError::fail(std::format!("{e}")))?;
                let mut out = [0.0f32; 2];
                prop_assert_eq!(fixed.to_f32_slice(&mut out), 2);
                prop_assert_eq!(out[1].to_bits(), f16::from_bits(first[1]).to_f32().to_bits());
            }
        }

        #[test]
        fn wire_widening_converts_every_element_in_order(
            bits in proptest::collection::vec(any::<u16>(), 0..70),
            room in 0usize..80,
            odd in any::<bool>(),
        ) {
            let mut bytes = wire(&bits);
            if odd {
                bytes.push(0xff);
            }
            let brain = |bytes: &[u8], out: &mut [f32]| widen_wire(bytes, out, bf16_to_f32);
            let half = |bytes: &[u8], out: &mut [f32]| widen_f16_wire(bytes, out);
            for (widen, convert) in [
                (&brain as &dyn Fn(&[u8], &mut [f32]) -> usize, bf16_to_f32 as fn(u16) -> f32),
                (&half, f16_to_f32),
            ] {
                let mut out = std::vec![f32::from_bits(0xdead_beef); room];
                let n = widen(&bytes, &mut out);
                prop_assert_eq!(n, bits.len().min(room));
                for (i, slot) in out.iter().enumerate() {
                    let want = if i < n { convert(bits[i]) } else { f32::from_bits(0xdead_beef) };
                    prop_assert_eq!(slot.to_bits(), want.to_bits(), "element {}", i);
                }
            }
        }
    }
}
