//! The body type of the server's responses and of the client's requests.

use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use http_body::{Frame, SizeHint};

type FrameStream<E> = Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, E>> + Send>>;

enum Kind<E> {
    Full(Option<Bytes>),
    Stream(FrameStream<E>),
}

/// A body that is either whole (a unary call's bare payload or `RpcError`, sent with a
/// `content-length`) or produced frame by frame as a call's responses come (each Bebop
/// frame a data frame of its own, flushed as it is produced, and HTTP/2 trailers last).
pub struct Body<E = Infallible> {
    kind: Kind<E>,
}

/// The body of the server's responses.
pub type ResponseBody = Body<Infallible>;

impl<E> Body<E> {
    /// A whole body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Body {
            kind: Kind::Full((!bytes.is_empty()).then_some(bytes)),
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        Body {
            kind: Kind::Full(None),
        }
    }

    pub(crate) fn stream(
        stream: impl Stream<Item = Result<Frame<Bytes>, E>> + Send + 'static,
    ) -> Self {
        Body {
            kind: Kind::Stream(Box::pin(stream)),
        }
    }
}

impl<E> http_body::Body for Body<E> {
    type Data = Bytes;
    type Error = E;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, E>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(s) => s.as_mut().poll_next(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

impl<E> fmt::Debug for Body<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Full(b) => f
                .debug_struct("Body")
                .field("len", &b.as_ref().map_or(0, |b| b.len()))
                .finish(),
            Kind::Stream(_) => f.debug_struct("Body").field("streaming", &true).finish(),
        }
    }
}
