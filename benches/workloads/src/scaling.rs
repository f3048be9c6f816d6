//! Large scalar arrays: decode cost against array length (a Bebop view of a scalar array is made
//! in O(1)), and bandwidth against `memcpy` of the same bytes for records from 64 KiB to 16 MiB.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bebop_runtime::{Decode as _, Encode as _};
use prost::Message as _;
use rkyv::rancor;
use serde::Serialize;

use crate::bop::{self, owned};
use crate::data::{embedding_of_dim, tensor_shard_of_size};
use crate::model::{ArchivedEmbeddingBf16, EmbeddingBf16, TensorShard};
use crate::pb;
use crate::shape::Shape;
use crate::timing::{Timing, TimingConfig, measure, smoke};
use crate::walk::checksum;

/// Embedding lengths for the O(1) table: the paper's three, then up to a million.
pub const EMBEDDING_DIMS: [usize; 6] = [384, 768, 1536, 16_384, 131_072, 1_048_576];

/// Record sizes for the bandwidth table: 64 KiB to 16 MiB (bfloat16 payload bytes).
pub const BANDWIDTH_SIZES: [usize; 5] = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20];

/// One row of the O(1) table.
#[derive(Clone, Debug, Serialize)]
pub struct ScalingRow {
    /// Number of bfloat16 elements.
    pub dim: usize,
    /// Bebop wire size.
    pub wire_bytes: usize,
    /// Bebop view decode.
    pub bebop_decode: Timing,
    /// Bebop view decode + reading every element.
    pub bebop_decode_walk: Timing,
    /// Bebop owned decode (copies into a `Vec<bf16>`).
    pub bebop_owned_decode: Timing,
    /// prost decode (copies the `bytes` field).
    pub prost_decode: Timing,
    /// rkyv validated access.
    pub rkyv_access: Timing,
    /// Bebop view decode, then `Array::to_f32_slice` of the vector into a caller's `[f32]`.
    pub bebop_decode_to_f32: Timing,
    /// rkyv validated access, then each archived element widened by `half`'s `to_f32` into
    /// a caller's `[f32]` (what a reader of the archive writes).
    pub rkyv_access_to_f32: Timing,
    /// Bebop owned decode, then `half`'s `convert_to_f32_slice` of the `Vec<bf16>`.
    pub bebop_owned_decode_to_f32: Timing,
    /// The vector's values as `f32` narrowed to bfloat16 by `bf16_from_f32_slice`.
    pub bebop_from_f32: Timing,
    /// The same by `half`'s `convert_from_f32_slice`.
    pub half_from_f32: Timing,
}

/// One row of the bandwidth table: each operation's time on a record of `wire_bytes`.
#[derive(Clone, Debug, Serialize)]
pub struct BandwidthRow {
    /// Payload size (bfloat16 data bytes).
    pub payload_bytes: usize,
    /// Encoded record size.
    pub wire_bytes: usize,
    /// `copy_from_slice` of the encoded record into another buffer.
    pub memcpy: Timing,
    /// View decode alone.
    pub decode: Timing,
    /// View decode, then reading every element through `Array::chunks` and `Array::iter`.
    pub decode_read: Timing,
    /// View decode, then reading every element from `Array::wire_bytes` in two-byte chunks,
    /// block by block as the walks do (a yardstick for `Array::iter`).
    pub decode_read_wire: Timing,
    /// View decode, then `Array::copy_to_slice` into a caller's `[bf16]`.
    pub decode_copy_out: Timing,
    /// View decode, then `Array::to_f32_slice` into a caller's `[f32]`.
    pub decode_to_f32: Timing,
    /// Encoding the view into a caller's buffer.
    pub encode: Timing,
    /// Owned decode (allocates and copies into a `Vec<bf16>`).
    pub owned_decode: Timing,
}

impl ScalingRow {
    /// Combines the passes of one row (see [`Timing::combine`]).
    pub fn combine(passes: &[ScalingRow]) -> Option<ScalingRow> {
        let first = passes.first()?;
        let c = |pick: fn(&ScalingRow) -> Timing| {
            Timing::combine(&passes.iter().map(pick).collect::<Vec<_>>())
        };
        Some(ScalingRow {
            dim: first.dim,
            wire_bytes: first.wire_bytes,
            bebop_decode: c(|r| r.bebop_decode),
            bebop_decode_walk: c(|r| r.bebop_decode_walk),
            bebop_owned_decode: c(|r| r.bebop_owned_decode),
            prost_decode: c(|r| r.prost_decode),
            rkyv_access: c(|r| r.rkyv_access),
            bebop_decode_to_f32: c(|r| r.bebop_decode_to_f32),
            rkyv_access_to_f32: c(|r| r.rkyv_access_to_f32),
            bebop_owned_decode_to_f32: c(|r| r.bebop_owned_decode_to_f32),
            bebop_from_f32: c(|r| r.bebop_from_f32),
            half_from_f32: c(|r| r.half_from_f32),
        })
    }
}

