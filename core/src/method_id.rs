//! RPC method ids, computed at compile time.

/// The seed of the method id hash.
pub const METHOD_ID_SEED: u32 = 0x5AFE_5EED;

/// The id of an RPC method from its path `/Service/Method`.
///
/// The hash is MurmurHash3 (x86, 32-bit) over the path's UTF-8 bytes with seed
/// [`METHOD_ID_SEED`], without mixing in the length, and finished with the "lowbias32"
/// finaliser instead of MurmurHash3's own. Being a `const fn`, ids are constants:
///
/// ```
/// use bebop_core::method_id;
///
/// const SAY_HELLO: u32 = method_id("/GreeterService/SayHello");
/// assert_eq!(SAY_HELLO, 0x4d62_beb5);
/// ```
pub const fn method_id(path: &str) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let bytes = path.as_bytes();
    let mut h = METHOD_ID_SEED;
    let blocks = bytes.len() / 4;
    let mut i = 0;
    while i < blocks {
        let j = i * 4;
        let mut k = u32::from_le_bytes([bytes[j], bytes[j + 1], bytes[j + 2], bytes[j + 3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        i += 1;
    }
    let tail = blocks * 4;
    let mut k: u32 = 0;
    let rest = bytes.len() - tail;
    if rest == 3 {
        k ^= (bytes[tail + 2] as u32) << 16;
    }
    if rest >= 2 {
        k ^= (bytes[tail + 1] as u32) << 8;
    }
    if rest >= 1 {
        k ^= bytes[tail] as u32;
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
    }
    // lowbias32 finaliser.
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_vectors() {
        assert_eq!(method_id("/GreeterService/SayHello"), 0x4d62_beb5);
        assert_eq!(method_id("/WidgetService/CreateWidget"), 0xe8cf_ae29);
        assert_eq!(method_id("/WidgetService/GetWidget"), 0xa3f7_3aa7);
    }

    #[test]
    fn every_tail_length_is_mixed() {
        // Paths differing only in the last 1, 2 or 3 bytes must differ.
        let ids = [
            method_id("/S/abcd"),
            method_id("/S/abcde"),
            method_id("/S/abcdef"),
            method_id("/S/abcdefg"),
            method_id("/S/abcdeg"),
            method_id(""),
        ];
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
