//! Core wire paths: a Person-like struct, a uuid + 768-element bfloat16 embedding, and the cost
//! of creating scalar array views of different lengths (which must not depend on the length).

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

criterion_group!(benches, person, embedding, view_creation);
criterion_main!(benches);
