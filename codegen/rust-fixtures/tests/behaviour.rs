//! The decoding rules of `docs/wire-format.md` and `docs/decisions.md`, checked on generated
//! types: unknown and duplicate message tags, deprecated fields, union discriminators and
//! `@forward_compatible` types, enum and flags validation, recursion through `Lazy`, consts,
//! services, names, and hostile input.
#![allow(clippy::unwrap_used, deprecated)]

mod support;

use bebop_runtime::{Decode, Encode, EncodeExt, ErrorKind, Lazy, MethodKind};
use bebop_rust_fixtures as fx;
use fx::extra::forward::fwd;
use fx::extra::spec;

#[test]
fn unknown_tags_end_a_message_and_its_rest_is_skipped() {
    // UserRequest { user_id: 42 }, then unknown field 9 with junk, inside an array of two.
    let mut bytes = vec![2, 0, 0, 0];
    bytes.extend_from_slice(&[10, 0, 0, 0, 1, 42, 0, 0, 0, 9, 0xAA, 0xBB, 0xCC, 0]);
    bytes.extend_from_slice(&[5, 0, 0, 0, 2, 1, 2, 0, 0]);
    let list = bebop_runtime::Array::<spec::UserRequest>::from_bytes(&bytes).unwrap();
    let items: Vec<_> = list.iter().collect();
    assert_eq!(items[0].user_id, Some(42));
    assert_eq!(items[0].include_profile, None);
    // Duplicate tag 2 (true, then false): the last one wins.
    assert_eq!(items[1].include_profile, Some(false));
    assert_eq!(items[1].user_id, None);
    let owned = bebop_runtime::Array::<spec::owned::UserRequest>::from_bytes(&bytes).unwrap();
    assert_eq!(owned.iter().collect::<Vec<_>>(), items);
    let owned = bebop_runtime::Array::<spec::owned::TreeNode>::from_bytes(&[0, 0, 0, 0]).unwrap();
    assert!(owned.is_empty());
}

#[test]
fn deprecated_fields_are_decoded_but_not_written() {
    use fx::documentation::DocM;
    let bytes = [16, 0, 0, 0, 1, 1, 0, 0, 0, 2, 2, 0, 0, 0, 3, 3, 0, 0, 0, 0];
    let m = DocM::from_bytes(&bytes).unwrap();
    assert_eq!((m.x, m.y, m.z), (Some(1), Some(2), Some(3)));
    assert_eq!(m.encode_to_vec().unwrap(), [6, 0, 0, 0, 1, 1, 0, 0, 0, 0]);
    assert_eq!(m.encoded_size(), 10);
    // The owned form behaves the same.
    let mut body = vec![2, 1, 0, 0, 0, b'x', 0, 5];
    body.extend_from_slice(&7i32.to_le_bytes());
    body.push(0);
    let mut bytes = (body.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(&body);
    let o = fx::codegen_all::owned::codegen::all::DeprecatedFields::from_bytes(&bytes).unwrap();
    assert_eq!(o.old_field.as_deref(), Some("x"));
    assert_eq!(o.obsolete_count, Some(7));
    assert_eq!(o.encode_to_vec().unwrap(), [1, 0, 0, 0, 0]);
}

#[test]
fn unknown_discriminators() {
    // A closed union: an error at the discriminator.
    let err = spec::Shape::from_bytes(&[5, 0, 0, 0, 7, 0, 0, 0x80, 0x3f]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.detail()),
        (ErrorKind::InvalidDiscriminator, 4, 7)
    );
    // A forward-compatible one keeps the branch and writes it back unchanged.
    let bytes = [4, 0, 0, 0, 9, 1, 2, 3];
    let e = spec::Event::from_bytes(&bytes).unwrap();
    assert_eq!(
        e,
        spec::Event::Unknown {
            discriminator: 9,
            body: &[1, 2, 3]
        }
    );
    assert_eq!(e.encode_to_vec().unwrap(), bytes);
    let owned = e.to_owned_value();
    assert_eq!(
        owned,
        spec::owned::Event::Unknown {
            discriminator: 9,
            body: vec![1, 2, 3]
        }
    );
    assert_eq!(owned.encode_to_vec().unwrap(), bytes);
    assert_eq!(owned.as_view(), e);
    // A branch named `Unknown` pushes the extra variant to `Unknown_`.
    let f = fwd::Event::from_bytes(&[1, 0, 0, 0, 200]).unwrap();
    assert!(matches!(
        f,
        fwd::Event::Unknown_ {
            discriminator: 200,
            body: &[]
        }
    ));
}

