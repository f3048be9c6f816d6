//! UTF-8 validation that skips ASCII in blocks: the crate's only `unsafe` code.
//!
//! `core::str::from_utf8` walks text a byte at a time whenever it is not aligned, so each
//! multi-byte character slows it down for the bytes around it: on text with one multi-byte
//! character in two hundred (the reference benchmark's novel) it runs at about a third of
//! the speed of `<[u8]>::is_ascii`. Here ASCII is skipped 32 bytes at a time (four 64-bit
//! words tested at once), the first non-ASCII byte is found with a mask, and only that one
//! character is checked before skipping on. Strings of 512 bytes and more go to `simdutf8`
//! instead where the build has SIMD for it (the `simd-utf8` and `std` features). Errors are
//! never computed here: when the check fails, `core::str::from_utf8` runs on the same bytes,
//! so the error (and its `valid_up_to`) is the standard library's.
#![allow(unsafe_code)]
// On bare-metal targets `from_utf8` is the standard library's; the rest is for hosts.
#![cfg_attr(target_os = "none", allow(dead_code))]

use core::str::Utf8Error;

/// The high bit of every byte of a word: set in a word that holds a non-ASCII byte.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Validates `bytes` as UTF-8: `core::str::from_utf8` on bare-metal targets
/// (`target_os = "none"`: microcontrollers, where flash counts more than the speed of long
/// mixed text). Its error path is linked in on every target, so a second validator there
/// only adds flash: 988 bytes for a codec of one two-string record on Cortex-M0 (built for
/// size), which made bebop-core's codec bigger than postcard's.
#[cfg(target_os = "none")]
#[inline]
pub(crate) fn from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    core::str::from_utf8(bytes)
}

/// Validates `bytes` as UTF-8, exactly like `core::str::from_utf8` (the same result and the
/// same error).
///
/// Small enough to inline into every string decoder: on 64-bit targets, strings of up to 64
/// bytes that are ASCII (names, keys, e-mail addresses, paths, enum-like tags: most strings
/// of most records) are checked here with at most eight word loads; everything else is
/// checked out of line. On other targets the inlined part is `is_ascii`.
#[cfg(not(target_os = "none"))]
#[inline]
pub(crate) fn from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if inline_ascii(bytes) || validate(bytes) {
        // SAFETY: `from_utf8_unchecked` requires valid UTF-8. ASCII is valid UTF-8:
        // `inline_ascii` is `<[u8]>::is_ascii` or `short_ascii(..) == Some(true)`, and
        // `short_ascii` returns `Some(true)` only when the words it tested cover every byte
        // and none has its high bit set (the tests check every length up to 72 with a
        // non-ASCII byte at every position); `validate` returns true only for ASCII or
        // when `is_utf8` accepted every byte as ASCII or part of a sequence `sequence_len`
        // accepted, which accepts exactly the well-formed sequences of the Unicode
        // standard's table 3-7 (the tests compare it with `core::str::from_utf8` on every
        // lead byte and every second byte).
        Ok(unsafe { core::str::from_utf8_unchecked(bytes) })
    } else {
        invalid(bytes)
    }
}

/// Whether `bytes` is ASCII as far as the inlined check can tell (false: ask [`validate`]).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn inline_ascii(bytes: &[u8]) -> bool {
    short_ascii(bytes) == Some(true)
}

/// Whether `bytes` is ASCII. On targets without 64-bit registers the word tests of
/// `short_ascii` cost more code than they save time (304 bytes for a codec of one
/// two-string record on Cortex-M0, when it still used this validator).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn inline_ascii(bytes: &[u8]) -> bool {
    bytes.is_ascii()
}

