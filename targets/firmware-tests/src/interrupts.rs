//! Data shared between an interrupt handler and the main loop.
//!
//! The spare interrupt line ([`qemu_board::irq::Irq::Soft`]) plays the UART: each time the
//! main loop pends it, its handler does one step of the current exercise in interrupt context.
//!
//! - frames: the handler feeds the next few bytes of a prepared wire stream (good, corrupted,
//!   truncated frames and garbage) into a `SharedLink` (critical-section mutex, portable-atomic
//!   counters); the main loop drains whole frames and decodes them;
//! - counter: handler and main loop both `fetch_add` one `portable_atomic::AtomicU32`, which
//!   on the Cortex-M0 is emulated with a critical section;
//! - ring: the handler pushes a numbered byte sequence into the board's lock-free
//!   single-producer/single-consumer ring, the main loop pops it.

use core::cell::RefCell;

use bebop_core::Encode;
use critical_section::Mutex;
use portable_atomic::{AtomicU8, AtomicU32, Ordering};
use qemu_board::irq::{self, Irq};
use qemu_board::semihosting::hprintln;
use qemu_board::uart::ByteRing;
use serial_link::{FrameFlags, SharedLink, cobs, encode_frame};

use crate::checks::Checks;
use crate::log;
use crate::schema::{SensorStatus, Telemetry};

const MODE_IDLE: u8 = 0;
const MODE_FRAMES: u8 = 1;
const MODE_COUNTER: u8 = 2;
const MODE_RING: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(MODE_IDLE);

/// Bytes the handler feeds per interrupt.
const CHUNK: usize = 5;
const STREAM_CAP: usize = 640;

struct Feed {
    bytes: [u8; STREAM_CAP],
    len: usize,
    at: usize,
}

static FEED: Mutex<RefCell<Feed>> = Mutex::new(RefCell::new(Feed {
    bytes: [0; STREAM_CAP],
    len: 0,
    at: 0,
}));
static LINK: SharedLink<96, 4> = SharedLink::new();

static COUNTER: AtomicU32 = AtomicU32::new(0);
const HANDLER_ADDS: u32 = 1000;

static RING: ByteRing<64> = ByteRing::new();
static RING_NEXT: AtomicU8 = AtomicU8::new(0);
const RING_BURST: u8 = 40;

/// Handler runs so far.
static HANDLED: AtomicU32 = AtomicU32::new(0);

/// Pends the soft interrupt and waits until its handler has run. (QEMU takes a pended
/// interrupt at the end of the current translation block, not at the very next instruction.)
fn pend_and_wait() {
    let before = HANDLED.load(Ordering::Acquire);
    irq::pend(Irq::Soft);
    while HANDLED.load(Ordering::Acquire) == before {
        core::hint::spin_loop();
    }
}

fn handler() {
    handle();
    HANDLED.fetch_add(1, Ordering::Release);
}

fn handle() {
    match MODE.load(Ordering::Acquire) {
        MODE_FRAMES => {
            let chunk = critical_section::with(|cs| {
                let mut feed = FEED.borrow_ref_mut(cs);
                let from = feed.at;
                let to = (from + CHUNK).min(feed.len);
                feed.at = to;
                let mut chunk = [0u8; CHUNK];
                chunk[..to - from].copy_from_slice(&feed.bytes[from..to]);
                (chunk, to - from)
            });
            for &b in &chunk.0[..chunk.1] {
                LINK.feed(b);
            }
        }
        MODE_COUNTER => {
            for _ in 0..HANDLER_ADDS {
                COUNTER.fetch_add(1, Ordering::Relaxed);
            }
        }
        MODE_RING => {
            for _ in 0..RING_BURST {
                let b = RING_NEXT.load(Ordering::Relaxed);
                if RING.push(b) {
                    RING_NEXT.store(b.wrapping_add(1), Ordering::Relaxed);
                }
            }
        }
        _ => {}
    }
}

fn telemetry(seq: u32) -> Telemetry<'static> {
    Telemetry {
        seq,
        uptime_ms: seq * 100,
        temperature_c: 20.0 + seq as f32 * 0.25,
        humidity_pct: 40.0,
        accel_mg: [seq as i16, -(seq as i16), 1000],
        battery_mv: 3300 - seq as u16,
        status: SensorStatus::Ok,
        config_version: 1,
        label: "irq-test",
    }
}

/// Builds the wire stream: records 1..=8, with 3 corrupted, 5 cut in half, and garbage
/// after 6. Returns its length.
fn build_stream(out: &mut [u8; STREAM_CAP]) -> usize {
    let mut at = 0;
    for seq in 1..=8u32 {
        let rest = &mut out[at..];
        let Ok(n) = encode_frame(FrameFlags::NONE, 1, &telemetry(seq), None, rest) else {
            return 0;
        };
        match seq {
            3 => {
                // Damage one content byte well inside the payload.
                if let Some(i) = cobs::data_byte_at_or_after(&rest[..n - 1], 20) {
                    rest[i] ^= if rest[i] == 0x55 { 0xAA } else { 0x55 };
                }
                at += n;
            }
            5 => {
                let half = n / 2;
                rest[half] = 0;
                at += half + 1;
            }
            6 => {
                at += n;
                let garbage = [0x13, 0x37, b'j', b'u', b'n', b'k', 0];
                out[at..at + garbage.len()].copy_from_slice(&garbage);
                at += garbage.len();
            }
            _ => at += n,
        }
    }
    at
}

