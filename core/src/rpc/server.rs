//! The blocking server: [`Server`] reads a call header and the request frames from a
//! [`Channel`], routes the call to a [`Service`] (generated code implements it for every
//! schema service), and writes the response frames, all in buffers the caller supplies.

use super::channel::{Channel, ChannelError, Expect};
use super::context::{CallContext, CancelFlag, Clock, deadline_passed};
use super::frame::{
    Encoded, ProtocolError, encode_frame, parse_call_header_exact, parse_frame_exact,
};
use super::method::{MethodInfo, MethodKind};
use super::status::Status;
use super::types::{
    CallHeader, FrameFlags, MethodType, RpcError, ServiceInfo, StatusCode, TrailingMetadata,
};
use crate::{Decode, Encode, Error, ErrorKind, Map, Sink};

/// Method id 0: discovery.
pub const DISCOVERY_METHOD_ID: u32 = 0;
/// Method id 1: a batch of calls (served by `bebop-rpc`; this blocking server answers it
/// `UNIMPLEMENTED`).
pub const BATCH_METHOD_ID: u32 = 1;
/// Method ids 1 to 4 (batch, future dispatch, resolve, cancel), which this server does not
/// implement: it answers them `UNIMPLEMENTED`.
pub const RESERVED_METHOD_IDS: core::ops::RangeInclusive<u32> = 1..=4;

