//! Encodes and decodes one PersonSmall (`{ id: int32, name: string, email: string, age: int32 }`
//! = `{12345, "John", "j@x.co", 30}`) and nothing else, so that the size of the image is the
//! runtime plus one codec:
//!
//! - feature `bebop`: bebop-core, the `Person` generated from `workloads.bop` (`target-schema`);
//! - feature `postcard`: postcard 1 + serde derive, `default-features = false`;
//! - feature `rpc`: not a codec but the demo's RPC server (module `rpc`): the `Device`
//!   service over a packet link, one call of each kind measured;
//! - none: the baseline (runtime, semihosting, stack painting; the "codec" copies fields).
//!
//! Output goes through semihosting without `core::fmt`, and the panic handler does not format,
//! so the formatting machinery stays out of the image. Prints the encoded size and the stack
//! used by encode and by decode, and exits 0 when the decoded value equals the original.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

#[cfg(any(
    all(feature = "bebop", feature = "postcard"),
    all(feature = "rpc", any(feature = "bebop", feature = "postcard"))
))]
compile_error!("choose one variant: feature `bebop`, `postcard` or `rpc`");

#[cfg(feature = "rpc")]
mod rpc;

#[cfg(not(feature = "rpc"))]
use core::hint::black_box;

use cortex_m_rt::entry;
use qemu_board::print;
#[cfg(not(feature = "rpc"))]
use qemu_board::{print_u32, stack};

/// The value every codec variant round-trips.
#[cfg(not(feature = "rpc"))]
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "postcard", derive(serde::Serialize, serde::Deserialize))]
struct PersonSmall<'a> {
    id: i32,
    name: &'a str,
    email: &'a str,
    age: i32,
}

#[cfg(not(feature = "rpc"))]
const PERSON: PersonSmall<'static> = PersonSmall {
    id: 12345,
    name: "John",
    email: "j@x.co",
    age: 30,
};

#[cfg(feature = "bebop")]
mod codec {
    //! bebop-core with the generated `Person` of `workloads.bop`.
    use bebop_core::{Decode, Encode};
    use target_schema::benchmark::Person;

    use super::PersonSmall;

    pub const NAME: &str = "bebop-core";

    #[inline(never)]
    pub fn encode(p: &PersonSmall<'_>, buf: &mut [u8]) -> Option<usize> {
        let person = Person {
            id: p.id,
            name: p.name,
            email: p.email,
            age: p.age,
        };
        person.encode_into(buf).ok()
    }

    #[inline(never)]
    pub fn decode(bytes: &[u8]) -> Option<PersonSmall<'_>> {
        let p = Person::from_bytes(bytes).ok()?;
        Some(PersonSmall {
            id: p.id,
            name: p.name,
            email: p.email,
            age: p.age,
        })
    }
}

#[cfg(feature = "postcard")]
mod codec {
    //! postcard + serde.
    use super::PersonSmall;

    pub const NAME: &str = "postcard + serde";

    #[inline(never)]
    pub fn encode(p: &PersonSmall<'_>, buf: &mut [u8]) -> Option<usize> {
        postcard::to_slice(p, buf).ok().map(|used| used.len())
    }

    #[inline(never)]
    pub fn decode(bytes: &[u8]) -> Option<PersonSmall<'_>> {
        postcard::from_bytes(bytes).ok()
    }
}

#[cfg(not(any(feature = "bebop", feature = "postcard", feature = "rpc")))]
mod codec {
    //! Baseline: no serialization, only moves the fields, so the image holds the runtime
    //! and the measuring code alone.
    use super::PersonSmall;

    pub const NAME: &str = "baseline (no codec)";

    #[inline(never)]
    pub fn encode(p: &PersonSmall<'_>, buf: &mut [u8]) -> Option<usize> {
        let out = buf.get_mut(..8)?;
        out[..4].copy_from_slice(&p.id.to_le_bytes());
        out[4..].copy_from_slice(&p.age.to_le_bytes());
        Some(8)
    }

    #[inline(never)]
    pub fn decode(bytes: &[u8]) -> Option<PersonSmall<'static>> {
        let id = i32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let age = i32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
        Some(PersonSmall {
            id,
            name: super::PERSON.name,
            email: super::PERSON.email,
            age,
        })
    }
}

#[cfg(feature = "rpc")]
#[entry]
fn main() -> ! {
    qemu_board::exit(rpc::run())
}

#[cfg(not(feature = "rpc"))]
#[entry]
fn main() -> ! {
    let person = black_box(PERSON);
    let mut buf = [0u8; 64];
    let (encoded, encode_stack) = stack::measure(|| codec::encode(&person, black_box(&mut buf)));
    let Some(n) = encoded else {
        print("FAIL: encode\n");
        qemu_board::exit(false)
    };
    let (decoded, decode_stack) = stack::measure(|| codec::decode(black_box(&buf[..n])));
    let ok = decoded == Some(person);
    print("size-probe ");
    print(codec::NAME);
    print(": encoded=");
    print_u32(n as u32);
    print(" encode_stack=");
    print_u32(encode_stack as u32);
    print(" decode_stack=");
    print_u32(decode_stack as u32);
    print(if ok {
        " roundtrip=ok\n"
    } else {
        " roundtrip=FAIL\n"
    });
    qemu_board::exit(ok)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    print("FAIL: panic\n");
    qemu_board::exit(false)
}
