//! Feeds arbitrary bytes to every decoder of the core crate and of the hand-written spec types;
//! a decoded value is walked completely and re-encoded with its size checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bebop_conformance::exercise::exercise_all(data);
});