/// A service the [`Server`] can route calls to. `bebop-codegen-rust` implements it for the
/// `Server` wrapper of every generated service; a tuple of services serves them all.
pub trait Service {
    /// Calls `f` with the discovery record of every service this value serves.
    fn describe(&self, f: &mut dyn FnMut(&ServiceInfo<'static>));

    /// The method with this id, if this value serves it.
    fn method(&self, id: u32) -> Option<MethodInfo>;

    /// Runs a call of one of [`method`](Self::method)'s methods to its end: takes the request
    /// from `call`, runs the handler, sends the response. An `Err` is sent to the client as
    /// an `ERROR` frame (unless the call was cancelled).
    fn dispatch(&mut self, call: Call<'_>) -> Result<(), Status>;
}

impl<A: Service, B: Service> Service for (A, B) {
    fn describe(&self, f: &mut dyn FnMut(&ServiceInfo<'static>)) {
        self.0.describe(f);
        self.1.describe(f);
    }
    fn method(&self, id: u32) -> Option<MethodInfo> {
        self.0.method(id).or_else(|| self.1.method(id))
    }
    fn dispatch(&mut self, call: Call<'_>) -> Result<(), Status> {
        if self.0.method(call.context().method().id).is_some() {
            self.0.dispatch(call)
        } else {
            self.1.dispatch(call)
        }
    }
}

/// The discovery record's method type for a method kind.
pub const fn method_type(kind: MethodKind) -> MethodType {
    match kind {
        MethodKind::Unary => MethodType::Unary,
        MethodKind::ServerStream => MethodType::ServerStream,
        MethodKind::ClientStream => MethodType::ClientStream,
        MethodKind::DuplexStream => MethodType::DuplexStream,
    }
}

/// How one call ended, for logs and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CallOutcome {
    /// The call succeeded.
    Ok {
        /// The method id.
        method_id: u32,
    },
    /// The call failed with this status (an `ERROR` frame was sent).
    Failed {
        /// The method id (as the call header gave it).
        method_id: u32,
        /// The status sent.
        code: StatusCode,
    },
    /// The client gave up on the call; nothing more was sent.
    Cancelled {
        /// The method id.
        method_id: u32,
    },
    /// The call could not start: a refused or undecodable element (answered with an `ERROR`
    /// frame), or a stray frame where a call header belonged (dropped).
    Refused(ProtocolError),
    /// A packet was damaged in transit where a call header belonged (on a packet link); it
    /// was dropped unanswered, since nothing in it can be trusted.
    Damaged,
}

/// A blocking RPC server over buffers the caller supplies: one for the call header (which
/// the handler's context borrows), one for request frames, one for response frames. Their
/// sizes are the server's limits: a larger element is answered `RESOURCE_EXHAUSTED`.
///
/// One call at a time, as a microcontroller serves a serial line; see the repository's
/// `targets/` for a device serving a generated service this way.
pub struct Server<'s> {
    clock: &'s dyn Clock,
    cancel: &'s CancelFlag,
    call_buf: &'s mut [u8],
    rx: &'s mut [u8],
    tx: &'s mut [u8],
}

impl<'s> Server<'s> {
    /// A server checking deadlines against `clock`, ending streams when `cancel` is raised,
    /// and using the three buffers.
    pub fn new(
        clock: &'s dyn Clock,
        cancel: &'s CancelFlag,
        call_buf: &'s mut [u8],
        rx: &'s mut [u8],
        tx: &'s mut [u8],
    ) -> Self {
        Server {
            clock,
            cancel,
            call_buf,
            rx,
            tx,
        }
    }

    /// Serves calls until the channel closes or fails; returns why it stopped.
    pub fn serve<S: Service + ?Sized>(
        &mut self,
        channel: &mut dyn Channel,
        service: &mut S,
    ) -> ChannelError {
        loop {
            if let Err(e) = self.serve_one(channel, service) {
                return e;
            }
        }
    }

    /// Serves one call: waits for its call header, runs it to its end. `Err` only when the
    /// channel closed or failed.
    pub fn serve_one<S: Service + ?Sized>(
        &mut self,
        channel: &mut dyn Channel,
        service: &mut S,
    ) -> Result<CallOutcome, ChannelError> {
        let header_len = match channel.recv(Expect::CallHeader, self.call_buf) {
            Ok(n) => n,
            Err(ChannelError::Refused(e)) => {
                send_error(
                    channel,
                    self.tx,
                    0,
                    &Status::format(e.status_code(), format_args!("{e}")),
                );
                return Ok(CallOutcome::Refused(e));
            }
            Err(ChannelError::Damaged) => return Ok(CallOutcome::Damaged),
            Err(e) => return Err(e),
        };
        let call_bytes = &self.call_buf[..header_len];
        let header = match parse_call_header_exact(call_bytes, call_bytes.len()) {
            Ok(h) => h,
            Err(e) => {
                // A lone END_STREAM frame where a call header belongs is a client giving up
                // on a call that already ended (on a packet link): nothing to answer.
                if let Ok(frame) = parse_frame_exact(call_bytes, call_bytes.len()) {
                    if frame.is_end() && frame.payload.is_empty() {
                        return Ok(CallOutcome::Refused(e));
                    }
                    // A request frame whose call header was lost (damaged on a packet link):
                    // answered on its stream, so the client need not wait for a reply.
                    send_error(
                        channel,
                        self.tx,
                        frame.stream_id(),
                        &Status::new(
                            StatusCode::Unavailable,
                            "a request frame arrived without its call header (lost in transit?)",
                        ),
                    );
                    return Ok(CallOutcome::Refused(e));
                }
                send_error(
                    channel,
                    self.tx,
                    0,
                    &Status::format(e.status_code(), format_args!("{e}")),
                );
                return Ok(CallOutcome::Refused(e));
            }
        };
        self.cancel.clear();
        let method_id = header.method_id.unwrap_or(0);
        let method = match method_id {
            DISCOVERY_METHOD_ID => Ok(MethodInfo {
                service: "",
                name: "discovery",
                id: DISCOVERY_METHOD_ID,
                kind: MethodKind::Unary,
            }),
            id if RESERVED_METHOD_IDS.contains(&id) => Err(Status::format(
                StatusCode::Unimplemented,
                format_args!("reserved method {id} is not implemented by this server"),
            )),
            id => service.method(id).ok_or_else(|| {
                Status::format(StatusCode::NotFound, format_args!("no method {id:#010x}"))
            }),
        };

        // Every call brings at least one request frame; its stream id is the call's.
        let first_len = match channel.recv(Expect::Frame, self.rx) {
            Ok(n) => n,
            Err(ChannelError::Refused(e)) => {
                let stream = e.stream_id().unwrap_or(0);
                send_error(
                    channel,
                    self.tx,
                    stream,
                    &Status::format(e.status_code(), format_args!("{e}")),
                );
                return Ok(CallOutcome::Failed {
                    method_id,
                    code: e.status_code(),
                });
            }
            Err(ChannelError::Damaged) => {
                send_error(
                    channel,
                    self.tx,
                    0,
                    &Status::new(StatusCode::Unavailable, "request frame damaged in transit"),
                );
                return Ok(CallOutcome::Failed {
                    method_id,
                    code: StatusCode::Unavailable,
                });
            }
            Err(e) => return Err(e),
        };
        let (stream_id, first_is_end) = match parse_frame_exact(&self.rx[..first_len], first_len) {
            Ok(f) => (f.stream_id(), f.is_end()),
            Err(e) => {
                send_error(
                    channel,
                    self.tx,
                    0,
                    &Status::format(e.status_code(), format_args!("{e}")),
                );
                return Ok(CallOutcome::Failed {
                    method_id,
                    code: e.status_code(),
                });
            }
        };

        // The order of docs/rpc.md ("Starting a call"): the deadline, the method, the
        // calling convention.
        let expired = header
            .deadline
            .is_some_and(|d| deadline_passed(&d, &self.clock.now()));
        let early = match method {
            _ if expired => Some(Status::new(
                StatusCode::DeadlineExceeded,
                "the deadline passed before the call started",
            )),
            Err(status) => Some(status),
            Ok(m)
                if !first_is_end
                    && matches!(m.kind, MethodKind::Unary | MethodKind::ServerStream) =>
            {
                Some(Status::format(
                    StatusCode::Unimplemented,
                    format_args!("{} takes one request, not a stream", m.name),
                ))
            }
            Ok(_) => None,
        };
        if let Some(status) = early {
            if !first_is_end {
                drain_request(channel, self.rx)?;
            }
            send_error(channel, self.tx, stream_id, &status);
            return Ok(CallOutcome::Failed {
                method_id,
                code: status.code(),
            });
        }
        let Ok(method) = method else {
            // Unreachable: an error method was answered above.
            return Ok(CallOutcome::Failed {
                method_id,
                code: StatusCode::Internal,
            });
        };

        let ctx = CallContext::new(method, stream_id, header, self.clock, self.cancel);
        let result = if method_id == DISCOVERY_METHOD_ID {
            reply_discovery(channel, self.tx, stream_id, service)
        } else {
            let call = Call {
                ctx,
                channel: &mut *channel,
                rx: &mut *self.rx,
                tx: &mut *self.tx,
                first: Some(first_len),
                request_ended: first_is_end,
            };
            service.dispatch(call)
        };
        Ok(match result {
            Ok(()) => CallOutcome::Ok { method_id },
            Err(status) if status.code() == StatusCode::Cancelled && self.cancel.is_cancelled() => {
                CallOutcome::Cancelled { method_id }
            }
            Err(status) => {
                send_error(channel, self.tx, stream_id, &status);
                CallOutcome::Failed {
                    method_id,
                    code: status.code(),
                }
            }
        })
    }
}

/// Receives and drops request frames up to the one with `END_STREAM`.
fn drain_request(channel: &mut dyn Channel, rx: &mut [u8]) -> Result<(), ChannelError> {
    loop {
        match channel.recv(Expect::Frame, rx) {
            Ok(n) => {
                if parse_frame_exact(&rx[..n], n).is_ok_and(|f| f.is_end()) {
                    return Ok(());
                }
            }
            Err(ChannelError::Refused(_) | ChannelError::Damaged) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Sends an `ERROR` frame; a failure to send is not reported (the peer is gone, and the next
/// receive says so).
fn send_error(channel: &mut dyn Channel, tx: &mut [u8], stream_id: u32, status: &Status) {
    let error: RpcError<'_> = status.to_rpc_error();
    let flags = FrameFlags::END_STREAM | FrameFlags::ERROR;
    let n = match encode_frame(tx, flags, stream_id, &error, None) {
        Ok(n) => n,
        // The detail does not fit: send the code alone.
        Err(_) => match encode_frame(tx, flags, stream_id, &status.code_only_error(), None) {
            Ok(n) => n,
            Err(_) => return,
        },
    };
    let _ = channel.send(&tx[..n]);
}

impl Status {
    fn code_only_error(&self) -> RpcError<'static> {
        RpcError {
            code: Some(self.code()),
            detail: None,
            metadata: None,
        }
    }
}

/// Encodes the discovery response of `service` and sends it.
fn reply_discovery<S: Service + ?Sized>(
    channel: &mut dyn Channel,
    tx: &mut [u8],
    stream_id: u32,
    service: &S,
) -> Result<(), Status> {
    let response = DiscoveryOf(service);
    send_frame(
        channel,
        tx,
        FrameFlags::END_STREAM,
        stream_id,
        &response,
        None,
    )
}

/// A `DiscoveryResponse` (`struct { services: ServiceInfo[]; }`) encoded straight from a
/// [`Service`]'s descriptions.
struct DiscoveryOf<'a, S: ?Sized>(&'a S);

impl<S: Service + ?Sized> crate::WireSize for DiscoveryOf<'_, S> {
    const MIN_SIZE: usize = 4;
}

impl<S: Service + ?Sized> Encode for DiscoveryOf<'_, S> {
    fn encoded_size(&self) -> usize {
        let mut size = 4;
        self.0.describe(&mut |s| size += s.encoded_size());
        size
    }
    fn encode<W: Sink>(&self, sink: &mut W) -> Result<(), W::Error> {
        let mut count = 0u32;
        self.0.describe(&mut |_| count += 1);
        count.encode(sink)?;
        let mut result = Ok(());
        self.0.describe(&mut |s| {
            if result.is_ok() {
                result = s.encode(sink);
            }
        });
        result
    }
}

/// Encodes one frame into `tx` and sends it. A response too large for `tx` is `INTERNAL`
/// (the server's buffer is its limit); a channel failure is `UNAVAILABLE`.
fn send_frame<T: Encode + ?Sized>(
    channel: &mut dyn Channel,
    tx: &mut [u8],
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<(), Status> {
    let n = encode_frame(tx, flags, stream_id, payload, cursor).map_err(|e| {
        if e.kind() == ErrorKind::BufferTooSmall {
            Status::format(
                StatusCode::Internal,
                format_args!(
                    "response needs {} bytes, the transmit buffer has {}",
                    e.detail(),
                    tx.len()
                ),
            )
        } else {
            Status::format(
                StatusCode::Internal,
                format_args!("encoding the response: {e}"),
            )
        }
    })?;
    channel
        .send(&tx[..n])
        .map_err(|e| Status::format(StatusCode::Unavailable, format_args!("{e}")))
}

/// Decodes a request payload; a failure is `INVALID_ARGUMENT` naming the error and its
/// offset.
pub fn decode_request<'r, T: Decode<'r>>(payload: &'r [u8]) -> Result<T, Status> {
    T::from_bytes(payload).map_err(invalid_request)
}

fn invalid_request(e: Error) -> Status {
    Status::format(
        StatusCode::InvalidArgument,
        format_args!("request does not decode: {e}"),
    )
}

/// One call, handed to [`Service::dispatch`]. Generated code takes it apart with the method
/// matching the method's kind.
pub struct Call<'c> {
    ctx: CallContext<'c>,
    channel: &'c mut dyn Channel,
    rx: &'c mut [u8],
    tx: &'c mut [u8],
    /// The length of the first request frame, already in `rx`.
    first: Option<usize>,
    request_ended: bool,
}

impl<'c> Call<'c> {
    /// The call's context.
    pub fn context(&self) -> &CallContext<'c> {
        &self.ctx
    }

    /// A unary call: the request, the context, and the [`Reply`] that sends the response.
    pub fn unary<T: Decode<'c>>(self) -> Result<(T, CallContext<'c>, Reply<'c>), Status> {
        let Call {
            ctx,
            channel,
            rx,
            tx,
            first,
            ..
        } = self;
        let rx: &'c [u8] = rx;
        let payload = single_request(rx, first)?;
        let request = decode_request(payload)?;
        Ok((
            request,
            ctx,
            Reply {
                channel,
                tx,
                stream_id: ctx.stream_id(),
            },
        ))
    }

