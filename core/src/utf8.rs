//! UTF-8 validation with an ASCII fast path: the crate's only `unsafe` code.
//!
//! `core::str::from_utf8` costs about 15 ns for a short string on the development machine,
//! while `<[u8]>::is_ascii` costs about 1 ns; most strings in real messages (names, keys,
//! identifiers) are ASCII. The `core` bench `person/decode` shows the difference (see the
//! README). Strings that are not pure ASCII take the standard path.
#![allow(unsafe_code)]

use core::str::Utf8Error;

/// Validates `bytes` as UTF-8, exactly like `core::str::from_utf8`.
#[inline]
pub(crate) fn from_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every byte is below 0x80, and any sequence of such bytes is valid UTF-8
        // (each is a one-byte code point), which is the only requirement of
        // `from_utf8_unchecked`.
        Ok(unsafe { core::str::from_utf8_unchecked(bytes) })
    } else {
        core::str::from_utf8(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// The fast path agrees with the standard library on arbitrary bytes, including
        /// where the first invalid byte is.
        #[test]
        fn agrees_with_core(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let ours = from_utf8(&bytes).map_err(|e| e.valid_up_to());
            let std = core::str::from_utf8(&bytes).map_err(|e| e.valid_up_to());
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn agrees_on_mostly_ascii(s in "[a-z]{0,20}", tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let mut bytes = s.into_bytes();
            bytes.extend_from_slice(&tail);
            let ours = from_utf8(&bytes).map_err(|e| e.valid_up_to());
            let std = core::str::from_utf8(&bytes).map_err(|e| e.valid_up_to());
            prop_assert_eq!(ours, std);
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
    }
}
