//! UART0 of the machine, with `embedded_io` traits.
//!
//! - [`Uart`] reads and writes by polling (blocking `embedded_io::Read` and `Write`).
//! - [`Uart::split`] gives a transmit half ([`UartTx`], blocking `Write`) and a receive half
//!   ([`UartRx`], blocking polled `Read`), which can switch to interrupt-driven reception:
//!   - [`UartRx::into_irq_reader`]: the interrupt handler moves received bytes into a
//!     lock-free single-producer/single-consumer ring; [`IrqReader`] is an `embedded_io::Read`
//!     over it that sleeps (WFI) until data arrives;
//!   - [`UartRx::listen`]: the interrupt handler calls a function for every byte, so frames
//!     can be assembled in interrupt context.
//!
//! The emulated UARTs ignore baud rates; QEMU holds incoming bytes back while the receive
//! register is full, so nothing is lost when the firmware is slow.

use core::cell::Cell;
use core::convert::Infallible;

use critical_section::Mutex;
use portable_atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicUsize, Ordering};

use crate::irq::{self, Hook, Irq};
#[cfg(board = "microbit")]
mod hw {
    //! nRF51 UART0 (nRF51 Series Reference Manual, chapter 29).
    use crate::mmio::Reg;

    const BASE: usize = 0x4000_2000;
    const STARTRX: Reg = Reg::at(BASE, 0x000);
    const STARTTX: Reg = Reg::at(BASE, 0x008);
    const RXDRDY: Reg = Reg::at(BASE, 0x108);
    const TXDRDY: Reg = Reg::at(BASE, 0x11C);
    const INTENSET: Reg = Reg::at(BASE, 0x304);
    const INTENCLR: Reg = Reg::at(BASE, 0x308);
    const ENABLE: Reg = Reg::at(BASE, 0x500);
    const PSELTXD: Reg = Reg::at(BASE, 0x50C);
    const PSELRXD: Reg = Reg::at(BASE, 0x514);
    const RXD: Reg = Reg::at(BASE, 0x518);
    const TXD: Reg = Reg::at(BASE, 0x51C);
    const BAUDRATE: Reg = Reg::at(BASE, 0x524);
    const INT_RXDRDY: u32 = 1 << 2;

    pub(super) fn init() {
        ENABLE.write(4);
        PSELTXD.write(24); // the micro:bit's USB-serial pins
        PSELRXD.write(25);
        BAUDRATE.write(0x01D7_E000); // 115200
        TXDRDY.write(0);
        RXDRDY.write(0);
        STARTTX.write(1);
        STARTRX.write(1);
    }

    pub(super) fn write_byte(byte: u8) {
        TXDRDY.write(0);
        TXD.write(u32::from(byte));
        while TXDRDY.read() == 0 {}
    }

    pub(super) fn try_read_byte() -> Option<u8> {
        if RXDRDY.read() == 0 {
            return None;
        }
        // Clear the event first: reading RXD sets it again while more bytes are queued.
        RXDRDY.write(0);
        Some(RXD.read() as u8)
    }

    pub(super) fn enable_rx_interrupt(on: bool) {
        if on {
            INTENSET.write(INT_RXDRDY);
        } else {
            INTENCLR.write(INT_RXDRDY);
        }
    }
}

#[cfg(board = "lm3s6965")]
mod hw {
    //! Stellaris LM3S6965 UART0 (LM3S6965 data sheet, chapter 12), a PL011 derivative.
    use crate::mmio::Reg;

    const BASE: usize = 0x4000_C000;
    const DR: Reg = Reg::at(BASE, 0x000);
    const FR: Reg = Reg::at(BASE, 0x018);
    const IBRD: Reg = Reg::at(BASE, 0x024);
    const FBRD: Reg = Reg::at(BASE, 0x028);
    const LCRH: Reg = Reg::at(BASE, 0x02C);
    const CTL: Reg = Reg::at(BASE, 0x030);
    const IM: Reg = Reg::at(BASE, 0x038);
    const ICR: Reg = Reg::at(BASE, 0x044);
    const RCGC1: Reg = Reg::at(0x400F_E000, 0x104);
    const FR_RXFE: u32 = 1 << 4;
    const FR_TXFF: u32 = 1 << 5;
    const IM_RX: u32 = 1 << 4;
    /// Receive time-out: the FIFO holds bytes below the trigger level and the line went quiet.
    const IM_RT: u32 = 1 << 6;

    pub(super) fn init() {
        RCGC1.write(RCGC1.read() | 1); // clock UART0
        CTL.write(0);
        IBRD.write(6); // 115200 baud from 12 MHz
        FBRD.write(33);
        LCRH.write(0x70); // 8N1, FIFOs on (QEMU raises the receive interrupt from the first byte)
        ICR.write(0x7FF);
        CTL.write((1 << 9) | (1 << 8) | 1); // RXE | TXE | UARTEN
    }

    pub(super) fn write_byte(byte: u8) {
        while FR.read() & FR_TXFF != 0 {}
        DR.write(u32::from(byte));
    }

