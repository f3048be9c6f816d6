//! [`Uuid`]: 16 bytes in RFC 4122 order, with the canonical text form both ways.

use core::fmt;
use core::str::FromStr;

use crate::{Decode, Encode, Error, FixedSize, Reader, Sink, WireSize};

/// A UUID, stored and sent as its 16 bytes in RFC 4122 (big-endian field) order.
///
/// ```
/// use bebop_core::Uuid;
///
/// let id: Uuid = "550e8400-e29b-41d4-a716-446655440000".parse()?;
/// assert_eq!(id.as_bytes()[0], 0x55);
/// assert_eq!(id.to_string(), "550e8400-e29b-41d4-a716-446655440000");
/// // Also usable in constants.
/// const ID: Uuid = Uuid::parse_const("550E8400-E29B-41D4-A716-446655440000");
/// assert_eq!(ID, id);
/// # Ok::<(), bebop_core::uuid::ParseUuidError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid([u8; 16]);

/// Why a string is not a UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParseUuidError {
    /// The byte index in the string where parsing failed.
    pub index: usize,
}

impl fmt::Display for ParseUuidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid UUID at character {}: expected 8-4-4-4-12 hexadecimal digits",
            self.index
        )
    }
}

impl core::error::Error for ParseUuidError {}

const fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl Uuid {
    /// The all-zero UUID.
    pub const NIL: Uuid = Uuid([0; 16]);

    /// A UUID from its 16 bytes.
    pub const fn from_array(bytes: [u8; 16]) -> Self {
        Uuid(bytes)
    }

    /// The 16 bytes.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The UUID as a `u128` read big-endian (so that `0x550e8400_...` reads naturally).
    pub const fn as_u128(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// A UUID from a big-endian `u128`.
    pub const fn from_u128(v: u128) -> Self {
        Uuid(v.to_be_bytes())
    }

    /// Parses the canonical hyphenated form (`8-4-4-4-12` hex digits, either case) or the
    /// 32-digit form without hyphens, in a `const` context too.
    pub const fn parse(s: &str) -> Result<Self, ParseUuidError> {
        let s = s.as_bytes();
        let hyphenated = match s.len() {
            36 => true,
            32 => false,
            n => {
                return Err(ParseUuidError {
                    index: if n < 32 { n } else { 32 },
                });
            }
        };
        let mut out = [0u8; 16];
        let mut i = 0; // index into s
        let mut nibble = 0; // 0..32
        while i < s.len() {
            if hyphenated && (i == 8 || i == 13 || i == 18 || i == 23) {
                if s[i] != b'-' {
                    return Err(ParseUuidError { index: i });
                }
                i += 1;
                continue;
            }
            let v = match hex_value(s[i]) {
                Some(v) => v,
                None => return Err(ParseUuidError { index: i }),
            };
            out[nibble / 2] |= if nibble % 2 == 0 { v << 4 } else { v };
            nibble += 1;
            i += 1;
        }
        Ok(Uuid(out))
    }

    /// [`parse`](Self::parse) for constants: fails to compile on a bad literal.
    pub const fn parse_const(s: &str) -> Self {
        match Self::parse(s) {
            Ok(u) => u,
            Err(_) => panic!("invalid UUID literal"),
        }
    }

    /// Writes the canonical lower-case hyphenated form into a 36-byte buffer.
    pub fn encode_hyphenated<'b>(&self, out: &'b mut [u8; 36]) -> &'b str {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut j = 0;
        for (i, b) in self.0.iter().enumerate() {
            if i == 4 || i == 6 || i == 8 || i == 10 {
                out[j] = b'-';
                j += 1;
            }
            out[j] = HEX[(b >> 4) as usize];
            out[j + 1] = HEX[(b & 0xf) as usize];
            j += 2;
        }
        // Every byte written is ASCII.
        core::str::from_utf8(out).unwrap_or_default()
    }
}

impl FromStr for Uuid {
    type Err = ParseUuidError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse(s)
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 36];
        f.write_str(self.encode_hyphenated(&mut buf))
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Uuid {
    fn format(&self, f: defmt::Formatter<'_>) {
        let b = &self.0;
        defmt::write!(
            f,
            "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
            b[0],
            b[1],
            b[2],
            b[3],
            b[4],
            b[5],
            b[6],
            b[7],
            b[8],
            b[9],
            b[10],
            b[11],
            b[12],
            b[13],
            b[14],
            b[15]
        )
    }
}

impl From<[u8; 16]> for Uuid {
    fn from(bytes: [u8; 16]) -> Self {
        Uuid(bytes)
    }
}

impl From<Uuid> for [u8; 16] {
    fn from(u: Uuid) -> Self {
        u.0
    }
}

impl WireSize for Uuid {
    const FIXED_SIZE: Option<usize> = Some(16);
    const MIN_SIZE: usize = 16;
}

impl FixedSize for Uuid {
    const SIZE: usize = 16;
}

impl<'a> Decode<'a> for Uuid {
    const ALWAYS_VALID: bool = true;
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        reader.read_bytes_as(Uuid)
    }
}

impl Encode for Uuid {
    #[inline]
    fn encoded_size(&self) -> usize {
        16
    }
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn text_form_round_trips() {
        let s = "550e8400-e29b-41d4-a716-446655440000";
        let u: Uuid = s.parse().unwrap();
        assert_eq!(u.to_string(), s);
        assert_eq!(u.as_u128(), 0x550e8400_e29b_41d4_a716_446655440000);
        assert_eq!(Uuid::parse("550e8400e29b41d4a716446655440000"), Ok(u));
        assert_eq!(Uuid::parse("550E8400-E29B-41D4-A716-446655440000"), Ok(u));
        assert_eq!(Uuid::from_u128(u.as_u128()), u);
    }

    #[test]
    fn bad_text_reports_the_position() {
        assert_eq!(
            Uuid::parse("550e8400-e29b-41d4-a716-44665544000g"),
            Err(ParseUuidError { index: 35 })
        );
        assert_eq!(
            Uuid::parse("550e8400xe29b-41d4-a716-446655440000"),
            Err(ParseUuidError { index: 8 })
        );
        assert_eq!(Uuid::parse("550e"), Err(ParseUuidError { index: 4 }));
        assert_eq!(Uuid::parse(""), Err(ParseUuidError { index: 0 }));
        assert!(Uuid::parse("550e8400-e29b-41d4-a716-4466554400001").is_err());
        assert!(Uuid::parse("550e8400-e29b-41d4-a716-44665544000é").is_err());
    }
}
