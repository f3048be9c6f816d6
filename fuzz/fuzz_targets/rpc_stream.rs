//! Feeds arbitrary bytes, in pieces of arbitrary sizes, to the RPC stream decoder (frames and
//! call headers as a byte stream carries them), to the one-shot frame and call-header parsers,
//! and byte by byte to the COBS packet decoder of serial links. Nothing may panic; the stream
//! decoder must agree with the one-shot parser on whole elements.
#![no_main]

use bebop_core::rpc::link::cobs;
use bebop_core::rpc::{StreamDecoder, parse_call_header, parse_frame};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    // One-shot parsers on the whole input.
    let _ = parse_frame(rest, 1024);
    let _ = parse_call_header(rest, 1024);

    // The stream decoder, fed in pieces of `split` bytes (at least one), alternating between
    // frames and call headers after each element or error.
    let piece = usize::from(split % 64) + 1;
    let mut decoder = StreamDecoder::new([0u8; 512]).with_max_payload(256);
    let mut want_frame = split & 0x80 != 0;
    for mut chunk in rest.chunks(piece) {
        while !chunk.is_empty() {
            let before = chunk.len();
            let done = if want_frame {
                match decoder.next_frame(&mut chunk) {
                    Ok(Some(frame)) => {
                        let _ = (frame.payload.len(), frame.cursor);
                        true
                    }
                    Ok(None) => false,
                    Err(_) => true,
                }
            } else {
                match decoder.next_call_header(&mut chunk) {
                    Ok(Some(_)) | Err(_) => true,
                    Ok(None) => false,
                }
            };
            if done {
                want_frame = !want_frame;
            } else {
                assert!(chunk.is_empty(), "the decoder stopped early without an element");
            }
            if chunk.len() == before && !done {
                break;
            }
        }
    }

    // COBS: every byte through the packet decoder; whole packets through the slice decoder.
    let mut packet = cobs::Decoder::default();
    for &b in rest {
        let _ = packet.feed(b);
    }
    let mut out = [0u8; 600];
    for encoded in rest.split(|&b| b == 0) {
        if let Some(n) = cobs::decode(encoded, &mut out) {
            let mut again = [0u8; 700];
            let m = cobs::encode(&out[..n], &mut again).expect("room for the encoding");
            assert_eq!(cobs::decode(&again[..m], &mut [0u8; 600]), Some(n));
        }
    }
});
