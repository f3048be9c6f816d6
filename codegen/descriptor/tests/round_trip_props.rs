//! Property tests: arbitrary `TypeDescriptor`s and `LiteralValue`s survive an encode/decode
//! round trip, and their computed sizes match what is written.

use bebop_descriptor::{
    DecoratorArg, DecoratorUsage, LiteralKind, LiteralValue, TypeDescriptor, TypeKind,
};
use bebop_runtime::{Decode, Duration, Encode, Timestamp, Uuid};
use proptest::prelude::*;

fn type_kind() -> impl Strategy<Value = TypeKind> {
    prop::sample::select(TypeKind::ALL)
}

fn type_descriptor() -> impl Strategy<Value = TypeDescriptor> {
    let leaf = (
        prop::option::of(type_kind()),
        prop::option::of(any::<u32>()),
        prop::option::of(".{0,12}"),
    )
        .prop_map(|(kind, fixed_array_size, defined_fqn)| TypeDescriptor {
            kind,
            fixed_array_size,
            defined_fqn,
            ..Default::default()
        });
    leaf.prop_recursive(6, 48, 4, |inner| {
        (
            prop::option::of(type_kind()),
            prop::option::of(inner.clone().prop_map(Box::new)),
            prop::option::of(inner.clone().prop_map(Box::new)),
            prop::option::of(any::<u32>()),
            prop::option::of(inner.clone().prop_map(Box::new)),
            prop::option::of(inner.prop_map(Box::new)),
            prop::option::of(".{0,12}"),
        )
            .prop_map(
                |(
                    kind,
                    array_element,
                    fixed_array_element,
                    fixed_array_size,
                    map_key,
                    map_value,
                    defined_fqn,
                )| {
                    TypeDescriptor {
                        kind,
                        array_element,
                        fixed_array_element,
                        fixed_array_size,
                        map_key,
                        map_value,
                        defined_fqn,
                    }
                },
            )
    })
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (
        any::<i64>(),
        0..1_000_000_000i32,
        -86_400_000..=86_400_000i32,
    )
        .prop_map(|(s, n, o)| Timestamp::new(s, n, o).expect("in range"))
}

fn duration() -> impl Strategy<Value = Duration> {
    (any::<i64>(), 0..1_000_000_000i32).prop_map(|(s, n)| {
        let n = if s < 0 { -n } else { n };
        Duration::new(s, n).expect("in range")
    })
}

fn literal_value() -> impl Strategy<Value = LiteralValue> {
    (
        (
            prop::option::of(prop::sample::select(LiteralKind::ALL)),
            prop::option::of(any::<bool>()),
            prop::option::of(any::<i64>()),
            prop::option::of(any::<f64>()),
            prop::option::of(".{0,16}"),
        ),
        (
            prop::option::of(any::<u128>().prop_map(Uuid::from_u128)),
            prop::option::of(".{0,16}"),
            prop::option::of(prop::collection::vec(any::<u8>(), 0..32)),
            prop::option::of(timestamp()),
            prop::option::of(duration()),
        ),
    )
        .prop_map(
            |(
                (kind, bool_value, int_value, float_value, string_value),
                (uuid_value, raw_value, bytes_value, timestamp_value, duration_value),
            )| LiteralValue {
                kind,
                bool_value,
                int_value,
                float_value,
                string_value,
                uuid_value,
                raw_value,
                bytes_value,
                timestamp_value,
                duration_value,
            },
        )
}

/// Encodes, checks the size, decodes, and returns the decoded value with the bytes.
fn round_trip<T: for<'a> Decode<'a> + Encode>(v: &T) -> (T, Vec<u8>) {
    let bytes = bebop_runtime::encode_to_vec(v).expect("encode");
    assert_eq!(bytes.len(), v.encoded_size());
    // The counting sink checks every message's promised size against what it writes.
    let mut counter = bebop_runtime::SizeCounter::default();
    v.encode(&mut counter).expect("sizes agree");
    assert_eq!(counter.count, bytes.len());
    let back = T::from_bytes(&bytes).expect("decode");
    (back, bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn type_descriptors_round_trip(t in type_descriptor()) {
        let (back, _) = round_trip(&t);
        prop_assert_eq!(back, t);
    }

    #[test]
    fn literal_values_round_trip(v in literal_value()) {
        let (back, bytes) = round_trip(&v);
        // NaN floats are not equal to themselves: compare their bits, the rest by value.
        prop_assert_eq!(back.float_value.map(f64::to_bits), v.float_value.map(f64::to_bits));
        prop_assert_eq!(
            LiteralValue { float_value: None, ..back.clone() },
            LiteralValue { float_value: None, ..v.clone() }
        );
        prop_assert_eq!(bebop_runtime::encode_to_vec(&back).expect("encode"), bytes);
    }

    #[test]
    fn decorator_usages_keep_export_order_and_duplicates(
        fqn in prop::option::of("[a-z]{1,8}"),
        args in prop::option::of(prop::collection::vec((".{0,6}", literal_value()), 0..4)),
        export in prop::option::of(prop::collection::vec(("[a-c]{1,2}", literal_value()), 0..6)),
    ) {
        let usage = DecoratorUsage {
            fqn,
            args: args.map(|a| a.into_iter().map(|(name, value)| DecoratorArg { name, value }).collect()),
            export_data: export,
        };
        let (back, bytes) = round_trip(&usage);
        let keys = |u: &DecoratorUsage| u.export_data.as_ref().map(|e| e.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>());
        prop_assert_eq!(keys(&back), keys(&usage));
        prop_assert_eq!(bebop_runtime::encode_to_vec(&back).expect("encode"), bytes);
    }
}
