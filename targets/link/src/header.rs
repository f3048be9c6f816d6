//! The 9-byte RPC frame header (Bebop RPC, section 5) as a Bebop struct.

use core::fmt;
use core::ops::BitOr;

use bebop_core::{Decode, Encode, Error, FixedSize, Reader, Sink, WireSize};

/// ```bebop
/// @flags enum FrameFlags : byte {
///     NONE = 0; END_STREAM = 1; ERROR = 2; COMPRESSED = 4; TRAILER = 8; CURSOR = 16;
/// }
/// ```
///
/// Bits `0x20` and above are reserved: they are sent as zero and ignored on receipt (cleared
/// when decoding), as RPC section 5.1 requires.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FrameFlags(u8);

impl FrameFlags {
    /// No flag.
    pub const NONE: FrameFlags = FrameFlags(0);
    /// Last frame in this direction.
    pub const END_STREAM: FrameFlags = FrameFlags(0x01);
    /// The payload is an `RpcError`; needs `END_STREAM`.
    pub const ERROR: FrameFlags = FrameFlags(0x02);
    /// The payload is compressed.
    pub const COMPRESSED: FrameFlags = FrameFlags(0x04);
    /// The payload is a `TrailingMetadata`; needs `END_STREAM`.
    pub const TRAILER: FrameFlags = FrameFlags(0x08);
    /// An 8-byte little-endian cursor follows the payload (not counted in `length`).
    pub const CURSOR: FrameFlags = FrameFlags(0x10);
    /// Every defined bit.
    pub const KNOWN: u8 = 0x1F;

    /// The flags with the given bits; reserved bits are dropped.
    pub const fn from_bits(bits: u8) -> Self {
        FrameFlags(bits & Self::KNOWN)
    }

    /// The raw bits.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// True when every bit of `other` is set.
    pub const fn contains(self, other: FrameFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Checks the combinations RPC section 5.1 forbids: `ERROR` or `TRAILER` without
    /// `END_STREAM`, and `ERROR` with `TRAILER`.
    pub const fn is_valid(self) -> bool {
        let end = self.contains(Self::END_STREAM);
        let error = self.contains(Self::ERROR);
        let trailer = self.contains(Self::TRAILER);
        !((error || trailer) && !end) && !(error && trailer)
    }
}

impl BitOr for FrameFlags {
    type Output = FrameFlags;
    fn bitor(self, rhs: FrameFlags) -> FrameFlags {
        FrameFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for FrameFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(FrameFlags, &str); 5] = [
            (FrameFlags::END_STREAM, "END_STREAM"),
            (FrameFlags::ERROR, "ERROR"),
            (FrameFlags::COMPRESSED, "COMPRESSED"),
            (FrameFlags::TRAILER, "TRAILER"),
            (FrameFlags::CURSOR, "CURSOR"),
        ];
        if self.0 == 0 {
            return f.write_str("NONE");
        }
        let mut first = true;
        for (flag, name) in NAMES {
            if self.contains(flag) {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

impl WireSize for FrameFlags {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl FixedSize for FrameFlags {
    const SIZE: usize = 1;
}

impl<'a> Decode<'a> for FrameFlags {
    const ALWAYS_VALID: bool = true;
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(FrameFlags::from_bits(r.read_u8()?))
    }
}

impl Encode for FrameFlags {
    fn encoded_size(&self) -> usize {
        1
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write(&[self.0 & Self::KNOWN])
    }
}

/// ```bebop
/// struct FrameHeader { length: uint32; flags: FrameFlags; stream_id: uint32; }
/// ```
///
/// ```
/// use bebop_core::{Decode, Encode};
/// use serial_link::{FrameFlags, FrameHeader};
///
/// // RPC.md section 5.3's example: a 31-byte error payload ending stream 0.
/// let header = FrameHeader {
///     length: 31,
///     flags: FrameFlags::END_STREAM | FrameFlags::ERROR,
///     stream_id: 0,
/// };
/// let mut buf = [0u8; 9];
/// header.encode_into(&mut buf)?;
/// assert_eq!(buf, [0x1f, 0, 0, 0, 0x03, 0, 0, 0, 0]);
/// assert_eq!(FrameHeader::from_bytes(&buf)?, header);
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FrameHeader {
    /// Payload bytes (not counting the header, nor a cursor).
    pub length: u32,
    /// [`FrameFlags`].
    pub flags: FrameFlags,
    /// The call a frame belongs to on a multiplexed connection.
    pub stream_id: u32,
}

impl FrameHeader {
    /// The wire size: 9 bytes.
    pub const SIZE: usize = 9;
}

impl WireSize for FrameHeader {
    const FIXED_SIZE: Option<usize> = Some(9);
    const MIN_SIZE: usize = 9;
}

impl FixedSize for FrameHeader {
    const SIZE: usize = 9;
}

impl<'a> Decode<'a> for FrameHeader {
    const ALWAYS_VALID: bool = true;
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(FrameHeader {
            length: r.read()?,
            flags: r.read()?,
            stream_id: r.read()?,
        })
    }
}

impl Encode for FrameHeader {
    fn encoded_size(&self) -> usize {
        9
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.length.encode(s)?;
        self.flags.encode(s)?;
        self.stream_id.encode(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn flag_rules_of_rpc_section_5_1() {
        use FrameFlags as F;
        assert!(F::NONE.is_valid());
        assert!(F::END_STREAM.is_valid());
        assert!((F::END_STREAM | F::ERROR).is_valid());
        assert!((F::END_STREAM | F::TRAILER).is_valid());
        assert!(!F::ERROR.is_valid());
        assert!(!F::TRAILER.is_valid());
        assert!(!(F::END_STREAM | F::ERROR | F::TRAILER).is_valid());
        assert_eq!(
            F::from_bits(0xE1),
            F::END_STREAM,
            "reserved bits are ignored"
        );
        assert_eq!(
            format!("{:?}", F::END_STREAM | F::CURSOR),
            "END_STREAM | CURSOR"
        );
    }

    #[test]
    fn header_reserved_bits_are_dropped_on_decode_and_never_sent() {
        let h = FrameHeader::from_bytes(&[1, 0, 0, 0, 0x41, 7, 0, 0, 0]).unwrap();
        assert_eq!(h.flags, FrameFlags::END_STREAM);
        assert_eq!(h.stream_id, 7);
        let mut buf = [0u8; 9];
        FrameHeader {
            length: 1,
            flags: FrameFlags(0xC1),
            stream_id: 7,
        }
        .encode_into(&mut buf)
        .unwrap();
        assert_eq!(buf[4], 0x01);
    }
}
