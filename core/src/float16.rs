//! 16-bit floats to and from `f32` in bulk: [`Array::to_f32_slice`] and
//! [`FixedArray::to_f32_slice`] widen `bfloat16[]` and `float16[]`;
//! [`bf16_from_f32_slice`] and [`f16_from_f32_slice`] narrow `f32` values for encoding.
//!
//! Model payloads travel as 16-bit floats and are computed on as `f32`, so widening a whole
//! array is the first thing most readers of an embedding or a tensor do, and narrowing the
//! last thing its writer does (as it is for a sensor sending readings as `float16` over a
//! serial line). Element by element, `half`'s conversions branch (on NaN, on the exponent,
//! on rounding), which keeps the compiler from vectorising the loop. The conversions here
//! give exactly `half`'s results, NaN payloads and round-to-nearest-even included (the
//! tests compare all 65,536 bit patterns of both types when widening, and every sign,
//! exponent and rounding case when narrowing), but are written without branches so that a
//! loop of them vectorises, straight from the wire bytes of a decoded view, whatever their
//! alignment. bfloat16 needs only 16-bit operations and a shift. float16 is widened eight at
//! a time in 16-bit operations on the two halves of each result, except in a block of eight
//! holding a subnormal, which takes a branch-free 32-bit path (docs/decisions.md D48 has the
//! measurements). Integer operations do all of it but two float operations, on the
//! subnormal paths only in effect: widening subtracts (an exact result), narrowing adds
//! (the addition is the rounding). Microcontrollers without a floating-point unit run them
//! in software; the firmware test image checks the results there.
//!
//! [`Array::to_f32_slice`]: crate::Array::to_f32_slice
//! [`FixedArray::to_f32_slice`]: crate::FixedArray::to_f32_slice

use half::{bf16, f16};

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

/// Widens the little-endian bfloat16 values of `bytes` into the front of `out` and returns
/// how many ([`widen_wire`] with [`bf16_to_f32`] for every element).
#[inline(always)]
pub(crate) fn widen_bf16_wire(bytes: &[u8], out: &mut [f32]) -> usize {
    widen_wire(
        bytes,
        out,
        |halves, dst| {
            for (slot, half) in dst.iter_mut().zip(halves) {
                *slot = bf16_to_f32(half);
            }
        },
        bf16_to_f32,
    )
}

/// Widens the little-endian `float16` values of `bytes` into the front of `out` and returns
/// how many: each block of eight without a subnormal (nearly all of them in real data) takes
/// the 16-bit path, a block with one and the tail [`f16_to_f32`].
#[inline(always)]
pub(crate) fn widen_f16_wire(bytes: &[u8], out: &mut [f32]) -> usize {
    widen_wire(
        bytes,
        out,
        |halves, dst| {
            if halves.iter().fold(false, |any, &h| any | is_subnormal(h)) {
                for (slot, half) in dst.iter_mut().zip(halves) {
                    *slot = f16_to_f32(half);
                }
            } else {
                for (slot, half) in dst.iter_mut().zip(halves) {
                    *slot = f16_to_f32_unless_subnormal(half);
                }
            }
        },
        f16_to_f32,
    )
}

/// Widens the little-endian 16-bit floats of `bytes` into the front of `out`, as many as
/// both hold (an odd last byte is ignored), and returns how many: blocks of eight with
/// `block` (given the eight values and where they go), the rest one by one with `one`.
#[inline(always)]
fn widen_wire(
    bytes: &[u8],
    out: &mut [f32],
    block: impl Fn([u16; BLOCK], &mut [f32]),
    one: impl Fn(u16) -> f32,
) -> usize {
    let n = out.len().min(bytes.len() / 2);
    let (bytes, out) = (&bytes[..2 * n], &mut out[..n]);
    let mut blocks = out.chunks_exact_mut(BLOCK);
    let mut wire = bytes.chunks_exact(2 * BLOCK);
    for (dst, src) in (&mut blocks).zip(&mut wire) {
        // One unaligned 16-byte load; byte by byte, the compiler gathers the bytes singly.
        let halves: [u16; BLOCK] = bytemuck::pod_read_unaligned(src);
        block(halves.map(u16::from_le), dst);
    }
    let tail = wire.remainder().chunks_exact(2);
    for (slot, pair) in blocks.into_remainder().iter_mut().zip(tail) {
        *slot = one(u16::from_le_bytes([pair[0], pair[1]]));
    }
    n
}