    /// A server-stream call: the request, the context, and the [`ServerStream`] to send
    /// responses on.
    pub fn server_stream<T: Decode<'c>>(
        self,
    ) -> Result<(T, CallContext<'c>, ServerStream<'c>), Status> {
        let (request, ctx, reply) = self.unary()?;
        Ok((
            request,
            ctx,
            ServerStream {
                ctx,
                channel: reply.channel,
                tx: reply.tx,
            },
        ))
    }

    /// A client-stream call: the context and the [`RequestStream`] of requests; the stream
    /// turns into the [`Reply`] once the handler has its response.
    pub fn client_stream(self) -> (CallContext<'c>, RequestStream<'c>) {
        let ctx = self.ctx;
        (ctx, RequestStream { inner: self })
    }

    /// A duplex call: the context and the [`DuplexStream`] that receives requests and sends
    /// responses.
    pub fn duplex(self) -> (CallContext<'c>, DuplexStream<'c>) {
        let ctx = self.ctx;
        (ctx, DuplexStream { inner: self })
    }

    /// Receives the next request frame's payload into `rx`; `None` at the end of the
    /// request stream.
    fn next_payload(&mut self) -> Option<Result<&[u8], Status>> {
        CallParts {
            channel: &mut *self.channel,
            rx: &mut *self.rx,
            first: &mut self.first,
            request_ended: &mut self.request_ended,
        }
        .next_payload()
    }

    fn finish_request(&mut self) -> Result<(), Status> {
        self.first = None;
        if !self.request_ended {
            drain_request(self.channel, self.rx).map_err(channel_status)?;
            self.request_ended = true;
        }
        Ok(())
    }
}

