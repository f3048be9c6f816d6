//! The firmware test image, one per target: `thumbv6m-none-eabi` on QEMU `microbit`
//! (Cortex-M0) and `thumbv7m-none-eabi` on `lm3s6965evb` (Cortex-M3).
//!
//! It encodes and decodes, with no allocator:
//! - every golden vector of `docs/wire-format.md` ("Golden vectors"), byte for byte
//!   ([`golden`]);
//! - the benchmark records PersonSmall/Medium, OrderLarge, Embedding768, JsonSmall (a
//!   union) and TreeDeep, which must come out byte for byte as the host encodes them
//!   (`build.rs`), plus a forward-compatible union, messages with absent fields and hostile
//!   inputs ([`records`]);
//!
//! every type generated at build time from the schemas by `bebop-build` (`target-schema`);
//! - `bfloat16[]` and `float16[]` widened to `f32` and `f32` narrowed to both, against
//!   `half` and the formats' own bits, in software floating point ([`float16`]);
//! - frames fed from an interrupt handler into a `SharedLink` the main loop drains, and
//!   atomics shared with an interrupt handler ([`interrupts`]);
//!
//! measures the stack used by decoding, prints `N passed, M failed`, and exits through
//! semihosting with status 0 only when every check passed.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

mod checks;
mod float16;
mod golden;
mod interrupts;
mod log;
mod records;
mod schema;

use cortex_m_rt::entry;
use qemu_board::semihosting::hprintln;

use crate::checks::Checks;

#[entry]
fn main() -> ! {
    hprintln!(
        "firmware-tests on {} ({}), bebop-core {}",
        qemu_board::MACHINE,
        qemu_board::CPU,
        bebop_core::VERSION
    );
    let mut checks = Checks::new();
    golden::run(&mut checks);
    records::run(&mut checks);
    float16::run(&mut checks);
    interrupts::run(&mut checks);
    log::banner();
    hprintln!(
        "firmware-tests on {}: {} passed, {} failed",
        qemu_board::MACHINE,
        checks.passed(),
        checks.failed()
    );
    qemu_board::exit(checks.failed() == 0)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL: panic: {}", info);
    qemu_board::exit(false)
}
