//! One call on the server: [`ServerCall`] (what generated code hands a handler),
//! [`Requests`] and [`ResponseSink`], and the task that runs a call under its deadline.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context as TaskContext, Poll};

use bebop_runtime::rpc::{Encoded, FrameFlags};
use bebop_runtime::{Decode, Encode};
use futures_core::Stream;
use futures_util::FutureExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::Context;
use crate::queue::Outbox;
use crate::status::Status;
use crate::wire::{self, OwnedFrame};

/// A boxed, sendable future: what [`Service::call`](crate::Service::call) returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The sending half of a call's response stream.
#[derive(Clone)]
pub(crate) struct Responder {
    pub stream_id: u32,
    pub out: Arc<Outbox>,
    pub ended: Arc<AtomicBool>,
    pub cancel: CancellationToken,
}

impl Responder {
    /// Encodes one response frame straight into the connection's outbox, waiting for
    /// room.
    async fn send<T: Encode + Sync + ?Sized>(
        &self,
        item: &T,
        cursor: Option<u64>,
    ) -> Result<(), Status> {
        // (A cancelled call's handler is dropped by its supervisor; no need to look at the
        // token on every frame.)
        if self.ended.load(Ordering::Acquire) {
            return Err(Status::internal("the response stream already ended"));
        }
        let id = self.stream_id;
        self.out
            .push(|buf| wire::push_frame(buf, FrameFlags::NONE, id, item, cursor))
            .await
            .map_err(|_| Status::cancelled("the connection closed"))?
    }

    /// Sends the last element(s) of the response, once: `false` if the response had
    /// already ended (or the connection closed).
    pub(crate) async fn finish(
        &self,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), Status>,
    ) -> Result<bool, Status> {
        if self.ended.swap(true, Ordering::AcqRel) {
            return Ok(false);
        }
        match self.out.push(encode).await {
            Ok(r) => r.map(|()| true),
            Err(_) => Ok(false),
        }
    }

    pub(crate) async fn error(&self, status: &Status) -> bool {
        let frame = wire::error_frame(self.stream_id, status);
        self.finish(|buf| {
            buf.extend_from_slice(&frame);
            Ok(())
        })
        .await
        .unwrap_or(false)
    }
}

/// A call as the connection hands it to a [`Service`](crate::Service): its context, its
/// request frames and its response stream. Generated code turns it into a handler call with
/// [`unary`](Self::unary), [`server_stream`](Self::server_stream),
/// [`client_stream`](Self::client_stream) or [`duplex`](Self::duplex).
pub struct ServerCall {
    pub(crate) ctx: Arc<Context>,
    pub(crate) requests: mpsc::Receiver<OwnedFrame>,
    pub(crate) responder: Responder,
}

impl ServerCall {
    /// The call's context.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The single request of a unary or server-stream call: its one frame must end the
    /// request stream.
    async fn single<Req: for<'a> Decode<'a>>(&mut self) -> Result<Req, Status> {
        let payload = self.single_payload().await?;
        decode_request(&payload, 0)
    }

    /// The payload of the single request frame of a unary call, undecoded (the built-in
    /// methods decode it themselves).
    pub(crate) async fn single_payload(&mut self) -> Result<Vec<u8>, Status> {
        let Some(frame) = self.requests.recv().await else {
            return Err(Status::cancelled(
                "the client went away before sending its request",
            ));
        };
        if !frame.is_end() {
            return Err(Status::unimplemented(format!(
                "{} takes one request, not a stream",
                self.ctx.method().name
            )));
        }
        Ok(frame.payload)
    }

    /// Runs a unary handler: one request, one response, then the response metadata in a
    /// `TRAILER` frame if the handler set any.
    pub fn unary<Req, Resp, F, Fut>(mut self, handler: F) -> BoxFuture<'static, ()>
    where
        Req: for<'a> Decode<'a> + Send + 'static,
        Resp: Encode + Send + Sync + 'static,
        F: FnOnce(Arc<Context>, Req) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Resp, Status>> + Send + 'static,
    {
        Box::pin(async move {
            let request = match self.single::<Req>().await {
                Ok(r) => r,
                Err(s) => return fail(&self.ctx, &self.responder, s).await,
            };
            let result = handler(self.ctx.clone(), request).await;
            reply(&self.ctx, &self.responder, result).await
        })
    }

    /// Runs a server-stream handler, which sends its responses on a [`ResponseSink`]; the
    /// stream ends when it returns.
    pub fn server_stream<Req, Resp, F, Fut>(mut self, handler: F) -> BoxFuture<'static, ()>
    where
        Req: for<'a> Decode<'a> + Send + 'static,
        Resp: Encode + Send + Sync + 'static,
        F: FnOnce(Arc<Context>, Req, ResponseSink<Resp>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), Status>> + Send + 'static,
    {
        Box::pin(async move {
            let request = match self.single::<Req>().await {
                Ok(r) => r,
                Err(s) => return fail(&self.ctx, &self.responder, s).await,
            };
            let sink = ResponseSink::new(self.responder.clone());
            let result = handler(self.ctx.clone(), request, sink).await;
            end_stream(&self.ctx, &self.responder, result).await
        })
    }

