//! Core wire paths: a Person-like struct, a uuid + 768-element bfloat16 embedding, the cost
//! of creating scalar array views of different lengths (which must not depend on the length),
//! and string validation: a bebop `string` decode against `core::str::from_utf8` on the same
//! bytes, ASCII and mixed text, short and long.

use std::hint::black_box;

use bebop_benches::{EMBEDDING_ID, PERSON_EMAIL, PERSON_NAME, fill_vector};
use bebop_conformance::{Embedding, Person};
use bebop_core::{Array, Decode, Encode, bf16};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn person(c: &mut Criterion) {
    let p = Person {
        id: 42,
        name: PERSON_NAME,
        email: PERSON_EMAIL,
        age: 30,
    };
    let mut buf = [0u8; 64];
    let n = p.encode_into(&mut buf).unwrap();
    let bytes = &buf[..n];
    let mut g = c.benchmark_group("person");
    g.throughput(Throughput::Bytes(n as u64));
    g.bench_function("encode", |b| {
        let mut out = [0u8; 64];
        b.iter(|| black_box(&p).encode_into(black_box(&mut out)).unwrap())
    });
    g.bench_function("decode", |b| {
        b.iter(|| Person::from_bytes(black_box(bytes)).unwrap())
    });
    g.finish();
}

fn embedding(c: &mut Criterion) {
    let mut vector = vec![bf16::ZERO; 768];
    fill_vector(&mut vector);
    let e = Embedding {
        id: EMBEDDING_ID,
        vector: Array::from_slice(&vector),
    };
    let mut buf = vec![0u8; e.encoded_size()];
    let n = e.encode_into(&mut buf).unwrap();
    let mut g = c.benchmark_group("embedding768");
    g.throughput(Throughput::Bytes(n as u64));
    g.bench_function("encode", |b| {
        let mut out = vec![0u8; n];
        b.iter(|| black_box(&e).encode_into(black_box(&mut out)).unwrap())
    });
    g.bench_function("decode", |b| {
        b.iter(|| Embedding::from_bytes(black_box(&buf)).unwrap())
    });
    g.bench_function("decode+copy_out", |b| {
        let mut out = vec![bf16::ZERO; 768];
        b.iter(|| {
            let v = Embedding::from_bytes(black_box(&buf)).unwrap();
            v.vector.copy_to_slice(&mut out)
        })
    });
    g.bench_function("decode+sum", |b| {
        b.iter(|| {
            let v = Embedding::from_bytes(black_box(&buf)).unwrap();
            v.vector.iter().map(f32::from).sum::<f32>()
        })
    });
    g.finish();
}

fn view_creation(c: &mut Criterion) {
    let mut g = c.benchmark_group("bf16_array_view");
    for len in [768usize, 65_536] {
        let mut vector = vec![bf16::ZERO; len];
        fill_vector(&mut vector);
        let bytes = Array::from_slice(&vector);
        let mut buf = vec![0u8; bytes.encoded_size()];
        bytes.encode_into(&mut buf).unwrap();
        g.bench_function(format!("create/{len}"), |b| {
            b.iter(|| Array::<bf16>::from_bytes(black_box(&buf)).unwrap().len())
        });
    }
    g.finish();
}

/// Text of `len` bytes or a little more: lowercase words, and at `per_mille` of the
/// characters a multi-byte one (mostly 3-byte punctuation, some 2-byte letters and 4-byte
/// emoji, as in the reference benchmark's novel), from a fixed seed.
fn text(len: usize, per_mille: u64) -> String {
    let mut s = String::with_capacity(len + 4);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while s.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 1000 < per_mille {
            s.push(
                ['\u{2014}', '\u{201C}', '\u{201D}', '\u{e9}', '\u{1F600}'][(x >> 20) as usize % 5],
            );
        } else if x % 7 == 0 {
            s.push(' ');
        } else {
            s.push((b'a' + ((x >> 30) % 26) as u8) as char);
        }
    }
    s
}

fn utf8(c: &mut Criterion) {
    let cases = [
        ("ascii_20B", text(20, 0)),
        ("one_dash_40B", {
            let mut t = text(20, 0);
            t.push('\u{2014}');
            t.push_str(&text(17, 0));
            t
        }),
        ("ascii_100B", text(100, 0)),
        ("mixed_100B", text(100, 5)),
        ("ascii_600B", text(600, 0)),
        ("mixed_600B", text(600, 5)),
        ("mixed_4KiB", text(4096, 5)),
        ("mixed_150KB", text(150_000, 5)),
        ("ascii_150KB", text(150_000, 0)),
    ];
    for (name, text) in &cases {
        let mut encoded = vec![0u8; text.as_str().encoded_size()];
        text.as_str().encode_into(&mut encoded).unwrap();
        let mut g = c.benchmark_group(format!("utf8_{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function("core::str::from_utf8", |b| {
            b.iter(|| {
                core::str::from_utf8(black_box(text.as_bytes()))
                    .unwrap()
                    .len()
            })
        });
        g.bench_function("bebop string decode", |b| {
            b.iter(|| <&str>::from_bytes(black_box(&encoded)).unwrap().len())
        });
        g.finish();
    }
}

criterion_group!(benches, person, embedding, view_creation, utf8);
criterion_main!(benches);
