//! The two queues of a connection, bounded by bytes rather than by element count so that
//! many small frames flow without a wake-up each while a few large ones still cannot pile
//! up:
//!
//! - [`Outbox`]: encoded elements waiting for the connection's writer. Senders encode
//!   straight into its buffer (no allocation per frame); the writer takes the whole buffer
//!   at once.
//! - [`FrameQueue`]: frames read for one call, waiting for the call to take them.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use std::task::{Context as TaskContext, Poll, Waker};

use tokio::sync::Notify;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The connection is closed: nothing more can be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

struct OutState {
    buf: Vec<u8>,
    closed: bool,
}

/// Encoded protocol elements waiting to be written, at most about `budget` bytes (an
/// element is always accepted into an empty outbox, however large).
pub(crate) struct Outbox {
    state: Mutex<OutState>,
    /// Wakes the writer.
    filled: Notify,
    /// Wakes senders waiting for room.
    drained: Notify,
    budget: usize,
}

impl Outbox {
    pub fn new(budget: usize) -> Self {
        Outbox {
            state: Mutex::new(OutState {
                buf: Vec::new(),
                closed: false,
            }),
            filled: Notify::new(),
            drained: Notify::new(),
            budget: budget.max(1),
        }
    }

    /// Appends what `encode` writes, waiting while the outbox is over its budget. `encode`
    /// must append whole elements (or nothing, when it fails).
    pub async fn push<R, E>(
        &self,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<R, E>,
    ) -> Result<Result<R, E>, Closed> {
        let mut encode = Some(encode);
        loop {
            let drained = self.drained.notified();
            {
                let mut state = lock(&self.state);
                if state.closed {
                    return Err(Closed);
                }
                if state.buf.len() < self.budget {
                    let was_empty = state.buf.is_empty();
                    let Some(encode) = encode.take() else {
                        return Err(Closed);
                    };
                    let result = encode(&mut state.buf);
                    drop(state);
                    if was_empty {
                        self.filled.notify_one();
                    }
                    return Ok(result);
                }
            }
            drained.await;
        }
    }

    /// Appends `bytes` (a whole element), waiting for room.
    pub async fn push_bytes(&self, bytes: &[u8]) -> Result<(), Closed> {
        self.push(|buf| {
            buf.extend_from_slice(bytes);
            Ok::<(), ()>(())
        })
        .await
        .map(|_| ())
    }

    /// Appends `bytes` unless the outbox is closed, whatever its budget: for the few small
    /// frames that must not wait (cancels, refusals on the way out).
    pub fn force(&self, bytes: &[u8]) -> Result<(), Closed> {
        let mut state = lock(&self.state);
        if state.closed {
            return Err(Closed);
        }
        let was_empty = state.buf.is_empty();
        state.buf.extend_from_slice(bytes);
        drop(state);
        if was_empty {
            self.filled.notify_one();
        }
        Ok(())
    }

    /// Swaps out everything queued (into `into`, which must be empty), waiting until there
    /// is something; `None` once closed and empty.
    pub async fn take(&self, into: &mut Vec<u8>) -> Option<()> {
        loop {
            let filled = self.filled.notified();
            {
                let mut state = lock(&self.state);
                if !state.buf.is_empty() {
                    std::mem::swap(&mut state.buf, into);
                    drop(state);
                    self.drained.notify_waiters();
                    return Some(());
                }
                if state.closed {
                    return None;
                }
            }
            filled.await;
        }
    }

    /// Appends whatever is queued to `into` without waiting.
    pub fn take_more(&self, into: &mut Vec<u8>) {
        let mut state = lock(&self.state);
        if state.buf.is_empty() {
            return;
        }
        into.extend_from_slice(&state.buf);
        state.buf.clear();
        drop(state);
        self.drained.notify_waiters();
    }

    /// Stops taking elements; what is queued can still be taken.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.filled.notify_one();
        self.drained.notify_waiters();
    }

    pub fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }
}

struct QueueState<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    /// The receiving side went away, or the sender ended.
    closed: bool,
    /// The receiver's task, waiting for an item.
    waiting: Option<Waker>,
}

