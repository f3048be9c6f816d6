use super::*;
use crate::rpc::{FrameFlags, encode_frame};
use proptest::prelude::*;
use std::vec::Vec;

fn packet(element: &[u8]) -> Vec<u8> {
    let mut out = std::vec![0u8; max_packet_len(element.len())];
    let n = encode_packet(element, &mut out).unwrap();
    out.truncate(n);
    out
}

/// Everything a decoder makes of `wire`, as owned elements.
fn decode_all<const N: usize>(wire: &[u8]) -> Vec<Result<Vec<u8>, LinkError>> {
    let mut decoder = PacketDecoder::<N>::new();
    wire.iter()
        .filter_map(|&b| decoder.push(b).map(|r| r.map(<[u8]>::to_vec)))
        .collect()
}

#[cfg(feature = "embedded-io")]
mod channel;

/// A packet's exact bytes: the request frame of `docs/rpc.md`, "Example: a unary call on the
/// wire" (`"Alice"` on stream 0, END_STREAM), its CRC-32 and COBS as documented in the module.
#[test]
fn golden_packet_of_a_frame() {
    let mut frame = [0u8; 32];
    let n = encode_frame(&mut frame, FrameFlags::END_STREAM, 0, &"Alice", None).unwrap();
    let element = &frame[..n];
    assert_eq!(
        element,
        b"\x0a\0\0\0\x01\0\0\0\0\x05\0\0\0Alice\0".as_slice()
    );
    let crc = crc32(element);
    let wire = packet(element);
    let mut expected = std::vec![
        0x02, 0x0a, 0x01, 0x01, 0x02, 0x01, 0x01, 0x01, 0x01, 0x02, 0x05, 0x01, 0x01, 0x06,
    ];
    expected.extend_from_slice(b"Alice");
    // The element's final zero starts the block holding the checksum (which has no zero
    // byte for this element).
    let crc_bytes = crc.to_le_bytes();
    assert!(!crc_bytes.contains(&0));
    expected.push(5);
    expected.extend_from_slice(&crc_bytes);
    expected.push(0);
    assert_eq!(wire, expected);
    assert_eq!(decode_all::<64>(&wire), [Ok(element.to_vec())]);
}

#[test]
fn empty_and_tiny_packets_are_damaged() {
    // Lone zeros are filler, not packets.
    assert_eq!(decode_all::<16>(&[0, 0, 0]), []);
    // Fewer than four content bytes cannot hold a checksum.
    assert_eq!(
        decode_all::<16>(&[0x03, 1, 2, 0]),
        [Err(LinkError::Damaged)]
    );
    // An empty element is a valid packet (its checksum is 0: four zero bytes).
    assert_eq!(packet(&[]), [1, 1, 1, 1, 1, 0]);
    assert_eq!(decode_all::<16>(&packet(&[])), [Ok(Vec::new())]);
}

#[test]
fn a_packet_cut_short_is_dropped_and_the_next_one_read() {
    let a = packet(b"first element");
    let b = packet(b"second");
    let mut wire = a[..a.len() / 2].to_vec();
    wire.push(0); // the line dropped the rest; the next zero ends the fragment
    wire.extend_from_slice(&b);
    assert_eq!(
        decode_all::<32>(&wire),
        [Err(LinkError::Damaged), Ok(b"second".to_vec())]
    );
}

#[test]
fn oversized_packets_are_told_apart_from_noise() {
    let mut frame = [0u8; 80];
    let n = encode_frame(
        &mut frame,
        FrameFlags::END_STREAM,
        7,
        &[0xAAu8; 60][..],
        None,
    )
    .unwrap();
    let wire = packet(&frame[..n]);
    let got = decode_all::<16>(&wire);
    let [Err(LinkError::TooLarge { len, limit, head })] = got[..] else {
        panic!("{got:?}");
    };
    assert_eq!((len, limit), (n, 16));
    assert_eq!(head, frame[..9]);
    // The same packet damaged is noise.
    let mut bad = wire.clone();
    bad[40] ^= 0x01;
    assert_eq!(decode_all::<16>(&bad), [Err(LinkError::Damaged)]);
}

#[test]
fn encode_packet_reports_the_size_it_needs() {
    let mut small = [0u8; 6];
    let e = encode_packet(b"0123456789", &mut small).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BufferTooSmall);
    assert_eq!(e.needed(), Some(max_packet_len(10)));
    assert!(encode_packet(b"", &mut []).is_err());
}

proptest! {
    /// Any bytes at all: the decoder never panics and only yields checksummed elements.
    #[test]
    fn decoder_takes_any_bytes(wire in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let mut decoder = PacketDecoder::<64>::new();
        for &b in &wire {
            if let Some(Ok(element)) = decoder.push(b) {
                prop_assert!(element.len() <= 64);
            }
        }
    }
}
