//! Frames received in an interrupt handler, consumed by the main loop.

use core::cell::RefCell;

use critical_section::Mutex;
use portable_atomic::{AtomicU32, Ordering};

use crate::frame::{Deframer, Frame, FrameError, parse_frame};

/// Counters of a receiving link, updated from interrupt context and read from anywhere.
///
/// They are `portable_atomic::AtomicU32`s incremented with `fetch_add`. The Cortex-M0 has no
/// atomic read-modify-write instructions; there portable-atomic turns each `fetch_add` into a
/// short critical section (its `critical-section` feature), on the Cortex-M3 it is an
/// `LDREX`/`STREX` loop. Same code on both.
#[derive(Debug, Default)]
pub struct LinkStats {
    bytes: AtomicU32,
    frames: AtomicU32,
    corrupted: AtomicU32,
    truncated: AtomicU32,
    other_errors: AtomicU32,
    queue_full: AtomicU32,
}

/// A copy of [`LinkStats`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StatsSnapshot {
    /// Bytes fed in.
    pub bytes: u32,
    /// Good frames queued.
    pub frames: u32,
    /// Frames rejected with [`FrameError::Corrupted`].
    pub corrupted: u32,
    /// Frames rejected with [`FrameError::Truncated`].
    pub truncated: u32,
    /// Frames rejected for another reason (overflow, length mismatch, flags).
    pub other_errors: u32,
    /// Good frames dropped because the queue was full.
    pub queue_full: u32,
}

impl StatsSnapshot {
    /// Every frame rejected or dropped, whatever the reason.
    pub const fn rejected(&self) -> u32 {
        self.corrupted + self.truncated + self.other_errors + self.queue_full
    }
}

impl LinkStats {
    /// All zero.
    pub const fn new() -> Self {
        LinkStats {
            bytes: AtomicU32::new(0),
            frames: AtomicU32::new(0),
            corrupted: AtomicU32::new(0),
            truncated: AtomicU32::new(0),
            other_errors: AtomicU32::new(0),
            queue_full: AtomicU32::new(0),
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            bytes: self.bytes.load(Ordering::Relaxed),
            frames: self.frames.load(Ordering::Relaxed),
            corrupted: self.corrupted.load(Ordering::Relaxed),
            truncated: self.truncated.load(Ordering::Relaxed),
            other_errors: self.other_errors.load(Ordering::Relaxed),
            queue_full: self.queue_full.load(Ordering::Relaxed),
        }
    }

