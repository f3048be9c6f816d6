//! The benchmark records (generated from `benches/workloads/schemas/workloads.bop`), unions,
//! messages with absent fields, and hostile inputs.

use core::fmt::Debug;
use core::hint::black_box;

use bebop_core::{Array, Decode, Encode, ErrorKind, Lazy, Limits, Sink};
use qemu_board::semihosting::hprintln;
use qemu_board::stack;
use target_schema::fixtures;

use crate::checks::{Checks, hex};
use crate::log;
use crate::schema::{Chain, Event, JsonValue, Order, Person, Shape, TreeNode, UserRequest, event};

/// The fixtures as the host encodes them (see `build.rs`), placed in flash.
static PERSON_SMALL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/person_small.bin"));
static PERSON_MEDIUM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/person_medium.bin"));
static ORDER_LARGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/order_large.bin"));
static EMBEDDING_768: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/embedding_768.bin"));
static TREE_DEEP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tree_deep.bin"));
static JSON_SMALL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/json_small.bin"));

/// Encodes `value` into RAM and compares with the host's bytes; decodes the host's bytes
/// (in flash) and compares with `value`; prints the stack the decode used.
fn record<T>(c: &mut Checks, name: &str, value: &T, host: &'static [u8], buf: &mut [u8])
where
    T: Encode + Decode<'static> + PartialEq + Debug,
{
    c.eq(
        format_args!("{} encoded_size", name),
        value.encoded_size(),
        host.len(),
    );
    match value.encode_into(buf) {
        Ok(n) => {
            c.bytes(
                format_args!("{} encodes as on the host", name),
                &buf[..n],
                host,
            );
        }
        Err(e) => {
            c.eq(format_args!("{} encode", name), Err(e), Ok(host.len()));
        }
    }
    // One byte too few: the error names the whole size.
    if let Some(short) = host.len().checked_sub(1).and_then(|n| buf.get_mut(..n)) {
        let err = value.encode_into(short).err();
        c.eq(
            format_args!("{} into a buffer one byte short", name),
            err.map(|e| (e.kind(), e.needed())),
            Some((ErrorKind::BufferTooSmall, Some(host.len()))),
        );
    }
    let (decoded, used) = stack::measure(|| T::from_bytes(black_box(host)));
    c.eq(
        format_args!("{} decodes from flash", name),
        decoded.as_ref(),
        Ok(value),
    );
    hprintln!(
        "  {:<14} {:>5} bytes, decode used {:>4} bytes of stack",
        name,
        host.len(),
        used
    );
}

/// A sink that compares what is written with expected bytes instead of storing it, so a
/// 12.8 KB encoding can be checked on a machine with 16 KB of RAM.
struct CompareSink<'e> {
    expected: &'e [u8],
    at: usize,
    first_difference: Option<usize>,
}

impl Sink for CompareSink<'_> {
    type Error = bebop_core::Error;
    fn write(&mut self, bytes: &[u8]) -> Result<(), bebop_core::Error> {
        for &b in bytes {
            if self.first_difference.is_none() && self.expected.get(self.at) != Some(&b) {
                self.first_difference = Some(self.at);
            }
            self.at += 1;
        }
        Ok(())
    }
}

fn tree(c: &mut Checks) {
    let root = fixtures::tree_deep();
    c.eq(
        "TreeDeep encoded_size",
        root.encoded_size(),
        fixtures::TREE_DEEP_ENCODED_SIZE,
    );
    // Stream the encoding of the 1023-node tree (views in flash) against the host's bytes.
    let mut sink = CompareSink {
        expected: TREE_DEEP,
        at: 0,
        first_difference: None,
    };
    let encoded = root.encode(&mut sink);
    c.eq("TreeDeep encode", encoded, Ok(()));
    c.eq(
        "TreeDeep encodes as on the host",
        sink.first_difference,
        None,
    );
    c.eq("TreeDeep encoded length", sink.at, TREE_DEEP.len());
    if qemu_board::RAM_SIZE >= 32 * 1024 {
        tree_into_ram(c, &root);
    }
    // Decode a view of the tree straight from flash, then walk all of it.
    let (decoded, used) = stack::measure(|| TreeNode::from_bytes(black_box(TREE_DEEP)));
    match decoded {
        Ok(view) => {
            c.eq(
                "TreeDeep decoded: every node has its value and children",
                fixtures::check_tree(&view, 0, 0),
                Ok(fixtures::TREE_NODES),
            );
            c.eq("TreeDeep decoded == built", view, root);
        }
        Err(e) => {
            c.eq("TreeDeep decode", Err(e), Ok(()));
        }
    }
    hprintln!(
        "  {:<14} {:>5} bytes, decode used {:>4} bytes of stack (1023 nodes, 10 levels)",
        "TreeDeep",
        TREE_DEEP.len(),
        used
    );
}

