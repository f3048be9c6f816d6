//! CRC-32 (the IEEE 802.3 / zlib checksum, "CRC-32/ISO-HDLC"): reflected polynomial
//! `0xEDB88320`, initial value and final XOR `0xFFFFFFFF`.
//!
//! Computed with a 16-entry table (one nibble at a time): 64 bytes of flash, fast enough for a
//! UART on a Cortex-M0.

const POLY: u32 = 0xEDB8_8320;

const TABLE: [u32; 16] = {
    let mut table = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 4 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// A running CRC-32.
///
/// ```
/// use bebop_core::rpc::link::Crc32;
///
/// let mut crc = Crc32::new();
/// crc.update(b"1234");
/// crc.update(b"56789");
/// assert_eq!(crc.finish(), 0xCBF4_3926); // the standard check value
/// assert_eq!(bebop_core::rpc::link::crc32(b"123456789"), 0xCBF4_3926);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crc32(u32);

impl Crc32 {
    /// A CRC over no bytes yet.
    pub const fn new() -> Self {
        Crc32(0xFFFF_FFFF)
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        let mut crc = self.0;
        for &b in bytes {
            crc ^= u32::from(b);
            crc = (crc >> 4) ^ TABLE[(crc & 0xF) as usize];
            crc = (crc >> 4) ^ TABLE[(crc & 0xF) as usize];
        }
        self.0 = crc;
    }

    /// The checksum of everything added.
    pub const fn finish(self) -> u32 {
        !self.0
    }
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

/// The CRC-32 of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(bytes);
    crc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time reference, to check the nibble table.
    fn slow(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn matches_known_values_and_reference() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
        let data: [u8; 300] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        assert_eq!(crc32(&data), slow(&data));
    }
}