#[test]
fn enums_validate_unless_forward_compatible() {
    let err = spec::Level::from_bytes(&[9]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.detail()),
        (ErrorKind::InvalidEnumValue, 0, 9)
    );
    assert_eq!(spec::Level::try_from(2u8), Ok(spec::Level::Warn));
    assert_eq!(spec::Level::try_from(4u8), Err(4));
    assert_eq!(u8::from(spec::Level::Error), 3);
    assert_eq!(spec::Level::default(), spec::Level::Debug);
    // Signed bases: the detail is the value's bits.
    let err = fx::codegen_all::codegen::all::EnumInt8::from_bytes(&[0xFE]).unwrap_err();
    assert_eq!(err.detail(), (-2i64) as u64);
    assert_eq!(
        fx::codegen_all::codegen::all::EnumInt8::from_bytes(&[0x80]),
        Ok(fx::codegen_all::codegen::all::EnumInt8::Min)
    );
    // Forward compatible: unknown values are kept and written back.
    assert_eq!(
        fwd::Status::from_bytes(&[7]),
        Ok(fwd::Status::Unrecognized(7))
    );
    assert_eq!(fwd::Status::Unrecognized(7).encode_to_vec().unwrap(), [7]);
    assert_eq!(fwd::Status::from(1u8), fwd::Status::Failed);
    assert_eq!(u8::from(fwd::Status::Failed), 1);
    assert_eq!(
        fwd::Code::from_bytes(&(-5i16).to_le_bytes()),
        Ok(fwd::Code::Low)
    );
    const { assert!(<fwd::Status as Decode<'static>>::ALWAYS_VALID) };
    const { assert!(!<spec::Level as Decode<'static>>::ALWAYS_VALID) };
    // Aliases are consts of the first member with the value.
    assert_eq!(fwd::Aliased::PRIMARY, fwd::Aliased::First);
    assert_eq!(fwd::Aliased::try_from(1u32), Ok(fwd::Aliased::First));
}

#[test]
fn flags() {
    use fx::codegen_all::codegen::all::Permissions as P;
    let rw = P::READ | P::WRITE;
    assert_eq!(rw, P::READ_WRITE);
    assert!(rw.contains(P::READ) && !rw.contains(P::EXECUTE));
    assert!(rw.intersects(P::WRITE | P::EXECUTE));
    assert_eq!(rw - P::READ, P::WRITE);
    assert_eq!(!rw, P::EXECUTE);
    assert_eq!(P::all(), P::ALL);
    assert_eq!(P::from_bits(8), None);
    assert_eq!(P::from_bits_truncate(0xF).bits(), 7);
    assert_eq!(P::from_bits_retain(0xF).bits(), 0xF);
    let mut p = P::empty();
    p |= P::EXECUTE;
    p.insert(P::READ);
    p ^= P::READ;
    assert_eq!(p, P::EXECUTE);
    p -= P::EXECUTE;
    assert!(p.is_empty());
    assert_eq!(format!("{:?}", rw), "Permissions(READ | WRITE)");
    assert_eq!(format!("{:?}", P::empty()), "Permissions(NONE)");
    assert_eq!(
        format!("{:?}", P::from_bits_retain(9)),
        "Permissions(READ | 0x8)"
    );
    // Decoding rejects undeclared bits, with the bits as detail.
    let err = P::from_bytes(&[0x09, 0, 0, 0]).unwrap_err();
    assert_eq!((err.kind(), err.detail()), (ErrorKind::InvalidFlags, 8));
    assert_eq!(P::from_bytes(&[3, 0, 0, 0]), Ok(rw));
    // Forward compatible flags keep them.
    let f = fwd::Perms::from_bytes(&[0x09, 0x80]).unwrap();
    assert_eq!(f.bits(), 0x8009);
    assert_eq!(f.encode_to_vec().unwrap(), [0x09, 0x80]);
    const { assert!(<fwd::Perms as Decode<'static>>::ALWAYS_VALID) };
    // Signed bases and a member with the sign bit.
    assert_eq!(
        fwd::Signed::from_bytes(&[0x81]).map(fwd::Signed::bits),
        Ok(-127)
    );
    assert!(fwd::Signed::from_bytes(&[0x04]).is_err());
    // Every bit is declared, so every byte is valid.
    const { assert!(<fwd::Full as Decode<'static>>::ALWAYS_VALID) };
    let t = fx::bitflags::TestFlags::MINUS_EIGHT;
    assert_eq!(t.bits(), -8);
}

#[test]
fn recursion_through_lazy() {
    use fx::extra::recursion::rec;
    // A chain 40 links long (each link is a nested message).
    let mut bytes = vec![1, 0, 0, 0, 0];
    for i in 0..40i32 {
        let mut link = Vec::new();
        link.push(1);
        link.extend_from_slice(&i.to_le_bytes());
        link.push(2);
        link.extend_from_slice(&bytes);
        link.push(0);
        bytes = (link.len() as u32).to_le_bytes().to_vec();
        bytes.extend_from_slice(&link);
    }
    let head = rec::Chain::from_bytes(&bytes).unwrap();
    let mut count = 0;
    let mut cur = head;
    while let Some(next) = cur.next {
        cur = next.get();
        count += 1;
    }
    assert_eq!(count, 40);
    assert_eq!(head.encode_to_vec().unwrap(), bytes);
    let owned = head.to_owned_value();
    assert_eq!(owned.encode_to_vec().unwrap(), bytes);
    // 40 boxes deep, lent back as 40 lazy links: the same chain, the same bytes.
    assert_eq!(owned.as_view(), head);
    assert_eq!(owned.as_view().encode_to_vec().unwrap(), bytes);
    assert_eq!(
        fx::extra::recursion::owned::rec::Chain::from_bytes(&bytes).unwrap(),
        owned
    );
    // Deeper than the decoder's limit: an error, not a stack overflow.
    let mut deep = vec![1, 0, 0, 0, 0];
    for _ in 0..200 {
        let mut link = vec![2];
        link.extend_from_slice(&deep);
        link.push(0);
        deep = (link.len() as u32).to_le_bytes().to_vec();
        deep.extend_from_slice(&link);
    }
    assert_eq!(
        rec::Chain::from_bytes(&deep).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    assert_eq!(
        fx::extra::recursion::owned::rec::Chain::from_bytes(&deep)
            .unwrap_err()
            .kind(),
        ErrorKind::TooDeep
    );
    // Built from references, with a struct field held lazily.
    let lit = rec::Expr::Lit(rec::expr::Lit { value: 5 });
    let neg = rec::Expr::Neg(rec::Negation {
        inner: Lazy::from_ref(&lit),
    });
    let bytes = neg.encode_to_vec().unwrap();
    assert_eq!(
        bytes,
        [14, 0, 0, 0, 3, 9, 0, 0, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0]
    );
    let back = rec::Expr::from_bytes(&bytes).unwrap();
    assert_eq!(back, neg);
    let rec::Expr::Neg(n) = back else {
        panic!("not a negation")
    };
    assert_eq!(n.inner.get(), lit);
}

#[test]
fn consts() {
    use fx::codegen_all::codegen::all;
    use fx::extra::consts as c;
    assert_eq!(all::CONST_BYTE, 0xFF);
    assert_eq!(all::CONST_INT32, -2147483647);
    assert_eq!(all::CONST_UINT64, 0x123ffffffff);
    assert_eq!(
        all::CONST_FLOAT64,
        "3.14159265358979".parse::<f64>().unwrap()
    );
    assert_eq!(all::CONST_INF, f64::INFINITY);
    assert_eq!(all::CONST_NEG_INF, f64::NEG_INFINITY);
    assert!(all::CONST_NAN.is_nan());
    assert_eq!(all::EMOJI, "Hello, \u{1F600}!");
    assert_eq!(all::CONST_STRING, "hello \"world\"\nwith newlines");
    assert_eq!(
        all::CONST_UUID,
        bebop_runtime::Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000")
    );
    assert_eq!(c::MIN_I8, i8::MIN);
    assert_eq!(c::MAX_U64, u64::MAX);
    assert_eq!(c::MIN_I64, i64::MIN);
    assert_eq!(c::BIG128, i128::MIN);
    assert_eq!(c::BIG_U128, 0xFFFF_FFFF_FFFF_FFFF_FFFF);
    assert_eq!(c::PI, std::f64::consts::PI);
    assert_eq!(c::TENTH32, 0.1f32);
    assert_eq!(c::NEG_ZERO.to_bits(), (-0.0f64).to_bits());
    assert_eq!(c::PAYLOAD.to_bits(), 0x7ff8_0000_0000_0001);
    assert_eq!(c::NEG_NAN32.to_bits(), (-f64::NAN as f32).to_bits());
    assert_eq!(c::HALF, half::f16::from_f32(1.5));
    assert_eq!(c::B_HALF, half::bf16::from_f32(-2.0));
    assert_eq!(c::INF32, f32::INFINITY);
    const { assert!(c::YES) };
    assert_eq!(c::QUOTE, "tab\there \"quoted\" \\ and \0 nul");
    assert_eq!(c::ID.as_u128(), 0x550e8400_e29b_41d4_a716_446655440000);
    assert_eq!(c::BYTES, &[0, 1, 0xfe, b'"']);
    assert_eq!(
        (c::WHEN.seconds(), c::WHEN.nanos(), c::WHEN.offset_ms()),
        (1_620_891_336, 123_456_789, -28_800_000)
    );
    assert_eq!(c::TIMEOUT.as_nanos(), -1_500_000_000);
    assert_eq!(fx::r#const::EXAMPLE_CONST_FLOAT64, 123.45678e9);
    assert_eq!(fx::r#const::P_CASE, 0x12);
}

#[test]
fn services() {
    use fx::codegen_all::codegen::all::{echo_service, stream_service};
    assert_eq!(echo_service::NAME, "EchoService");
    assert_eq!(
        echo_service::PING.id,
        bebop_runtime::method_id("/EchoService/Ping")
    );
    assert_eq!(echo_service::METHODS.len(), 3);
    assert_eq!(stream_service::WATCH.kind, MethodKind::ServerStream);
    assert_eq!(stream_service::UPLOAD.kind, MethodKind::ClientStream);
    assert_eq!(stream_service::CHAT.kind, MethodKind::DuplexStream);
    // Mixins leave no trace: only the service's own methods.
    assert_eq!(
        stream_service::METHODS
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>(),
        ["Watch", "Upload", "Chat"]
    );
    let request: echo_service::GetPointRequest = Default::default();
    assert_eq!(request.value, None);
    let _response: echo_service::GetPointResponse = fx::codegen_all::base::Point { x: 0.0, y: 0.0 };
    use fx::extra::naming::r#type::self_::api;
    assert_eq!(
        api::METHODS.iter().map(|m| m.name).collect::<Vec<_>>(),
        [
            "Get",
            "get",
            "Put",
            "Talk",
            "GetOwned",
            "DispatchGet",
            "New"
        ]
    );
    assert_ne!(api::GET.id, api::GET_.id);
}

#[test]
fn names() {
    use fx::extra::naming::r#type::self_ as n;
    // Keywords and collisions after conversion.
    let t = n::Type {
        r#type: 1,
        self_: true,
        foo_bar: "a",
        foo_bar_: "b",
        r#match: &[1],
    };
    assert_eq!(n::Type::from_bytes(&t.encode_to_vec().unwrap()).unwrap(), t);
    assert_eq!(n::Edition::Edition2026 as i32, 1000);
    assert_eq!(n::Edition::Edition2026_ as i32, 2026);
    assert_eq!((n::MAX, n::MAX_), (5, 6));
    // Types named like std types do not disturb the generated code.
    let v = n::Vec {
        items: None,
        self_: Some(n::Option { some: 3 }),
        gone: Some(1),
    };
    assert_eq!(v.encode_to_vec().unwrap(), [6, 0, 0, 0, 2, 3, 0, 0, 0, 0]);
    let r = n::Result::Ok_(n::Option { some: 1 });
    assert!(matches!(
        n::Result::from_bytes(&r.encode_to_vec().unwrap()),
        Ok(n::Result::Ok_(_))
    ));
    // A nested-definition module that collides with `owned` is renamed.
    let _ = fx::extra::consts::owned_::Inner { x: 1 };
    let _ = fx::extra::consts::owned::owned_::Inner { x: 1 };
    // Nested definitions live in a module named after their parent.
    let _ = fx::nested::container::Point { x: 1.0, y: 2.0 };
    let _ = fx::nested::result::StatusCode::Fail;
    let _ = fx::codegen_all::codegen::all::outer_struct::level1::level2::Level3 { deep_value: 1 };
    let _ = fx::r#enum::OtherInstrument::StringBass;
    let _ = fx::r#enum::Letters::H;
}

#[test]
fn owned_maps_keep_the_last_value_and_encode_sorted() {
    use fx::map_types::{SomeMaps, owned};
    // m1: map[bool, bool] {true: false, false: true, true: true}; the rest empty.
    let mut bytes = vec![3, 0, 0, 0, 1, 0, 0, 1, 1, 1];
    bytes.extend_from_slice(&[0; 16]);
    let view = SomeMaps::from_bytes(&bytes).unwrap();
    assert_eq!(view.m1.len(), 3);
    assert_eq!(view.m1.get(&true), Some(true));
    assert_eq!(
        view.encode_to_vec().unwrap(),
        bytes,
        "views keep wire order and duplicates"
    );
    let o = owned::SomeMaps::from_bytes(&bytes).unwrap();
    assert_eq!(o.m1.len(), 2);
    assert!(o.m1[&true]);
    assert_eq!(view.to_owned_value(), o);
    let mut sorted = vec![2, 0, 0, 0, 0, 1, 1, 1];
    sorted.extend_from_slice(&[0; 16]);
    assert_eq!(o.encode_to_vec().unwrap(), sorted);
}

#[test]
fn hostile_input_never_panics() {
    // The reference fixtures only when the conformance data is there.
    let mut fixtures: Vec<_> = [
        ("codegen_all", "codegen.all.KitchenSink"),
        ("document", "test.Document"),
    ]
    .into_iter()
    .filter_map(|(name, fqn)| Some((support::Fixture::reference(name)?, fqn)))
    .collect();
    fixtures.push((support::Fixture::extra("recursion"), "rec.Forest"));
    fixtures.push((support::Fixture::extra("forward"), "fwd.Envelope"));
    for (fx, fqn) in &fixtures {
        for seed in 0..200u64 {
            let mut bytes = fx.sample(fqn, seed);
            let mut rng = support::Rng::new(seed);
            for _ in 0..1 + rng.below(4) {
                if bytes.is_empty() {
                    break;
                }
                let i = rng.below(bytes.len() as u64) as usize;
                bytes[i] = rng.next() as u8;
            }
            let _ = decode_any(fqn, &bytes);
        }
    }
}

fn decode_any(fqn: &str, bytes: &[u8]) -> bool {
    match fqn {
        "codegen.all.KitchenSink" => {
            let a = fx::codegen_all::codegen::all::KitchenSink::from_bytes(bytes);
            let b = fx::codegen_all::owned::codegen::all::KitchenSink::from_bytes(bytes);
            if let (Ok(a), Ok(b)) = (&a, &b) {
                assert_eq!(&a.to_owned_value(), b);
            }
            a.is_ok()
        }
        "test.Document" => {
            let a = fx::document::test::Document::from_bytes(bytes);
            let b = fx::document::owned::test::Document::from_bytes(bytes);
            assert_eq!(a.is_ok(), b.is_ok());
            a.is_ok()
        }
        "rec.Forest" => {
            let a = fx::extra::recursion::rec::Forest::from_bytes(bytes);
            let b = fx::extra::recursion::owned::rec::Forest::from_bytes(bytes);
            assert_eq!(a.is_ok(), b.is_ok());
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(a.to_owned_value(), b);
                assert_eq!(b.as_view(), a);
            }
            true
        }
        _ => {
            let a = fwd::Envelope::from_bytes(bytes);
            let b = fx::extra::forward::owned::fwd::Envelope::from_bytes(bytes);
            assert_eq!(a.is_ok(), b.is_ok());
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(a.to_owned_value(), b);
                assert_eq!(a.encode_to_vec().unwrap(), b.encode_to_vec().unwrap());
            }
            true
        }
    }
}

/// Generated views stay covariant in their lifetime (arrays of strings, maps, lazy recursive
/// fields), so a long-lived view passes where a shorter one is expected: these compile only
/// if that holds. And views are `Send + Sync`, whatever form they take.
#[allow(dead_code)]
mod views_are_covariant {
    use super::fx;
    use fx::extra::recursion::rec;

    fn strings<'long: 'short, 'short>(
        v: fx::array_of_strings::ArrayOfStrings<'long>,
    ) -> fx::array_of_strings::ArrayOfStrings<'short> {
        v
    }
    fn maps<'long: 'short, 'short>(
        v: fx::map_types::SomeMaps<'long>,
    ) -> fx::map_types::SomeMaps<'short> {
        v
    }
    fn lazy<'long: 'short, 'short>(v: rec::Chain<'long>) -> rec::Chain<'short> {
        v
    }
    fn thread_safe(v: rec::Forest<'_>) -> impl Send + Sync + '_ {
        v
    }
}

#[test]
fn owned_values_lend_views_that_outlive_nothing_but_the_owner() {
    use fx::map_types::owned::SomeMaps;
    // Built in code, not decoded: maps of strings and arrays of maps, all lent.
    let mut owned = SomeMaps::default();
    owned.m2.insert(
        "a".into(),
        std::collections::BTreeMap::from([("x".into(), "y".into())]),
    );
    owned.m3.push(std::collections::BTreeMap::from([(
        7,
        vec![Default::default()],
    )]));
    let view = owned.as_view();
    let bytes = view.encode_to_vec().unwrap();
    assert_eq!(bytes, owned.encode_to_vec().unwrap());
    let decoded = fx::map_types::SomeMaps::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, view);
    assert_eq!(decoded.to_owned_value(), owned);
    // A view lent on one thread is read on others.
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(view.m2.len(), 1));
        s.spawn(|| assert_eq!(view.encode_to_vec().unwrap(), bytes));
    });
}
