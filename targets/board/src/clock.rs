//! A millisecond clock from SysTick.
//!
//! The tick handler increments a `portable_atomic::AtomicU32` with `fetch_add`, which the
//! Cortex-M0 has no instruction for: portable-atomic runs it inside a critical section there.

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::exception;
use portable_atomic::{AtomicU32, Ordering};

/// The core clock QEMU gives the machine's SysTick (`CLKSOURCE` = core).
#[cfg(board = "microbit")]
pub const CORE_HZ: u32 = 16_000_000;
/// The core clock QEMU gives the machine's SysTick (`CLKSOURCE` = core).
#[cfg(board = "lm3s6965")]
pub const CORE_HZ: u32 = 12_000_000;

static MILLIS: AtomicU32 = AtomicU32::new(0);

/// Starts a 1 kHz SysTick interrupt that drives [`millis`].
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(CORE_HZ / 1000 - 1);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// Milliseconds since [`start`] (wraps after 49 days).
pub fn millis() -> u32 {
    MILLIS.load(Ordering::Relaxed)
}

/// Sleeps (WFI) for at least `ms` milliseconds. Needs [`start`] to have been called.
pub fn delay_ms(ms: u32) {
    let from = millis();
    while millis().wrapping_sub(from) < ms {
        cortex_m::asm::wfi();
    }
}

#[exception]
fn SysTick() {
    MILLIS.fetch_add(1, Ordering::Relaxed);
}
