//! Property tests: every scalar and composite survives encode → decode unchanged, through every
//! output (slice, Vec, std::io, embedded-io), with `encoded_size` exact.

use bebop_conformance::{
    Chain, Circle, Embedding, Event, Level, Log, Person, Point, Rectangle, Shape, TreeNode,
    UserRequest,
};
use bebop_core::{
    Array, Decode, Duration, Encode, FixedArray, Lazy, Map, SizeCounter, Timestamp, Uuid, bf16, f16,
};
use bebop_runtime::EncodeExt;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Encodes through every sink, checks they agree with `encoded_size`, returns the bytes.
fn encode_all_ways<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    let bytes = value.encode_to_vec().unwrap();
    assert_eq!(bytes.len(), value.encoded_size());
    let mut buf = vec![0u8; bytes.len()];
    assert_eq!(value.encode_into(&mut buf).unwrap(), bytes.len());
    assert_eq!(buf, bytes);
    let mut io = Vec::new();
    value.write_to(&mut io).unwrap();
    assert_eq!(io, bytes);
    let mut eio = vec![0u8; bytes.len()];
    let mut eio_out: &mut [u8] = &mut eio;
    value.encode_to_io(&mut eio_out).unwrap();
    assert_eq!(eio, bytes);
    let mut counter = SizeCounter::default();
    value.encode(&mut counter).unwrap();
    assert_eq!(counter.count, bytes.len());
    bytes
}

macro_rules! scalar_round_trip {
    ($($name:ident: $t:ty = $strategy:expr, $size:expr;)*) => {
        proptest! {$(
            #[test]
            fn $name(v in $strategy) {
                let v: $t = v;
                let bytes = encode_all_ways(&v);
                prop_assert_eq!(bytes.len(), $size);
                let back = <$t>::from_bytes(&bytes).unwrap();
                // Compare encodings so that NaN payloads count as equal to themselves.
                prop_assert_eq!(back.encode_to_vec().unwrap(), bytes);
            }
        )*}
    };
}

scalar_round_trip! {
    rt_bool: bool = any::<bool>(), 1;
    rt_u8: u8 = any::<u8>(), 1;
    rt_i8: i8 = any::<i8>(), 1;
    rt_u16: u16 = any::<u16>(), 2;
    rt_i16: i16 = any::<i16>(), 2;
    rt_u32: u32 = any::<u32>(), 4;
    rt_i32: i32 = any::<i32>(), 4;
    rt_u64: u64 = any::<u64>(), 8;
    rt_i64: i64 = any::<i64>(), 8;
    rt_u128: u128 = any::<u128>(), 16;
    rt_i128: i128 = any::<i128>(), 16;
    rt_f32: f32 = any::<u32>().prop_map(f32::from_bits), 4;
    rt_f64: f64 = any::<u64>().prop_map(f64::from_bits), 8;
    rt_f16: f16 = any::<u16>().prop_map(f16::from_bits), 2;
    rt_bf16: bf16 = any::<u16>().prop_map(bf16::from_bits), 2;
    rt_uuid: Uuid = any::<[u8; 16]>().prop_map(Uuid::from_array), 16;
    rt_timestamp: Timestamp = (any::<i64>(), 0..1_000_000_000i32, -86_400_000..=86_400_000i32)
        .prop_map(|(s, n, o)| Timestamp::new(s, n, o).unwrap()), 16;
    rt_duration: Duration = (any::<i64>(), 0..1_000_000_000i32)
        .prop_map(|(s, n)| if s < 0 { Duration::new(s, -n).unwrap() } else { Duration::new(s, n).unwrap() }), 12;
}

fn point() -> impl Strategy<Value = Point> {
    (any::<f32>(), any::<f32>()).prop_map(|(x, y)| Point { x, y })
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        any::<f32>().prop_map(|radius| Shape::Circle(Circle { radius })),
        (any::<f32>(), any::<f32>())
            .prop_map(|(width, height)| Shape::Rectangle(Rectangle { width, height })),
    ]
}