impl BandwidthRow {
    /// Combines the passes of one row (see [`Timing::combine`]).
    pub fn combine(passes: &[BandwidthRow]) -> Option<BandwidthRow> {
        let first = passes.first()?;
        let c = |pick: fn(&BandwidthRow) -> Timing| {
            Timing::combine(&passes.iter().map(pick).collect::<Vec<_>>())
        };
        Some(BandwidthRow {
            payload_bytes: first.payload_bytes,
            wire_bytes: first.wire_bytes,
            memcpy: c(|r| r.memcpy),
            decode: c(|r| r.decode),
            decode_read: c(|r| r.decode_read),
            decode_read_wire: c(|r| r.decode_read_wire),
            decode_copy_out: c(|r| r.decode_copy_out),
            decode_to_f32: c(|r| r.decode_to_f32),
            encode: c(|r| r.encode),
            owned_decode: c(|r| r.owned_decode),
        })
    }

    /// Bytes per second of an operation on this record.
    pub fn bytes_per_sec(&self, t: &Timing) -> f64 {
        if t.min_ns > 0.0 {
            self.wire_bytes as f64 / (t.min_ns * 1e-9)
        } else {
            0.0
        }
    }

    /// An operation's speed as a percentage of `memcpy`'s.
    pub fn percent_of_memcpy(&self, t: &Timing) -> f64 {
        if t.min_ns > 0.0 {
            100.0 * self.memcpy.min_ns / t.min_ns
        } else {
            0.0
        }
    }
}

fn run_op<R>(quick: bool, config: &TimingConfig, mut op: impl FnMut() -> R) -> Timing {
    let mut run = |iters: u64| -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(op());
        }
        start.elapsed()
    };
    if quick {
        smoke(&mut run)
    } else {
        measure(&mut run, config)
    }
}

fn encode(view: &impl bebop_runtime::Encode) -> Result<Vec<u8>, String> {
    bebop_runtime::EncodeExt::encode_to_vec(view).map_err(|e| e.to_string())
}

