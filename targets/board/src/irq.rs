//! Interrupt lines and the handlers this crate installs.
//!
//! cortex-m-rt is used without a device crate, so every device interrupt lands in one
//! `DefaultHandler`, which dispatches on the interrupt number: UART0 goes to the UART driver,
//! the spare [`Irq::Soft`] line to the handler set with [`set_soft_handler`]. Anything else,
//! and a HardFault, ends the program with a failure status instead of hanging.

use core::cell::Cell;

use cortex_m::interrupt::InterruptNumber;
use cortex_m::peripheral::NVIC;
use cortex_m_rt::{ExceptionFrame, exception};
use critical_section::Mutex;

/// The device interrupts the firmware uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irq {
    /// UART0 (nRF51: IRQ 2; LM3S6965: IRQ 5).
    Uart0,
    /// A line no emulated peripheral drives, pended by software (nRF51: SWI0 = IRQ 20;
    /// LM3S6965: IRQ 60).
    Soft,
}

impl Irq {
    /// The NVIC interrupt number.
    pub const fn number(self) -> u16 {
        match self {
            #[cfg(board = "microbit")]
            Irq::Uart0 => 2,
            #[cfg(board = "microbit")]
            Irq::Soft => 20,
            #[cfg(board = "lm3s6965")]
            Irq::Uart0 => 5,
            #[cfg(board = "lm3s6965")]
            Irq::Soft => 60,
        }
    }
}

#[allow(unsafe_code)]
// SAFETY: `number` returns interrupt numbers that exist on the machine the build targets
// (below QEMU's `num-irq` of 32 for the nRF51 and 64 for the LM3S6965).
unsafe impl InterruptNumber for Irq {
    fn number(self) -> u16 {
        Irq::number(self)
    }
}

/// Unmasks `irq` in the NVIC.
pub fn enable(irq: Irq) {
    #[allow(unsafe_code)]
    // SAFETY: unmasking is unsafe only because it can break a critical section built by
    // masking that one interrupt. This firmware's critical sections (critical-section's
    // single-core implementation) disable all interrupts through PRIMASK instead.
    unsafe {
        NVIC::unmask(irq)
    }
}

/// Masks `irq` in the NVIC.
pub fn disable(irq: Irq) {
    NVIC::mask(irq);
}

/// Marks `irq` pending: its handler runs as soon as it is unmasked and interrupts are on.
pub fn pend(irq: Irq) {
    NVIC::pend(irq);
}

/// A function an interrupt handler calls, set from the main loop.
pub(crate) type Hook<F> = Mutex<Cell<Option<F>>>;

static SOFT_HANDLER: Hook<fn()> = Mutex::new(Cell::new(None));

/// Installs `handler` for [`Irq::Soft`] and unmasks that line; [`pend`] then runs it in
/// interrupt context.
pub fn set_soft_handler(handler: fn()) {
    critical_section::with(|cs| SOFT_HANDLER.borrow(cs).set(Some(handler)));
    enable(Irq::Soft);
}

#[allow(unsafe_code)]
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    let uart = Irq::Uart0.number() as i16;
    let soft = Irq::Soft.number() as i16;
    if irqn == uart {
        crate::uart::on_interrupt();
    } else if irqn == soft {
        if let Some(handler) = critical_section::with(|cs| SOFT_HANDLER.borrow(cs).get()) {
            handler();
        }
    } else {
        crate::print("FAIL: unexpected exception or interrupt ");
        if irqn < 0 {
            crate::print("-");
        }
        crate::print_u32(u32::from(irqn.unsigned_abs()));
        crate::print("\n");
        crate::exit(false);
    }
}

#[allow(unsafe_code)]
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    crate::print("FAIL: HardFault at pc=");
    crate::print_u32(frame.pc());
    crate::print("\n");
    crate::exit(false)
}