/// An owned tree, turned into views for encoding.
#[derive(Clone, Debug)]
struct OwnedTree {
    value: Option<i32>,
    children: Option<Vec<OwnedTree>>,
}

fn owned_tree() -> impl Strategy<Value = OwnedTree> {
    let leaf = any::<Option<i32>>().prop_map(|value| OwnedTree {
        value,
        children: None,
    });
    leaf.prop_recursive(6, 64, 4, |inner| {
        (
            any::<Option<i32>>(),
            proptest::option::of(proptest::collection::vec(inner, 0..4)),
        )
            .prop_map(|(value, children)| OwnedTree { value, children })
    })
}

/// Encodes an owned tree through the view type (children built bottom-up in a Vec).
fn encode_tree(t: &OwnedTree) -> Vec<u8> {
    // Build the children's encodings, then wrap them: encode each child's view recursively.
    fn view_bytes(t: &OwnedTree) -> Vec<u8> {
        let child_bytes: Vec<Vec<u8>> = t.children.iter().flatten().map(view_bytes).collect();
        let child_views: Vec<TreeNode<'_>> = child_bytes
            .iter()
            .map(|b| TreeNode::from_bytes(b).unwrap())
            .collect();
        let node = TreeNode {
            value: t.value,
            children: t.children.as_ref().map(|_| Array::from_slice(&child_views)),
        };
        encode_all_ways(&node)
    }
    view_bytes(t)
}

fn same_tree(view: &TreeNode<'_>, owned: &OwnedTree) -> bool {
    view.value == owned.value
        && match (&view.children, &owned.children) {
            (None, None) => true,
            (Some(v), Some(o)) => {
                v.len() == o.len() && v.iter().zip(o).all(|(a, b)| same_tree(&a, b))
            }
            _ => false,
        }
}

