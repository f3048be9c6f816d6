//! The golden variants `serde_common.rs` and `serde_app.rs`
//! (`codegen/rust/tests/expected/variants`): serde derives on the types that own their data,
//! type and field attributes, and `app.bop` reaching the types of `common.bop` by extern path
//! in the module the other file is included in (`crate::serde_common`). Owned values go
//! through JSON and back unchanged, and encode to the same Bebop bytes before and after.
#![allow(clippy::unwrap_used)]

/// `common.bop` (serde under `feature = "alloc"`, on for these tests).
pub mod serde_common {
    include!("../../rust/tests/expected/variants/serde_common.rs");
}

/// `app.bop`, with `.common` at `crate::serde_common::common`.
pub mod serde_app {
    include!("../../rust/tests/expected/variants/serde_app.rs");
}

use std::collections::BTreeMap;
use std::fmt::Debug;

use bebop_runtime::{Decode, Duration, Encode, EncodeExt, Timestamp, Uuid, bf16, f16};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_app::app;
use serde_app::owned::app as owned;
use serde_common::common;
use serde_common::owned::common as common_owned;

/// JSON and back gives the same value, which encodes to the same bytes, which decode to it.
/// Returns the JSON.
fn round_trip<T>(value: &T) -> serde_json::Value
where
    T: Serialize + DeserializeOwned + PartialEq + Debug + Encode + for<'a> Decode<'a>,
{
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value, "{text}");
    let bytes = value.encode_to_vec().unwrap();
    assert_eq!(back.encode_to_vec().unwrap(), bytes, "{text}");
    assert_eq!(&T::from_bytes(&bytes).unwrap(), value);
    // `Value` holds integers of up to 64 bits: `big` is checked on the text.
    serde_json::from_str(&text.replace("340282366920938463463374607431768211455", "0")).unwrap()
}

const ID: Uuid = Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000");

fn stamp() -> common::Stamp {
    common::Stamp {
        id: ID,
        at: Timestamp::new(1_700_000_000, 123, -3_600_000).unwrap(),
    }
}

fn label(text: &str) -> common_owned::Label {
    common_owned::Label {
        text: Some(text.into()),
        color: None,
    }
}

fn point() -> app::Point {
    app::Point {
        x: 1.5,
        y: -0.25,
        h: f16::from_f32(0.5),
        b: bf16::from_f32(-3.0),
    }
}

fn record() -> owned::Record {
    owned::Record {
        id: ID,
        at: Timestamp::from_unix_millis(-1),
        took: Duration::new(-2, -5).unwrap(),
        name: "probe".into(),
        tags: vec!["a".into(), "b".into()],
        scores: BTreeMap::from([("x".into(), 1), ("y".into(), -2)]),
        by_id: BTreeMap::from([(ID, app::Level::Warn), (Uuid::NIL, app::Level::Debug)]),
        perms: app::Perms::READ | app::Perms::WRITE,
        level: app::Level::Info,
        point: point(),
        grid: [1, 2, 3, 4],
        blob: vec![0, 255],
        big: u128::MAX,
        neg: i64::MIN,
        stamp: stamp(),
        label: label("red"),
    }
}

