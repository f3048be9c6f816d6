//! The blocking client: [`Client`] sends a call header and request frames over a
//! [`Channel`] and reads the response frames into a buffer it owns; responses are views
//! borrowed from that buffer. No heap: a firmware can call a host as well as serve it.

use core::fmt;

use super::channel::{Channel, ChannelError, Expect};
use super::frame::{
    Encoded, Frame, ProtocolError, encode_call_header, encode_frame, parse_frame_exact,
};
use super::status::Status;
use super::types::{FrameFlags, RpcError};
use crate::{Decode, Encode, Error, Timestamp};

/// What a call carries besides its request: an absolute deadline, request metadata, and the
/// cursor a server stream resumes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallOptions<'m> {
    /// When the call must be finished.
    pub deadline: Option<Timestamp>,
    /// Request metadata (lowercase keys).
    pub metadata: Option<&'m [(&'m str, &'m str)]>,
    /// The last cursor processed: a server stream resumes after it.
    pub cursor: Option<u64>,
}

impl<'m> CallOptions<'m> {
    /// No deadline, no metadata, no cursor.
    pub const fn new() -> Self {
        CallOptions {
            deadline: None,
            metadata: None,
            cursor: None,
        }
    }

    /// With a deadline.
    pub const fn deadline(mut self, deadline: Timestamp) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// With request metadata.
    pub const fn metadata(mut self, metadata: &'m [(&'m str, &'m str)]) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Resuming a stream after `cursor`.
    pub const fn cursor(mut self, cursor: u64) -> Self {
        self.cursor = Some(cursor);
        self
    }
}

/// Why a call failed on the client's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientError {
    /// The server answered with an error.
    Status(Status),
    /// The transport failed or closed.
    Channel(ChannelError),
    /// The server sent something the protocol does not allow here.
    Protocol(&'static str),
    /// A response (or error) payload does not decode.
    Decode(Error),
    /// The request does not fit the transmit buffer, or does not encode.
    Encode(Error),
}

impl ClientError {
    /// The status, when the server sent one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            ClientError::Status(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Status(s) => write!(f, "server error {s}"),
            ClientError::Channel(e) => write!(f, "transport: {e}"),
            ClientError::Protocol(what) => write!(f, "protocol violation: {what}"),
            ClientError::Decode(e) => write!(f, "response does not decode: {e}"),
            ClientError::Encode(e) => write!(f, "request does not encode: {e}"),
        }
    }
}

impl core::error::Error for ClientError {}

#[cfg(feature = "defmt")]
impl defmt::Format for ClientError {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self {
            ClientError::Status(s) => defmt::write!(f, "server error {}", s),
            ClientError::Channel(e) => defmt::write!(f, "transport: {}", e),
            ClientError::Protocol(w) => defmt::write!(f, "protocol violation: {=str}", w),
            ClientError::Decode(e) => defmt::write!(f, "response does not decode: {}", e),
            ClientError::Encode(e) => defmt::write!(f, "request does not encode: {}", e),
        }
    }
}

impl From<ChannelError> for ClientError {
    fn from(e: ChannelError) -> Self {
        ClientError::Channel(e)
    }
}

/// A value a server stream delivered, with its cursor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamItem<T> {
    /// The response.
    pub value: T,
    /// Its cursor, when the server attached one: pass the last one processed as
    /// [`CallOptions::cursor`] to resume.
    pub cursor: Option<u64>,
}

/// A blocking RPC client over a [`Channel`], with a receive and a transmit buffer (arrays on
/// a microcontroller, `Vec`s on a host). Each call gets its own odd stream id, so frames of
/// an abandoned call that arrive late are told apart and dropped.
pub struct Client<C, B> {
    channel: C,
    rx: B,
    tx: B,
    next_stream: u32,
}

impl<C: Channel, B: AsMut<[u8]>> Client<C, B> {
    /// A client over `channel`: `rx` bounds the largest response frame, `tx` the largest
    /// request frame or call header.
    pub fn new(channel: C, rx: B, tx: B) -> Self {
        Client {
            channel,
            rx,
            tx,
            next_stream: 1,
        }
    }

    /// The channel.
    pub fn channel_mut(&mut self) -> &mut C {
        &mut self.channel
    }

    /// The channel, back.
    pub fn into_channel(self) -> C {
        self.channel
    }

    fn start(&mut self, method_id: u32, options: &CallOptions<'_>) -> Result<u32, ClientError> {
        let stream_id = self.next_stream;
        self.next_stream = self.next_stream.wrapping_add(2) | 1;
        let header = super::server::call_header(method_id, options);
        let tx = self.tx.as_mut();
        let n = encode_call_header(tx, &header).map_err(ClientError::Encode)?;
        self.channel.send(&tx[..n])?;
        Ok(stream_id)
    }

