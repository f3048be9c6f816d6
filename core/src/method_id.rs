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
    let mut h = Murmur::new();
    h.update(path.as_bytes());
    h.finish()
}

/// [`method_id`] of `/service/method`, without building the string.
pub const fn method_id_parts(service: &str, method: &str) -> u32 {
    let mut h = Murmur::new();
    h.update(b"/");
    h.update(service.as_bytes());
    h.update(b"/");
    h.update(method.as_bytes());
    h.finish()
}

/// MurmurHash3 x86_32 state over a byte stream fed in pieces: up to three pending bytes wait
/// for the rest of their block.
struct Murmur {
    h: u32,
    pending: [u8; 4],
    len: usize,
}

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

const fn scramble(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

impl Murmur {
    const fn new() -> Self {
        Murmur {
            h: METHOD_ID_SEED,
            pending: [0; 4],
            len: 0,
        }
    }

    const fn update(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            self.pending[self.len % 4] = bytes[i];
            self.len += 1;
            if self.len % 4 == 0 {
                self.h ^= scramble(u32::from_le_bytes(self.pending));
                self.h = self
                    .h
                    .rotate_left(13)
                    .wrapping_mul(5)
                    .wrapping_add(0xe654_6b64);
            }
            i += 1;
        }
    }

    const fn finish(self) -> u32 {
        let mut h = self.h;
        let rest = self.len % 4;
        if rest > 0 {
            let mut k: u32 = 0;
            let mut i = rest;
            while i > 0 {
                i -= 1;
                k = (k << 8) | self.pending[i] as u32;
            }
            h ^= scramble(k);
        }
        // No length mixing; the lowbias32 finaliser.
        h ^= h >> 16;
        h = h.wrapping_mul(0x7feb_352d);
        h ^= h >> 15;
        h = h.wrapping_mul(0x846c_a68b);
        h ^= h >> 16;
        h
    }
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
        assert_eq!(method_id_parts("S", "abcdeg"), method_id("/S/abcdeg"));
        assert_eq!(
            method_id_parts("GreeterService", "SayHello"),
            method_id("/GreeterService/SayHello")
        );
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