proptest! {
    #[test]
    fn rt_strings(s in ".*") {
        let bytes = encode_all_ways(s.as_str());
        prop_assert_eq!(<&str>::from_bytes(&bytes).unwrap(), s.as_str());
        prop_assert_eq!(String::from_bytes(&bytes).unwrap(), s);
    }

    #[test]
    fn rt_byte_arrays(v in proptest::collection::vec(any::<u8>(), 0..300)) {
        let bytes = encode_all_ways(v.as_slice());
        prop_assert_eq!(<&[u8]>::from_bytes(&bytes).unwrap(), v.as_slice());
        prop_assert_eq!(Array::<u8>::from_bytes(&bytes).unwrap(), Array::from_slice(&v));
        prop_assert_eq!(Vec::<u8>::from_bytes(&bytes).unwrap(), v);
    }

    #[test]
    fn rt_scalar_arrays(v in proptest::collection::vec(any::<i64>(), 0..100)) {
        let bytes = encode_all_ways(&Array::from_slice(&v));
        prop_assert_eq!(&bytes, &encode_all_ways(v.as_slice()));
        let view = Array::<i64>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.iter().collect::<Vec<_>>(), v.clone());
        let mut out = vec![0i64; v.len()];
        prop_assert_eq!(view.copy_to_slice(&mut out), v.len());
        prop_assert_eq!(&out, &v);
        for (i, x) in v.iter().enumerate() {
            prop_assert_eq!(view.get(i), Some(*x));
        }
        prop_assert_eq!(Vec::<i64>::from_bytes(&bytes).unwrap(), v);
    }

    #[test]
    fn rt_string_arrays(v in proptest::collection::vec(".{0,8}", 0..20)) {
        let strs: Vec<&str> = v.iter().map(String::as_str).collect();
        let bytes = encode_all_ways(&Array::from_slice(&strs));
        let view = Array::<&str>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.iter().collect::<Vec<_>>(), strs.clone());
        prop_assert_eq!(Vec::<String>::from_bytes(&bytes).unwrap(), v);
    }

    #[test]
    fn rt_nested_arrays(v in proptest::collection::vec(proptest::collection::vec(any::<u16>(), 0..5), 0..8)) {
        let inner: Vec<Array<u16>> = v.iter().map(|x| Array::from_slice(x)).collect();
        let bytes = encode_all_ways(&Array::from_slice(&inner));
        let view = Array::<Array<u16>>::from_bytes(&bytes).unwrap();
        let back: Vec<Vec<u16>> = view.iter().map(|a| a.iter().collect()).collect();
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(Vec::<Vec<u16>>::from_bytes(&bytes).unwrap(), v);
    }

    #[test]
    fn rt_fixed_arrays(v in any::<[u32; 5]>(), s in proptest::collection::vec(".{0,4}", 3)) {
        let bytes = encode_all_ways(&v);
        prop_assert_eq!(bytes.len(), 20);
        prop_assert_eq!(<[u32; 5]>::from_bytes(&bytes).unwrap(), v);
        prop_assert_eq!(FixedArray::<u32, 5>::from_bytes(&bytes).unwrap().to_array(), v);
        let strs: [&str; 3] = [&s[0], &s[1], &s[2]];
        let bytes = encode_all_ways(&FixedArray::from_array(&strs));
        let view = FixedArray::<&str, 3>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.iter().collect::<Vec<_>>(), strs.to_vec());
    }

    #[test]
    fn rt_maps(m in proptest::collection::btree_map(".{0,6}", any::<i32>(), 0..10)) {
        let entries: Vec<(&str, i32)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let bytes = encode_all_ways(&Map::from_slice(&entries));
        prop_assert_eq!(&bytes, &encode_all_ways(&m));
        let view = Map::<&str, i32>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.iter().collect::<Vec<_>>(), entries);
        for (k, v) in &m {
            prop_assert_eq!(view.get(k.as_str()), Some(*v));
        }
        prop_assert_eq!(BTreeMap::<String, i32>::from_bytes(&bytes).unwrap(), m);
    }

    /// Owned collections lend views that equal the decoded ones and encode the same bytes as
    /// the owned values (`Array::from_owned`, `Map::from_btree_map`, `Map::from_pairs`,
    /// `FixedArray::from_owned`, `Lazy::from_owned`), walked forwards, by index and by `nth`.
    #[test]
    fn rt_lent_views(
        nested in proptest::collection::vec(proptest::collection::vec(".{0,6}", 0..4), 0..6),
        sorted in proptest::collection::btree_map(any::<u16>(), proptest::collection::vec(any::<u8>(), 0..5), 0..12),
        pairs in proptest::collection::vec((".{0,3}", ".{0,3}"), 0..8),
        fixed in proptest::collection::vec(".{0,4}", 3),
        boxed in ".{0,10}",
        skip in 0usize..8,
    ) {
        let lent: Array<'_, Array<'_, &str>> = Array::from_owned(&nested);
        let bytes = encode_all_ways(&lent);
        prop_assert_eq!(&bytes, &nested.encode_to_vec().unwrap());
        prop_assert_eq!(Array::<Array<&str>>::from_bytes(&bytes).unwrap(), lent);
        prop_assert_eq!(lent.iter().nth(skip), lent.get(skip));
        prop_assert_eq!(lent.iter().skip(skip).count(), nested.len().saturating_sub(skip));

        let lent: Map<'_, u16, &[u8]> = Map::from_btree_map(&sorted);
        let bytes = encode_all_ways(&lent);
        prop_assert_eq!(&bytes, &sorted.encode_to_vec().unwrap());
        let decoded = Map::<u16, &[u8]>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(decoded, lent);
        for (k, v) in &sorted {
            prop_assert_eq!(lent.get(k), Some(v.as_slice()));
        }

        let lent: Map<'_, &str, &str> = Map::from_pairs(&pairs);
        let bytes = encode_all_ways(&lent);
        let decoded = Map::<&str, &str>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(decoded, lent);
        prop_assert_eq!(lent.len(), pairs.len());

        let owned: [String; 3] = [fixed[0].clone(), fixed[1].clone(), fixed[2].clone()];
        let lent: FixedArray<'_, &str, 3> = FixedArray::from_owned(&owned);
        let bytes = encode_all_ways(&lent);
        prop_assert_eq!(FixedArray::<&str, 3>::from_bytes(&bytes).unwrap(), lent);

        let boxed = Box::new(boxed);
        let lent: Lazy<'_, &str> = Lazy::from_owned(&*boxed);
        let bytes = encode_all_ways(&lent);
        prop_assert_eq!(Lazy::<&str>::from_bytes(&bytes).unwrap().get(), boxed.as_str());
    }

    #[test]
    fn rt_points_and_shapes(points in proptest::collection::vec(point(), 0..10), shapes in proptest::collection::vec(shape(), 0..10)) {
        let bytes = encode_all_ways(&Array::from_slice(&points));
        let view = Array::<Point>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.len(), points.len());
        for (a, b) in view.iter().zip(&points) {
            prop_assert_eq!(a.encode_to_vec().unwrap(), b.encode_to_vec().unwrap());
        }
        let bytes = encode_all_ways(&Array::from_slice(&shapes));
        let view = Array::<Shape>::from_bytes(&bytes).unwrap();
        for (a, b) in view.iter().zip(&shapes) {
            prop_assert_eq!(a.encode_to_vec().unwrap(), b.encode_to_vec().unwrap());
        }
    }

    #[test]
    fn rt_messages(user_id in any::<Option<i32>>(), include_profile in any::<Option<bool>>()) {
        let m = UserRequest { user_id, include_profile };
        let bytes = encode_all_ways(&m);
        prop_assert_eq!(UserRequest::from_bytes(&bytes).unwrap(), m);
        prop_assert_eq!(bytes.len(), 5 + user_id.map_or(0, |_| 5) + include_profile.map_or(0, |_| 2));
    }

    #[test]
    fn rt_unions(seq in any::<u32>(), body in proptest::option::of(".{0,10}"), d in 3u8.., raw in proptest::collection::vec(any::<u8>(), 0..10)) {
        for ev in [
            Event::Ping { seq },
            Event::Text { body: body.as_deref() },
            Event::Unknown { discriminator: d, body: &raw },
        ] {
            let bytes = encode_all_ways(&ev);
            prop_assert_eq!(Event::from_bytes(&bytes).unwrap(), ev);
        }
    }

    #[test]
    fn rt_trees(t in owned_tree()) {
        let bytes = encode_tree(&t);
        let view = TreeNode::from_bytes(&bytes).unwrap();
        prop_assert!(same_tree(&view, &t));
        // A decoded view re-encodes to the same bytes.
        prop_assert_eq!(encode_all_ways(&view), bytes);
    }

    #[test]
    fn rt_chains(values in proptest::collection::vec(any::<i32>(), 1..20)) {
        // Encode from the tail: each link wraps the bytes of the next.
        let mut bytes: Option<Vec<u8>> = None;
        for v in values.iter().rev() {
            let next = bytes.as_deref().map(|b| Lazy::<Chain>::from_bytes(b).unwrap());
            let link = Chain { value: Some(*v), next };
            bytes = Some(encode_all_ways(&link));
        }
        let bytes = bytes.unwrap();
        let mut cur = Chain::from_bytes(&bytes).unwrap();
        prop_assert_eq!(cur.link_count(), values.len());
        for v in &values {
            prop_assert_eq!(cur.value, Some(*v));
            if let Some(next) = cur.next {
                cur = next.get();
            }
        }
    }

    #[test]
    fn rt_structs(id in any::<i32>(), name in ".{0,12}", email in ".{0,12}", age in any::<i32>(),
                  uuid in any::<[u8; 16]>(), vector in proptest::collection::vec(any::<u16>(), 0..50),
                  level in 0u8..4, lines in proptest::collection::vec(".{0,5}", 0..4)) {
        let p = Person { id, name: &name, email: &email, age };
        let bytes = encode_all_ways(&p);
        prop_assert_eq!(Person::from_bytes(&bytes).unwrap(), p);

        let vector: Vec<bf16> = vector.into_iter().map(bf16::from_bits).collect();
        let e = Embedding { id: Uuid::from_array(uuid), vector: Array::from_slice(&vector) };
        let bytes = encode_all_ways(&e);
        let view = Embedding::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.id, e.id);
        prop_assert_eq!(view.vector.iter().map(bf16::to_bits).collect::<Vec<_>>(), vector.iter().map(|v| v.to_bits()).collect::<Vec<_>>());

        let line_refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (first, third) = ([id], [age, id]);
        let rows = [Array::from_slice(&first), Array::from_slice(&[]), Array::from_slice(&third)];
        let tags = [(name.as_str(), email.as_str())];
        let log = Log {
            level: Level::try_from(level).unwrap(),
            tags: Map::from_slice(&tags),
            lines: Array::from_slice(&line_refs),
            grid: FixedArray::from_array(&rows),
        };
        let bytes = encode_all_ways(&log);
        prop_assert_eq!(Log::from_bytes(&bytes).unwrap(), log);
    }
}

