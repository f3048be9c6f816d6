//! Consistent Overhead Byte Stuffing (Cheshire and Baker, 1999): rewrites a frame so that it
//! contains no `0x00` byte, at a cost of one byte per 254 (plus one), so that `0x00` can mark
//! the end of every frame on the wire.
//!
//! The encoded form is a run of blocks. Each starts with a code byte `c` (1..=255) followed
//! by `c - 1` data bytes; a block with `c < 255` stands for its data followed by one zero,
//! except at the end of the frame, where that zero is dropped.

/// The largest encoded size of `len` bytes (without the terminating zero).
pub const fn max_encoded_len(len: usize) -> usize {
    len + len / 254 + 1
}

/// Why encoding failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferTooSmall;

/// Encodes `src` into `dst` (no terminating zero) and returns the encoded length.
///
/// ```
/// use bebop_core::rpc::link::cobs;
///
/// let mut out = [0u8; 8];
/// let n = cobs::encode(&[0x11, 0x00, 0x22, 0x33], &mut out).unwrap();
/// assert_eq!(&out[..n], &[0x02, 0x11, 0x03, 0x22, 0x33]);
/// ```
pub fn encode(src: &[u8], dst: &mut [u8]) -> Result<usize, BufferTooSmall> {
    let mut encoder = Encoder::new(dst)?;
    encoder.write(src)?;
    Ok(encoder.finish())
}

/// An incremental COBS encoder into a caller's buffer: bytes can arrive in pieces.
#[derive(Debug)]
pub struct Encoder<'d> {
    dst: &'d mut [u8],
    /// Where the code byte of the open block goes.
    code_at: usize,
    /// Next free position.
    out: usize,
    /// The open block's code so far (1 + its data bytes).
    code: u8,
}

impl<'d> Encoder<'d> {
    /// An encoder writing from the start of `dst`.
    pub fn new(dst: &'d mut [u8]) -> Result<Self, BufferTooSmall> {
        if dst.is_empty() {
            return Err(BufferTooSmall);
        }
        Ok(Encoder {
            dst,
            code_at: 0,
            out: 1,
            code: 1,
        })
    }

    /// Closes the open block and opens a new one.
    fn close_block(&mut self) -> Result<(), BufferTooSmall> {
        self.dst[self.code_at] = self.code;
        if self.out >= self.dst.len() {
            return Err(BufferTooSmall);
        }
        self.code_at = self.out;
        self.out += 1;
        self.code = 1;
        Ok(())
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), BufferTooSmall> {
        for &b in bytes {
            if b == 0 {
                self.close_block()?;
                continue;
            }
            *self.dst.get_mut(self.out).ok_or(BufferTooSmall)? = b;
            self.out += 1;
            self.code += 1;
            if self.code == 0xFF {
                self.close_block()?;
            }
        }
        Ok(())
    }

    /// Closes the last block and returns the encoded length (no terminating zero).
    pub fn finish(self) -> usize {
        self.dst[self.code_at] = self.code;
        self.out
    }
}

/// What a [`Decoder`] says about a byte it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing to report.
    Pending,
    /// This decoded byte belongs to the frame.
    Byte(u8),
    /// The terminating zero arrived and the frame decoded correctly.
    End,
    /// The terminating zero arrived in the middle of a block: the frame is malformed
    /// (typically cut short on the wire).
    Malformed,
    /// A terminating zero with nothing before it (idle line or resynchronisation filler).
    Empty,
}

/// An incremental COBS decoder: one byte in, at most one decoded byte out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decoder {
    /// Data bytes left in the current block; 0 means the next byte is a code byte.
    left: u8,
    /// The block just finished stands for a trailing zero (its code was below 255).
    zero_due: bool,
    /// Bytes seen since the last terminator.
    started: bool,
}

impl Decoder {
    /// A decoder at the start of a frame.
    pub const fn new() -> Self {
        Decoder {
            left: 0,
            zero_due: false,
            started: false,
        }
    }

    /// Feeds one byte from the wire.
    pub fn feed(&mut self, byte: u8) -> Step {
        if byte == 0 {
            let step = if !self.started {
                Step::Empty
            } else if self.left != 0 {
                Step::Malformed
            } else {
                Step::End
            };
            *self = Decoder::new();
            return step;
        }
        self.started = true;
        if self.left == 0 {
            let zero = self.zero_due;
            self.left = byte - 1;
            self.zero_due = byte != 0xFF;
            // The previous block's implicit zero is real, since another block follows.
            return if zero { Step::Byte(0) } else { Step::Pending };
        }
        self.left -= 1;
        Step::Byte(byte)
    }
}