/// The tree encoded into a RAM buffer too, where there is room (not on the micro:bit).
#[inline(never)]
fn tree_into_ram(c: &mut Checks, root: &TreeNode<'_>) {
    let mut buf = [0u8; fixtures::TREE_DEEP_ENCODED_SIZE];
    match root.encode_into(&mut buf) {
        Ok(n) => {
            c.bytes("TreeDeep encode_into RAM", &buf[..n], TREE_DEEP);
        }
        Err(e) => {
            c.eq("TreeDeep encode_into RAM", Err(e), Ok(()));
        }
    }
}

fn unions_and_absent_fields(c: &mut Checks) {
    let mut buf = [0u8; 64];
    // A forward-compatible union: known branches, and an unknown one kept byte for byte.
    let cases: [(&str, &str, Event<'_>); 3] = [
        (
            "Event::Ping",
            "05000000 01 07000000",
            Event::Ping(event::Ping { seq: 7 }),
        ),
        (
            "Event::Text",
            "0e000000 02 09000000 01 02000000 686900 00",
            Event::Text(event::Text { body: Some("hi") }),
        ),
        (
            "Event::Text {}",
            "06000000 02 01000000 00",
            Event::Text(event::Text { body: None }),
        ),
    ];
    for (name, text, value) in cases {
        let mut want = [0u8; 32];
        let Some(want) = hex(text, &mut want) else {
            c.check(format_args!("{}: bad hex in the test", name), false);
            continue;
        };
        let n = value.encode_into(&mut buf).unwrap_or(0);
        c.bytes(format_args!("{} encode", name), &buf[..n], want);
        c.eq(
            format_args!("{} decode", name),
            Event::from_bytes(want),
            Ok(value),
        );
    }
    let mut raw = [0u8; 16];
    if let Some(unknown) = hex("03000000 09 aabb", &mut raw) {
        let decoded = Event::from_bytes(unknown);
        c.eq(
            "Event unknown branch kept",
            decoded,
            Ok(Event::Unknown {
                discriminator: 9,
                body: &[0xaa, 0xbb],
            }),
        );
        if let Ok(v) = decoded {
            let n = v.encode_into(&mut buf).unwrap_or(0);
            c.bytes(
                "Event unknown branch re-encodes unchanged",
                &buf[..n],
                unknown,
            );
        }
    }
    // A union that is not forward-compatible rejects an unknown discriminator.
    if let Some(bad) = hex("05000000 03 0000a040", &mut raw) {
        c.eq(
            "Shape unknown discriminator",
            Shape::from_bytes(bad).map_err(|e| (e.kind(), e.offset())),
            Err((ErrorKind::InvalidDiscriminator, 4)),
        );
    }
    // A field from a newer schema (tag 9) ends what this reader knows; the rest is skipped.
    if let Some(newer) = hex("0a000000 01 2a000000 09 aabbcc 00", &mut raw) {
        c.eq(
            "UserRequest with an unknown field",
            UserRequest::from_bytes(newer),
            Ok(UserRequest {
                user_id: Some(42),
                include_profile: None,
            }),
        );
    }
    // A recursive message with absent fields: a three-link chain.
    let last = Chain {
        value: Some(3),
        next: None,
    };
    let middle = Chain {
        value: None,
        next: Some(Lazy::from_ref(&last)),
    };
    let first = Chain {
        value: Some(1),
        next: Some(Lazy::from_ref(&middle)),
    };
    match first.encode_into(&mut buf) {
        Ok(n) => {
            c.eq("Chain size", n, first.encoded_size());
            let back = Chain::from_bytes(&buf[..n]);
            c.eq("Chain decode", back, Ok(first));
            c.eq("Chain links", back.map(|b| link_count(&b)), Ok(3));
        }
        Err(e) => {
            c.eq("Chain encode", Err(e), Ok(()));
        }
    }
}

/// The links of a chain, `chain` included (a decoded link cannot fail to decode again).
fn link_count(chain: &Chain<'_>) -> usize {
    let mut n = 1;
    let mut current = *chain;
    while let Some(next) = current.next {
        current = next.get();
        n += 1;
    }
    n
}

fn hostile(c: &mut Checks) {
    let kind = |r: Result<Person<'_>, bebop_core::Error>| {
        r.map(|_| ()).map_err(|e| (e.kind(), e.offset()))
    };
    // Cut short: the age field is missing 3 of its 4 bytes.
    let cut = &PERSON_SMALL[..PERSON_SMALL.len() - 3];
    c.eq(
        "truncated Person is an error",
        kind(Person::from_bytes(cut)),
        Err((ErrorKind::UnexpectedEnd, PERSON_SMALL.len() - 4)),
    );
    let mut raw = [0u8; 32];
    if let Some(b) = hex("02000000 6162 01", &mut raw) {
        c.eq(
            "string without NUL",
            <&str>::from_bytes(b).map_err(|e| e.kind()),
            Err(ErrorKind::MissingNul),
        );
    }
    if let Some(b) = hex("02000000 c328 00", &mut raw) {
        let r = <&str>::from_bytes(b).map_err(|e| e.kind());
        if let Err(e) = <&str>::from_bytes(b) {
            log::error("invalid UTF-8", &e);
        }
        c.eq("invalid UTF-8", r, Err(ErrorKind::InvalidUtf8));
    }
    if let Some(b) = hex("ffffffff 01020304", &mut raw) {
        c.eq(
            "array count beyond the input",
            Array::<i32>::from_bytes(b)
                .map(|a| a.len())
                .map_err(|e| e.kind()),
            Err(ErrorKind::LengthOutOfBounds),
        );
    }
    deep_nesting(c);
}

