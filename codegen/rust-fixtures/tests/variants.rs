//! Generated code with other options (`codegen/rust/tests/expected/variants`): the `::bebop`
//! runtime, owned types without a cfg gate, owned maps as `Vec<(K, V)>` (wire order and
//! duplicates kept, and views of them), and prettyplease formatting without rustfmt.
#![allow(clippy::unwrap_used)]

mod support;

/// `spec.bop` with the variant options.
pub mod spec {
    include!("../../rust/tests/expected/variants/spec.rs");
}

/// `recursion.bop` with the variant options.
pub mod recursion {
    include!("../../rust/tests/expected/variants/recursion.rs");
}

/// `forward.bop` with the variant options.
pub mod forward {
    include!("../../rust/tests/expected/variants/forward.rs");
}

use bebop_runtime::{Decode, EncodeExt};

#[test]
fn vec_maps_keep_wire_order_and_duplicates() {
    // Log { level: Warn, tags: {b: 1, a: 2, b: 3}, lines: [], grid: [[], [], []] }
    let mut bytes = vec![2, 3, 0, 0, 0];
    for (k, v) in [("b", "1"), ("a", "2"), ("b", "3")] {
        bytes.extend_from_slice(&[
            1,
            0,
            0,
            0,
            k.as_bytes()[0],
            0,
            1,
            0,
            0,
            0,
            v.as_bytes()[0],
            0,
        ]);
    }
    bytes.extend_from_slice(&[0; 16]);
    let owned = spec::owned::Log::from_bytes(&bytes).unwrap();
    assert_eq!(
        owned.tags,
        [
            ("b".into(), "1".into()),
            ("a".into(), "2".into()),
            ("b".into(), "3".into())
        ]
    );
    assert_eq!(owned.encode_to_vec().unwrap(), bytes);
    let view = spec::Log::from_bytes(&bytes).unwrap();
    assert_eq!(view.to_owned_value(), owned);
}

#[test]
fn round_trips() {
    let fx = support::Fixture::extra("spec");
    fx.check("Log", |bytes| {
        let view = spec::Log::from_bytes(bytes).map_err(|e| e.to_string())?;
        let owned = spec::owned::Log::from_bytes(bytes).map_err(|e| e.to_string())?;
        if owned.encode_to_vec().unwrap() != bytes || view.to_owned_value() != owned {
            return Err("Log differs".into());
        }
        Ok(())
    });
    fx.check("Person", |bytes| {
        let owned = spec::owned::Person::from_bytes(bytes).map_err(|e| e.to_string())?;
        if owned.as_view().encode_to_vec().unwrap() != bytes {
            return Err("as_view differs".into());
        }
        Ok(())
    });
    support::Fixture::extra("recursion").check("rec.Forest", |bytes| {
        let view = recursion::rec::Forest::from_bytes(bytes).map_err(|e| e.to_string())?;
        let owned = view.to_owned_value();
        if owned.encode_to_vec().unwrap() != bytes {
            return Err("Forest differs".into());
        }
        // The owned Forest (Vec and Box of owned records) lends a view without encoding.
        if owned.as_view() != view || owned.as_view().encode_to_vec().unwrap() != bytes {
            return Err("the lent Forest differs".into());
        }
        Ok(())
    });
    support::Fixture::extra("forward").check("fwd.Envelope", |bytes| {
        let view = forward::fwd::Envelope::from_bytes(bytes).map_err(|e| e.to_string())?;
        if view.to_owned_value().encode_to_vec().unwrap() != bytes {
            return Err("Envelope differs".into());
        }
        Ok(())
    });
}
