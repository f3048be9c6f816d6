//! The packet link over `embedded_io` lines: `write_packet` and `PacketChannel`.

use super::*;

#[test]
fn write_packet_matches_encode_packet_on_block_boundaries() {
    for len in [0, 1, 249, 250, 251, 253, 254, 255, 508, 600] {
        for zero_every in [0usize, 1, 97, 254] {
            let element: Vec<u8> = (0..len)
                .map(|i| {
                    if zero_every != 0 && i % zero_every == 0 {
                        0
                    } else {
                        (i % 250) as u8 + 1
                    }
                })
                .collect();
            let mut streamed = Vec::new();
            write_packet(&mut VecLine(&mut streamed), &element).unwrap();
            assert_eq!(
                streamed,
                packet(&element),
                "len {len}, zero every {zero_every}"
            );
            assert_eq!(decode_all::<700>(&streamed), [Ok(element.clone())]);
        }
    }
}

struct VecLine<'v>(&'v mut Vec<u8>);
impl embedded_io::ErrorType for VecLine<'_> {
    type Error = core::convert::Infallible;
}
impl embedded_io::Write for VecLine<'_> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// An in-memory line: what one end writes, the other reads, delivered in pieces of at most
/// `chunk` bytes.
struct MemLine {
    incoming: std::collections::VecDeque<u8>,
    outgoing: Vec<u8>,
    chunk: usize,
}

impl embedded_io::ErrorType for MemLine {
    type Error = core::convert::Infallible;
}
impl embedded_io::Read for MemLine {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.chunk).min(self.incoming.len());
        for slot in &mut buf[..n] {
            *slot = self.incoming.pop_front().unwrap_or(0);
        }
        Ok(n)
    }
}
impl embedded_io::ReadReady for MemLine {
    fn read_ready(&mut self) -> Result<bool, Self::Error> {
        Ok(!self.incoming.is_empty())
    }
}
impl embedded_io::Write for MemLine {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.outgoing.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn channel_over(wire: &[u8], chunk: usize) -> PacketChannel<MemLine, 64> {
    PacketChannel::new(MemLine {
        incoming: wire.iter().copied().collect(),
        outgoing: Vec::new(),
        chunk,
    })
}

#[test]
fn channel_refuses_oversized_and_declared_oversized_frames() {
    use crate::rpc::{Channel, ChannelError, Expect, ProtocolError};
    let mut big = [0u8; 128];
    let n = encode_frame(&mut big, FrameFlags::END_STREAM, 5, &[1u8; 100][..], None).unwrap();
    // A header declaring 4 GiB in a tiny packet.
    let liar = [0xFF, 0xFF, 0xFF, 0xFF, 0x01, 9, 0, 0, 0, 1, 2, 3];
    let mut ok = [0u8; 32];
    let m = encode_frame(&mut ok, FrameFlags::END_STREAM, 11, &"ok", None).unwrap();
    let mut wire = packet(&big[..n]);
    wire.extend(packet(&liar));
    wire.extend([0x13, 0x37, 0x00]); // noise
    wire.extend(packet(&ok[..m]));
    let mut channel = channel_over(&wire, 5);
    let mut buf = [0u8; 64];
    assert_eq!(
        channel.recv(Expect::Frame, &mut buf),
        Err(ChannelError::Refused(ProtocolError::FrameTooLarge {
            stream_id: 5,
            declared: 104,
            limit: 55
        }))
    );
    assert_eq!(
        channel.recv(Expect::Frame, &mut buf),
        Err(ChannelError::Refused(ProtocolError::FrameTooLarge {
            stream_id: 9,
            declared: u32::MAX,
            limit: 55
        }))
    );
    assert_eq!(
        channel.recv(Expect::Frame, &mut buf),
        Err(ChannelError::Damaged)
    );
    assert_eq!(channel.recv(Expect::Frame, &mut buf), Ok(m));
    assert_eq!(&buf[..m], &ok[..m]);
    assert_eq!(
        channel.recv(Expect::Frame, &mut buf),
        Err(ChannelError::Closed)
    );
    let c = channel.counters();
    assert_eq!((c.packets, c.damaged, c.too_large), (2, 1, 1));
    // A call header larger than the caller's buffer.
    let mut channel = channel_over(&packet(&[7u8; 40]), 64);
    assert_eq!(
        channel.recv(Expect::CallHeader, &mut buf[..16]),
        Err(ChannelError::Refused(ProtocolError::CallHeaderTooLarge {
            declared: 40,
            limit: 16
        }))
    );
}

#[test]
fn has_incoming_holds_the_packet_for_the_next_receive() {
    use crate::rpc::{Channel, Expect};
    let mut wire = std::vec![0x55, 0x66, 0]; // noise first: does not count
    wire.extend(packet(b"\x02\0\0\0\x01\x03\0\0\0hi"));
    let mut channel = channel_over(&wire, 3);
    assert!(channel.has_incoming());
    assert!(channel.has_incoming(), "still held");
    let mut buf = [0u8; 64];
    assert_eq!(channel.recv(Expect::Frame, &mut buf), Ok(11));
    assert!(!channel.has_incoming());
    // Sending flushes the receiver once, then packets.
    channel.send(b"abc").unwrap();
    channel.send(b"abc").unwrap();
    let mut expected = std::vec![0];
    expected.extend(packet(b"abc"));
    expected.extend(packet(b"abc"));
    assert_eq!(channel.get_mut().outgoing, expected);
}

proptest! {
    /// Elements with noise between them, damaged copies and every chunking: every intact
    /// element comes out exactly once, in order, and nothing else comes out as `Ok`.
    #[test]
    fn elements_survive_noise_and_chunking(
        elements in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..6),
        noise in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 6),
        damage in proptest::collection::vec(any::<(u16, u8)>(), 6),
        chunk in 1usize..40,
    ) {
        use crate::rpc::{Channel, ChannelError, Expect};
        let mut wire = Vec::new();
        for (i, element) in elements.iter().enumerate() {
            // Noise, ended by a zero so it cannot merge into the packet.
            wire.extend(&noise[i]);
            wire.push(0);
            // A damaged copy first.
            let mut bad = packet(element);
            let (at, flip) = damage[i];
            let at = usize::from(at) % (bad.len() - 1);
            bad[at] ^= flip | 1;
            wire.extend(&bad);
            wire.push(0);
            wire.extend(packet(element));
        }
        let mut channel = PacketChannel::<_, 320>::new(MemLine {
            incoming: wire.iter().copied().collect(),
            outgoing: Vec::new(),
            chunk,
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 320];
        loop {
            match channel.recv(Expect::CallHeader, &mut buf) {
                Ok(n) => got.push(buf[..n].to_vec()),
                Err(ChannelError::Damaged) => {}
                Err(ChannelError::Closed) => break,
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
        }
        prop_assert_eq!(got, elements);
    }
}