/// Levels of the hostile chain: far beyond the depth limit.
const HOSTILE_DEPTH: usize = 200;

/// `Chain` nested `HOSTILE_DEPTH` times: `len 02 len 02 ... 01000000 00 00 00 ...`.
fn nested_chain(buf: &mut [u8; 6 * HOSTILE_DEPTH + 5]) {
    let mut at = 0;
    for k in 0..HOSTILE_DEPTH {
        let len = (1 + 6 * (HOSTILE_DEPTH - k)) as u32;
        buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
        buf[at + 4] = 2;
        at += 5;
    }
    buf[at..at + 5].copy_from_slice(&[1, 0, 0, 0, 0]);
    at += 5;
    for b in &mut buf[at..] {
        *b = 0;
    }
}

fn deep_nesting(c: &mut Checks) {
    let mut buf = [0u8; 6 * HOSTILE_DEPTH + 5];
    nested_chain(&mut buf);
    // An embedded limit: 16 levels.
    let limits = Limits {
        max_depth: 16,
        ..Limits::DEFAULT
    };
    let (r, used16) = stack::measure(|| {
        Chain::from_bytes_with_limits(black_box(&buf), limits).map_err(|e| e.kind())
    });
    c.eq(
        "200-deep input, limit 16",
        r.map(|_| ()),
        Err(ErrorKind::TooDeep),
    );
    // The default limit (64 levels).
    let (r, used64) = stack::measure(|| Chain::from_bytes(black_box(&buf)).map_err(|e| e.kind()));
    c.eq(
        "200-deep input, default limit 64",
        r.map(|_| ()),
        Err(ErrorKind::TooDeep),
    );
    hprintln!(
        "  hostile 200-deep Chain rejected: {} bytes of stack with max_depth 16, {} with the default 64 (free: {})",
        used16,
        used64,
        stack::free()
    );
    c.check(
        "the default depth limit fits in this machine's stack",
        used64 < stack::free(),
    );
}

pub fn run(c: &mut Checks) {
    hprintln!("records (bytes must match the host's encoding):");
    let mut buf = [0u8; 2048];
    record(
        c,
        "PersonSmall",
        &fixtures::PERSON_SMALL,
        PERSON_SMALL,
        &mut buf,
    );
    record(
        c,
        "PersonMedium",
        &fixtures::PERSON_MEDIUM,
        PERSON_MEDIUM,
        &mut buf,
    );
    record(
        c,
        "OrderLarge",
        &fixtures::ORDER_LARGE,
        ORDER_LARGE,
        &mut buf,
    );
    if let Ok(order) = Order::from_bytes(ORDER_LARGE) {
        log::order(&order);
        c.eq(
            "OrderLarge item ids sum",
            order.item_ids.iter().sum::<i64>(),
            fixtures::ORDER_ITEM_IDS.iter().sum::<i64>(),
        );
    }
    record(
        c,
        "Embedding768",
        &fixtures::EMBEDDING_768,
        EMBEDDING_768,
        &mut buf,
    );
    record(c, "JsonSmall", &fixtures::JSON_SMALL, JSON_SMALL, &mut buf);
    if let Ok(json) = JsonValue::from_bytes(JSON_SMALL) {
        log::json(&json);
    }
    tree(c);
    unions_and_absent_fields(c);
    hostile(c);
}
