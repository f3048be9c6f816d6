//! Additions to the generated plugin protocol types of `bebop/plugin.bop`.

use crate::Version;

/// `major.minor.patch`, then `-suffix` when the suffix is not empty.
///
/// ```
/// use bebop_descriptor::Version;
///
/// let v = Version { major: 2026, minor: 0, patch: 0, suffix: "alpha.3".into() };
/// assert_eq!(v.to_string(), "2026.0.0-alpha.3");
/// ```
impl core::fmt::Display for Version {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.suffix.is_empty() {
            write!(f, "-{}", self.suffix)?;
        }
        Ok(())
    }
}

/// Field by field, in declaration order (`major`, `minor`, `patch`, then `suffix` as a
/// string), as a derived `Ord` would compare. Note that this orders a release (empty suffix)
/// before its pre-releases.
impl Ord for Version {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        (self.major, self.minor, self.patch, &self.suffix).cmp(&(
            other.major,
            other.minor,
            other.patch,
            &other.suffix,
        ))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_runtime::Decode;

    #[test]
    fn versions_order_field_by_field() {
        let v = |major, minor, patch, suffix: &str| Version {
            major,
            minor,
            patch,
            suffix: suffix.into(),
        };
        assert!(v(2026, 0, 0, "") < v(2026, 0, 1, ""));
        assert!(v(2025, 9, 9, "") < v(2026, 0, 0, ""));
        assert!(v(2026, 0, 0, "alpha.1") < v(2026, 0, 0, "alpha.2"));
        assert_eq!(
            v(1, 2, 3, "x").cmp(&v(1, 2, 3, "x")),
            core::cmp::Ordering::Equal
        );
    }

    #[test]
    fn version_is_a_struct_on_the_wire() {
        let v = Version {
            major: 1,
            minor: 2,
            patch: 3,
            suffix: "rc".into(),
        };
        let bytes = bebop_runtime::encode_to_vec(&v).unwrap();
        assert_eq!(
            bytes,
            [
                1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, b'r', b'c', 0
            ]
        );
        assert_eq!(Version::from_bytes(&bytes), Ok(v));
    }
}
