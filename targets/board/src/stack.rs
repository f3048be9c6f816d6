//! Measuring stack use by painting.
//!
//! [`measure`] fills the free RAM between the end of the static data and the current stack
//! pointer with a pattern, runs the closure, and finds the lowest word the closure changed.
//! The difference to the stack pointer at the call is the most stack the closure (and any
//! interrupt handler that ran meanwhile) used.
#![allow(unsafe_code)]

const PAINT: u32 = 0xA5C3_5A3C;

unsafe extern "C" {
    /// End of `.bss`/`.uninit` (start of the heap region), defined by cortex-m-rt's `link.x`.
    static mut __sheap: u32;
}

/// The lowest address the stack may grow to.
fn floor() -> usize {
    (&raw mut __sheap) as usize
}

/// Runs `f` and returns its result with the number of bytes of stack it used.
///
/// The measurement includes the call into `f` itself (its frame and saved registers), so it
/// is what a caller has to reserve for that call.
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let sp = cortex_m::register::msp::read() as usize;
    // This function's own frame is above `sp` (ARM has no red zone and frames are set up in
    // the prologue), so everything below it is free until `run` is called.
    let top = sp & !3;
    let bottom = (floor() + 3) & !3;
    let mut at = bottom;
    while at < top {
        // SAFETY: `[bottom, top)` lies between the end of the statics and the live stack:
        // memory that belongs to no Rust object (cortex-m-rt reserves it for the stack, which
        // grows down into it, and this firmware has no heap). Writing it changes no value the
        // program can observe.
        unsafe { core::ptr::write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    let result = run(f);
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    let mut lowest = bottom;
    while lowest < top {
        // SAFETY: as above; the region is only read, word-aligned.
        if unsafe { core::ptr::read_volatile(lowest as *const u32) } != PAINT {
            break;
        }
        lowest += 4;
    }
    (result, sp - lowest)
}

/// Calls `f` in a frame of its own, below the stack pointer [`measure`] read, so that the
/// closure's locals are counted even when it is inlined here.
#[inline(never)]
fn run<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Free stack (bytes) between the end of the statics and the current stack pointer.
pub fn free() -> usize {
    (cortex_m::register::msp::read() as usize).saturating_sub(floor())
}
