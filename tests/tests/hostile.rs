//! Hostile input: random bytes, mutated and truncated valid encodings, and length prefixes near
//! `u32::MAX`, fed to every decoder. Each must return Ok or Err: never panic, hang or allocate
//! without bound (the decoders under test cannot allocate at all, but `Vec`/`BTreeMap` ones).

use bebop_conformance::exercise::exercise_all;
use bebop_conformance::{Circle, Event, Level, Log, Person, Shape, TreeNode, UserRequest};
use bebop_core::{Array, Decode, FixedArray, Map};
use bebop_runtime::EncodeExt;
use proptest::prelude::*;

/// A few valid encodings of nested types to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let kids = [
        TreeNode {
            value: Some(2),
            children: None,
        },
        TreeNode {
            value: None,
            children: Some(Array::default()),
        },
    ];
    let tree = TreeNode {
        value: Some(1),
        children: Some(Array::from_slice(&kids)),
    };
    let rows = [
        Array::from_slice(&[1i32]),
        Array::default(),
        Array::from_slice(&[2, 3]),
    ];
    let log = Log {
        level: Level::Info,
        tags: Map::from_slice(&[("k", "v")]),
        lines: Array::from_slice(&["x", "yz"]),
        grid: FixedArray::from_array(&rows),
    };
    let shapes = [
        Shape::Circle(Circle { radius: 1.0 }),
        Shape::Circle(Circle { radius: 2.0 }),
    ];
    vec![
        tree.encode_to_vec().unwrap(),
        log.encode_to_vec().unwrap(),
        Array::from_slice(&shapes).encode_to_vec().unwrap(),
        UserRequest {
            user_id: Some(7),
            include_profile: Some(false),
        }
        .encode_to_vec()
        .unwrap(),
        Person {
            id: 1,
            name: "Ada",
            email: "ada@example.com",
            age: 36,
        }
        .encode_to_vec()
        .unwrap(),
        Event::Text { body: Some("hi") }.encode_to_vec().unwrap(),
    ]
}

/// Owned decoders too (they allocate, within bounds).
fn exercise_owned(bytes: &[u8]) {
    let _ = Vec::<String>::from_bytes(bytes);
    let _ = Vec::<Vec<u64>>::from_bytes(bytes);
    let _ = std::collections::BTreeMap::<String, Vec<u8>>::from_bytes(bytes);
    let _ = heapless::Vec::<heapless::String<8>, 4>::from_bytes(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        exercise_all(&bytes);
        exercise_owned(&bytes);
    }

    #[test]
    fn mutated_valid_encodings(
        seed in 0usize..6,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..4), 1..6),
    ) {
        let mut bytes = seeds()[seed].clone();
        for (pos, byte, op) in edits {
            if bytes.is_empty() {
                break;
            }
            let at = pos % bytes.len();
            match op {
                0 => bytes[at] = byte,
                1 => bytes[at] ^= 1 << (byte % 8),
                2 => { bytes.remove(at); }
                _ => bytes.insert(at, byte),
            }
        }
        exercise_all(&bytes);
        exercise_owned(&bytes);
    }

    #[test]
    fn huge_length_prefixes(seed in 0usize..6, pos in any::<usize>(), which in 0usize..5) {
        let mut bytes = seeds()[seed].clone();
        let value: u32 = [u32::MAX, u32::MAX - 1, u32::MAX - 4, 0x8000_0000, 0x7fff_ffff][which];
        if bytes.len() >= 4 {
            let at = pos % (bytes.len() - 3);
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        exercise_all(&bytes);
        exercise_owned(&bytes);
    }
}

/// Decodes a seed as the type it was encoded from.
fn decodes_as_its_type(seed: usize, bytes: &[u8]) -> bool {
    match seed {
        0 => TreeNode::from_bytes(bytes).is_ok(),
        1 => Log::from_bytes(bytes).is_ok(),
        2 => Array::<Shape>::from_bytes(bytes).is_ok(),
        3 => UserRequest::from_bytes(bytes).is_ok(),
        4 => Person::from_bytes(bytes).is_ok(),
        _ => Event::from_bytes(bytes).is_ok(),
    }
}

#[test]
fn every_truncation_is_rejected() {
    // Bebop encodings are self-delimiting, so no strict prefix of a value is a value.
    for (i, seed) in seeds().iter().enumerate() {
        assert!(decodes_as_its_type(i, seed), "seed {i} must decode");
        for len in 0..seed.len() {
            exercise_all(&seed[..len]);
            assert!(
                !decodes_as_its_type(i, &seed[..len]),
                "seed {i}: prefix of {len} bytes accepted"
            );
        }
    }
}

#[test]
fn length_prefix_at_every_position_near_u32_max() {
    for seed in seeds() {
        for at in 0..seed.len().saturating_sub(3) {
            for value in [u32::MAX, u32::MAX - 1, 0x8000_0000] {
                let mut bytes = seed.clone();
                bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
                exercise_all(&bytes);
                exercise_owned(&bytes);
            }
        }
    }
}

#[test]
fn every_valid_seed_decodes_and_walks() {
    for seed in &seeds() {
        assert!(exercise_all(seed).accepted >= 1);
    }
}
