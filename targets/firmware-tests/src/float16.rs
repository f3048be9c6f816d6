//! 16-bit floats to and from `f32` on the target: `Array::to_f32_slice` over decoded
//! `bfloat16[]` and `float16[]`, and `bf16_from_f32_slice` / `f16_from_f32_slice`, each
//! against `half`'s conversion of every element and, for the edge cases, against the bits
//! the IEEE formats prescribe. The Cortex-M0 and M3 have no floating-point unit, so the two
//! float additions in these conversions run in software here.

use bebop_core::{Array, Decode, Encode, bf16, bf16_from_f32_slice, f16, f16_from_f32_slice};
use qemu_board::semihosting::hprintln;
use target_schema::fixtures::EMBEDDING_VALUES;

use crate::checks::Checks;

/// Values of the embedding fixture used here: enough for the eight-wide blocks and a tail.
const N: usize = 45;

/// `f32` inputs at the edges of both narrowings, with the `float16` bits each must give.
const NARROW_EDGES: [(u32, u16); 12] = [
    (0x3fc0_0000, 0x3e00), // 1.5
    (0xbf80_0000, 0xbc00), // -1.0
    (0x4788_b800, 0x7c00), // 70,000: overflow to infinity
    (0x477f_f000, 0x7c00), // 65,520: rounds up to infinity
    (0x477f_e000, 0x7bff), // 65,504: the largest float16
    (0x3586_37bd, 0x0011), // 1e-6: a subnormal, 16.78 × 2⁻²⁴ rounded to 17
    (0x3300_0000, 0x0000), // 2⁻²⁵: a tie, to even (zero)
    (0x33c0_0000, 0x0002), // 1.5 × 2⁻²⁴: a tie, to even (two)
    (0x8000_0000, 0x8000), // -0.0
    (0x7f80_0000, 0x7c00), // infinity
    (0x7f80_2001, 0x7e01), // a signalling NaN: payload kept, quiet bit set
    (0xffc0_0000, 0xfe00), // a negative quiet NaN
];

/// `float16` bits at the edges of widening, with the `f32` bits each must give.
const WIDEN_EDGES: [(u16, u32); 8] = [
    (0x3e00, 0x3fc0_0000), // 1.5
    (0x0001, 0x3380_0000), // the smallest subnormal, 2⁻²⁴
    (0x03ff, 0x387f_c000), // the largest subnormal
    (0x0400, 0x3880_0000), // the smallest normal, 2⁻¹⁴
    (0x8000, 0x8000_0000), // -0.0
    (0x7c00, 0x7f80_0000), // infinity
    (0x7c01, 0x7fc0_2000), // a signalling NaN: payload kept, quiet bit set
    (0xfbff, 0xc77f_e000), // -65,504
];

pub fn run(c: &mut Checks) {
    hprintln!("16-bit floats to and from f32:");
    let mut wire = [0u8; 4 + 2 * N];

    // bfloat16: the embedding's first values, encoded, decoded, widened and narrowed back.
    let values = &EMBEDDING_VALUES[..N];
    if c.eq(
        "bfloat16[] encodes",
        Array::from_slice(values).encode_into(&mut wire),
        Ok(wire.len()),
    ) {
        let mut widened = [0f32; N];
        let written = Array::<bf16>::from_bytes(&wire).map(|a| a.to_f32_slice(&mut widened));
        c.eq("bfloat16[] widens every element", written, Ok(N));
        c.check(
            "bfloat16 widened as half widens it",
            values
                .iter()
                .zip(&widened)
                .all(|(v, w)| v.to_f32().to_bits() == w.to_bits()),
        );
        let mut narrowed = [bf16::ZERO; N];
        c.eq(
            "f32 narrows to bfloat16",
            bf16_from_f32_slice(&widened, &mut narrowed),
            N,
        );
        c.check(
            "bfloat16 narrowed back to itself",
            narrowed[..] == values[..],
        );
    }

    // float16: the same bits read as float16 (every exponent the embedding's bits hold),
    // then the edge cases in the first block, so that both widening paths run.
    let mut halves = [f16::ZERO; N];
    for (slot, v) in halves.iter_mut().zip(values) {
        *slot = f16::from_bits(v.to_bits());
    }
    for (slot, (bits, _)) in halves.iter_mut().zip(WIDEN_EDGES) {
        *slot = f16::from_bits(bits);
    }
    if c.eq(
        "float16[] encodes",
        Array::from_slice(&halves).encode_into(&mut wire),
        Ok(wire.len()),
    ) {
        let mut widened = [0f32; N];
        let written = Array::<f16>::from_bytes(&wire).map(|a| a.to_f32_slice(&mut widened));
        c.eq("float16[] widens every element", written, Ok(N));
        c.check(
            "float16 widened as half widens it",
            halves
                .iter()
                .zip(&widened)
                .all(|(v, w)| v.to_f32().to_bits() == w.to_bits()),
        );
        for (i, (bits, want)) in WIDEN_EDGES.iter().enumerate() {
            c.eq(
                format_args!("float16 {:#06x} widens to", bits),
                widened[i].to_bits(),
                *want,
            );
        }
    }

    let inputs = NARROW_EDGES.map(|(bits, _)| f32::from_bits(bits));
    let mut narrowed = [f16::ZERO; NARROW_EDGES.len()];
    c.eq(
        "f32 narrows to float16",
        f16_from_f32_slice(&inputs, &mut narrowed),
        NARROW_EDGES.len(),
    );
    for (i, (bits, want)) in NARROW_EDGES.iter().enumerate() {
        c.eq(
            format_args!("f32 {:#010x} narrows to", bits),
            narrowed[i].to_bits(),
            *want,
        );
        c.eq(
            format_args!("f32 {:#010x} narrows as half narrows it", bits),
            narrowed[i].to_bits(),
            f16::from_f32(inputs[i]).to_bits(),
        );
    }
}
