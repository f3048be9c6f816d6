//! Benchmark data shared by the benches of this crate.
#![no_std]

use bebop_core::{Uuid, bf16};

/// The Person record of the paper's PersonSmall workload.
pub const PERSON_NAME: &str = "Alice Smith";
/// The e-mail of the PersonSmall record.
pub const PERSON_EMAIL: &str = "alice@example.com";

/// A fixed uuid for the embedding workloads.
pub const EMBEDDING_ID: Uuid = Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000");

/// Fills `out` with a deterministic pseudo-random bfloat16 vector in [-1, 1).
pub fn fill_vector(out: &mut [bf16]) {
    let mut state: u32 = 0x1234_5678;
    for v in out {
        // xorshift32
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        *v = bf16::from_f32((state >> 8) as f32 / (1u32 << 23) as f32 - 1.0);
    }
}