    fn send_frame<T: Encode + ?Sized>(
        &mut self,
        flags: FrameFlags,
        stream_id: u32,
        payload: &T,
    ) -> Result<(), ClientError> {
        let tx = self.tx.as_mut();
        let n = encode_frame(tx, flags, stream_id, payload, None).map_err(ClientError::Encode)?;
        self.channel.send(&tx[..n])?;
        Ok(())
    }

    /// A unary call: sends `request`, returns the response (a view into the receive
    /// buffer). Trailing metadata is read and dropped.
    pub fn unary<'s, T: Decode<'s>, R: Encode + ?Sized>(
        &'s mut self,
        method_id: u32,
        request: &R,
        options: &CallOptions<'_>,
    ) -> Result<T, ClientError> {
        let stream_id = self.start(method_id, options)?;
        self.send_frame(FrameFlags::END_STREAM, stream_id, request)?;
        let len = recv_frame(&mut self.channel, self.rx.as_mut(), stream_id)?;
        {
            let frame = parse(&self.rx.as_mut()[..len])?;
            check_error(&frame)?;
            if frame.flags().contains(FrameFlags::TRAILER) {
                return Err(ClientError::Protocol("trailer before the response"));
            }
            if !frame.is_end() {
                // The response; its trailer follows. Take the trailer into the transmit
                // buffer, which is free now, so the response stays where it is.
                let m = recv_frame(&mut self.channel, self.tx.as_mut(), stream_id)?;
                let trailer = parse(&self.tx.as_mut()[..m])?;
                check_error(&trailer)?;
                if !trailer.is_end() {
                    return Err(ClientError::Protocol(
                        "more than one response to a unary call",
                    ));
                }
            }
        }
        let rx: &'s [u8] = self.rx.as_mut();
        let frame = parse(&rx[..len])?;
        frame.decode().map_err(ClientError::Decode)
    }

    /// A server-stream call: sends `request`; the responses come from
    /// [`ServerStreamCall::next`].
    pub fn server_stream<R: Encode + ?Sized>(
        &mut self,
        method_id: u32,
        request: &R,
        options: &CallOptions<'_>,
    ) -> Result<ServerStreamCall<'_, C, B>, ClientError> {
        let stream_id = self.start(method_id, options)?;
        self.send_frame(FrameFlags::END_STREAM, stream_id, request)?;
        Ok(ServerStreamCall {
            client: self,
            stream_id,
            done: false,
        })
    }

    /// A client-stream call: send requests with [`ClientStreamCall::send`], then
    /// [`finish`](ClientStreamCall::finish) for the response.
    pub fn client_stream(
        &mut self,
        method_id: u32,
        options: &CallOptions<'_>,
    ) -> Result<ClientStreamCall<'_, C, B>, ClientError> {
        let stream_id = self.start(method_id, options)?;
        Ok(ClientStreamCall {
            client: self,
            stream_id,
        })
    }

    /// A duplex call: [`send`](DuplexCall::send) and [`next`](DuplexCall::next) in any
    /// order, then [`close`](DuplexCall::close).
    pub fn duplex(
        &mut self,
        method_id: u32,
        options: &CallOptions<'_>,
    ) -> Result<DuplexCall<'_, C, B>, ClientError> {
        let stream_id = self.start(method_id, options)?;
        Ok(DuplexCall {
            client: self,
            stream_id,
            sent_end: false,
            done: false,
        })
    }
}

/// Receives the next frame of `stream_id` into `buf`, dropping frames of other streams (late
/// frames of an abandoned call) and packets damaged in transit (on a packet link nothing in
/// them says whose they were; if one was this call's, the channel's timeout ends the wait).
fn recv_frame<C: Channel>(
    channel: &mut C,
    buf: &mut [u8],
    stream_id: u32,
) -> Result<usize, ClientError> {
    loop {
        let n = match channel.recv(Expect::Frame, buf) {
            Ok(n) => n,
            Err(ChannelError::Damaged) => continue,
            Err(e) => return Err(e.into()),
        };
        match parse_frame_exact(&buf[..n], n) {
            Ok(f) if f.stream_id() == stream_id => return Ok(n),
            Ok(_) => continue,
            Err(e) => return Err(protocol(e)),
        }
    }
}

fn protocol(_: ProtocolError) -> ClientError {
    ClientError::Protocol("malformed frame")
}

fn parse(bytes: &[u8]) -> Result<Frame<'_>, ClientError> {
    parse_frame_exact(bytes, bytes.len()).map_err(protocol)
}

/// Turns an `ERROR` frame into the status it carries.
fn check_error(frame: &Frame<'_>) -> Result<(), ClientError> {
    if !frame.flags().contains(FrameFlags::ERROR) {
        return Ok(());
    }
    let error: RpcError<'_> = frame.decode().map_err(ClientError::Decode)?;
    Err(ClientError::Status(Status::from_rpc_error(&error)))
}