fn single_request(rx: &[u8], first: Option<usize>) -> Result<&[u8], Status> {
    let len = first.unwrap_or(0);
    parse_frame_exact(&rx[..len], len)
        .map(|frame| frame.payload)
        .map_err(|e| Status::format(e.status_code(), format_args!("{e}")))
}

fn channel_status(e: ChannelError) -> Status {
    match e {
        ChannelError::Refused(p) => Status::format(p.status_code(), format_args!("{p}")),
        other => Status::format(StatusCode::Unavailable, format_args!("{other}")),
    }
}

/// Sends the one response of a unary or client-stream call.
pub struct Reply<'c> {
    channel: &'c mut dyn Channel,
    tx: &'c mut [u8],
    stream_id: u32,
}

impl Reply<'_> {
    /// Sends `response` in one frame that ends the call.
    pub fn send<T: Encode + ?Sized>(self, response: &T) -> Result<(), Status> {
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::END_STREAM,
            self.stream_id,
            response,
            None,
        )
    }

    /// Sends `response`, then the response metadata in a `TRAILER` frame that ends the call.
    pub fn send_with_metadata<T: Encode + ?Sized>(
        self,
        response: &T,
        metadata: &[(&str, &str)],
    ) -> Result<(), Status> {
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::NONE,
            self.stream_id,
            response,
            None,
        )?;
        send_trailer(self.channel, self.tx, self.stream_id, metadata)
    }
}