/// Widens the values of `items` into the front of `out`, as many as both hold.
#[inline(always)]
pub(crate) fn widen_values<T>(
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

/// `half::bf16::from_f32` of `value`, without branches or selects: NaNs keep the top of
/// their payload and get the quiet bit; everything else is rounded to the nearest bfloat16,
/// ties to even (adding `0x7fff` plus the kept part's last bit carries exactly when it should
/// round up; the largest finite values round to infinity, as in `half`). A NaN gets no
/// increment, so that its top half stays as it is, and the quiet bit from the NaN mask.
#[inline(always)]
fn f32_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    let nan = (u32::from(bits & 0x7fff_ffff > 0x7f80_0000)).wrapping_neg();
    let increment = (0x7fff + ((bits >> 16) & 1)) & !nan;
    let rounded = bits.wrapping_add(increment) as i32 >> 16;
    (rounded as u16) | (nan as u16 & 0x40)
}

/// `half::f16::from_f32` of `value`, without branches (each case is computed and one
/// kept), rounding to nearest, ties to even:
/// - NaN: the top ten bits of the payload, with the quiet bit set;
/// - `2¹⁶` and more (infinity included): infinity;
/// - from `2⁻¹⁴` (the smallest normal `float16`): the exponent rebiased by 15 - 127 and the
///   mantissa rounded at bit 13 (adding `0xfff` plus the kept part's last bit), a carry
///   moving on into the exponent (up to infinity, as in `half`);
/// - below: a subnormal or zero, `value + 0.5` rounded by the addition itself to a multiple
///   of `2⁻²⁴` (the spacing of `float16` subnormals and of floats from 0.5 to 1), minus
///   0.5's bits. The sum is a normal float, so flush-to-zero cannot change it, and an input
///   that denormals-are-zero would read as zero rounds to zero anyway.
#[inline(always)]
fn f32_to_f16(value: f32) -> u16 {
    const REBIAS: u32 = (127 - 15) << 23;
    const HALF: u32 = 126 << 23;
    let bits = value.to_bits();
    let sign = (bits >> 16) as u16 & 0x8000;
    let magnitude = bits & 0x7fff_ffff;
    let quiet_nan = 0x7e00 | ((magnitude >> 13) as u16 & 0x03ff);
    let odd = (magnitude >> 13) & 1;
    let normal = (magnitude.wrapping_sub(REBIAS).wrapping_add(0x0fff + odd) >> 13) as u16;
    let small = (f32::from_bits(magnitude) + f32::from_bits(HALF))
        .to_bits()
        .wrapping_sub(HALF) as u16;
    let narrowed = if magnitude > 0x7f80_0000 {
        quiet_nan
    } else if magnitude >= (127 + 16) << 23 {
        0x7c00
    } else if magnitude < (127 - 14) << 23 {
        small
    } else {
        normal
    };
    narrowed | sign
}

/// Narrows `f32` values to bfloat16 into the front of `out`, rounding to nearest (ties to
/// even) exactly as `half::bf16::from_f32` does, NaN payloads included, and returns how many
/// were written (the smaller of the two lengths). The loop has no branches, so it
/// vectorises; the result is ready for [`Array::from_slice`](crate::Array::from_slice).
///
/// ```
/// use bebop_core::{Array, Encode, bf16, bf16_from_f32_slice};
///
/// let computed = [1.0f32, -2.0, 0.1];
/// let mut narrowed = [bf16::ZERO; 3];
/// assert_eq!(bf16_from_f32_slice(&computed, &mut narrowed), 3);
/// assert_eq!(narrowed[2], bf16::from_f32(0.1));
///
/// // Encoded as bfloat16[]: a count, then two bytes per value.
/// let mut out = [0u8; 10];
/// let bytes = Array::from_slice(&narrowed).encode_to_slice(&mut out)?;
/// assert_eq!(bytes, [3, 0, 0, 0, 0x80, 0x3f, 0x00, 0xc0, 0xcd, 0x3d]);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub fn bf16_from_f32_slice(src: &[f32], out: &mut [bf16]) -> usize {
    narrow(src, out, |value| bf16::from_bits(f32_to_bf16(value)))
}

/// Narrows `f32` values to `float16` into the front of `out`, rounding to nearest (ties to
/// even) exactly as `half::f16::from_f32` does without hardware conversion: NaN payloads,
/// subnormals and overflow to infinity included. Returns how many were written (the smaller
/// of the two lengths). The loop has no branches, so it vectorises.
///
/// ```
/// use bebop_core::{f16, f16_from_f32_slice};
///
/// let readings = [1.5f32, 70_000.0, 1e-6];
/// let mut narrowed = [f16::ZERO; 3];
/// assert_eq!(f16_from_f32_slice(&readings, &mut narrowed), 3);
/// assert_eq!(narrowed, [f16::from_f32(1.5), f16::INFINITY, f16::from_f32(1e-6)]);
/// ```
pub fn f16_from_f32_slice(src: &[f32], out: &mut [f16]) -> usize {
    narrow(src, out, |value| f16::from_bits(f32_to_f16(value)))
}