/// Every strict prefix of a valid encoding is *incomplete* input, never corrupt, and the bytes
/// the error says are missing are no more than the bytes actually cut off.
fn assert_prefixes_incomplete<'a, T: Decode<'a> + std::fmt::Debug>(
    bytes: &'a [u8],
) -> Result<(), TestCaseError> {
    prop_assert!(T::from_bytes(bytes).is_ok());
    for cut in 0..bytes.len() {
        let err = T::from_bytes(&bytes[..cut]).unwrap_err();
        prop_assert!(
            err.is_incomplete(),
            "prefix of {} of {} bytes: {}",
            cut,
            bytes.len(),
            err
        );
        if let Some(missing) = err.bytes_missing() {
            prop_assert!(
                missing >= 1 && missing <= bytes.len() - cut,
                "{} at cut {}",
                err,
                cut
            );
        }
    }
    Ok(())
}

#[test]
fn a_field_past_its_message_end_is_corrupt_not_incomplete() {
    // TreeNode's body claims 2 bytes: tag 1 (value: int32) and one of the int32's 4 bytes.
    let err = TreeNode::from_bytes(&[2, 0, 0, 0, 1, 42]).unwrap_err();
    assert_eq!(err.kind(), bebop_core::ErrorKind::UnexpectedEnd);
    assert!(!err.is_incomplete(), "{err}");
    // A body that claims 6 bytes of which 2 have arrived: merely short.
    let err = TreeNode::from_bytes(&[6, 0, 0, 0, 1, 42]).unwrap_err();
    assert!(err.is_incomplete(), "{err}");
    assert_eq!(err.bytes_missing(), Some(4));
}

