//! Feeding one input to every decoder: what the hostile-input tests and the fuzz target run.
//!
//! For each type, the input is decoded; when that succeeds the value is read completely (its
//! `Debug` form visits every element of every view) and encoded again into a size counter,
//! which checks that every length prefix matches what is written. Nothing here may panic.

use core::fmt::{self, Write};

use bebop_core::{
    Array, Decode, Duration, Encode, FixedArray, Lazy, Map, SizeCounter, Timestamp, Uuid, bf16,
};

use crate::{
    Chain, Embedding, Empty, Event, Level, Log, Person, Point, Shape, TreeNode, UserRequest,
};

/// A `fmt::Write` that only counts, so values can be walked without an allocator.
struct Count(usize);

impl Write for Count {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// What happened to one input across all decoders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// How many decoders accepted the input.
    pub accepted: usize,
    /// How many rejected it.
    pub rejected: usize,
}

/// Decodes `bytes` as `T`, walks and re-encodes it; returns whether it decoded.
///
/// A re-encode that disagrees with `encoded_size` is a bug and panics, which the fuzzer and
/// the tests report.
pub fn exercise<'a, T>(bytes: &'a [u8]) -> bool
where
    T: Decode<'a> + Encode + fmt::Debug,
{
    match T::from_bytes(bytes) {
        Ok(value) => {
            let mut count = Count(0);
            let _ = write!(count, "{value:?}");
            let mut sizes = SizeCounter::default();
            let encoded = value.encode(&mut sizes);
            assert!(
                encoded.is_ok(),
                "re-encoding a decoded value failed: {encoded:?}"
            );
            assert_eq!(sizes.count, value.encoded_size(), "encoded_size disagrees");
            true
        }
        Err(_) => false,
    }
}

macro_rules! all_types {
    ($bytes:expr, $outcome:expr, $($t:ty),* $(,)?) => {$(
        if exercise::<$t>($bytes) {
            $outcome.accepted += 1;
        } else {
            $outcome.rejected += 1;
        }
    )*};
}

/// Runs [`exercise`] for every decoder the core crate and this crate have.
pub fn exercise_all(bytes: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    all_types!(
        bytes,
        outcome,
        bool,
        u8,
        i16,
        u32,
        i64,
        u128,
        f32,
        f64,
        bf16,
        Uuid,
        Timestamp,
        Duration,
        &str,
        &[u8],
        &[u8; 3],
        [u16; 2],
        Array<i32>,
        Array<bool>,
        Array<&str>,
        Array<Array<i32>>,
        Array<Empty>,
        Array<Level>,
        Array<Point>,
        Array<Shape>,
        Array<UserRequest>,
        FixedArray<Array<u8>, 3>,
        FixedArray<Uuid, 2>,
        Map<u8, i32>,
        Map<&str, Array<u8>>,
        Map<Uuid, Map<i64, &str>>,
        Lazy<TreeNode>,
        Point,
        UserRequest,
        Shape,
        Event,
        TreeNode,
        Chain,
        Person,
        Embedding,
        Level,
        Log,
    );
    outcome
}