/// For `bytes` of at most 64 bytes, whether they are all ASCII, from overlapping words
/// that together cover every byte; `None` for longer input.
///
/// Strings of 33 to 64 bytes (long names, e-mail addresses, paths) are common in records:
/// checking them here rather than out of line took PersonMedium decode from 10.1 to 8.3 ns
/// and TensorShardLarge (a 38-byte tensor name) from 8.0 to 6.3 ns.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn short_ascii(bytes: &[u8]) -> Option<bool> {
    let n = bytes.len();
    // (The conversions cannot fail: each arm reads only within `n` bytes.)
    let u32_at = |i: usize| {
        let word = bytes.get(i..i + 4).unwrap_or_default();
        u32::from_ne_bytes(word.try_into().unwrap_or_default())
    };
    let u64_at = |i: usize| word_at(bytes, i).unwrap_or(0);
    let high = match n {
        0 => 0,
        // Bytes 0, n/2 and n-1 are every byte of a string of 1 to 3 bytes.
        1..=3 => {
            let at = |i: usize| u64::from(bytes.get(i).copied().unwrap_or(0));
            at(0) | at(n / 2) | at(n - 1)
        }
        4..=7 => u64::from(u32_at(0) | u32_at(n - 4)),
        8..=16 => u64_at(0) | u64_at(n - 8),
        17..=32 => u64_at(0) | u64_at(8) | u64_at(n - 16) | u64_at(n - 8),
        // Four words at the front and four at the back, OR-ed together: that measured 3%
        // faster than two 32-byte block tests on PersonMedium and TensorShard decode.
        33..=64 => {
            let front = u64_at(0) | u64_at(8) | u64_at(16) | u64_at(24);
            front | u64_at(n - 32) | u64_at(n - 24) | u64_at(n - 16) | u64_at(n - 8)
        }
        _ => return None,
    };
    Some(high & HIGH == 0)
}

/// From this length on, [`validate`] hands text to the SIMD validator where there is one.
///
/// Below it the scalar path is as fast or faster. On x86-64 with AVX2, for mostly-ASCII
/// text (one multi-byte character in 200), scalar against `simdutf8` (one run, ns): 200 bytes
/// 8.4 against 13.2, 500 bytes 19.0 against 19.1, 2,000 bytes 69 against 43, 150 KB 5,010
/// against 2,780; ASCII alone, 150 KB: 1,495 against 1,403.
const SIMD_FROM: usize = 512;

/// Whether `bytes` is valid UTF-8: the out-of-line part of [`from_utf8`].
// Out of line so that the string decoder, which is inlined into every generated decoder,
// stays small.
#[inline(never)]
fn validate(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < SIMD_FROM {
        // Up to 128 bytes, ASCII is two overlapping 64-byte blocks: names, titles and
        // paths just past what `from_utf8` tests inline (PersonMedium decode, a 70-byte
        // name: 8.0 ns this way, 9.0 through `is_utf8`, 8.4 through `is_ascii`).
        if (64..=128).contains(&n) {
            let front = ascii_block_at::<64>(bytes, 0);
            if front == Some(true) && ascii_block_at::<64>(bytes, n - 64) == Some(true) {
                return true;
            }
        }
        return is_utf8(bytes);
    }
    match simd_is_utf8(bytes) {
        Some(valid) => valid,
        None => long_is_utf8(bytes),
    }
}

/// Whether long `bytes` (from [`SIMD_FROM`] on) are valid UTF-8 without SIMD: ASCII first by
/// `<[u8]>::is_ascii`, which the compiler unrolls to 64 bytes a step (1,495 ns for 150 KB,
/// where [`is_utf8`] takes 2,990), then [`is_utf8`] from the start. Below `SIMD_FROM`,
/// `is_ascii` is not worth it: in Rust 1.95 its time swings with the length's remainder
/// (100, 300 and 500 ASCII bytes: 12.9, 18.5 and 22.4 ns, where `is_utf8` takes 3.9, 8.3
/// and 12.3).
fn long_is_utf8(bytes: &[u8]) -> bool {
    bytes.is_ascii() || is_utf8(bytes)
}