fn frames(c: &mut Checks) {
    let len = critical_section::with(|cs| {
        let mut feed = FEED.borrow_ref_mut(cs);
        let feed = &mut *feed;
        feed.len = build_stream(&mut feed.bytes);
        feed.at = 0;
        feed.len
    });
    c.check("frame stream built", len > 0);
    MODE.store(MODE_FRAMES, Ordering::Release);
    let mut seqs = [0u32; 8];
    let mut got = 0;
    let mut buf = [0u8; 96];
    let mut pends = 0;
    loop {
        let done = critical_section::with(|cs| {
            let feed = FEED.borrow_ref(cs);
            feed.at >= feed.len
        });
        while let Some(frame) = LINK.pop_into(&mut buf) {
            match frame.decode::<Telemetry<'_>>() {
                Ok(t) => {
                    if t.seq == 1 {
                        log::telemetry(&t);
                    }
                    c.eq("frame content", t, telemetry(t.seq));
                    if let Some(slot) = seqs.get_mut(got) {
                        *slot = t.seq;
                    }
                    got += 1;
                }
                Err(e) => {
                    c.eq("frame payload decodes", Err(e), Ok(()));
                }
            }
        }
        if done {
            break;
        }
        pend_and_wait();
        pends += 1;
    }
    MODE.store(MODE_IDLE, Ordering::Release);
    let stats = LINK.stats();
    log::stats(&stats);
    c.eq(
        "records that survived, in order",
        &seqs[..got.min(8)],
        &[1, 2, 4, 6, 7, 8][..],
    );
    c.eq("corrupted frames counted", stats.corrupted, 1);
    c.eq(
        "truncated frames counted (cut record + garbage)",
        stats.truncated,
        2,
    );
    c.eq("good frames counted", stats.frames, 6);
    c.eq("bytes counted", stats.bytes as usize, len);
    c.eq("no frame dropped", stats.queue_full + stats.other_errors, 0);
    hprintln!(
        "  frames via interrupt: {} bytes in {} interrupts -> {} good, {} corrupted, {} truncated",
        stats.bytes,
        pends,
        stats.frames,
        stats.corrupted,
        stats.truncated
    );
}

fn counter(c: &mut Checks) {
    COUNTER.store(0, Ordering::Relaxed);
    let runs_before = HANDLED.load(Ordering::Acquire);
    MODE.store(MODE_COUNTER, Ordering::Release);
    const MAIN_ADDS: u32 = 5000;
    const EVERY: u32 = 50;
    for i in 0..MAIN_ADDS {
        COUNTER.fetch_add(1, Ordering::Relaxed);
        if i % EVERY == 0 {
            // Not waiting here: the handler lands wherever QEMU takes it, possibly between
            // the load and the store of an emulated fetch_add, which must not lose counts.
            irq::pend(Irq::Soft);
        }
    }
    // Let a last pended run finish before counting.
    pend_and_wait();
    MODE.store(MODE_IDLE, Ordering::Release);
    let runs = HANDLED.load(Ordering::Acquire) - runs_before;
    let want = MAIN_ADDS + runs * HANDLER_ADDS;
    c.check("the handler ran during the count", runs > 1);
    c.eq(
        "fetch_add from handler and main loop",
        COUNTER.load(Ordering::Relaxed),
        want,
    );
    // compare_exchange (a CAS the Cortex-M0 lacks) decides who takes a token.
    let token = AtomicU32::new(0);
    c.eq(
        "first compare_exchange wins",
        token.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire),
        Ok(0),
    );
    c.eq(
        "second compare_exchange loses",
        token.compare_exchange(0, 2, Ordering::AcqRel, Ordering::Acquire),
        Err(1),
    );
}

fn ring(c: &mut Checks) {
    MODE.store(MODE_RING, Ordering::Release);
    let mut expect: u8 = 0;
    let mut popped = 0u32;
    let mut in_order = true;
    for _ in 0..25 {
        pend_and_wait();
        while let Some(b) = RING.pop() {
            in_order &= b == expect;
            expect = expect.wrapping_add(1);
            popped += 1;
        }
    }
    MODE.store(MODE_IDLE, Ordering::Release);
    c.check("lock-free ring: bytes arrive in order", in_order);
    c.eq(
        "lock-free ring: every byte arrives",
        popped,
        25 * u32::from(RING_BURST),
    );
}

pub fn run(c: &mut Checks) {
    hprintln!("interrupt-shared data:");
    irq::set_soft_handler(handler);
    frames(c);
    counter(c);
    ring(c);
    irq::disable(Irq::Soft);
    let _ = telemetry(0).encoded_size();
}
