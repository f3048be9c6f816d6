//! One server connection: the reader that routes elements to calls, and the writer.
//!
//! A connection starts with a call header. If it carries `bebop-mux`, the connection is
//! *multiplexed*: the header is only a preface, and from then on every element is a frame;
//! the first frame of a new (odd, increasing) stream id carries that call's header as its
//! payload. Otherwise the connection is *sequential*: a call header, the call's frames, and
//! after the call is over the next call header (one call per connection is the special case
//! of closing after the first).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::context::Peer;
use crate::queue::Outbox;
use crate::status::Status;
use crate::wire::{self, ElementReader, MUX_KEY, OwnedCallHeader, OwnedFrame, ReadError};

/// Answers a connection over the limit with an error on stream 0 and closes it.
pub(super) async fn refuse<IO: AsyncRead + AsyncWrite + Send + 'static>(io: IO, status: Status) {
    let (_, mut wr) = tokio::io::split(io);
    let bytes = wire::error_frame(0, &status);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        wr.write_all(&bytes).await?;
        wr.shutdown().await
    })
    .await;
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Start,
    Sequential,
    Multiplexed,
}

struct Entry {
    stream_id: u32,
    requests: Option<mpsc::Sender<OwnedFrame>>,
    request_ended: bool,
    response_ended: Arc<AtomicBool>,
    cancel: CancellationToken,
}

enum Close {
    /// The peer closed, the connection broke, or the server stopped.
    Quietly,
    /// Answer `status` on `stream_id`, then close.
    Answer(u32, Status),
}

struct Connection {
    shared: Arc<Shared>,
    peer: Arc<Peer>,
    out: Arc<Outbox>,
    cancel: CancellationToken,
    mode: Mode,
    calls: HashMap<u64, Entry>,
    by_stream: HashMap<u32, u64>,
    /// Streams whose call ended while the client was still sending: their frames are
    /// dropped until the client's `END_STREAM`.
    closed: HashSet<u32>,
    current: Option<u64>,
    pending_header: Option<OwnedCallHeader>,
    last_stream: u32,
    next_key: u64,
    done_tx: mpsc::UnboundedSender<u64>,
    done_rx: mpsc::UnboundedReceiver<u64>,
    draining: bool,
}

pub(super) async fn serve<IO>(shared: Arc<Shared>, io: IO, peer: Arc<Peer>)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let limits = shared.limits.clone();
    let (rd, wr) = tokio::io::split(io);
    let cancel = shared.stop.child_token();
    let out = Arc::new(Outbox::new(limits.response_buffer));
    let writer = tokio::spawn(write_loop(
        wr,
        out.clone(),
        limits.write_timeout,
        cancel.clone(),
    ));
    let mut reader = ElementReader {
        inner: BufReader::with_capacity(64 << 10, rd),
        max_payload: limits.max_frame_payload,
        max_call_header: limits.max_call_header,
        element_timeout: limits.element_timeout,
    };
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut conn = Connection {
        shared,
        peer,
        out,
        cancel: cancel.clone(),
        mode: Mode::Start,
        calls: HashMap::new(),
        by_stream: HashMap::new(),
        closed: HashSet::new(),
        current: None,
        pending_header: None,
        last_stream: 0,
        next_key: 0,
        done_tx,
        done_rx,
        draining: false,
    };
    let close = conn.run(&mut reader).await;
    if let Close::Answer(stream, status) = &close {
        tracing::debug!(peer = ?conn.peer.remote(), stream, %status, "closing the connection");
        let _ = conn.out.force(&wire::error_frame(*stream, status));
    }
    // Whatever is still running was cancelled by the client going away (docs/rpc.md,
    // "Cancellation").
    for entry in conn.calls.values() {
        entry.cancel.cancel();
    }
    // The writer ends once what is queued is written.
    conn.out.close();
    drop(conn);
    let _ = writer.await;
    cancel.cancel();
}

async fn write_loop<W: AsyncWrite + Unpin + Send + 'static>(
    mut wr: W,
    out: Arc<Outbox>,
    timeout: std::time::Duration,
    cancel: CancellationToken,
) {
    if wire::write_loop(&mut wr, &out, Some(timeout), &cancel)
        .await
        .is_err()
    {
        // A broken connection, or a peer that stopped reading: every call on it is
        // cancelled.
        out.close();
        cancel.cancel();
        return;
    }
    let _ = tokio::time::timeout(timeout, wr.shutdown()).await;
}

impl Connection {
    fn active(&self) -> usize {
        self.calls.len() + self.closed.len()
    }

