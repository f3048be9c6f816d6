//! What a handler knows about its call: [`CallContext`], with the [`Clock`] deadlines are
//! checked against and the [`CancelFlag`] an interrupt or the server can raise.

use portable_atomic::{AtomicBool, Ordering};

use super::method::MethodInfo;
use super::types::CallHeader;
use crate::{Map, Timestamp};

/// The current time, for deadlines. On a microcontroller, a tick counter plus the time the
/// host set at boot; on a host, the system clock.
pub trait Clock {
    /// Now, as a Bebop timestamp.
    fn now(&self) -> Timestamp;
}

/// A clock for systems without one: deadlines are carried but never found passed.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoClock;

impl Clock for NoClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(i64::MIN)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// Whether `deadline` has passed at `now` (offsets play no part: both are instants).
pub fn deadline_passed(deadline: &Timestamp, now: &Timestamp) -> bool {
    (now.seconds(), now.nanos()) >= (deadline.seconds(), deadline.nanos())
}

/// A flag that ends a streaming call early: set from an interrupt handler, another task, or
/// by the server when the client gives up. Fits in a `static` (`const fn new`), needs only
/// atomic loads and stores (no compare-and-swap), so it works on a Cortex-M0.
///
/// ```
/// use bebop_core::rpc::CancelFlag;
/// static STOP: CancelFlag = CancelFlag::new();
/// STOP.cancel();
/// assert!(STOP.is_cancelled());
/// STOP.clear();
/// assert!(!STOP.is_cancelled());
/// ```
#[derive(Debug, Default)]
pub struct CancelFlag(AtomicBool);

impl CancelFlag {
    /// A flag that is not set.
    pub const fn new() -> Self {
        CancelFlag(AtomicBool::new(false))
    }

    /// Sets the flag.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Clears the flag (the server does this when a call starts).
    pub fn clear(&self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Everything about a call that is not its payload: the method, the call header's deadline,
/// metadata and resume cursor, and whether the call has been cancelled.
#[derive(Clone, Copy)]
pub struct CallContext<'c> {
    method: MethodInfo,
    stream_id: u32,
    header: CallHeader<'c>,
    clock: &'c dyn Clock,
    cancel: &'c CancelFlag,
}

impl<'c> CallContext<'c> {
    /// A context for `method` from a decoded call header.
    pub fn new(
        method: MethodInfo,
        stream_id: u32,
        header: CallHeader<'c>,
        clock: &'c dyn Clock,
        cancel: &'c CancelFlag,
    ) -> Self {
        CallContext {
            method,
            stream_id,
            header,
            clock,
            cancel,
        }
    }

    /// The method called.
    pub fn method(&self) -> MethodInfo {
        self.method
    }

    /// The stream id of the call's frames (0 where the transport keeps calls apart).
    pub fn stream_id(&self) -> u32 {
        self.stream_id
    }

    /// The absolute deadline, if the caller set one.
    pub fn deadline(&self) -> Option<Timestamp> {
        self.header.deadline
    }

    /// Where to resume a stream: the last cursor the client processed, 0 for the start.
    pub fn cursor(&self) -> u64 {
        self.header.cursor.unwrap_or(0)
    }

    /// The request metadata.
    pub fn metadata(&self) -> Option<Map<'c, &'c str, &'c str>> {
        self.header.metadata
    }

    /// One request metadata value (the last one, should a key repeat).
    pub fn metadata_value(&self, key: &str) -> Option<&'c str> {
        self.header
            .metadata
            .and_then(|m| m.iter().filter(|(k, _)| *k == key).last().map(|(_, v)| v))
    }

    /// The call header as received.
    pub fn call_header(&self) -> &CallHeader<'c> {
        &self.header
    }

    /// The current time by the server's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Whether the deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.header
            .deadline
            .is_some_and(|d| deadline_passed(&d, &self.clock.now()))
    }

    /// Whether the call was cancelled (the cancel flag) or its deadline passed. Long
    /// handlers check this now and then; streams check it on every send.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.deadline_passed()
    }

    pub(crate) fn cancel_flag(&self) -> &'c CancelFlag {
        self.cancel
    }
}

impl core::fmt::Debug for CallContext<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallContext")
            .field("method", &self.method)
            .field("stream_id", &self.stream_id)
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}
