//! Counting checks and reporting failures on the semihosting console.

use core::fmt::{Debug, Display};

use qemu_board::semihosting::hprintln;

/// Pass/fail counts; every failure is printed with its name as it happens.
pub struct Checks {
    passed: u32,
    failed: u32,
}

impl Checks {
    pub const fn new() -> Self {
        Checks {
            passed: 0,
            failed: 0,
        }
    }

    pub fn passed(&self) -> u32 {
        self.passed
    }

    pub fn failed(&self) -> u32 {
        self.failed
    }

    /// Records `ok` under `name`.
    pub fn check(&mut self, name: impl Display, ok: bool) -> bool {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            hprintln!("FAIL: {}", name);
        }
        ok
    }

    /// Records `got == want`, printing both when they differ.
    pub fn eq<T: PartialEq + Debug>(&mut self, name: impl Display, got: T, want: T) -> bool {
        let ok = got == want;
        if !self.check(name, ok) {
            hprintln!("      got  {:?}\n      want {:?}", got, want);
        }
        ok
    }

    /// Records that two byte strings are equal, printing the first difference.
    pub fn bytes(&mut self, name: impl Display, got: &[u8], want: &[u8]) -> bool {
        let ok = got == want;
        if !self.check(name, ok) {
            let at = got
                .iter()
                .zip(want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            hprintln!(
                "      {} bytes vs {} expected; first difference at byte {}: got {:02x?}, want {:02x?}",
                got.len(),
                want.len(),
                at,
                got.get(at..(at + 8).min(got.len())),
                want.get(at..(at + 8).min(want.len()))
            );
        }
        ok
    }
}

/// Parses hex digits (spaces ignored) into the front of `out`; `None` on a bad digit or
/// when `out` is too small.
pub fn hex<'o>(text: &str, out: &'o mut [u8]) -> Option<&'o [u8]> {
    let mut n = 0;
    let mut high: Option<u8> = None;
    for c in text.bytes() {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b' ' => continue,
            _ => return None,
        };
        match high.take() {
            None => high = Some(v),
            Some(h) => {
                *out.get_mut(n)? = (h << 4) | v;
                n += 1;
            }
        }
    }
    if high.is_some() {
        return None;
    }
    Some(&out[..n])
}
