//! A stream of frames sent over a simulated bad line: bytes flipped, runs of bytes dropped,
//! garbage inserted, frames cut short. Every frame that arrives intact must come out, in
//! order and unchanged; every damaged one must be reported, never accepted; the receiver
//! must never need more than the next `0x00` to recover.

use serial_link::{Deframer, FrameError, FrameFlags, encode_frame};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The payload of frame `i`: a string of varying length with some zero bytes.
fn payload(i: u32) -> String {
    let len = (i * 37 % 90) as usize;
    (0..len)
        .map(|k| {
            if (k as u32 + i) % 11 == 0 {
                '\0'
            } else {
                char::from(b'a' + ((k as u32 * 7 + i) % 26) as u8)
            }
        })
        .collect()
}

#[derive(Debug, PartialEq)]
enum Sent {
    Intact,
    Damaged,
}

#[test]
fn intact_frames_survive_and_damaged_ones_are_reported() {
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut line = Vec::new();
        let mut sent = Vec::new();
        for i in 0..200u32 {
            let text = payload(i);
            let mut wire = vec![0u8; 256];
            let n = encode_frame(FrameFlags::NONE, i, &text.as_str(), None, &mut wire).unwrap();
            let mut wire = wire[..n].to_vec();
            match rng.below(10) {
                // Flip one bit somewhere before the delimiter (it may hit a COBS code byte,
                // or turn a byte into 0x00 and split the frame in two: both must be caught).
                0 => {
                    let at = rng.below(n as u64 - 1) as usize;
                    wire[at] ^= 1 << rng.below(8);
                    sent.push((i, Sent::Damaged));
                }
                // Cut short: the line drops the rest of the frame up to its delimiter.
                1 => {
                    let keep = rng.below(n as u64 - 1) as usize;
                    wire.drain(keep..n - 1);
                    sent.push((i, Sent::Damaged));
                }
                // Garbage between frames, ended by noise that happens to be a zero.
                2 => {
                    let junk: Vec<u8> = (0..rng.below(20)).map(|_| rng.next() as u8 | 1).collect();
                    line.extend(junk);
                    line.push(0);
                    sent.push((i, Sent::Intact));
                }
                _ => sent.push((i, Sent::Intact)),
            }
            line.extend(wire);
        }

        let mut deframer = Deframer::<256>::new();
        let mut received = Vec::new();
        let mut errors = 0;
        for &b in &line {
            match deframer.push(b) {
                Some(Ok(frame)) => {
                    let text = frame.decode::<&str>().expect("an accepted frame decodes");
                    received.push((frame.header.stream_id, text.to_string()));
                }
                Some(Err(e)) => {
                    assert!(
                        matches!(
                            e,
                            FrameError::Corrupted { .. }
                                | FrameError::Truncated { .. }
                                | FrameError::LengthMismatch { .. }
                        ),
                        "seed {seed}: unexpected error {e:?}"
                    );
                    errors += 1;
                }
                None => {}
            }
        }

        // Every intact frame arrived, unchanged and in order; no damaged one was accepted.
        let intact: Vec<(u32, String)> = sent
            .iter()
            .filter(|(_, s)| *s == Sent::Intact)
            .map(|&(i, _)| (i, payload(i)))
            .collect();
        assert_eq!(received, intact, "seed {seed}");
        let damaged = sent.iter().filter(|(_, s)| *s == Sent::Damaged).count();
        assert!(
            errors >= damaged,
            "seed {seed}: {damaged} damaged frames but only {errors} errors"
        );
    }
}
