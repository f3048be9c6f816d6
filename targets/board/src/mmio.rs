//! Volatile access to the memory-mapped registers this crate knows about.
//!
//! A [`Reg`] can only be made inside this crate, from the register maps of the two machines
//! (the `uart` module), so every address used here is a device register of the machine the
//! build targets.
#![allow(unsafe_code)]

/// One 32-bit device register.
#[derive(Clone, Copy)]
pub(crate) struct Reg(usize);

impl Reg {
    /// The register at `base + offset`. Callers pass addresses from the machine's manual.
    pub(crate) const fn at(base: usize, offset: usize) -> Self {
        Reg(base + offset)
    }

    #[inline]
    pub(crate) fn read(self) -> u32 {
        // SAFETY: `self.0` is the aligned address of a 32-bit register of the machine this
        // build targets (see the module docs); volatile reads of device registers have no
        // effect on Rust-visible memory.
        unsafe { core::ptr::read_volatile(self.0 as *const u32) }
    }

    #[inline]
    pub(crate) fn write(self, value: u32) {
        // SAFETY: as for `read`; the register lives outside any Rust object, so the write
        // aliases nothing the compiler knows about.
        unsafe { core::ptr::write_volatile(self.0 as *mut u32, value) }
    }
}