fn send_trailer(
    channel: &mut dyn Channel,
    tx: &mut [u8],
    stream_id: u32,
    metadata: &[(&str, &str)],
) -> Result<(), Status> {
    let trailer = TrailingMetadata {
        metadata: Some(Map::from_slice(metadata)),
    };
    send_frame(
        channel,
        tx,
        FrameFlags::END_STREAM | FrameFlags::TRAILER,
        stream_id,
        &trailer,
        None,
    )
}

/// The response side of a server-stream call: each [`send`](Self::send) writes one frame at
/// once (nothing is buffered), after checking that the call is still wanted.
pub struct ServerStream<'c> {
    ctx: CallContext<'c>,
    channel: &'c mut dyn Channel,
    tx: &'c mut [u8],
}

impl<'c> ServerStream<'c> {
    /// The call's context.
    pub fn context(&self) -> &CallContext<'c> {
        &self.ctx
    }

    /// Whether the call is over for the client: the cancel flag is raised (by an interrupt,
    /// or because the client sent something: a cancelling `END_STREAM` or its next call) or
    /// the deadline passed. `Err` with `CANCELLED` or `DEADLINE_EXCEEDED` then.
    pub fn check(&mut self) -> Result<(), Status> {
        if self.channel.has_incoming() {
            self.ctx.cancel_flag().cancel();
        }
        if self.ctx.cancel_flag().is_cancelled() {
            return Err(Status::new(StatusCode::Cancelled, "the call was cancelled"));
        }
        if self.ctx.deadline_passed() {
            return Err(Status::new(
                StatusCode::DeadlineExceeded,
                "the deadline passed during the stream",
            ));
        }
        Ok(())
    }

    /// Sends one response.
    pub fn send<T: Encode + ?Sized>(&mut self, item: &T) -> Result<(), Status> {
        self.check()?;
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::NONE,
            self.ctx.stream_id(),
            item,
            None,
        )
    }

    /// Sends one response with its cursor: the position a client that has processed it
    /// resumes from ([`CallContext::cursor`] on the next call).
    pub fn send_with_cursor<T: Encode + ?Sized>(
        &mut self,
        item: &T,
        cursor: u64,
    ) -> Result<(), Status> {
        self.check()?;
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::NONE,
            self.ctx.stream_id(),
            item,
            Some(cursor),
        )
    }

    /// Ends the stream (an empty `END_STREAM` frame).
    pub fn finish(self) -> Result<(), Status> {
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::END_STREAM,
            self.ctx.stream_id(),
            &Encoded(&[]),
            None,
        )
    }

    /// Ends the stream with response metadata (a `TRAILER` frame).
    pub fn finish_with_metadata(self, metadata: &[(&str, &str)]) -> Result<(), Status> {
        send_trailer(self.channel, self.tx, self.ctx.stream_id(), metadata)
    }
}