    fn count_error(&self, e: &FrameError) {
        let counter = match e {
            FrameError::Corrupted { .. } => &self.corrupted,
            FrameError::Truncated { .. } => &self.truncated,
            _ => &self.other_errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

struct Inner<const N: usize, const SLOTS: usize> {
    deframer: Deframer<N>,
    slots: [[u8; N]; SLOTS],
    lens: [usize; SLOTS],
    /// Oldest queued frame.
    head: usize,
    count: usize,
}

/// A receiving link shared between an interrupt handler, which feeds it bytes
/// ([`feed`](Self::feed)), and the main loop, which takes whole checked frames
/// ([`pop_into`](Self::pop_into)).
///
/// The deframer and a queue of `SLOTS` frames of up to `N` bytes live behind a
/// `critical_section::Mutex`: the handler holds it for one byte, the main loop for one frame
/// copy. Rejected frames are counted in [`LinkStats`] and never queued. Put it in a `static`:
///
/// ```
/// use serial_link::{encode_frame, FrameFlags, SharedLink};
///
/// static LINK: SharedLink<64, 4> = SharedLink::new();
///
/// // In the UART interrupt handler: LINK.feed(byte) for every received byte.
/// let mut wire = [0u8; 64];
/// let n = encode_frame(FrameFlags::NONE, 2, &"cfg", None, &mut wire)?;
/// for &b in &wire[..n] {
///     LINK.feed(b);
/// }
///
/// // In the main loop:
/// let mut buf = [0u8; 64];
/// let frame = LINK.pop_into(&mut buf).expect("one frame queued");
/// assert_eq!(frame.header.stream_id, 2);
/// assert_eq!(frame.decode::<&str>(), Ok("cfg"));
/// assert_eq!(LINK.stats().frames, 1);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct SharedLink<const N: usize, const SLOTS: usize> {
    inner: Mutex<RefCell<Inner<N, SLOTS>>>,
    stats: LinkStats,
}

impl<const N: usize, const SLOTS: usize> SharedLink<N, SLOTS> {
    /// An empty link.
    pub const fn new() -> Self {
        SharedLink {
            inner: Mutex::new(RefCell::new(Inner {
                deframer: Deframer::new(),
                slots: [[0; N]; SLOTS],
                lens: [0; SLOTS],
                head: 0,
                count: 0,
            })),
            stats: LinkStats::new(),
        }
    }

    /// Interrupt side: feeds one received byte. A completed good frame is queued; a rejected
    /// one is counted.
    pub fn feed(&self, byte: u8) {
        self.stats.bytes.fetch_add(1, Ordering::Relaxed);
        critical_section::with(|cs| {
            let mut inner = self.inner.borrow_ref_mut(cs);
            let inner = &mut *inner;
            let Some(result) = inner.deframer.push(byte) else {
                return;
            };
            match result {
                Ok(frame) => {
                    let len = frame.header.length as usize
                        + crate::frame::OVERHEAD
                        + if frame.cursor.is_some() {
                            crate::frame::CURSOR_SIZE
                        } else {
                            0
                        };
                    if inner.count == SLOTS {
                        self.stats.queue_full.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    // The deframer's buffer still holds the checked frame's bytes.
                    let slot = (inner.head + inner.count) % SLOTS;
                    let bytes = inner.deframer.last_frame(len);
                    inner.slots[slot][..len].copy_from_slice(bytes);
                    inner.lens[slot] = len;
                    inner.count += 1;
                    self.stats.frames.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => self.stats.count_error(&e),
            }
        });
    }

    /// Main-loop side: moves the oldest queued frame into `buf` and returns it, checked.
    pub fn pop_into<'b>(&self, buf: &'b mut [u8; N]) -> Option<Frame<'b>> {
        let len = critical_section::with(|cs| {
            let mut inner = self.inner.borrow_ref_mut(cs);
            if inner.count == 0 {
                return None;
            }
            let slot = inner.head;
            let len = inner.lens[slot];
            buf[..len].copy_from_slice(&inner.slots[slot][..len]);
            inner.head = (slot + 1) % SLOTS;
            inner.count -= 1;
            Some(len)
        })?;
        // Checked once already when it was queued; parsing again only re-reads the header.
        parse_frame(&buf[..len]).ok()
    }

    /// Frames waiting.
    pub fn queued(&self) -> usize {
        critical_section::with(|cs| self.inner.borrow_ref(cs).count)
    }

    /// The counters.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }
}

impl<const N: usize, const SLOTS: usize> Default for SharedLink<N, SLOTS> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FrameFlags, encode_frame};

    #[test]
    fn queue_keeps_order_counts_errors_and_drops_when_full() {
        let link: SharedLink<64, 2> = SharedLink::new();
        let mut wire = [0u8; 64];
        for (i, text) in ["a", "b", "c"].iter().enumerate() {
            let n = encode_frame(FrameFlags::NONE, i as u32, text, None, &mut wire).unwrap();
            if i == 1 {
                // A damaged copy first (a flipped bit: caught by the CRC, or by COBS when it
                // hits a block's code byte).
                let mut bad = wire;
                bad[12] ^= 0x40;
                for &b in &bad[..n] {
                    link.feed(b);
                }
            }
            for &b in &wire[..n] {
                link.feed(b);
            }
        }
        let s = link.stats();
        assert_eq!(
            (s.frames, s.corrupted + s.truncated, s.queue_full),
            (2, 1, 1)
        );
        assert_eq!(s.rejected(), 2);
        let mut buf = [0u8; 64];
        assert_eq!(link.pop_into(&mut buf).unwrap().decode::<&str>(), Ok("a"));
        assert_eq!(link.pop_into(&mut buf).unwrap().decode::<&str>(), Ok("b"));
        assert!(link.pop_into(&mut buf).is_none());
        assert_eq!(link.queued(), 0);
    }
}