/// Whether `bytes` is valid UTF-8 by `simdutf8`, where the build has SIMD for it: x86 and
/// x86-64 with the `std` feature (AVX2 or SSE 4.2, chosen at run time) or with either
/// enabled at compile time, aarch64 with NEON, wasm32 with `simd128`. `None` elsewhere,
/// where `simdutf8` would fall back to the standard library's validator, which is slower
/// than [`long_is_utf8`].
#[cfg(all(
    feature = "simd-utf8",
    any(
        all(
            any(target_arch = "x86", target_arch = "x86_64"),
            any(feature = "std", target_feature = "avx2", target_feature = "sse4.2")
        ),
        all(target_arch = "aarch64", target_feature = "neon"),
        all(target_arch = "wasm32", target_feature = "simd128"),
    )
))]
#[inline(always)]
fn simd_is_utf8(bytes: &[u8]) -> Option<bool> {
    Some(simdutf8::basic::from_utf8(bytes).is_ok())
}

/// The build has no SIMD validator (see the other definition).
#[cfg(not(all(
    feature = "simd-utf8",
    any(
        all(
            any(target_arch = "x86", target_arch = "x86_64"),
            any(feature = "std", target_feature = "avx2", target_feature = "sse4.2")
        ),
        all(target_arch = "aarch64", target_feature = "neon"),
        all(target_arch = "wasm32", target_feature = "simd128"),
    )
)))]
#[inline(always)]
fn simd_is_utf8(_bytes: &[u8]) -> Option<bool> {
    None
}

/// The standard library's verdict on bytes `is_utf8` refused (its error is the one reported).
#[cold]
#[inline(never)]
fn invalid(bytes: &[u8]) -> Result<&str, Utf8Error> {
    core::str::from_utf8(bytes)
}

/// The 8 bytes at `i` as a little-endian word, if there are 8.
#[inline(always)]
fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    let word = bytes.get(i..i + 8)?;
    // (The conversion cannot fail: the slice has 8 bytes.)
    Some(u64::from_le_bytes(word.try_into().unwrap_or_default()))
}

/// Whether the `N` bytes at `i` are all ASCII (`N` a multiple of 8); `None` if fewer than
/// `N` bytes are left.
#[inline(always)]
fn ascii_block_at<const N: usize>(bytes: &[u8], i: usize) -> Option<bool> {
    let block = bytes.get(i..i.checked_add(N)?)?;
    let word = |k: usize| u64::from_ne_bytes(block[k..k + 8].try_into().unwrap_or_default());
    let mut high = 0;
    for k in (0..N).step_by(8) {
        high |= word(k);
    }
    Some(high & HIGH == 0)
}

/// Whether `bytes` is valid UTF-8.
///
/// ASCII is skipped 32 bytes at a time; fewer than 32 left are tested with the overlapping
/// last 32 bytes. Blocks of 64 skip long ASCII faster but cost a second mispredicted branch
/// at each multi-byte character: text with one in 200 took 99 ns for 2,000 bytes against 69.
fn is_utf8(bytes: &[u8]) -> bool {
    let mut i = 0;
    loop {
        let mut block = ascii_block_at::<32>(bytes, i);
        while block == Some(true) {
            i += 32;
            block = ascii_block_at::<32>(bytes, i);
        }
        // Fewer than 32 bytes left: if they are ASCII, so are the last 32 (which overlap
        // what was checked), tested at once rather than a word and then a byte at a time.
        if block.is_none()
            && bytes.len() >= 32
            && ascii_block_at::<32>(bytes, bytes.len() - 32) == Some(true)
        {
            return true;
        }
        // The first non-ASCII byte from `i`: a word at a time, then the tail.
        let mut next = None;
        while let Some(word) = word_at(bytes, i) {
            let high = word & HIGH;
            if high != 0 {
                // Little-endian: the lowest set bit is the first byte in memory.
                next = Some(i + (high.trailing_zeros() / 8) as usize);
                break;
            }
            i += 8;
        }
        let at = match next {
            Some(at) => at,
            None => {
                let tail = bytes.get(i..).unwrap_or_default();
                match tail.iter().position(|&b| b >= 0x80) {
                    Some(k) => i + k,
                    None => return true,
                }
            }
        };
        match sequence_len(bytes.get(at..).unwrap_or_default()) {
            Some(len) => i = at + len,
            None => return false,
        }
    }
}