/// Items (frames) for one receiver, bounded by their total size: the producer waits while
/// more than `budget` bytes are queued (an item is always accepted into an empty queue).
pub(crate) struct FrameQueue<T> {
    state: Mutex<QueueState<T>>,
    popped: Notify,
    budget: usize,
}

impl<T> FrameQueue<T> {
    pub fn new(budget: usize) -> Self {
        FrameQueue {
            state: Mutex::new(QueueState {
                items: VecDeque::new(),
                bytes: 0,
                closed: false,
                waiting: None,
            }),
            popped: Notify::new(),
            budget: budget.max(1),
        }
    }

    /// Queues `item` of `size` bytes, waiting for room; gives it back if the queue is
    /// closed.
    pub async fn push(&self, item: T, size: usize) -> Result<(), T> {
        let mut item = Some(item);
        loop {
            let popped = self.popped.notified();
            {
                let mut state = lock(&self.state);
                let Some(it) = item.take() else {
                    return Ok(());
                };
                if state.closed {
                    return Err(it);
                }
                if state.bytes < self.budget || state.items.is_empty() {
                    state.bytes += size;
                    state.items.push_back((it, size));
                    let waiting = state.waiting.take();
                    drop(state);
                    if let Some(w) = waiting {
                        w.wake();
                    }
                    return Ok(());
                }
                item = Some(it);
            }
            popped.await;
        }
    }

    /// The next item; `None` once the queue is closed and empty.
    pub async fn pop(&self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_pop(cx)).await
    }

    /// Polls for the next item; the waker is kept until an item or the end arrives, so
    /// the caller may poll from a fresh future each time.
    pub fn poll_pop(&self, cx: &mut TaskContext<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.state);
        match state.items.pop_front() {
            Some((item, size)) => {
                let was_full = state.bytes >= self.budget;
                state.bytes -= size;
                drop(state);
                if was_full {
                    self.popped.notify_one();
                }
                Poll::Ready(Some(item))
            }
            None if state.closed => Poll::Ready(None),
            None => {
                state.waiting = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// Ends the queue: the producer's pushes fail from now on, the receiver takes what is
    /// left and then `None`.
    pub fn close(&self) {
        let waiting = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.waiting.take()
        };
        if let Some(w) = waiting {
            w.wake();
        }
        self.popped.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn outbox_waits_for_room_and_hands_everything_to_the_writer() {
        let outbox = Arc::new(Outbox::new(8));
        outbox.push_bytes(b"0123456789").await.unwrap();
        // Over budget: the next push waits until the writer takes the buffer.
        let o = outbox.clone();
        let pusher = tokio::spawn(async move { o.push_bytes(b"ab").await });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!pusher.is_finished());
        let mut taken = Vec::new();
        outbox.take(&mut taken).await.unwrap();
        assert_eq!(taken, b"0123456789");
        pusher.await.unwrap().unwrap();
        taken.clear();
        outbox.take(&mut taken).await.unwrap();
        assert_eq!(taken, b"ab");
        outbox.force(b"x").unwrap();
        outbox.close();
        assert_eq!(outbox.push_bytes(b"late").await, Err(Closed));
        taken.clear();
        assert!(outbox.take(&mut taken).await.is_some());
        assert_eq!(taken, b"x");
        taken.clear();
        assert!(outbox.take(&mut taken).await.is_none());
    }

    #[tokio::test]
    async fn frame_queue_bounds_bytes_not_items() {
        let q = Arc::new(FrameQueue::new(100));
        for i in 0..50 {
            q.push(i, 1).await.unwrap();
        }
        q.push(50, 60).await.unwrap();
        let q2 = q.clone();
        let pusher = tokio::spawn(async move { q2.push(51, 1).await });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(
            !pusher.is_finished(),
            "110 bytes queued: the producer waits"
        );
        for i in 0..=50 {
            assert_eq!(q.pop().await, Some(i));
        }
        pusher.await.unwrap().unwrap();
        assert_eq!(q.pop().await, Some(51));
        q.push(52, 1000).await.unwrap();
        q.close();
        assert_eq!(q.push(53, 1).await, Err(53));
        assert_eq!(q.pop().await, Some(52));
        assert_eq!(q.pop().await, None);
    }
}
