//! RPC frames on the host: encoding a frame around a Person-like payload and a 1 KiB one,
//! parsing it from a slice, parsing it from a byte stream through `StreamDecoder` (whole and
//! one byte at a time, as a UART interrupt delivers it), and the serial link layer's packet
//! (COBS + CRC-32) both ways.

use std::hint::black_box;

use bebop_benches::{PERSON_EMAIL, PERSON_NAME};
use bebop_conformance::Person;
use bebop_core::rpc::link::{PacketDecoder, encode_packet, max_packet_len};
use bebop_core::rpc::{FrameFlags, StreamDecoder, encode_frame, frame_len, parse_frame};
use bebop_core::{Encode, rpc::Encoded};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn frames(c: &mut Criterion) {
    let person = Person {
        id: 42,
        name: PERSON_NAME,
        email: PERSON_EMAIL,
        age: 30,
    };
    let kib: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 1) as u8).collect();
    let payloads: [(&str, Vec<u8>); 2] = [
        ("person", {
            let mut b = vec![0u8; person.encoded_size()];
            person.encode_into(&mut b).unwrap();
            b
        }),
        ("1KiB", kib),
    ];
    for (name, payload) in &payloads {
        let mut frame = vec![0u8; frame_len(payload.len(), true)];
        let n = encode_frame(&mut frame, FrameFlags::NONE, 3, &Encoded(payload), Some(7)).unwrap();
        let mut packet = vec![0u8; max_packet_len(n)];
        let m = encode_packet(&frame[..n], &mut packet).unwrap();
        let mut g = c.benchmark_group(format!("rpc_frame_{name}"));
        g.throughput(Throughput::Bytes(n as u64));
        if *name == "person" {
            g.bench_function("encode (typed payload)", |b| {
                let mut out = vec![0u8; n];
                b.iter(|| {
                    encode_frame(
                        black_box(&mut out),
                        FrameFlags::NONE,
                        3,
                        black_box(&person),
                        Some(7),
                    )
                    .unwrap()
                })
            });
        }
        g.bench_function("encode (bytes payload)", |b| {
            let mut out = vec![0u8; n];
            b.iter(|| {
                encode_frame(
                    black_box(&mut out),
                    FrameFlags::NONE,
                    3,
                    &Encoded(black_box(payload)),
                    Some(7),
                )
                .unwrap()
            })
        });
        g.bench_function("parse (slice)", |b| {
            b.iter(|| parse_frame(black_box(&frame[..n]), 4096).unwrap().1)
        });
        g.bench_function("parse (StreamDecoder, whole)", |b| {
            let mut decoder = StreamDecoder::new(vec![0u8; 4096]);
            b.iter(|| {
                let mut input = black_box(&frame[..n]);
                decoder
                    .next_frame(&mut input)
                    .unwrap()
                    .map(|f| f.payload.len())
            })
        });
        g.bench_function("parse (StreamDecoder, byte at a time)", |b| {
            let mut decoder = StreamDecoder::new(vec![0u8; 4096]);
            b.iter(|| {
                let mut got = 0;
                for byte in black_box(&frame[..n]) {
                    let mut input = std::slice::from_ref(byte);
                    if let Some(f) = decoder.next_frame(&mut input).unwrap() {
                        got = f.payload.len();
                    }
                }
                got
            })
        });
        g.bench_function("packet encode (COBS + CRC-32)", |b| {
            let mut out = vec![0u8; max_packet_len(n)];
            b.iter(|| encode_packet(black_box(&frame[..n]), black_box(&mut out)).unwrap())
        });
        g.bench_function("packet decode (byte at a time)", |b| {
            let mut decoder = PacketDecoder::<4096>::new();
            b.iter(|| {
                let mut got = 0;
                for &byte in black_box(&packet[..m]) {
                    if let Some(r) = decoder.push_len(byte) {
                        got = r.unwrap();
                    }
                }
                got
            })
        });
        g.finish();
    }
}

criterion_group!(benches, frames);
criterion_main!(benches);