/// The length of the well-formed multi-byte sequence that `s` starts with (its first byte is
/// not ASCII), or `None` when it does not start with one (Unicode table 3-7: no overlong
/// forms, no surrogates, nothing above U+10FFFF, no truncated sequence).
#[inline(always)]
fn sequence_len(s: &[u8]) -> Option<usize> {
    // A missing byte reads as 0, which is no continuation byte.
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let continuation = |b: u8| (0x80..=0xBF).contains(&b);
    let (lead, second) = (at(0), at(1));
    match lead {
        0xC2..=0xDF => continuation(second).then_some(2),
        0xE0..=0xEF => {
            let second_ok = match lead {
                0xE0 => (0xA0..=0xBF).contains(&second),
                0xED => (0x80..=0x9F).contains(&second),
                _ => continuation(second),
            };
            (second_ok && continuation(at(2))).then_some(3)
        }
        0xF0..=0xF4 => {
            let second_ok = match lead {
                0xF0 => (0x90..=0xBF).contains(&second),
                0xF4 => (0x80..=0x8F).contains(&second),
                _ => continuation(second),
            };
            (second_ok && continuation(at(2)) && continuation(at(3))).then_some(4)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;

    fn same_as_core(bytes: &[u8]) -> Result<(), TestCaseError> {
        let ours = from_utf8(bytes).map_err(|e| (e.valid_up_to(), e.error_len()));
        let std = core::str::from_utf8(bytes).map_err(|e| (e.valid_up_to(), e.error_len()));
        prop_assert_eq!(ours, std, "{:x?}", bytes);
        prop_assert_eq!(is_utf8(bytes), std.is_ok(), "{:x?}", bytes);
        prop_assert_eq!(long_is_utf8(bytes), std.is_ok(), "{:x?}", bytes);
        if let Some(valid) = simd_is_utf8(bytes) {
            prop_assert_eq!(valid, std.is_ok(), "{:x?}", bytes);
        }
        Ok(())
    }

    /// Long mostly-ASCII text around [`SIMD_FROM`], whose every path is compared with the
    /// standard library: `validate` takes the SIMD one from `SIMD_FROM` bytes on where the
    /// build has it.
    fn long_text() -> impl Strategy<Value = vec::Vec<u8>> {
        (SIMD_FROM - 8..SIMD_FROM * 3, any::<u64>()).prop_map(|(n, seed)| {
            let mut state = seed | 1;
            let mut text = std::string::String::with_capacity(n + 4);
            while text.len() < n {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(match state % 64 {
                    0 => '\u{2014}',
                    1 => '\u{e9}',
                    2 => '\u{1F600}',
                    k => char::from(b'a' + (k % 26) as u8),
                });
            }
            text.into_bytes()
        })
    }

    /// Bytes that matter to a validator: ASCII, continuation bytes at their edges, every
    /// kind of lead byte and the bytes that are never valid.
    fn interesting_byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            4 => 0x20u8..0x7F,
            1 => prop::sample::select(vec![
                0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
            ]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Arbitrary bytes: the same result and the same error as the standard library.
        #[test]
        fn agrees_with_core(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            same_as_core(&bytes)?;
        }

        /// Mostly ASCII with validator-relevant bytes, long enough to cross several blocks
        /// and words at every offset.
        #[test]
        fn agrees_on_interesting_bytes(bytes in proptest::collection::vec(interesting_byte(), 0..200)) {
            same_as_core(&bytes)?;
        }

        /// Long text, valid and then with one byte changed, for the long-input paths.
        #[test]
        fn agrees_on_long_text_and_its_corruptions(
            mut bytes in long_text(),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            same_as_core(&bytes)?;
            let i = at.index(bytes.len());
            bytes[i] = byte;
            same_as_core(&bytes)?;
        }

        /// Valid text with multi-byte characters anywhere, then one byte changed.
        #[test]
        fn agrees_on_text_and_its_corruptions(
            text in "[a-z \u{e9}\u{2014}\u{1F600}\u{10FFFF}]{0,120}",
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut bytes = text.into_bytes();
            same_as_core(&bytes)?;
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = byte;
                same_as_core(&bytes)?;
            }
        }
    }

    /// Every length the inlined check and the two-block check handle and a few beyond, with
    /// a non-ASCII byte at every position: never taken for ASCII, always judged as the
    /// standard library does.
    #[test]
    fn every_length_and_position_of_a_non_ascii_byte() {
        for n in 0..=136usize {
            let ascii = vec![b'a'; n];
            assert!(from_utf8(&ascii).is_ok(), "{n}");
            #[cfg(target_pointer_width = "64")]
            assert_eq!(short_ascii(&ascii), (n <= 64).then_some(true));
            for at in 0..n {
                for b in [0x80u8, 0xC3, 0xFF] {
                    let mut bytes = ascii.clone();
                    bytes[at] = b;
                    #[cfg(target_pointer_width = "64")]
                    assert_ne!(short_ascii(&bytes), Some(true), "{n} {at} {b:#x}");
                    same_as_core(&bytes).unwrap();
                }
                // A whole two-byte character ending the string is valid.
                if at + 1 < n {
                    let mut bytes = ascii.clone();
                    bytes[at..at + 2].copy_from_slice("\u{e9}".as_bytes());
                    assert_eq!(from_utf8(&bytes).map(str::len), Ok(n));
                }
            }
        }
    }

    /// Every lead byte with every second byte, then the continuation bytes at their edges:
    /// each prefix alone, and the whole sequence between blocks of ASCII.
    #[test]
    fn every_lead_and_second_byte() {
        let edges = [0x41, 0x80, 0xBF, 0xC0];
        let ascii = [b'a'; 37];
        for lead in 0x80..=0xFFu8 {
            for second in 0..=0xFFu8 {
                same_as_core(&[lead]).unwrap();
                same_as_core(&[lead, second]).unwrap();
                for third in edges {
                    same_as_core(&[lead, second, third]).unwrap();
                    for fourth in edges {
                        let seq = [lead, second, third, fourth];
                        same_as_core(&seq).unwrap();
                        let mut long = ascii.to_vec();
                        long.extend_from_slice(&seq);
                        long.extend_from_slice(&ascii);
                        same_as_core(&long).unwrap();
                    }
                }
            }
        }
    }

    /// With `std` on x86-64 the SIMD validator is compiled in and taken for long strings.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[test]
    fn hosts_with_std_validate_long_strings_with_simd() {
        let long = [b'a'; SIMD_FROM];
        assert_eq!(simd_is_utf8(&long), Some(true));
        assert_eq!(simd_is_utf8(&[0xFF; SIMD_FROM]), Some(false));
    }

    /// Long strings with an error at their start, middle and end, and cut inside a
    /// character: the standard library's error (`valid_up_to`, `error_len`) every time.
    #[test]
    fn errors_in_long_strings() {
        for n in [SIMD_FROM - 1, SIMD_FROM, SIMD_FROM + 1, 4 * SIMD_FROM + 3] {
            let text = "ab\u{2014}cd\u{e9}".repeat(n / 8 + 1);
            let bytes = &text.as_bytes()[..n];
            same_as_core(bytes).unwrap();
            for at in [0, n / 2, n - 1] {
                let mut bad = bytes.to_vec();
                bad[at] = 0xFF;
                same_as_core(&bad).unwrap();
                let e = from_utf8(&bad).unwrap_err();
                assert!(e.valid_up_to() <= at, "{n} {at}");
            }
        }
    }

    #[test]
    fn ascii_and_multibyte() {
        assert_eq!(from_utf8(b"plain"), Ok("plain"));
        assert_eq!(
            from_utf8("h\u{e9}llo \u{1F600}".as_bytes()),
            Ok("h\u{e9}llo \u{1F600}")
        );
        assert_eq!(from_utf8(b"ab\xff").unwrap_err().valid_up_to(), 2);
        assert_eq!(from_utf8(b""), Ok(""));
        // A truncated sequence at the very end, after whole blocks.
        let mut long = [b'x'; 64].to_vec();
        long.extend_from_slice(&[0xE2, 0x80]);
        let e = from_utf8(&long).unwrap_err();
        assert_eq!((e.valid_up_to(), e.error_len()), (64, None));
    }
}