/// The requests of a client-stream call, received one frame at a time (the client waits for
/// each frame to be taken: nothing piles up).
pub struct RequestStream<'c> {
    inner: Call<'c>,
}

impl<'c> RequestStream<'c> {
    /// The next request, or `None` when the client has sent its last one.
    #[allow(clippy::should_implement_trait)]
    pub fn next<'r, T: Decode<'r>>(&'r mut self) -> Option<Result<T, Status>> {
        let payload = match self.inner.next_payload()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        Some(decode_request(payload))
    }

    /// The [`Reply`] for the response. Requests the handler did not read are received and
    /// dropped first, so the connection is ready for the next call.
    pub fn into_reply(mut self) -> Result<Reply<'c>, Status> {
        self.inner.finish_request()?;
        let stream_id = self.inner.ctx.stream_id();
        Ok(Reply {
            channel: self.inner.channel,
            tx: self.inner.tx,
            stream_id,
        })
    }
}

/// Both directions of a duplex call.
pub struct DuplexStream<'c> {
    inner: Call<'c>,
}

/// The sending half of a [`DuplexStream`], handed out with each request.
pub struct DuplexSender<'s> {
    channel: &'s mut dyn Channel,
    tx: &'s mut [u8],
    stream_id: u32,
}

impl DuplexSender<'_> {
    /// Sends one response.
    pub fn send<T: Encode + ?Sized>(&mut self, item: &T) -> Result<(), Status> {
        send_frame(
            self.channel,
            self.tx,
            FrameFlags::NONE,
            self.stream_id,
            item,
            None,
        )
    }
}

