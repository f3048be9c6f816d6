//! The transport API against a hand-written service: admission, the shapes of responses,
//! request frames from a carrier, cancellation by dropping, and the in-process client.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use bebop_runtime::rpc::{DiscoveryResponse, FrameFlags, ServiceInfo};
use bebop_runtime::{Array, Decode, MethodInfo, MethodKind};

use super::*;
use crate::server::{BoxFuture, ServerCall, Service};
use crate::{CallOptions, Client, Context, ResponseSink, StatusCode};

const SHOUT: MethodInfo = MethodInfo::new("Text", "Shout", MethodKind::Unary);
const COUNT: MethodInfo = MethodInfo::new("Text", "Count", MethodKind::ServerStream);
const JOIN: MethodInfo = MethodInfo::new("Text", "Join", MethodKind::ClientStream);
const METHODS: &[MethodInfo] = &[SHOUT, COUNT, JOIN];

/// Upper-cases a string (`meta` sets response metadata, `fail` fails); counts to a number
/// (`0` waits until cancelled); joins strings.
#[derive(Default)]
struct Text {
    cancelled: Arc<AtomicUsize>,
}

struct OnDrop(Arc<AtomicUsize>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Service for Text {
    fn info(&self) -> ServiceInfo<'static> {
        ServiceInfo {
            name: "Text",
            methods: Array::from_slice(&[]),
        }
    }

    fn methods(&self) -> &'static [MethodInfo] {
        METHODS
    }

    fn call(&self, method: MethodInfo, call: ServerCall) -> BoxFuture<'static, ()> {
        let cancelled = self.cancelled.clone();
        match method.id {
            id if id == SHOUT.id => call.unary(|ctx: Arc<Context>, text: String| async move {
                match text.as_str() {
                    "fail" => Err(Status::permission_denied("no shouting")),
                    "meta" => {
                        ctx.set_response_metadata("volume", "11");
                        Ok(text.to_uppercase())
                    }
                    _ => Ok(text.to_uppercase()),
                }
            }),
            id if id == COUNT.id => call.server_stream(
                move |_ctx, n: u32, mut sink: ResponseSink<u32>| async move {
                    if n == 0 {
                        let _guard = OnDrop(cancelled);
                        std::future::pending::<()>().await;
                    }
                    for i in 1..=n {
                        sink.send_with_cursor(&i, u64::from(i)).await?;
                    }
                    Ok(())
                },
            ),
            id if id == JOIN.id => {
                call.client_stream(|_ctx, mut parts: crate::Requests<String>| async move {
                    let mut all = String::new();
                    while let Some(p) = parts.message().await? {
                        all.push_str(&p);
                    }
                    Ok(all)
                })
            }
            _ => Box::pin(call.reject(Status::not_found("no such method"))),
        }
    }
}

fn server() -> (Server, Arc<AtomicUsize>) {
    let text = Text::default();
    let cancelled = text.cancelled.clone();
    (Server::builder().add_service(text).build(), cancelled)
}

fn peer() -> Arc<Peer> {
    Arc::new(Peer::new(None, None))
}

fn encode<T: bebop_runtime::Encode + ?Sized>(value: &T) -> Vec<u8> {
    bebop_runtime::encode_to_vec(value).unwrap()
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("the test timed out")
}

#[tokio::test]
async fn refusals_come_before_anything_runs() {
    let (server, _) = server();
    let refuse = |start: CallStart| server.start_call(start).err().map(|s| s.code());
    assert_eq!(
        refuse(CallStart::new(0x0bad_0bad, peer())),
        Some(StatusCode::NotFound)
    );
    assert_eq!(
        refuse(CallStart::new(3, peer())),
        Some(StatusCode::Unimplemented)
    );
    let past = SystemTime::now() - Duration::from_secs(1);
    assert_eq!(
        refuse(CallStart::new(SHOUT.id, peer()).deadline(Some(past))),
        Some(StatusCode::DeadlineExceeded)
    );
    assert_eq!(
        refuse(CallStart::new(SHOUT.id, peer()).invalid_deadline()),
        Some(StatusCode::InvalidArgument)
    );
    let big: Metadata = [("k", "v".repeat(10 << 10))].into_iter().collect();
    assert_eq!(
        refuse(CallStart::new(SHOUT.id, peer()).metadata(big)),
        Some(StatusCode::ResourceExhausted)
    );
    assert_eq!(server.method(SHOUT.id), Some(SHOUT));
    assert_eq!(server.method(0).map(|m| m.name), Some("discovery"));
    assert_eq!(server.method(0x0bad_0bad), None);
    server.shutdown(Duration::from_secs(1)).await;
    assert_eq!(
        refuse(CallStart::new(SHOUT.id, peer())),
        Some(StatusCode::Unavailable)
    );
}