/// Converts `src` into the front of `out` with `convert`, as many as both hold. Element by
/// element: the compiler vectorises this shape of both conversions with every build setting
/// tried, where blocks of eight as arrays gave bfloat16 faster or slower code with the
/// number of codegen units and float16 twice the instructions.
#[inline(always)]
fn narrow<T>(src: &[f32], out: &mut [T], convert: impl Fn(f32) -> T) -> usize {
    let n = src.len().min(out.len());
    for (slot, &value) in out[..n].iter_mut().zip(&src[..n]) {
        *slot = convert(value);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every sign and exponent of `f32`, with mantissas that exercise each rounding case of
    /// both narrowings (zero, the round bit alone, just below and above it, ties with an odd
    /// and an even kept part, all ones) in every position a subnormal result can put it,
    /// plus seeded pseudo-random ones.
    fn narrowing_cases() -> impl Iterator<Item = u32> {
        let mut seed = 0x9e37_79b9_u32;
        let mut mantissas = std::vec![0u32, 1, 0x7f_ffff, 0x40_0000, 0x7f_e000];
        for bit in 0..23 {
            let round = 1u32 << bit;
            for extra in [0, 1, round << 1, (round << 1) | 1, round.wrapping_sub(1)] {
                mantissas.push((round | extra) & 0x7f_ffff);
                mantissas.push(round.wrapping_sub(1) & 0x7f_ffff);
            }
        }
        for _ in 0..256 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            mantissas.push(seed & 0x7f_ffff);
        }
        (0..512u32).flat_map(move |sign_exponent| {
            let mantissas = mantissas.clone();
            mantissas
                .into_iter()
                .map(move |m| (sign_exponent << 23) | m)
        })
    }

    #[test]
    fn narrowing_agrees_with_half_on_every_rounding_case() {
        let mut count = 0;
        for bits in narrowing_cases() {
            let value = f32::from_bits(bits);
            let brain = bf16::from_f32(value).to_bits();
            assert_eq!(f32_to_bf16(value), brain, "bfloat16 of {bits:#010x}");
            let half = f16::from_f32(value).to_bits();
            assert_eq!(f32_to_f16(value), half, "float16 of {bits:#010x}");
            count += 1;
        }
        assert!(count > 100_000, "{count} cases");
    }

    /// All 2³² inputs: 12 seconds in a release build (`cargo test --release -p
    /// bebop-core --lib -- --ignored every_f32`), too long for the suite, which runs the two
    /// tests around this one instead.
    #[test]
    #[ignore = "exhaustive: run with --release --ignored"]
    fn narrowing_agrees_with_half_on_every_f32() {
        for bits in 0..=u32::MAX {
            let value = f32::from_bits(bits);
            assert_eq!(
                f32_to_bf16(value),
                bf16::from_f32(value).to_bits(),
                "{bits:#010x}"
            );
            assert_eq!(
                f32_to_f16(value),
                f16::from_f32(value).to_bits(),
                "{bits:#010x}"
            );
        }
    }

    #[test]
    fn narrowing_agrees_with_half_on_every_bfloat16_and_float16_neighbourhood() {
        // Each 16-bit pattern as the top of an f32, with the low half at each rounding edge.
        for high in 0..=u32::from(u16::MAX) {
            for low in [
                0u32, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1000, 0x0fff, 0x2000,
            ] {
                let value = f32::from_bits((high << 16) | low);
                assert_eq!(f32_to_bf16(value), bf16::from_f32(value).to_bits());
                assert_eq!(f32_to_f16(value), f16::from_f32(value).to_bits());
            }
        }
    }

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
        fn narrowing_agrees_with_half_and_fills_the_front(
            bits in proptest::collection::vec(any::<u32>(), 0..40),
            room in 0usize..48,
        ) {
            let values: std::vec::Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            let n = values.len().min(room);
            let mut brain = std::vec![bf16::from_bits(0xdead); room];
            prop_assert_eq!(bf16_from_f32_slice(&values, &mut brain), n);
            let mut half = std::vec![f16::from_bits(0xbeef); room];
            prop_assert_eq!(f16_from_f32_slice(&values, &mut half), n);
            for i in 0..room {
                let (want_brain, want_half) = match values.get(i) {
                    Some(&v) if i < n => (bf16::from_f32(v).to_bits(), f16::from_f32(v).to_bits()),
                    _ => (0xdead, 0xbeef),
                };
                prop_assert_eq!(brain[i].to_bits(), want_brain, "bfloat16 {}", i);
                prop_assert_eq!(half[i].to_bits(), want_half, "float16 {}", i);
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
            let brain = |bytes: &[u8], out: &mut [f32]| widen_bf16_wire(bytes, out);
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