impl<'c> DuplexStream<'c> {
    /// The next request, with a sender for responses (the request borrows the receive
    /// buffer, the sender the transmit buffer, so a response can be built from the request);
    /// `None` when the client has finished sending.
    #[allow(clippy::should_implement_trait)]
    pub fn next<'r, T: Decode<'r>>(&'r mut self) -> Option<Result<(T, DuplexSender<'r>), Status>> {
        let Call {
            ctx,
            channel,
            rx,
            tx,
            first,
            request_ended,
        } = &mut self.inner;
        if ctx.cancel_flag().is_cancelled() {
            return Some(Err(Status::new(
                StatusCode::Cancelled,
                "the call was cancelled",
            )));
        }
        let call = CallParts {
            channel: &mut **channel,
            rx,
            first,
            request_ended,
        };
        let payload = match call.next_payload()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let request = match decode_request(payload) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok((
            request,
            DuplexSender {
                channel: &mut **channel,
                tx,
                stream_id: ctx.stream_id(),
            },
        )))
    }

    /// Sends one response outside of a request's turn.
    pub fn send<T: Encode + ?Sized>(&mut self, item: &T) -> Result<(), Status> {
        let stream_id = self.inner.ctx.stream_id();
        send_frame(
            self.inner.channel,
            self.inner.tx,
            FrameFlags::NONE,
            stream_id,
            item,
            None,
        )
    }

    /// Ends the response stream; requests not read are received and dropped first.
    pub fn finish(mut self) -> Result<(), Status> {
        self.inner.finish_request()?;
        let stream_id = self.inner.ctx.stream_id();
        send_frame(
            self.inner.channel,
            self.inner.tx,
            FrameFlags::END_STREAM,
            stream_id,
            &Encoded(&[]),
            None,
        )
    }
}

/// The receiving parts of a call, borrowed apart from its transmit buffer.
struct CallParts<'a, 'p> {
    channel: &'a mut dyn Channel,
    rx: &'p mut [u8],
    first: &'a mut Option<usize>,
    request_ended: &'a mut bool,
}

impl<'p> CallParts<'_, 'p> {
    fn next_payload(self) -> Option<Result<&'p [u8], Status>> {
        let len = match self.first.take() {
            Some(len) => len,
            None if *self.request_ended => return None,
            None => match self.channel.recv(Expect::Frame, self.rx) {
                Ok(n) => n,
                Err(e) => return Some(Err(channel_status(e))),
            },
        };
        let rx: &'p [u8] = self.rx;
        let frame = match parse_frame_exact(&rx[..len], len) {
            Ok(f) => f,
            Err(e) => return Some(Err(Status::format(e.status_code(), format_args!("{e}")))),
        };
        if frame
            .flags()
            .intersects(FrameFlags::ERROR.union(FrameFlags::TRAILER))
        {
            return Some(Err(Status::new(
                StatusCode::InvalidArgument,
                "a request frame cannot carry an error or trailer",
            )));
        }
        if frame.is_end() {
            *self.request_ended = true;
            if frame.payload.is_empty() {
                return None;
            }
        }
        Some(Ok(frame.payload))
    }
}

/// Encodes the call header of a call (used by clients).
pub(crate) fn call_header<'m>(
    method_id: u32,
    options: &super::client::CallOptions<'m>,
) -> CallHeader<'m> {
    CallHeader {
        method_id: Some(method_id),
        deadline: options.deadline,
        metadata: options.metadata.map(Map::from_slice),
        cursor: options.cursor,
    }
}

#[cfg(test)]
mod tests;