    pub(super) fn try_read_byte() -> Option<u8> {
        if FR.read() & FR_RXFE != 0 {
            return None;
        }
        Some(DR.read() as u8)
    }

    pub(super) fn enable_rx_interrupt(on: bool) {
        let im = IM.read();
        let bits = IM_RX | IM_RT;
        IM.write(if on { im | bits } else { im & !bits });
    }
}

static TAKEN: AtomicBool = AtomicBool::new(false);

/// UART0, blocking in both directions. Obtain it once with [`Uart::take`].
#[derive(Debug)]
pub struct Uart {
    _owned: (),
}

/// The transmit half of [`Uart`].
#[derive(Debug)]
pub struct UartTx {
    _owned: (),
}

/// The receive half of [`Uart`], reading by polling until switched to interrupts.
#[derive(Debug)]
pub struct UartRx {
    _owned: (),
}

impl Uart {
    /// Initialises UART0 and returns it, the first time only.
    pub fn take() -> Option<Uart> {
        // A swap is a read-modify-write: on the Cortex-M0 portable-atomic does it in a
        // critical section.
        if TAKEN.swap(true, Ordering::AcqRel) {
            return None;
        }
        hw::init();
        Some(Uart { _owned: () })
    }

    /// Splits into transmit and receive halves.
    pub fn split(self) -> (UartTx, UartRx) {
        (UartTx { _owned: () }, UartRx { _owned: () })
    }
}

fn write_all_bytes(buf: &[u8]) {
    for &b in buf {
        hw::write_byte(b);
    }
}

fn read_blocking(buf: &mut [u8]) -> usize {
    if buf.is_empty() {
        return 0;
    }
    // Wait for the first byte, then take whatever else is already there.
    loop {
        if let Some(b) = hw::try_read_byte() {
            buf[0] = b;
            break;
        }
    }
    let mut n = 1;
    while n < buf.len() {
        match hw::try_read_byte() {
            Some(b) => {
                buf[n] = b;
                n += 1;
            }
            None => break,
        }
    }
    n
}

impl embedded_io::ErrorType for Uart {
    type Error = Infallible;
}
impl embedded_io::ErrorType for UartTx {
    type Error = Infallible;
}
impl embedded_io::ErrorType for UartRx {
    type Error = Infallible;
}

impl embedded_io::Write for Uart {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        write_all_bytes(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

impl embedded_io::Write for UartTx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        write_all_bytes(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

impl embedded_io::Read for Uart {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        Ok(read_blocking(buf))
    }
}

impl embedded_io::Read for UartRx {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        Ok(read_blocking(buf))
    }
}

/// A lock-free single-producer (interrupt handler), single-consumer (main loop) byte ring.
///
/// Only loads and stores of atomics are used, which every Cortex-M has, so this is lock-free
/// on the Cortex-M0 too. `N` must be a power of two.
pub struct ByteRing<const N: usize> {
    slots: [AtomicU8; N],
    /// Next slot to write; only the producer stores it.
    head: AtomicUsize,
    /// Next slot to read; only the consumer stores it.
    tail: AtomicUsize,
}

impl<const N: usize> ByteRing<N> {
    const MASK: usize = {
        assert!(N.is_power_of_two(), "ring size must be a power of two");
        N - 1
    };

    /// An empty ring.
    pub const fn new() -> Self {
        ByteRing {
            slots: [const { AtomicU8::new(0) }; N],
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
        }
    }

    /// Producer side: appends `byte`, or returns false when the ring is full.
    pub fn push(&self, byte: u8) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head.wrapping_sub(tail) == N {
            return false;
        }
        self.slots[head & Self::MASK].store(byte, Ordering::Relaxed);
        self.head.store(head.wrapping_add(1), Ordering::Release);
        true
    }

    /// Consumer side: takes the oldest byte.
    pub fn pop(&self) -> Option<u8> {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let byte = self.slots[tail & Self::MASK].load(Ordering::Relaxed);
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        Some(byte)
    }

    /// How many bytes are waiting.
    pub fn len(&self) -> usize {
        self.head
            .load(Ordering::Acquire)
            .wrapping_sub(self.tail.load(Ordering::Acquire))
    }

    /// True when no byte is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<const N: usize> Default for ByteRing<N> {
    fn default() -> Self {
        Self::new()
    }
}

const RX_RING_SIZE: usize = 256;
static RX_RING: ByteRing<RX_RING_SIZE> = ByteRing::new();
static RX_HOOK: Hook<fn(u8)> = Mutex::new(Cell::new(None));
static RX_OVERRUNS: AtomicU32 = AtomicU32::new(0);
static RX_BYTES: AtomicU32 = AtomicU32::new(0);

/// Set when the ring filled up and the receive interrupt was switched off (flow control).
static RX_PAUSED: AtomicBool = AtomicBool::new(false);

