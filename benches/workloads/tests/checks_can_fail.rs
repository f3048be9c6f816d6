//! The round-trip checks and the walks notice damage: they are not vacuous.

use bebop_workloads::data::Dataset;
use bebop_workloads::suite::{Format, Prepared, WORKLOADS};
use bebop_workloads::walk::checksum;

#[test]
fn a_changed_byte_fails_the_round_trip_check() {
    let d = Dataset::build();
    let arena = bumpalo::Bump::new();
    let info = WORKLOADS[13]; // PersonSmall
    assert_eq!(info.name, "PersonSmall");
    for (format, at) in [
        (Format::Bebop, 8),    // 'J' of the name
        (Format::Prost, 7),    // 'J' of the name
        (Format::Postcard, 4), // 'J' of the name
        (Format::SerdeJson, 17),
    ] {
        let mut p = Prepared::new(info, &d.person_small, &arena).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.verify().is_ok());
        let i = Format::ALL.iter().position(|&f| f == format).unwrap_or(0);
        p.encoded[i][at] ^= 0x02;
        let err = p
            .verify()
            .expect_err("a damaged encoding must fail the check");
        assert!(err.contains(format.name()), "{err}");
    }
}

#[test]
fn walks_read_array_elements_and_nested_values() {
    let d = Dataset::build();
    let mut e = d.embedding_1536.clone();
    let before = checksum(&e);
    e.vector[1000] ^= 1;
    assert_ne!(
        checksum(&e),
        before,
        "one bfloat16 element changes the walk"
    );

    let mut t = d.tree_deep.clone();
    let before = checksum(&t);
    t.children[1].children[0].children[1].value += 1;
    assert_ne!(checksum(&t), before, "a deep node changes the walk");

    let mut c = d.llm_chunk_large.clone();
    let before = checksum(&c);
    c.logprobs[31].top_tokens[4].logprob = 0.5;
    assert_ne!(checksum(&c), before, "the last logprob changes the walk");
}