/// Decodes one complete frame `src` (without its terminating zero) into `dst`; returns the
/// decoded length, or `None` when `src` is malformed or `dst` too small.
///
/// ```
/// use bebop_core::rpc::link::cobs;
///
/// let mut out = [0u8; 8];
/// assert_eq!(cobs::decode(&[0x02, 0x11, 0x03, 0x22, 0x33], &mut out), Some(4));
/// assert_eq!(&out[..4], &[0x11, 0x00, 0x22, 0x33]);
/// ```
pub fn decode(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let mut decoder = Decoder::new();
    let mut n = 0;
    for &b in src.iter().chain(core::iter::once(&0)) {
        match decoder.feed(b) {
            Step::Pending => {}
            Step::Byte(v) => {
                *dst.get_mut(n)? = v;
                n += 1;
            }
            Step::End | Step::Empty => return Some(n),
            Step::Malformed => return None,
        }
    }
    None
}

/// The index of the first data byte (not a block's code byte) at or after `from` in the
/// encoded frame `encoded`, if any. Fault-injection tests use it to damage a frame's content
/// while keeping its COBS structure.
pub fn data_byte_at_or_after(encoded: &[u8], from: usize) -> Option<usize> {
    let mut code_at = 0;
    while code_at < encoded.len() {
        let code = usize::from(encoded[code_at]);
        if code == 0 {
            return None;
        }
        let data = code_at + 1..(code_at + code).min(encoded.len());
        if let Some(i) = data.clone().find(|&i| i >= from) {
            return Some(i);
        }
        code_at += code;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(data: &[u8]) {
        let mut enc = [0u8; 1200];
        let n = encode(data, &mut enc).unwrap();
        assert!(n <= max_encoded_len(data.len()));
        assert!(!enc[..n].contains(&0), "encoded form holds a zero");
        let mut dec = [0u8; 1200];
        let m = decode(&enc[..n], &mut dec).unwrap();
        assert_eq!(&dec[..m], data);
    }

    #[test]
    fn known_encodings() {
        let mut out = [0u8; 16];
        let n = encode(&[], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x01]);
        let n = encode(&[0], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x01, 0x01]);
        let n = encode(&[0, 0], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x01, 0x01, 0x01]);
        let n = encode(&[0x11, 0x22, 0x00, 0x33], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x03, 0x11, 0x22, 0x02, 0x33]);
        let n = encode(&[0x11, 0x22, 0x33, 0x44], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x05, 0x11, 0x22, 0x33, 0x44]);
        let n = encode(&[0x11, 0x00, 0x00, 0x00], &mut out).unwrap();
        assert_eq!(&out[..n], &[0x02, 0x11, 0x01, 0x01, 0x01]);
    }

    #[test]
    fn long_runs_without_zeros_split_at_254() {
        let data: [u8; 254] = [0xAB; 254];
        let mut out = [0u8; 300];
        let n = encode(&data, &mut out).unwrap();
        assert_eq!(out[0], 0xFF);
        assert_eq!(n, 256);
        assert_eq!(out[255], 0x01);
        roundtrip(&data);
    }

    #[test]
    fn roundtrips() {
        roundtrip(&[]);
        roundtrip(&[0]);
        roundtrip(&[0, 0, 0]);
        roundtrip(&[1, 2, 3, 0]);
        let mut data = [0u8; 1000];
        for (i, b) in data.iter_mut().enumerate() {
            *b = if i % 97 == 0 { 0 } else { (i % 251) as u8 };
        }
        for len in [1, 253, 254, 255, 256, 508, 509, 1000] {
            roundtrip(&data[..len]);
        }
        roundtrip(&[0xFF; 600]);
    }

    #[test]
    fn data_bytes_skip_code_bytes() {
        // Blocks: [02 11] [03 22 33] [01] -> data at 1, 3, 4.
        let enc = [0x02, 0x11, 0x03, 0x22, 0x33, 0x01];
        assert_eq!(data_byte_at_or_after(&enc, 0), Some(1));
        assert_eq!(data_byte_at_or_after(&enc, 2), Some(3));
        assert_eq!(data_byte_at_or_after(&enc, 4), Some(4));
        assert_eq!(data_byte_at_or_after(&enc, 5), None);
    }

    #[test]
    fn malformed_and_small_buffers_are_errors() {
        let mut out = [0u8; 8];
        // Code 5 promises four data bytes, only two arrive before the terminator.
        assert_eq!(decode(&[0x05, 0x11, 0x22], &mut out), None);
        assert_eq!(decode(&[0x05, 1, 2, 3, 4], &mut out[..2]), None);
        assert_eq!(encode(&[1, 2, 3], &mut out[..2]), Err(BufferTooSmall));
        assert_eq!(encode(&[], &mut []), Err(BufferTooSmall));
    }
}