#[test]
fn structs_and_enums_use_their_attributes() {
    let json = round_trip(&record());
    // `owned_type_attribute("Record", rename_all camelCase)` and the field's own rename.
    assert_eq!(json["title"], "probe");
    assert_eq!(json["byId"][ID.to_string()], "warning");
    assert_eq!(json["byId"][Uuid::NIL.to_string()], "Debug");
    assert_eq!(json["id"], ID.to_string());
    assert_eq!(json["at"]["seconds"], -1);
    assert_eq!(json["at"]["nanos"], 999_000_000);
    assert_eq!(json["took"]["nanos"], -5);
    // Flags are their bits; a message's absent field is null.
    assert_eq!(json["perms"], 3);
    assert_eq!(json["label"]["text"], "red");
    assert!(json["label"]["color"].is_null());
    let text = serde_json::to_string(&record()).unwrap();
    assert!(
        text.contains(r#""big":340282366920938463463374607431768211455,"#),
        "{text}"
    );
    // A view converts to the same owned value.
    let bytes = record().encode_to_vec().unwrap();
    assert_eq!(
        app::Record::from_bytes(&bytes).unwrap().to_owned_value(),
        record()
    );

    let mut long = [0i32; 40];
    long[0] = i32::MIN;
    let samples = app::Samples {
        small: [1, -2, 3, -4],
        long,
    };
    assert_eq!(round_trip(&samples)["long"][0], i32::MIN);
    // `type_attribute(".app.Point", derive(PartialOrd))`, and the cfg_attr one of Samples.
    assert!(point() > app::Point { x: 0.0, ..point() });
    assert!(samples >= samples);
    round_trip(&point());
    round_trip(&stamp());
    round_trip(&owned::Outer {
        inner: owned::outer::Inner { text: "in".into() },
    });
}

#[test]
#[allow(deprecated)]
fn messages_keep_absent_fields_absent() {
    let full = owned::Event {
        level: Some(app::Level::Warn),
        record: Some(record()),
        note: Some("n".into()),
        code: Some(app::Code::Unrecognized(77)),
        window: Some([7; 40]),
        bits: Some(app::Bits::from_bits_retain(0x8001)),
        labels: Some(vec![label("a"), label("b")]),
        old: None,
    };
    let json = round_trip(&full);
    assert_eq!(json["level"], "warning");
    assert_eq!(json["code"]["Unrecognized"], 77);
    assert_eq!(json["bits"], 0x8001);
    assert_eq!(json["window"].as_array().unwrap().len(), 40);
    let empty = owned::Event::default();
    let json = round_trip(&empty);
    assert!(
        json["window"].is_null() && json["record"].is_null(),
        "{json}"
    );
    // Missing keys read as absent fields, the long array included.
    assert_eq!(serde_json::from_str::<owned::Event>("{}").unwrap(), empty);
    // Undeclared bits of closed flags are rejected; unknown enum names too.
    assert!(serde_json::from_str::<app::Perms>("4").is_err());
    assert_eq!(
        serde_json::from_str::<app::Perms>("2").unwrap(),
        app::Perms::WRITE
    );
    assert!(serde_json::from_str::<app::Level>(r#""Warn""#).is_err());
}

#[test]
fn unions_and_recursion() {
    let shapes = [
        owned::Shape::Circle(app::shape::Circle { radius: 2.0 }),
        owned::Shape::Poly(owned::shape::Poly {
            points: Some(vec![point(), point()]),
        }),
        owned::Shape::Stamped(stamp()),
        owned::Shape::Unknown {
            discriminator: 9,
            body: vec![1, 2, 3],
        },
    ];
    for shape in &shapes {
        round_trip(shape);
    }
    let json = round_trip(&shapes[0]);
    assert_eq!(json["Circle"]["radius"], 2.0);
    // `owned_field_attribute(".app.Shape.Stamped", alias "stamp")`.
    let aliased = serde_json::json!({ "stamp": serde_json::to_value(stamp()).unwrap() });
    assert_eq!(
        serde_json::from_value::<owned::Shape>(aliased).unwrap(),
        shapes[2]
    );

    let tree = owned::Tree {
        value: Some(1),
        children: Some(vec![
            owned::Tree {
                value: Some(2),
                children: Some(vec![]),
                shape: Some(shapes[1].clone()),
            },
            owned::Tree::default(),
        ]),
        shape: Some(shapes[3].clone()),
    };
    round_trip(&tree);
    let chain = owned::Chain {
        value: Some(1),
        next: Some(Box::new(owned::Chain {
            value: Some(2),
            next: Some(Box::new(owned::Chain::default())),
        })),
    };
    let json = round_trip(&chain);
    assert_eq!(json["next"]["next"]["value"], serde_json::Value::Null);
}
