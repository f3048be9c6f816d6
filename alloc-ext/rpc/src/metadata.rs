//! [`Metadata`]: the string key-value pairs that travel with a call.

use std::fmt;

use bebop_runtime::Map;

/// String key-value pairs, in insertion order, one value per key.
///
/// Keys should be lowercase ASCII letters, digits, `-` and `_`; keys starting with `bebop-`
/// are reserved for the protocol.
///
/// ```
/// use bebop_rpc::Metadata;
///
/// let mut md = Metadata::new();
/// md.insert("authorization", "Bearer t0k3n");
/// md.insert("x-trace-id", "abc");
/// md.insert("x-trace-id", "def"); // replaces
/// assert_eq!(md.get("x-trace-id"), Some("def"));
/// assert_eq!(md.len(), 2);
/// assert_eq!(md.iter().next(), Some(("authorization", "Bearer t0k3n")));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    entries: Vec<(String, String)>,
}

impl Metadata {
    /// No entries.
    pub const fn new() -> Self {
        Metadata {
            entries: Vec::new(),
        }
    }

    /// Copies a decoded map; for a key present more than once the last value wins.
    pub fn from_view(map: Map<'_, &str, &str>) -> Self {
        let mut md = Metadata::new();
        for (k, v) in map.iter() {
            md.insert(k, v);
        }
        md
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Sets every entry of `other` here (its values win).
    pub fn merge(&mut self, other: &Metadata) {
        for (k, v) in other.iter() {
            self.insert(k, v);
        }
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes the entries take as a Bebop `map[string, string]`.
    pub fn wire_size(&self) -> usize {
        4 + self
            .entries
            .iter()
            .map(|(k, v)| 10 + k.len() + v.len())
            .sum::<usize>()
    }

    /// Borrowed pairs, to build a `Map` view for encoding.
    pub(crate) fn as_pairs(&self) -> Vec<(&str, &str)> {
        self.iter().collect()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut md = Metadata::new();
        for (k, v) in iter {
            md.insert(k, v);
        }
        md
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_runtime::{Decode, EncodeExt};

    #[test]
    fn wire_size_matches_the_encoding() {
        let md: Metadata = [("a", "1"), ("bb", ""), ("ключ", "значение")]
            .into_iter()
            .collect();
        let pairs = md.as_pairs();
        let bytes = Map::from_slice(&pairs).encode_to_vec().unwrap();
        assert_eq!(bytes.len(), md.wire_size());
        let back = Metadata::from_view(Map::from_bytes(&bytes).unwrap());
        assert_eq!(back, md);
    }
}
