//! Reading a streaming body ahead while its frames wait to be handed on.
//!
//! HTTP/2 (the `h2` crate under hyper) counts the small DATA frames a peer sends that the
//! application has not read yet, and closes the whole connection with `ENHANCE_YOUR_CALM`
//! (`too_many_data_frames`) once they are over a budget of about two thousand frames. A
//! streaming call whose consumer is briefly slower than its producer (a busy handler, a
//! caller that reads its responses slowly) stops reading its body while it waits, and a
//! peer that sends one small Bebop frame per DATA frame then loses every call of its
//! connection, although flow control had everything in hand.
//!
//! [`ReadAhead`] keeps reading while the consumer waits: the data goes into one buffer of at
//! most a fixed number of bytes (so memory stays bounded whatever the framing), which the
//! next read hands out first. Only when that buffer is full does the body wait in `h2`.

use std::future::Future;

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame};
use http_body_util::BodyExt;

/// The HTTP/2 connection window of our servers and clients (hyper's default is 1 MiB). `h2`
/// sets its small-DATA-frame budget to half the connection window, so 8 MiB lets about
/// 17,000 small frames wait unread on a connection (one stream's 1 MiB window of the
/// smallest Bebop frames is about 15,000 less what is read ahead) instead of about 2,000;
/// it also bounds what a connection buffers for its calls.
pub(crate) const HTTP2_CONNECTION_WINDOW: u32 = 8 << 20;

/// The most bytes read ahead for one streaming body (per call: a connection with
/// `max_concurrent_calls` slow calls holds at most that many times this).
pub(crate) const READ_AHEAD: usize = 64 << 10;

/// What the body gives next: a frame, its failure, or its end.
type Next<E> = Option<Result<Frame<Bytes>, E>>;

/// A body with the data read ahead of its consumer (see the module documentation).
pub(crate) struct ReadAhead<B: Body> {
    body: B,
    /// Data read ahead, in order.
    ahead: BytesMut,
    /// The first thing read ahead that is not data (trailers, a failure, the end): nothing is
    /// read past it, and it comes after `ahead`.
    last: Option<Next<B::Error>>,
    limit: usize,
}

impl<B> ReadAhead<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    /// Reads `body` ahead by at most `limit` bytes.
    pub(crate) fn new(body: B, limit: usize) -> Self {
        ReadAhead {
            body,
            ahead: BytesMut::new(),
            last: None,
            limit,
        }
    }

    /// The next frame: what was read ahead (all of its data as one frame), else the body's
    /// next frame.
    pub(crate) async fn frame(&mut self) -> Next<B::Error> {
        if !self.ahead.is_empty() {
            return Some(Ok(Frame::data(self.ahead.split().freeze())));
        }
        if let Some(last) = self.last.take() {
            return last;
        }
        self.body.frame().await
    }

    /// Runs `work` to its end, reading the body ahead meanwhile (until `limit` bytes wait, or
    /// something other than data arrives).
    pub(crate) async fn during<F: Future>(&mut self, work: F) -> F::Output {
        let mut work = std::pin::pin!(work);
        loop {
            if self.last.is_some() || self.ahead.len() >= self.limit {
                return work.await;
            }
            tokio::select! {
                biased;
                out = &mut work => return out,
                next = self.body.frame() => match next {
                    Some(Ok(frame)) if frame.is_data() => {
                        if let Ok(data) = frame.into_data() {
                            self.ahead.extend_from_slice(&data);
                        }
                    }
                    other => self.last = Some(other),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body of the given frames, then its end; counts the polls that took a frame.
    struct Frames {
        frames: std::collections::VecDeque<Frame<Bytes>>,
        taken: usize,
    }

    impl Frames {
        fn new(frames: impl IntoIterator<Item = Frame<Bytes>>) -> Self {
            Frames {
                frames: frames.into_iter().collect(),
                taken: 0,
            }
        }
    }

    impl Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            let this = self.get_mut();
            let next = this.frames.pop_front();
            if next.is_some() {
                this.taken += 1;
            }
            Poll::Ready(next.map(Ok))
        }
    }

    fn data(bytes: &'static [u8]) -> Frame<Bytes> {
        Frame::data(Bytes::from_static(bytes))
    }

    /// The next frame's data (it must be data).
    async fn next_data<B: Body<Data = Bytes, Error = Infallible> + Unpin>(
        body: &mut ReadAhead<B>,
    ) -> Bytes {
        match body.frame().await {
            Some(Ok(frame)) => frame.into_data().expect("a data frame"),
            other => panic!("expected data, got {other:?}"),
        }
    }

    /// A consumer busy for a moment: the body is read ahead meanwhile.
    async fn busy<B: Body<Data = Bytes> + Unpin>(body: &mut ReadAhead<B>) {
        body.during(tokio::time::sleep(std::time::Duration::from_millis(20)))
            .await;
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn reads_ahead_while_the_consumer_waits_and_keeps_the_order() {
        rt().block_on(async {
            let mut body = ReadAhead::new(
                Frames::new([data(b"ab"), data(b""), data(b"cd"), data(b"ef")]),
                1024,
            );
            assert_eq!(&next_data(&mut body).await[..], b"ab");
            busy(&mut body).await;
            assert_eq!(body.body.taken, 4);
            assert_eq!(&next_data(&mut body).await[..], b"cdef");
            assert!(body.frame().await.is_none());
        });
    }

    #[test]
    fn stops_at_the_limit_and_at_trailers() {
        rt().block_on(async {
            let mut trailers = http::HeaderMap::new();
            trailers.insert("x-done", http::HeaderValue::from_static("1"));
            let mut body = ReadAhead::new(
                Frames::new([
                    data(b"0123"),
                    data(b"4567"),
                    data(b"89"),
                    Frame::trailers(trailers),
                ]),
                6,
            );
            busy(&mut body).await;
            // 8 bytes read: the limit of 6 was reached after the second frame.
            assert_eq!(body.body.taken, 2);
            assert_eq!(&next_data(&mut body).await[..], b"01234567");
            busy(&mut body).await;
            assert_eq!(body.body.taken, 4);
            assert_eq!(&next_data(&mut body).await[..], b"89");
            let trailers = body
                .frame()
                .await
                .unwrap()
                .unwrap()
                .into_trailers()
                .unwrap();
            assert_eq!(trailers["x-done"], "1");
            assert!(body.frame().await.is_none());
        });
    }

    #[test]
    fn work_that_is_ready_reads_nothing() {
        rt().block_on(async {
            let mut body = ReadAhead::new(Frames::new([data(b"ab")]), 1024);
            assert_eq!(body.during(async { 7 }).await, 7);
            assert_eq!(body.body.taken, 0);
        });
    }
}
