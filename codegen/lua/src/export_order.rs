//! The order in which the reference compiler writes a usage's export data.
//!
//! The reference reads the table an export block returns with `lua_next`, then puts the
//! entries, in that order, into its own hash map (a SwissTable with 8-slot groups, hashed
//! with wyhash, seed 0) and writes the descriptor's `export_data` map by walking that
//! table's slots. Up to seven entries fit in the first group of the initial 8-slot table and
//! keep their insertion order; from eight entries on, the table grows and the entries are
//! spread over groups by their hash.
//!
//! [`reference_map_order`] replays that: given entries in Lua's `next` order it returns them
//! in the order the reference writes them.

/// The secret the reference's map hashes with.
const P: [u64; 4] = [
    0x2d35_8dcc_aa6c_78a5,
    0x8bb8_4b93_962e_acc9,
    0x4b33_a62e_d433_d4a3,
    0x4d5a_2da5_1de1_aa47,
];

fn mum(a: u64, b: u64) -> (u64, u64) {
    let r = u128::from(a) * u128::from(b);
    (r as u64, (r >> 64) as u64)
}

fn mix(a: u64, b: u64) -> u64 {
    let (lo, hi) = mum(a, b);
    lo ^ hi
}

fn r8(p: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(b)
}

fn r4(p: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&p[at..at + 4]);
    u64::from(u32::from_le_bytes(b))
}

/// wyhash of `key` with `seed` and the secret the reference's map uses.
///
/// ```
/// assert_eq!(bebop_lua::wyhash(b"", 0), bebop_lua::wyhash(b"", 0));
/// assert_ne!(bebop_lua::wyhash(b"a", 0), bebop_lua::wyhash(b"b", 0));
/// ```
pub fn wyhash(key: &[u8], seed: u64) -> u64 {
    wyhash_with(key, seed, &P)
}

