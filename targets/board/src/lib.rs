//! Board support for the two QEMU machines the firmware runs on.
//!
//! | target | QEMU machine | core | UART0 | RAM |
//! |---|---|---|---|---|
//! | `thumbv6m-none-eabi` | `microbit` (nRF51822) | Cortex-M0, no compare-and-swap | nRF51 UART at `0x4000_2000`, IRQ 2 | 16 KiB |
//! | `thumbv7m-none-eabi` | `lm3s6965evb` (Stellaris LM3S6965) | Cortex-M3 | PL011-style UART at `0x4000_C000`, IRQ 5 | 64 KiB |
//!
//! The machine follows from the target (see `build.rs`), so a firmware crate builds for either
//! with no feature flags. What is here:
//!
//! - [`exit`] through semihosting with a pass/fail status, and [`print`] / `hprintln!`
//!   (re-exported from [`semihosting`]) for console output;
//! - [`uart::Uart`]: UART0 with blocking `embedded_io::Read` + `Write`, and interrupt-driven
//!   reception either into a lock-free byte ring ([`uart::IrqReader`]) or straight into a
//!   per-byte hook ([`uart::Uart::listen`]) that runs in the interrupt handler;
//! - [`clock`]: a 1 kHz SysTick tick and a millisecond counter;
//! - [`irq`]: a spare interrupt line that software can pend, to exercise interrupt-shared data;
//! - [`stack`]: measuring the stack a closure uses by painting the free RAM first.
//!
//! All register access and the few raw-memory reads live in the private `mmio` module and in
//! [`stack`], each with its safety argument; everything else is safe code.
#![no_std]
#![deny(unsafe_code)]

pub mod clock;
pub mod irq;
mod mmio;
pub mod stack;
pub mod uart;

#[cfg(feature = "defmt")]
use defmt_semihosting as _;

pub use cortex_m_semihosting as semihosting;

/// The QEMU machine this build runs on (`-machine` argument).
#[cfg(board = "microbit")]
pub const MACHINE: &str = "microbit";
/// The QEMU machine this build runs on (`-machine` argument).
#[cfg(board = "lm3s6965")]
pub const MACHINE: &str = "lm3s6965evb";

/// The CPU core of [`MACHINE`].
#[cfg(board = "microbit")]
pub const CPU: &str = "Cortex-M0 (thumbv6m, no CAS)";
/// The CPU core of [`MACHINE`].
#[cfg(board = "lm3s6965")]
pub const CPU: &str = "Cortex-M3 (thumbv7m)";

/// RAM of [`MACHINE`], bytes.
#[cfg(board = "microbit")]
pub const RAM_SIZE: usize = 16 * 1024;
/// RAM of [`MACHINE`], bytes.
#[cfg(board = "lm3s6965")]
pub const RAM_SIZE: usize = 64 * 1024;

/// Ends the program: QEMU exits with status 0 when `success`, 1 otherwise.
pub fn exit(success: bool) -> ! {
    let status = if success {
        semihosting::debug::EXIT_SUCCESS
    } else {
        semihosting::debug::EXIT_FAILURE
    };
    loop {
        // Only returns if a debugger asks the program to continue; ask again.
        semihosting::debug::exit(status);
    }
}

/// Writes `text` to the host's standard output through semihosting, without `core::fmt`
/// (so that size measurements are not dominated by the formatting machinery).
pub fn print(text: &str) {
    if let Ok(mut out) = semihosting::hio::hstdout() {
        // Nothing useful can be done when the host refuses output.
        let _ = out.write_all(text.as_bytes());
    }
}

/// Writes `value` in decimal through [`print`], without `core::fmt`.
pub fn print_u32(value: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut v = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if let Ok(text) = core::str::from_utf8(&digits[at..]) {
        print(text);
    }
}