proptest! {
    #[test]
    fn prefixes_of_values_are_incomplete(
        s in ".{0,12}",
        tree in owned_tree(),
        shapes in proptest::collection::vec(shape(), 0..6),
        m in proptest::collection::btree_map(".{0,6}", any::<i32>(), 0..6),
    ) {
        let bytes = encode_all_ways(s.as_str());
        assert_prefixes_incomplete::<&str>(&bytes)?;
        let bytes = encode_tree(&tree);
        assert_prefixes_incomplete::<TreeNode<'_>>(&bytes)?;
        let bytes = encode_all_ways(&Array::from_slice(&shapes));
        assert_prefixes_incomplete::<Array<'_, Shape>>(&bytes)?;
        let bytes = encode_all_ways(&m);
        assert_prefixes_incomplete::<Map<'_, &str, i32>>(&bytes)?;
    }

    /// Inside a length-prefixed value (a message, a union) running out of bytes is corruption:
    /// the enclosing length was satisfied, so more input cannot help.
    #[test]
    fn short_values_inside_a_message_are_corrupt(tree in owned_tree(), extra in 0usize..4) {
        let bytes = encode_tree(&tree);
        prop_assume!(bytes.len() > 5);
        // Shrink the message's declared length (keeping its bytes) so its body ends early.
        let mut cut = bytes.clone();
        let body = u32::from_le_bytes(cut[..4].try_into().unwrap()) as usize;
        let shorter = body.saturating_sub(1 + extra).max(1);
        cut.truncate(4 + shorter);
        cut[..4].copy_from_slice(&(shorter as u32).to_le_bytes());
        if let Err(err) = TreeNode::from_bytes(&cut) {
            prop_assert!(!err.is_incomplete(), "{}", err);
        }
    }
}