#[tokio::test]
async fn unary_streams_and_errors_as_frames() {
    let (server, _) = server();
    within(async {
        // A unary answer without metadata is one END_STREAM message.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(SHOUT.id, peer()))
            .unwrap()
            .into_parts();
        tx.send(encode("hi"), true).await.unwrap();
        let f = rx.next().await.unwrap();
        assert_eq!((f.kind(), f.is_end()), (ResponseKind::Message, true));
        assert_eq!(String::from_bytes(f.payload()).unwrap(), "HI");
        assert_eq!(f.as_bytes()[..9], [7, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert!(rx.next().await.is_none());
        assert!(rx.is_ended());

        // With metadata: the message, then a trailer.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(SHOUT.id, peer()))
            .unwrap()
            .into_parts();
        tx.send(encode("meta"), true).await.unwrap();
        let f = rx.next().await.unwrap();
        assert_eq!((f.kind(), f.is_end()), (ResponseKind::Message, false));
        let t = rx.next().await.unwrap();
        assert_eq!(t.kind(), ResponseKind::Trailer);
        assert_eq!(t.trailer_metadata().unwrap().get("volume"), Some("11"));

        // A failure is one ERROR frame.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(SHOUT.id, peer()))
            .unwrap()
            .into_parts();
        tx.send(encode("fail"), true).await.unwrap();
        let e = rx.next().await.unwrap();
        assert_eq!(e.kind(), ResponseKind::Error);
        let status = e.status().unwrap();
        assert_eq!(
            (status.code(), status.detail()),
            (StatusCode::PermissionDenied, "no shouting")
        );

        // A server stream: messages with cursors, then an empty END_STREAM.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(COUNT.id, peer()))
            .unwrap()
            .into_parts();
        tx.send(encode(&3u32), true).await.unwrap();
        for i in 1..=3u32 {
            let f = rx.next().await.unwrap();
            assert_eq!(f.kind(), ResponseKind::Message);
            assert_eq!(u32::from_bytes(f.payload()).unwrap(), i);
            assert_eq!(f.cursor(), Some(u64::from(i)));
            assert!(f.flags().contains(FrameFlags::CURSOR));
        }
        assert_eq!(rx.next().await.unwrap().kind(), ResponseKind::End);
        assert!(rx.next().await.is_none());

        // Discovery lists the service.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(0, peer()))
            .unwrap()
            .into_parts();
        tx.send(Vec::new(), true).await.unwrap();
        let f = rx.next().await.unwrap();
        let list = DiscoveryResponse::from_bytes(f.payload()).unwrap();
        assert_eq!(list.services.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn request_frames_from_a_carrier() {
    let (server, _) = server();
    within(async {
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(JOIN.id, peer()))
            .unwrap()
            .into_parts();
        tx.send_frame(FrameFlags::NONE, encode("a"), None)
            .await
            .unwrap();
        tx.send_frame(FrameFlags::NONE, encode("b"), None)
            .await
            .unwrap();
        tx.send_frame(FrameFlags::END_STREAM, Vec::new(), None)
            .await
            .unwrap();
        assert!(tx.send(encode("late"), true).await.is_err());
        let f = rx.next().await.unwrap();
        assert_eq!(String::from_bytes(f.payload()).unwrap(), "ab");

        // A client sends no trailers, and ERROR without END_STREAM is no valid frame.
        let (mut tx, _rx) = server
            .start_call(CallStart::new(JOIN.id, peer()))
            .unwrap()
            .into_parts();
        let trailer = FrameFlags::END_STREAM | FrameFlags::TRAILER;
        let e = tx.send_frame(trailer, Vec::new(), None).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        let e = tx
            .send_frame(FrameFlags::ERROR, Vec::new(), None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument);

        // END_STREAM | ERROR from the client cancels the call: no answer follows.
        let (mut tx, mut rx) = server
            .start_call(CallStart::new(JOIN.id, peer()))
            .unwrap()
            .into_parts();
        tx.send_frame(FrameFlags::END_STREAM | FrameFlags::ERROR, Vec::new(), None)
            .await
            .unwrap();
        assert!(tx.is_closed());
        assert!(rx.next().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn dropping_the_response_stream_cancels_the_call() {
    let (server, cancelled) = server();
    within(async {
        let (mut tx, rx) = server
            .start_call(CallStart::new(COUNT.id, peer()))
            .unwrap()
            .into_parts();
        tx.send(encode(&0u32), true).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(rx);
        while cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Shutdown finds nothing left running.
        server.shutdown(Duration::from_secs(5)).await;
    })
    .await;
}

#[tokio::test]
async fn the_in_process_client_runs_every_kind() {
    let (server, cancelled) = server();
    let client = Client::over(InProcess::new(server.clone()));
    client.describe(METHODS);
    within(async {
        let r = client
            .unary::<str, String>(SHOUT.id, "meta", CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.get_ref(), "META");
        assert_eq!(r.metadata().get("volume"), Some("11"));
        let e = client
            .unary::<str, String>(SHOUT.id, "fail", CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied);

        let mut s = client
            .server_stream::<u32, u32>(COUNT.id, &4, CallOptions::new())
            .await
            .unwrap();
        let mut got = Vec::new();
        while let Some(i) = s.message().await.unwrap() {
            got.push(i);
        }
        assert_eq!(got, [1, 2, 3, 4]);
        assert_eq!(s.cursor(), 4);

        let parts = futures_util::stream::iter(["x", "y", "z"].map(String::from));
        let joined = client
            .client_stream::<String, String, _>(JOIN.id, parts, CallOptions::new())
            .await
            .unwrap();
        assert_eq!(joined.into_inner(), "xyz");

        // Dropping a stream cancels its handler.
        let s = client
            .server_stream::<u32, u32>(COUNT.id, &0, CallOptions::new())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(s);
        while cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }

        // The client's deadline holds over any carrier.
        let e = client
            .server_stream::<u32, u32>(
                COUNT.id,
                &0,
                CallOptions::new().timeout(Duration::from_millis(50)),
            )
            .await
            .unwrap()
            .message()
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::DeadlineExceeded);
        assert!(!client.is_closed());
    })
    .await;
    server.shutdown(Duration::from_secs(5)).await;
}