    /// Runs a client-stream handler, which reads its requests from [`Requests`] and returns
    /// one response. A response before the request stream ends tells the client to stop
    /// sending (`docs/rpc.md`, "Calls").
    pub fn client_stream<Req, Resp, F, Fut>(self, handler: F) -> BoxFuture<'static, ()>
    where
        Req: for<'a> Decode<'a> + Send + 'static,
        Resp: Encode + Send + Sync + 'static,
        F: FnOnce(Arc<Context>, Requests<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Resp, Status>> + Send + 'static,
    {
        Box::pin(async move {
            let requests = Requests::new(self.requests);
            let result = handler(self.ctx.clone(), requests).await;
            reply(&self.ctx, &self.responder, result).await
        })
    }

    /// Runs a duplex handler with both the requests and a response sink.
    pub fn duplex<Req, Resp, F, Fut>(self, handler: F) -> BoxFuture<'static, ()>
    where
        Req: for<'a> Decode<'a> + Send + 'static,
        Resp: Encode + Send + Sync + 'static,
        F: FnOnce(Arc<Context>, Requests<Req>, ResponseSink<Resp>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), Status>> + Send + 'static,
    {
        Box::pin(async move {
            let requests = Requests::new(self.requests);
            let sink = ResponseSink::new(self.responder.clone());
            let result = handler(self.ctx.clone(), requests, sink).await;
            end_stream(&self.ctx, &self.responder, result).await
        })
    }

    /// Answers with pre-encoded response bytes (discovery).
    pub(crate) async fn reply_encoded(mut self, bytes: &[u8]) {
        if let Err(s) = self.single::<bebop_runtime::rpc::Empty>().await {
            return fail(&self.ctx, &self.responder, s).await;
        }
        reply(&self.ctx, &self.responder, Ok(Encoded(bytes))).await
    }

    /// Answers a unary call with pre-encoded response bytes, its request already read
    /// (batches).
    pub(crate) async fn respond_encoded(self, bytes: &[u8]) {
        reply(&self.ctx, &self.responder, Ok(Encoded(bytes))).await
    }

    /// Sends one pre-encoded element of a server stream (resolve).
    pub(crate) async fn send_encoded(&self, bytes: &[u8]) -> Result<(), Status> {
        self.responder.send(&Encoded(bytes), None).await
    }

    /// Ends a server stream whose elements went with
    /// [`send_encoded`](Self::send_encoded): with the response metadata, or as `result`'s
    /// error.
    pub(crate) async fn end_stream(self, result: Result<(), Status>) {
        end_stream(&self.ctx, &self.responder, result).await
    }

    /// Fails the call with `status` without running a handler.
    pub async fn reject(self, status: Status) {
        fail(&self.ctx, &self.responder, status).await
    }
}

fn decode_request<Req: for<'a> Decode<'a>>(payload: &[u8], index: u64) -> Result<Req, Status> {
    Req::from_bytes(payload).map_err(|e| {
        Status::invalid_argument(if index == 0 {
            format!("the request does not decode: {e}")
        } else {
            format!("request {index} does not decode: {e}")
        })
    })
}

async fn fail(ctx: &Context, responder: &Responder, mut status: Status) {
    let md = ctx.take_response_metadata();
    let mut merged = md;
    merged.merge(status.metadata());
    *status.metadata_mut() = merged;
    responder.error(&status).await;
}

async fn reply<Resp: Encode + Sync>(
    ctx: &Context,
    responder: &Responder,
    result: Result<Resp, Status>,
) {
    match result {
        Ok(response) => {
            let md = ctx.take_response_metadata();
            let id = responder.stream_id;
            let flags = if md.is_empty() {
                FrameFlags::END_STREAM
            } else {
                FrameFlags::NONE
            };
            let sent = responder
                .finish(|buf| {
                    wire::push_frame(buf, flags, id, &response, None)?;
                    if !md.is_empty() {
                        wire::push_trailer(buf, id, &md);
                    }
                    Ok(())
                })
                .await;
            if let Err(s) = sent {
                // The response did not encode (over 4 GiB): the call still ends, as an error.
                let frame = wire::error_frame(id, &s);
                let _ = responder.out.push_bytes(&frame).await;
            }
        }
        Err(status) => fail(ctx, responder, status).await,
    }
}

async fn end_stream(ctx: &Context, responder: &Responder, result: Result<(), Status>) {
    match result {
        Ok(()) => {
            let md = ctx.take_response_metadata();
            let id = responder.stream_id;
            let _ = responder
                .finish(|buf| {
                    if md.is_empty() {
                        wire::push_frame(buf, FrameFlags::END_STREAM, id, &Encoded(&[]), None)
                    } else {
                        wire::push_trailer(buf, id, &md);
                        Ok(())
                    }
                })
                .await;
        }
        Err(status) => fail(ctx, responder, status).await,
    }
}

/// Where a streaming handler sends its responses. Each `send` waits while the connection's
/// outgoing queue is full, so a slow client slows the handler instead of filling memory.
pub struct ResponseSink<T> {
    responder: Responder,
    sent: u64,
    _item: PhantomData<fn(&T)>,
}

impl<T: Encode + Sync> ResponseSink<T> {
    fn new(responder: Responder) -> Self {
        ResponseSink {
            responder,
            sent: 0,
            _item: PhantomData,
        }
    }

