//! Accessors for the generated `DecoratorUsage`.

use crate::{DecoratorUsage, LiteralValue};

impl DecoratorUsage {
    /// The value exported under `key` (the last one when the key repeats).
    ///
    /// `export_data` is a `Vec<(String, LiteralValue)>` in wire order, duplicates included,
    /// so that a decoded usage re-encodes to the bytes it came from.
    pub fn export(&self, key: &str) -> Option<&LiteralValue> {
        self.export_data
            .as_deref()?
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LiteralKind;

    #[test]
    fn export_finds_the_last_value_of_a_key() {
        let value = |i: i64| LiteralValue {
            kind: Some(LiteralKind::Int),
            int_value: Some(i),
            ..Default::default()
        };
        let usage = DecoratorUsage {
            export_data: Some(vec![
                ("a".into(), value(1)),
                ("b".into(), value(2)),
                ("a".into(), value(3)),
            ]),
            ..Default::default()
        };
        assert_eq!(usage.export("a").and_then(|v| v.int_value), Some(3));
        assert_eq!(usage.export("b").and_then(|v| v.int_value), Some(2));
        assert!(usage.export("c").is_none());
        assert!(DecoratorUsage::default().export("a").is_none());
    }
}