    async fn run<R>(&mut self, reader: &mut ElementReader<R>) -> Close
    where
        R: tokio::io::AsyncRead + Unpin,
    {
        let idle_timeout = self.shared.limits.idle_timeout;
        let cancel = self.cancel.clone();
        let draining = self.shared.draining.clone();
        loop {
            while let Ok(key) = self.done_rx.try_recv() {
                if let Err(close) = self.finished(key) {
                    return close;
                }
            }
            if self.draining && self.calls.is_empty() {
                return Close::Quietly;
            }
            let idle = self.calls.is_empty() && idle_timeout.is_some();
            let ready = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Close::Quietly,
                Some(key) = self.done_rx.recv() => {
                    if let Err(close) = self.finished(key) {
                        return close;
                    }
                    continue;
                }
                _ = draining.cancelled(), if !self.draining => {
                    self.draining = true;
                    continue;
                }
                _ = sleep_opt(idle_timeout), if idle => return Close::Quietly,
                r = reader.ready() => r,
            };
            match ready {
                Ok(true) => {}
                Ok(false) | Err(_) => return Close::Quietly,
            }
            let result = if self.expects_call_header() {
                match reader.call_header().await {
                    Ok(bytes) => self.on_call_header(&bytes),
                    Err(e) => Err(read_close(e)),
                }
            } else {
                match reader.frame().await {
                    Ok(frame) => self.on_frame(frame).await,
                    Err(e) => Err(read_close(e)),
                }
            };
            if let Err(close) = result {
                return close;
            }
        }
    }

    fn expects_call_header(&self) -> bool {
        match self.mode {
            Mode::Start => true,
            Mode::Multiplexed => false,
            Mode::Sequential => {
                self.pending_header.is_none()
                    && self.closed.is_empty()
                    && self.current.is_none_or(|key| {
                        self.calls.get(&key).is_none_or(|e| {
                            e.request_ended && e.response_ended.load(Ordering::Acquire)
                        })
                    })
            }
        }
    }

    fn on_call_header(&mut self, bytes: &[u8]) -> Result<(), Close> {
        let header = OwnedCallHeader::from_message(bytes).map_err(|e| {
            Close::Answer(
                0,
                Status::invalid_argument(format!("the call header does not decode: {e}")),
            )
        })?;
        if self.mode == Mode::Start && header.metadata.get(MUX_KEY).is_some() {
            self.mode = Mode::Multiplexed;
            if header.method_id.is_some() {
                return Err(Close::Answer(
                    0,
                    Status::invalid_argument("a multiplexing preface names no method"),
                ));
            }
            return Ok(());
        }
        self.mode = Mode::Sequential;
        self.current = None;
        self.pending_header = Some(header);
        Ok(())
    }

    async fn on_frame(&mut self, frame: OwnedFrame) -> Result<(), Close> {
        let id = frame.stream_id();
        let key = match self.mode {
            Mode::Multiplexed => self.by_stream.get(&id).copied(),
            _ => self
                .current
                .filter(|k| self.calls.get(k).is_some_and(|e| e.stream_id == id)),
        };
        if let Some(key) = key {
            self.deliver(key, frame).await;
            return Ok(());
        }
        if self.closed.contains(&id) {
            if frame.is_end() {
                self.closed.remove(&id);
            }
            return Ok(());
        }
        let late_cancel = frame.is_end() && (frame.payload.is_empty() || frame.is_error());
        match self.mode {
            Mode::Multiplexed => {
                if id == 0 || id % 2 == 0 {
                    return Err(Close::Answer(
                        id,
                        Status::invalid_argument(format!(
                            "stream {id}: calls from a client use odd, non-zero stream ids"
                        )),
                    ));
                }
                if id <= self.last_stream {
                    if late_cancel {
                        // The client cancelling a call that has just ended.
                        return Ok(());
                    }
                    return Err(Close::Answer(
                        id,
                        Status::invalid_argument(format!(
                            "stream {id} was already used on this connection"
                        )),
                    ));
                }
                self.last_stream = id;
                if frame.is_end() || frame.is_error() {
                    let status = Status::invalid_argument(format!(
                        "stream {id}: the frame opening a call carries its call header and cannot end the stream"
                    ));
                    return self.refuse(id, &status, true).await;
                }
                if frame.payload.len() > self.shared.limits.max_call_header {
                    return Err(Close::Answer(
                        id,
                        Status::resource_exhausted(format!(
                            "call header of {} bytes is over the limit of {}",
                            frame.payload.len(),
                            self.shared.limits.max_call_header
                        )),
                    ));
                }
                let header = match OwnedCallHeader::from_message(&frame.payload) {
                    Ok(h) => h,
                    Err(e) => {
                        let status = Status::invalid_argument(format!(
                            "stream {id}: the call header does not decode: {e}"
                        ));
                        return self.refuse(id, &status, false).await;
                    }
                };
                self.open(header, id, None).await
            }
            _ => {
                if let Some(header) = self.pending_header.take() {
                    return self.open(header, id, Some(frame)).await;
                }
                if late_cancel {
                    return Ok(());
                }
                Err(Close::Answer(
                    id,
                    Status::invalid_argument(format!("a frame on stream {id} belongs to no call")),
                ))
            }
        }
    }

    /// Delivers a frame to its call: a request, the end of the requests, or a cancel.
    async fn deliver(&mut self, key: u64, frame: OwnedFrame) {
        let Some(entry) = self.calls.get_mut(&key) else {
            return;
        };
        if frame.is_error() || entry.request_ended {
            // `END_STREAM | ERROR` from a client resets the call; so does anything after its
            // request stream ended (a second END_STREAM cancels: docs/rpc.md, "Cancellation").
            entry.cancel.cancel();
            entry.requests = None;
            entry.request_ended = true;
            return;
        }
        let end = frame.is_end();
        if let Some(tx) = &entry.requests {
            let cancel = entry.cancel.clone();
            tokio::select! {
                _ = tx.send(frame) => {}
                _ = cancel.cancelled() => {}
                _ = self.cancel.cancelled() => {}
            }
        }
        if end {
            entry.request_ended = true;
            entry.requests = None;
        }
    }

    /// Drops the client's further frames on `stream_id` until its `END_STREAM`. Streams in
    /// this state count against `max_concurrent_calls`; past twice the limit the client is
    /// not ending what it starts, and the connection closes.
    fn discard(&mut self, stream_id: u32) -> Result<(), Close> {
        self.closed.insert(stream_id);
        if self.closed.len() > 2 * self.shared.limits.max_concurrent_calls.max(1) {
            return Err(Close::Answer(
                0,
                Status::resource_exhausted("too many calls left unfinished by the client"),
            ));
        }
        Ok(())
    }

    /// Refuses a call without starting it: the answer waits for room in the outgoing
    /// queue, so a client that opens calls faster than it reads the refusals is slowed
    /// down instead of piling them up.
    async fn refuse(
        &mut self,
        stream_id: u32,
        status: &Status,
        request_ended: bool,
    ) -> Result<(), Close> {
        let frame = wire::error_frame(stream_id, status);
        tokio::select! {
            r = self.out.push_bytes(&frame) => if r.is_err() { return Err(Close::Quietly) },
            _ = self.cancel.cancelled() => return Err(Close::Quietly),
        }
        if request_ended {
            Ok(())
        } else {
            self.discard(stream_id)
        }
    }

    fn finished(&mut self, key: u64) -> Result<(), Close> {
        let Some(entry) = self.calls.remove(&key) else {
            return Ok(());
        };
        if self.mode == Mode::Multiplexed {
            self.by_stream.remove(&entry.stream_id);
        }
        if self.current == Some(key) {
            self.current = None;
        }
        if !entry.request_ended {
            return self.discard(entry.stream_id);
        }
        Ok(())
    }

    async fn open(
        &mut self,
        header: OwnedCallHeader,
        stream_id: u32,
        first: Option<OwnedFrame>,
    ) -> Result<(), Close> {
        let limits = &self.shared.limits;
        let admitted = if self.draining {
            Err(Status::unavailable("the server is shutting down"))
        } else if self.active() >= limits.max_concurrent_calls {
            Err(Status::resource_exhausted(format!(
                "more than {} calls at once on one connection",
                limits.max_concurrent_calls
            )))
        } else {
            self.shared.admit(&header)
        };
        let admitted = match admitted {
            Ok(a) => a,
            Err(status) => {
                // The call never starts: no task, no entry (before interceptors: docs/rpc.md,
                // "Starting a call").
                let ended = first.as_ref().is_some_and(|f| f.is_end());
                if self.mode == Mode::Sequential {
                    self.current = None;
                }
                return self.refuse(stream_id, &status, ended).await;
            }
        };
        let key = self.next_key;
        self.next_key += 1;
        let done = self.done_tx.clone();
        let launched = self.shared.launch(
            admitted,
            header,
            stream_id,
            self.peer.clone(),
            self.out.clone(),
            self.cancel.child_token(),
            move || {
                let _ = done.send(key);
            },
        );
        self.calls.insert(
            key,
            Entry {
                stream_id,
                requests: Some(launched.requests),
                request_ended: false,
                response_ended: launched.response_ended,
                cancel: launched.cancel,
            },
        );
        match self.mode {
            Mode::Multiplexed => {
                self.by_stream.insert(stream_id, key);
            }
            _ => self.current = Some(key),
        }
        if let Some(frame) = first {
            self.deliver(key, frame).await;
        }
        Ok(())
    }
}

fn read_close(e: ReadError) -> Close {
    match e {
        ReadError::Closed | ReadError::Io(_) => Close::Quietly,
        ReadError::Stalled => Close::Answer(
            0,
            Status::unavailable("an element did not arrive within the time limit"),
        ),
        ReadError::Refused { stream_id, status } => Close::Answer(stream_id, status),
    }
}

async fn sleep_opt(d: Option<std::time::Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}