    /// Sends one response. Fails with `CANCELLED` once the client is gone.
    pub async fn send(&mut self, item: &T) -> Result<(), Status> {
        self.responder.send(item, None).await?;
        self.sent += 1;
        Ok(())
    }

    /// Sends one response with a resume cursor (`docs/rpc.md`, "Cursors and resuming a stream"): a
    /// client that
    /// reconnects with this cursor resumes after this item.
    pub async fn send_with_cursor(&mut self, item: &T, cursor: u64) -> Result<(), Status> {
        self.responder.send(item, Some(cursor)).await?;
        self.sent += 1;
        Ok(())
    }

    /// How many responses were sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Whether the client went away or the call was cancelled.
    pub fn is_closed(&self) -> bool {
        self.responder.cancel.is_cancelled() || self.responder.out.is_closed()
    }
}

/// The request stream of a client-stream or duplex call, delivered as frames arrive. At most
/// a bounded number of frames wait here; past that the connection stops reading, so a slow
/// handler never makes the server buffer without bound.
pub struct Requests<T> {
    rx: mpsc::Receiver<OwnedFrame>,
    ended: bool,
    received: u64,
    _item: PhantomData<fn() -> T>,
}

impl<T: for<'a> Decode<'a>> Requests<T> {
    fn new(rx: mpsc::Receiver<OwnedFrame>) -> Self {
        Requests {
            rx,
            ended: false,
            received: 0,
            _item: PhantomData,
        }
    }

    /// The next request; `Ok(None)` once the client ended its stream. A request that does
    /// not decode is `INVALID_ARGUMENT` (naming the decode error and its offset); a client
    /// that went away, `CANCELLED`.
    pub async fn message(&mut self) -> Result<Option<T>, Status> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }

    fn poll_message(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<Option<T>, Status>> {
        if self.ended {
            return Poll::Ready(Ok(None));
        }
        let frame = match self.rx.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {
                self.ended = true;
                return Poll::Ready(Err(Status::cancelled(
                    "the client went away before ending its requests",
                )));
            }
            Poll::Ready(Some(f)) => f,
        };
        if frame.is_end() {
            self.ended = true;
            if frame.payload.is_empty() {
                return Poll::Ready(Ok(None));
            }
        }
        self.received += 1;
        Poll::Ready(decode_request(&frame.payload, self.received).map(Some))
    }

    /// How many requests arrived so far.
    pub fn received(&self) -> u64 {
        self.received
    }
}

impl<T: for<'a> Decode<'a>> Stream for Requests<T> {
    type Item = Result<T, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.poll_message(cx).map(Result::transpose)
    }
}

impl<T> Unpin for Requests<T> {}

/// Runs a call's work under its deadline, its cancellation and a panic guard (`docs/rpc.md`,
/// "Deadlines", "Cancellation" and "Handler errors and panics").
pub(crate) async fn supervise(
    ctx: Arc<Context>,
    responder: Responder,
    work: BoxFuture<'static, ()>,
    span: tracing::Span,
) {
    let started = std::time::Instant::now();
    let deadline = ctx.deadline_instant();
    let token = ctx.cancellation_token();
    let guarded = AssertUnwindSafe(work).catch_unwind();
    let outcome = tokio::select! {
        r = guarded => match r {
            Ok(()) => "done",
            Err(_) => {
                responder.error(&Status::internal("the handler panicked")).await;
                "panicked"
            }
        },
        _ = sleep_until_deadline(deadline) => {
            token.cancel();
            responder
                .error(&Status::deadline_exceeded("the deadline passed during the call"))
                .await;
            "deadline exceeded"
        },
        _ = token.cancelled() => "cancelled",
    };
    tracing::debug!(
        parent: &span,
        outcome,
        elapsed_us = started.elapsed().as_micros() as u64,
        "call ended"
    );
}

async fn sleep_until_deadline(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Spawns `work` as a supervised call task.
pub(crate) fn spawn_call(
    tracker: &tokio_util::task::TaskTracker,
    ctx: Arc<Context>,
    responder: Responder,
    work: BoxFuture<'static, ()>,
    done: impl FnOnce() + Send + 'static,
) {
    let m = ctx.method();
    let span = tracing::debug_span!(
        "rpc",
        service = m.service,
        method = m.name,
        stream = ctx.stream_id()
    );
    let task_span = span.clone();
    tracker.spawn(
        async move {
            supervise(ctx, responder, work, task_span).await;
            done();
        }
        .instrument(span),
    );
}