/// Measures decode against array length. In quick mode each operation runs once, and the
/// results are only checked, not timed.
pub fn scaling(quick: bool, config: &TimingConfig) -> Result<Vec<ScalingRow>, String> {
    let dims: &[usize] = if quick {
        &EMBEDDING_DIMS[..4]
    } else {
        &EMBEDDING_DIMS
    };
    let mut rows = Vec::new();
    for &dim in dims {
        let model = embedding_of_dim(dim);
        let arena = bumpalo::Bump::new();
        let bytes = encode(&model.view(&arena))?;
        let pb_bytes = model.to_pb().encode_to_vec();
        let archive = rkyv::to_bytes::<rancor::Error>(&model).map_err(|e| e.to_string())?;
        // Check each form before timing it.
        let view = bop::EmbeddingBF16::from_bytes(&bytes).map_err(|e| e.to_string())?;
        let expected = checksum(&model);
        let owned = owned::EmbeddingBF16::from_bytes(&bytes).map_err(|e| e.to_string())?;
        let from_pb = pb::EmbeddingBf16::decode(&pb_bytes[..]).map_err(|e| e.to_string())?;
        let archived = rkyv::access::<ArchivedEmbeddingBf16, rancor::Error>(&archive)
            .map_err(|e| e.to_string())?;
        for (what, sum) in [
            ("view", checksum(&view)),
            ("owned", checksum(&owned)),
            ("prost", checksum(&from_pb)),
            ("rkyv", checksum(archived)),
        ] {
            if sum != expected {
                return Err(format!(
                    "embedding of {dim}: the {what} form reads differently"
                ));
            }
        }
        // The three ways of widening the vector to f32 must agree with `half`, bit for bit.
        let want: Vec<u32> = model
            .vector
            .iter()
            .map(|&b| half::bf16::from_bits(b).to_f32().to_bits())
            .collect();
        let mut out = vec![0f32; dim];
        for (what, written) in [
            ("view", view.vector.to_f32_slice(&mut out)),
            ("rkyv", rkyv_to_f32(archived, &mut out)),
            ("owned", owned_to_f32(&owned, &mut out)),
        ] {
            if written != dim || out.iter().map(|f| f.to_bits()).ne(want.iter().copied()) {
                return Err(format!(
                    "embedding of {dim}: the {what} form widens to f32 differently"
                ));
            }
        }
        // Narrowing those f32 values back gives the vector again (each is exactly a
        // bfloat16), by either conversion; `float16.rs`'s tests hold the two to the same
        // bits on every input.
        let widened = out.clone();
        let mut narrowed = vec![bebop_runtime::bf16::ZERO; dim];
        for (what, written) in [
            (
                "bebop",
                bebop_runtime::bf16_from_f32_slice(&widened, &mut narrowed),
            ),
            ("half", half_from_f32(&widened, &mut narrowed)),
        ] {
            if written != dim
                || narrowed
                    .iter()
                    .map(|b| b.to_bits())
                    .ne(model.vector.iter().copied())
            {
                return Err(format!(
                    "embedding of {dim}: {what} narrows to bfloat16 differently"
                ));
            }
        }
        if EmbeddingBf16::from_owned_bebop(&owned) != model {
            return Err(format!(
                "embedding of {dim}: owned decode changed the value"
            ));
        }
        rows.push(ScalingRow {
            dim,
            wire_bytes: bytes.len(),
            bebop_decode: run_op(quick, config, || {
                black_box(bop::EmbeddingBF16::from_bytes(black_box(&bytes))).is_ok()
            }),
            bebop_decode_walk: run_op(quick, config, || {
                bop::EmbeddingBF16::from_bytes(black_box(&bytes)).map_or(0, |v| checksum(&v))
            }),
            bebop_owned_decode: run_op(quick, config, || {
                black_box(owned::EmbeddingBF16::from_bytes(black_box(&bytes))).is_ok()
            }),
            prost_decode: run_op(quick, config, || {
                black_box(pb::EmbeddingBf16::decode(black_box(&pb_bytes[..]))).is_ok()
            }),
            rkyv_access: run_op(quick, config, || {
                black_box(rkyv::access::<ArchivedEmbeddingBf16, rancor::Error>(
                    black_box(&archive),
                ))
                .is_ok()
            }),
            bebop_decode_to_f32: run_op(quick, config, || {
                bop::EmbeddingBF16::from_bytes(black_box(&bytes))
                    .map_or(0, |v| v.vector.to_f32_slice(black_box(&mut out)))
            }),
            rkyv_access_to_f32: run_op(quick, config, || {
                rkyv::access::<ArchivedEmbeddingBf16, rancor::Error>(black_box(&archive))
                    .map_or(0, |v| rkyv_to_f32(v, black_box(&mut out)))
            }),
            bebop_owned_decode_to_f32: run_op(quick, config, || {
                owned::EmbeddingBF16::from_bytes(black_box(&bytes))
                    .map_or(0, |v| owned_to_f32(&v, black_box(&mut out)))
            }),
            bebop_from_f32: run_op(quick, config, || {
                bebop_runtime::bf16_from_f32_slice(black_box(&widened), black_box(&mut narrowed))
            }),
            half_from_f32: run_op(quick, config, || {
                half_from_f32(black_box(&widened), black_box(&mut narrowed))
            }),
        });
    }
    Ok(rows)
}

/// An archived vector widened to `f32` into the front of `out` the way its reader would:
/// element by element, through `half`'s `to_f32`.
fn rkyv_to_f32(embedding: &ArchivedEmbeddingBf16, out: &mut [f32]) -> usize {
    let mut n = 0;
    for (slot, bits) in out.iter_mut().zip(embedding.vector.iter()) {
        *slot = half::bf16::from_bits(bits.to_native()).to_f32();
        n += 1;
    }
    n
}

/// `values` narrowed by `half`'s slice conversion into the front of `out`.
fn half_from_f32(values: &[f32], out: &mut [bebop_runtime::bf16]) -> usize {
    use half::slice::HalfFloatSliceExt as _;
    let n = values.len().min(out.len());
    out[..n].convert_from_f32_slice(&values[..n]);
    n
}