/// Called by the interrupt dispatcher for UART0: drains the receiver.
///
/// Into the ring, with flow control: when the ring is full, the handler leaves the next
/// byte in the UART and switches the receive interrupt off, so the line stops delivering (an
/// emulated UART has no baud rate and can outrun the main loop; a real one would hold off
/// through RTS) until [`IrqReader`] has made room.
pub(crate) fn on_interrupt() {
    let hook = critical_section::with(|cs| RX_HOOK.borrow(cs).get());
    loop {
        if hook.is_none() && RX_RING.len() == RX_RING_SIZE {
            hw::enable_rx_interrupt(false);
            RX_PAUSED.store(true, Ordering::Release);
            return;
        }
        let Some(byte) = hw::try_read_byte() else {
            return;
        };
        RX_BYTES.fetch_add(1, Ordering::Relaxed);
        match hook {
            Some(hook) => hook(byte),
            None => {
                if !RX_RING.push(byte) {
                    RX_OVERRUNS.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// After bytes were taken from the ring: resumes reception if it was paused.
fn resume_if_paused() {
    if RX_PAUSED.load(Ordering::Acquire) {
        RX_PAUSED.store(false, Ordering::Release);
        start_rx_interrupts();
    }
}

/// Bytes received in interrupt context so far.
pub fn rx_bytes() -> u32 {
    RX_BYTES.load(Ordering::Relaxed)
}

/// Bytes dropped because a hook could not take them, or the ring was full (with flow
/// control, which [`IrqReader`] has, this stays 0).
pub fn rx_overruns() -> u32 {
    RX_OVERRUNS.load(Ordering::Relaxed)
}

/// Enables the receive interrupt, and runs its handler once: a byte that arrived before
/// (while the UART was being set up) raised no interrupt the handler saw, and with the
/// receiver's one-byte holding register full the emulated line would deliver nothing more.
fn start_rx_interrupts() {
    hw::enable_rx_interrupt(true);
    irq::enable(Irq::Uart0);
    irq::pend(Irq::Uart0);
}

impl UartRx {
    /// Switches to interrupt-driven reception into a 256-byte lock-free ring.
    pub fn into_irq_reader(self) -> IrqReader {
        critical_section::with(|cs| RX_HOOK.borrow(cs).set(None));
        start_rx_interrupts();
        IrqReader { _owned: () }
    }

    /// Switches to interrupt-driven reception that calls `hook` with every received byte, in
    /// interrupt context (with interrupts of the same priority held off).
    pub fn listen(self, hook: fn(u8)) {
        critical_section::with(|cs| RX_HOOK.borrow(cs).set(Some(hook)));
        start_rx_interrupts();
    }
}

/// Interrupt-driven receiver: an `embedded_io::Read` over the ring the UART0 handler fills.
#[derive(Debug)]
pub struct IrqReader {
    _owned: (),
}

impl IrqReader {
    /// Takes one byte if one is waiting, without blocking.
    pub fn try_read_byte(&mut self) -> Option<u8> {
        let byte = RX_RING.pop();
        resume_if_paused();
        byte
    }
}

impl embedded_io::ErrorType for IrqReader {
    type Error = Infallible;
}

impl embedded_io::Read for IrqReader {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let mut n = 0;
            while n < buf.len() {
                match RX_RING.pop() {
                    Some(b) => {
                        buf[n] = b;
                        n += 1;
                    }
                    None => break,
                }
            }
            if n > 0 {
                resume_if_paused();
                return Ok(n);
            }
            // Sleep until an interrupt (a received byte, or the clock tick) wakes us. Not in
            // a critical section: QEMU's WFI does not wake for an interrupt that PRIMASK
            // holds pending, which limited reception to about one byte per clock tick. A
            // byte landing between the check and the WFI waits for the next tick (1 ms).
            if RX_RING.is_empty() {
                cortex_m::asm::wfi();
            }
        }
    }
}

impl embedded_io::ReadReady for IrqReader {
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(!RX_RING.is_empty())
    }
}

/// UART0 as one full-duplex line for an RPC link: blocking writes, and reads from the ring
/// that the receive interrupt fills ([`IrqReader`]), with `ReadReady` so a server can look
/// for incoming bytes without blocking. Implements `embedded_io::{Read, Write, ReadReady}`,
/// what `bebop_core::rpc::link::PacketChannel` needs.
#[derive(Debug)]
pub struct SerialLine {
    tx: UartTx,
    rx: IrqReader,
}

impl SerialLine {
    /// UART0 with interrupt-driven reception into the ring.
    pub fn new(uart: Uart) -> Self {
        let (tx, rx) = uart.split();
        SerialLine {
            tx,
            rx: rx.into_irq_reader(),
        }
    }
}

impl embedded_io::ErrorType for SerialLine {
    type Error = Infallible;
}

impl embedded_io::Read for SerialLine {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        self.rx.read(buf)
    }
}

impl embedded_io::ReadReady for SerialLine {
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        self.rx.read_ready()
    }
}

impl embedded_io::Write for SerialLine {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        self.tx.write(buf)
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        self.tx.flush()
    }
}
