//! The benchmark fixtures of `target-schema`, encoded on the host: `firmware-tests`'s build
//! script writes them into its `OUT_DIR`, and the test image checks that the target encodes
//! the same values to exactly these bytes (32-bit, and on the Cortex-M0 without unaligned
//! access) and decodes them from flash.
//!
//! A crate of its own, not `target-schema` and `bebop-core` as build dependencies of
//! `firmware-tests`: the test image's `defmt` feature turns on `bebop-core/defmt` and
//! `target-schema/defmt`, and Cargo applies such a feature to every dependency of that name,
//! build dependencies included. The host's `bebop-core` would then have two feature sets
//! across the images, and everything built on it for the host (target-schema's build
//! dependency `bebop-build`: the schema compiler and the code generator) would be compiled
//! twice. Through this crate the host copies never see the feature.
#![forbid(unsafe_code)]

use std::path::Path;
use std::{fmt, fs, io};

use bebop_core::Encode;
use target_schema::fixtures;

/// Why a fixture could not be written.
#[derive(Debug)]
pub enum Error {
    /// Encoding failed, or `encoded_size` disagreed with what `encode` wrote.
    Encode {
        /// The file being written.
        file: &'static str,
        /// What went wrong.
        detail: String,
    },
    /// Writing the file failed.
    Io {
        /// The file being written.
        file: &'static str,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Encode { file, detail } => write!(f, "encoding {file} on the host: {detail}"),
            Error::Io { file, source } => write!(f, "writing {file}: {source}"),
        }
    }
}

impl std::error::Error for Error {}

/// The files [`write_all`] writes, with the fixture each holds.
pub const FILES: [&str; 6] = [
    "person_small.bin",
    "person_medium.bin",
    "order_large.bin",
    "embedding_768.bin",
    "tree_deep.bin",
    "json_small.bin",
];

/// Encodes `value` into a vector of exactly its `encoded_size`.
fn encode<T: Encode>(file: &'static str, value: &T) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; value.encoded_size()];
    let n = value.encode_into(&mut buf).map_err(|e| Error::Encode {
        file,
        detail: e.to_string(),
    })?;
    if n != buf.len() {
        return Err(Error::Encode {
            file,
            detail: format!("encoded_size said {} bytes, encode wrote {n}", buf.len()),
        });
    }
    Ok(buf)
}

/// The encoding of each fixture, in the order of [`FILES`].
pub fn encode_all() -> Result<[Vec<u8>; 6], Error> {
    Ok([
        encode(FILES[0], &fixtures::PERSON_SMALL)?,
        encode(FILES[1], &fixtures::PERSON_MEDIUM)?,
        encode(FILES[2], &fixtures::ORDER_LARGE)?,
        encode(FILES[3], &fixtures::EMBEDDING_768)?,
        encode(FILES[4], &fixtures::tree_deep())?,
        encode(FILES[5], &fixtures::JSON_SMALL)?,
    ])
}

/// Writes every fixture's encoding into `dir` under its name in [`FILES`].
pub fn write_all(dir: &Path) -> Result<(), Error> {
    for (file, bytes) in FILES.into_iter().zip(encode_all()?) {
        fs::write(dir.join(file), bytes).map_err(|source| Error::Io { file, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_first_bytes() {
        let all = encode_all().unwrap();
        let sizes: Vec<usize> = all.iter().map(Vec::len).collect();
        assert_eq!(
            sizes,
            [28, 130, 1240, 1556, fixtures::TREE_DEEP_ENCODED_SIZE, 98]
        );
        // PersonSmall: id 12345, then "John".
        assert_eq!(&all[0][..8], &[0x39, 0x30, 0, 0, 4, 0, 0, 0]);
        // OrderLarge: 100 item ids after the two leading int64s.
        assert_eq!(&all[2][16..20], &100u32.to_le_bytes());
    }

    #[test]
    fn writes_every_file() {
        let dir = std::env::temp_dir().join(format!("fixture-bytes-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        write_all(&dir).unwrap();
        for (file, bytes) in FILES.into_iter().zip(encode_all().unwrap()) {
            assert_eq!(fs::read(dir.join(file)).unwrap(), bytes, "{file}");
        }
        fs::remove_dir_all(&dir).unwrap();
        let missing = dir.join("no/such/dir");
        let err = write_all(&missing).unwrap_err();
        assert!(
            err.to_string().starts_with("writing person_small.bin: "),
            "{err}"
        );
    }
}