/// An owned vector widened by `half`'s slice conversion.
fn owned_to_f32(embedding: &owned::EmbeddingBF16, out: &mut [f32]) -> usize {
    use half::slice::HalfFloatSliceExt as _;
    let n = embedding.vector.len().min(out.len());
    embedding.vector[..n].convert_to_f32_slice(&mut out[..n]);
    n
}

/// The sum of the little-endian 16-bit values of `bytes`, read as the walks read arrays of
/// them ([`Hasher::halves`](crate::walk::Hasher::halves)): the hand-written yardstick for
/// `Array::iter`.
fn sum_wire_halves(bytes: &[u8]) -> u64 {
    crate::walk::sum_halves(crate::walk::halves_le(bytes))
}

/// Measures bandwidth against `memcpy` for records from 64 KiB to 16 MiB.
pub fn bandwidth(quick: bool, config: &TimingConfig) -> Result<Vec<BandwidthRow>, String> {
    let sizes: &[usize] = if quick {
        &BANDWIDTH_SIZES[..2]
    } else {
        &BANDWIDTH_SIZES
    };
    let mut rows = Vec::new();
    for &size in sizes {
        let model: TensorShard = tensor_shard_of_size(size);
        let arena = bumpalo::Bump::new();
        let view = model.view(&arena);
        let bytes = encode(&view)?;
        let decoded = bop::TensorShard::from_bytes(&bytes).map_err(|e| e.to_string())?;
        if checksum(&decoded) != checksum(&model) {
            return Err(format!(
                "tensor shard of {size} bytes: the view reads differently"
            ));
        }
        let mut out = vec![bebop_runtime::bf16::ZERO; decoded.data.len()];
        if decoded.data.copy_to_slice(&mut out) != model.data.len()
            || out
                .iter()
                .map(|b| b.to_bits())
                .ne(model.data.iter().copied())
        {
            return Err(format!(
                "tensor shard of {size} bytes: copy_to_slice differs"
            ));
        }
        let mut widened = vec![0f32; decoded.data.len()];
        if decoded.data.to_f32_slice(&mut widened) != model.data.len()
            || widened.iter().map(|f| f.to_bits()).ne(model
                .data
                .iter()
                .map(|&b| half::bf16::from_bits(b).to_f32().to_bits()))
        {
            return Err(format!(
                "tensor shard of {size} bytes: to_f32_slice differs"
            ));
        }
        let wire_sum = decoded.data.wire_bytes().map_or(0, sum_wire_halves);
        let model_sum = model
            .data
            .iter()
            .map(|&b| u64::from(b))
            .fold(0u64, u64::wrapping_add);
        if wire_sum != model_sum {
            return Err(format!(
                "tensor shard of {size} bytes: wire_bytes reads differently"
            ));
        }
        let mut dst = vec![0u8; bytes.len()];
        let mut enc_buf = vec![0u8; bytes.len()];
        rows.push(BandwidthRow {
            payload_bytes: size,
            wire_bytes: bytes.len(),
            memcpy: run_op(quick, config, || {
                dst.copy_from_slice(black_box(&bytes));
                dst[0]
            }),
            decode: run_op(quick, config, || {
                black_box(bop::TensorShard::from_bytes(black_box(&bytes))).is_ok()
            }),
            decode_read: run_op(quick, config, || {
                bop::TensorShard::from_bytes(black_box(&bytes)).map_or(0, |v| checksum(&v))
            }),
            decode_read_wire: run_op(quick, config, || {
                bop::TensorShard::from_bytes(black_box(&bytes))
                    .map_or(0, |v| v.data.wire_bytes().map_or(0, sum_wire_halves))
            }),
            decode_copy_out: run_op(quick, config, || {
                bop::TensorShard::from_bytes(black_box(&bytes))
                    .map_or(0, |v| v.data.copy_to_slice(black_box(&mut out)))
            }),
            decode_to_f32: run_op(quick, config, || {
                bop::TensorShard::from_bytes(black_box(&bytes))
                    .map_or(0, |v| v.data.to_f32_slice(black_box(&mut widened)))
            }),
            encode: run_op(quick, config, || {
                view.encode_into(black_box(&mut enc_buf)).unwrap_or(0)
            }),
            owned_decode: run_op(quick, config, || {
                black_box(owned::TensorShard::from_bytes(black_box(&bytes))).is_ok()
            }),
        });
    }
    Ok(rows)
}