fn wyhash_with(key: &[u8], mut seed: u64, secret: &[u64; 4]) -> u64 {
    let len = key.len();
    seed ^= mix(seed ^ secret[0], secret[1]);
    let (mut a, mut b);
    if len <= 16 {
        if len >= 4 {
            let q = (len >> 3) << 2;
            a = (r4(key, 0) << 32) | r4(key, q);
            b = (r4(key, len - 4) << 32) | r4(key, len - 4 - q);
        } else if len > 0 {
            a = (u64::from(key[0]) << 16)
                | (u64::from(key[len >> 1]) << 8)
                | u64::from(key[len - 1]);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
    } else {
        let mut i = len;
        let mut p = 0;
        if i >= 48 {
            let (mut see1, mut see2) = (seed, seed);
            while i >= 48 {
                seed = mix(r8(key, p) ^ secret[1], r8(key, p + 8) ^ seed);
                see1 = mix(r8(key, p + 16) ^ secret[2], r8(key, p + 24) ^ see1);
                see2 = mix(r8(key, p + 32) ^ secret[3], r8(key, p + 40) ^ see2);
                p += 48;
                i -= 48;
            }
            seed ^= see1 ^ see2;
        }
        while i > 16 {
            seed = mix(r8(key, p) ^ secret[1], r8(key, p + 8) ^ seed);
            i -= 16;
            p += 16;
        }
        a = r8(key, p + i - 16);
        b = r8(key, p + i - 8);
    }
    a ^= secret[1];
    b ^= seed;
    let (a, b) = mum(a, b);
    mix(a ^ secret[0] ^ len as u64, b ^ secret[1])
}

/// Group size of the reference's map.
const GROUP: usize = 8;

/// Replays the reference map's slot placement for entries inserted in order (all keys
/// distinct) and returns, for each slot in walking order, the index of its entry.
fn slot_order(hashes: &[u64]) -> Vec<usize> {
    let mut slots: Vec<Option<usize>> = Vec::new();
    let mut growth_left = 0usize;
    let put = |slots: &mut Vec<Option<usize>>, growth_left: &mut usize, entry: usize| {
        let cap = slots.len();
        let mask = cap - 1;
        let start = (hashes[entry] >> 7) as usize & mask;
        let mut probe = 0usize;
        loop {
            let group = ((start + probe * (probe + 1) / 2) & mask) & !(GROUP - 1);
            if let Some(free) = (group..group + GROUP).find(|&i| slots[i].is_none()) {
                slots[free] = Some(entry);
                *growth_left -= 1;
                return;
            }
            probe += 1;
        }
    };
    for entry in 0..hashes.len() {
        if growth_left == 0 {
            let cap = if slots.is_empty() {
                GROUP
            } else {
                slots.len() * 2
            };
            let old = std::mem::replace(&mut slots, vec![None; cap]);
            growth_left = cap * 7 / 8;
            for e in old.into_iter().flatten() {
                put(&mut slots, &mut growth_left, e);
            }
        }
        put(&mut slots, &mut growth_left, entry);
    }
    slots.into_iter().flatten().collect()
}

/// Reorders export entries, given in Lua's `next` order, into the order the reference
/// compiler writes them to a descriptor. Keys must be distinct (they come from one table).
///
/// ```
/// use bebop_lua::reference_map_order;
///
/// // Up to seven entries keep their order.
/// let few: Vec<(String, u32)> = (0..7).map(|i| (format!("k{i}"), i)).collect();
/// assert_eq!(reference_map_order(few.clone()), few);
/// // More are spread by hash, but none is lost.
/// let many: Vec<(String, u32)> = (0..20).map(|i| (format!("k{i}"), i)).collect();
/// let mut out = reference_map_order(many);
/// out.sort_by_key(|e| e.1);
/// assert_eq!(out.len(), 20);
/// ```
pub fn reference_map_order<T>(entries: Vec<(String, T)>) -> Vec<(String, T)> {
    if entries.len() < GROUP {
        return entries;
    }
    let hashes: Vec<u64> = entries
        .iter()
        .map(|(k, _)| wyhash(k.as_bytes(), 0))
        .collect();
    let order = slot_order(&hashes);
    let mut slots: Vec<Option<(String, T)>> = entries.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The secret of wyhash's published test vectors (`test_vector.cpp`).
    const PUBLISHED: [u64; 4] = [
        0xa076_1d64_78bd_642f,
        0xe703_7ed1_a0b4_28db,
        0x8ebc_6af0_9c88_c6e3,
        0x5899_65cc_7537_4cc3,
    ];

    fn published(key: &[u8], seed: u64) -> u64 {
        wyhash_with(key, seed, &PUBLISHED)
    }

    #[test]
    fn wyhash_matches_the_published_vectors() {
        // The algorithm checked against wyhash's own vectors (message, seed), which cover
        // every length path: 0, 1-3, 4-16, 17-47 and 48 or more bytes.
        assert_eq!(published(b"", 0), 0x0409_638e_e2bd_e459);
        assert_eq!(published(b"a", 0), 0x28d2_0533_09d2_8531);
        assert_eq!(published(b"a", 1), 0xa841_2d09_1b5f_e0a9);
        assert_eq!(published(b"abc", 2), 0x32dd_92e4_b291_5153);
        assert_eq!(published(b"message digest", 3), 0x8619_1240_89a3_a16b);
        assert_eq!(
            published(b"abcdefghijklmnopqrstuvwxyz", 4),
            0x7a43_afb6_1d7f_5f40
        );
        assert_eq!(
            published(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                5
            ),
            0xff42_329b_90e5_0d58
        );
        assert_eq!(
            published(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                6
            ),
            0xc39c_ab13_b115_aad3
        );
    }

    #[test]
    fn small_maps_keep_insertion_order() {
        let entries: Vec<(String, usize)> = ["width", "range_min", "range_max", "constraint"]
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), i))
            .collect();
        assert_eq!(reference_map_order(entries.clone()), entries);
    }

    #[test]
    fn large_maps_are_a_permutation_grouped_by_hash() {
        let entries: Vec<(String, usize)> = (0..30).map(|i| (format!("key_{i}"), i)).collect();
        let out = reference_map_order(entries.clone());
        let mut seen: Vec<usize> = out.iter().map(|e| e.1).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        assert_eq!(out, reference_map_order(entries));
    }
}