/// The responses of a server-stream call.
pub struct ServerStreamCall<'c, C, B> {
    client: &'c mut Client<C, B>,
    stream_id: u32,
    done: bool,
}

impl<C: Channel, B: AsMut<[u8]>> ServerStreamCall<'_, C, B> {
    /// The next response, borrowed from the receive buffer; `None` once the server ended the
    /// stream. An error ends the stream too.
    #[allow(clippy::should_implement_trait)]
    pub fn next<'r, T: Decode<'r>>(&'r mut self) -> Option<Result<StreamItem<T>, ClientError>> {
        if self.done {
            return None;
        }
        let client = &mut *self.client;
        let n = match recv_frame(&mut client.channel, client.rx.as_mut(), self.stream_id) {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let rx: &'r [u8] = client.rx.as_mut();
        let frame = match parse(&rx[..n]) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        if frame.is_end() {
            self.done = true;
            if let Err(e) = check_error(&frame) {
                return Some(Err(e));
            }
            if frame.flags().contains(FrameFlags::TRAILER) || frame.payload.is_empty() {
                return None;
            }
        }
        Some(
            frame
                .decode()
                .map(|value| StreamItem {
                    value,
                    cursor: frame.cursor,
                })
                .map_err(ClientError::Decode),
        )
    }

    /// The channel under the call (to watch or manage the link while a stream runs).
    pub fn channel_mut(&mut self) -> &mut C {
        &mut self.client.channel
    }

    /// Whether the server ended the stream.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Tells the server to stop (an empty `END_STREAM` frame on the call's stream; on a byte
    /// stream transport, closing the connection does the same). Frames still in flight are
    /// dropped by the next call.
    pub fn cancel(self) -> Result<(), ClientError> {
        if self.done {
            return Ok(());
        }
        self.client
            .send_frame(FrameFlags::END_STREAM, self.stream_id, &Encoded(&[]))
    }
}

/// The requests of a client-stream call.
pub struct ClientStreamCall<'c, C, B> {
    client: &'c mut Client<C, B>,
    stream_id: u32,
}

impl<'c, C: Channel, B: AsMut<[u8]>> ClientStreamCall<'c, C, B> {
    /// Sends one request.
    pub fn send<R: Encode + ?Sized>(&mut self, request: &R) -> Result<(), ClientError> {
        self.client
            .send_frame(FrameFlags::NONE, self.stream_id, request)
    }

    /// Ends the requests and returns the response.
    pub fn finish<T: Decode<'c>>(self) -> Result<T, ClientError> {
        let client = self.client;
        client.send_frame(FrameFlags::END_STREAM, self.stream_id, &Encoded(&[]))?;
        let n = recv_frame(&mut client.channel, client.rx.as_mut(), self.stream_id)?;
        {
            let frame = parse(&client.rx.as_mut()[..n])?;
            check_error(&frame)?;
            if !frame.is_end() {
                let m = recv_frame(&mut client.channel, client.tx.as_mut(), self.stream_id)?;
                check_error(&parse(&client.tx.as_mut()[..m])?)?;
            }
        }
        let rx: &'c [u8] = client.rx.as_mut();
        parse(&rx[..n])?.decode().map_err(ClientError::Decode)
    }
}

/// Both directions of a duplex call.
pub struct DuplexCall<'c, C, B> {
    client: &'c mut Client<C, B>,
    stream_id: u32,
    sent_end: bool,
    done: bool,
}

impl<C: Channel, B: AsMut<[u8]>> DuplexCall<'_, C, B> {
    /// Sends one request.
    pub fn send<R: Encode + ?Sized>(&mut self, request: &R) -> Result<(), ClientError> {
        if self.sent_end {
            return Err(ClientError::Protocol("requests already closed"));
        }
        self.client
            .send_frame(FrameFlags::NONE, self.stream_id, request)
    }

    /// Says that no more requests follow (responses may still come).
    pub fn close(&mut self) -> Result<(), ClientError> {
        if !self.sent_end {
            self.sent_end = true;
            self.client
                .send_frame(FrameFlags::END_STREAM, self.stream_id, &Encoded(&[]))?;
        }
        Ok(())
    }

    /// The next response; `None` once the server ended its side.
    #[allow(clippy::should_implement_trait)]
    pub fn next<'r, T: Decode<'r>>(&'r mut self) -> Option<Result<T, ClientError>> {
        if self.done {
            return None;
        }
        let client = &mut *self.client;
        let n = match recv_frame(&mut client.channel, client.rx.as_mut(), self.stream_id) {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let rx: &'r [u8] = client.rx.as_mut();
        let frame = match parse(&rx[..n]) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        if frame.is_end() {
            self.done = true;
            if let Err(e) = check_error(&frame) {
                return Some(Err(e));
            }
            if frame.flags().contains(FrameFlags::TRAILER) || frame.payload.is_empty() {
                return None;
            }
        }
        Some(frame.decode().map_err(ClientError::Decode))
    }
}
