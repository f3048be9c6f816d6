//! `bebop-rpc` against hostile peers: raw TCP and Unix sockets (loopback only) sending
//! garbage, oversized or truncated elements, forbidden stream ids and flags, too many or too
//! slow connections, or never reading. Each case must end at bounded cost with a clean
//! close (an `ERROR` frame first where the protocol has room for one), and the server must
//! serve a normal client afterwards.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use bebop_rpc::{CallOptions, Limits, Status, StatusCode};
use bebop_runtime::rpc::{
    CallHeader, Encoded, FrameFlags, RpcError, encode_call_header, encode_frame, frame_len,
};
use bebop_runtime::{Decode, Encode, Map};
use common::*;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

// ---------------------------------------------------------------------------------------
// Harness

/// Tests that measure the whole process (resident memory, live tasks) run alone: they take
/// this lock for writing, every other test for reading.
static EXCLUSIVE: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().unwrap_or_else(PoisonError::into_inner)
}

fn alone() -> RwLockWriteGuard<'static, ()> {
    EXCLUSIVE.write().unwrap_or_else(PoisonError::into_inner)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `test` once per transport against a fresh Lab server with `limits`, within a
/// minute, then checks that the server closed every connection and still serves.
fn each_transport<F, Fut>(limits: Limits, test: F)
where
    F: Fn(Transport, Arc<Running>, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let _lock = shared();
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let running = Arc::new(
                Running::start(transport, lab_server(&probe).limits(limits.clone())).await,
            );
            tokio::time::timeout(
                Duration::from_secs(60),
                test(transport, running.clone(), probe),
            )
            .await
            .unwrap_or_else(|_| panic!("{transport:?}: the test timed out"));
            still_serves(&running).await;
            Arc::into_inner(running)
                .expect("the test kept the server")
                .stop()
                .await;
        });
    }
}

/// Every connection is gone, and a normal client is served.
async fn still_serves(running: &Running) {
    eventually("the server closed every connection", || {
        running.server.connections() == 0
    })
    .await;
    let client = running.client().await;
    let reply = Running::lab(&client)
        .echo(
            &note("still serving"),
            CallOptions::new().timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(reply.into_inner().text, "still serving");
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

fn settings(count: u32, label: &str) -> Settings {
    Settings {
        interval_ms: Some(count),
        label: Some(label.into()),
    }
}

fn encode<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    bebop_runtime::encode_to_vec(value).unwrap()
}

/// A call header message (its length prefix included).
fn call_header(method_id: Option<u32>, metadata: &[(&str, &str)]) -> Vec<u8> {
    let header = CallHeader {
        method_id,
        metadata: (!metadata.is_empty()).then(|| Map::from_slice(metadata)),
        ..Default::default()
    };
    let mut out = vec![0; header.encoded_size()];
    let n = encode_call_header(&mut out, &header).unwrap();
    out.truncate(n);
    out
}

/// The call header that makes a connection multiplexed.
fn mux_preface() -> Vec<u8> {
    call_header(None, &[("bebop-mux", "1")])
}

/// A frame with raw `flags` (any combination, valid or not).
fn frame_bits(flags: u8, stream_id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = frame(FrameFlags::NONE, stream_id, payload);
    out[4] = flags;
    out
}

fn frame(flags: FrameFlags, stream_id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0; frame_len(payload.len(), false)];
    encode_frame(&mut out, flags, stream_id, &Encoded(payload), None).unwrap();
    out
}

/// The two frames opening and sending a unary Echo call on a multiplexed connection.
fn mux_echo(stream_id: u32, text: &str) -> Vec<u8> {
    let mut out = frame(
        FrameFlags::NONE,
        stream_id,
        &call_header(Some(svc::ECHO.id), &[]),
    );
    out.extend(frame(
        FrameFlags::END_STREAM,
        stream_id,
        &encode(&note(text)),
    ));
    out
}

/// The two frames opening and sending a Samples call on a multiplexed connection.
fn mux_samples(stream_id: u32, count: u32, label: &str) -> Vec<u8> {
    let mut out = frame(
        FrameFlags::NONE,
        stream_id,
        &call_header(Some(svc::SAMPLES.id), &[]),
    );
    out.extend(frame(
        FrameFlags::END_STREAM,
        stream_id,
        &encode(&settings(count, label)),
    ));
    out
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A frame the server sent.
#[derive(Debug)]
struct Got {
    flags: u8,
    stream_id: u32,
    payload: Vec<u8>,
    cursor: Option<u64>,
}

impl Got {
    /// The status of an `END_STREAM | ERROR` frame, whose payload must decode.
    fn status(&self) -> Status {
        assert_eq!(self.flags, 0x03, "not an error frame: {self:?}");
        RpcError::from_bytes(&self.payload)
            .unwrap_or_else(|e| panic!("undecodable RpcError ({e}): {self:?}"));
        Status::from_error_payload(&self.payload)
    }
}

/// A raw connection to the server: bytes out, frames in.
struct Raw {
    io: Box<dyn Io>,
    buf: Vec<u8>,
    reset: bool,
}

impl Raw {
    async fn connect(endpoint: &Endpoint) -> Raw {
        let io: Box<dyn Io> = match endpoint {
            Endpoint::Tcp(addr) => {
                let s = tokio::net::TcpStream::connect(addr).await.unwrap();
                s.set_nodelay(true).unwrap();
                Box::new(s)
            }
            Endpoint::Unix(path) => Box::new(tokio::net::UnixStream::connect(path).await.unwrap()),
            _ => unreachable!("raw bytes need a socket"),
        };
        Raw::over(io)
    }

    fn over(io: Box<dyn Io>) -> Raw {
        Raw {
            io,
            buf: Vec::new(),
            reset: false,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.io.write_all(bytes).await.unwrap();
        self.io.flush().await.unwrap();
    }

    /// Ends the client's side of the byte stream (the server sees EOF).
    async fn end(&mut self) {
        self.io.shutdown().await.unwrap();
    }

    /// The next frame, or `None` once the server closed the connection; panics if nothing
    /// comes within `within`, or if the connection ends inside a frame.
    async fn next_frame(&mut self, within: Duration) -> Option<Got> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match bebop_runtime::rpc::parse_frame(&self.buf, usize::MAX) {
                Ok((f, used)) => {
                    let got = Got {
                        flags: f.header.flags.bits(),
                        stream_id: f.header.stream_id,
                        payload: f.payload.to_vec(),
                        cursor: f.cursor,
                    };
                    self.buf.drain(..used);
                    return Some(got);
                }
                Err(bebop_runtime::rpc::ProtocolError::Incomplete { .. }) => {}
                Err(e) => panic!(
                    "the server sent a malformed frame ({e:?}): {:02x?}",
                    self.buf
                ),
            }
            if self.reset {
                assert!(
                    self.buf.is_empty(),
                    "the connection ended inside a frame: {:02x?}",
                    self.buf
                );
                return None;
            }
            let mut chunk = [0u8; 16 << 10];
            match tokio::time::timeout_at(deadline, self.io.read(&mut chunk)).await {
                Err(_) => panic!("nothing from the server within {within:?}"),
                Ok(Ok(0)) => self.reset = true,
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
                // A reset (the server closed with our bytes unread) ends the stream too.
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => self.reset = true,
                Ok(Err(e)) => panic!("reading from the server: {e}"),
            }
        }
    }

    /// Every frame until the server closes the connection, which must happen within
    /// `within`; returns them and how long the close took.
    async fn until_closed(&mut self, within: Duration) -> (Vec<Got>, Duration) {
        let started = Instant::now();
        let mut frames = Vec::new();
        while let Some(f) = self
            .next_frame(within.saturating_sub(started.elapsed()))
            .await
        {
            frames.push(f);
        }
        (frames, started.elapsed())
    }

    /// The server answers with exactly one error frame on `stream_id` with `code`, then
    /// closes, within `within`.
    async fn expect_refusal(
        &mut self,
        stream_id: u32,
        code: StatusCode,
        within: Duration,
    ) -> (Status, Duration) {
        let (frames, took) = self.until_closed(within).await;
        assert_eq!(
            frames.len(),
            1,
            "one error frame, then the close: {frames:?}"
        );
        assert_eq!(frames[0].stream_id, stream_id, "{frames:?}");
        let status = frames[0].status();
        assert_eq!(status.code(), code, "{status}");
        (status, took)
    }
}

/// Bound on how long a refusal that needs no timer may take.
const PROMPTLY: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------------------
// Elements the server refuses

#[test]
fn garbage_as_the_first_element_is_refused() {
    // Undecodable call headers: a map (tag 3) whose count runs past the message's end, and a
    // deadline (tag 2) cut short.
    let undecodable: [&[u8]; 2] = [&[2, 0, 0, 0, 0x03, 0x05], &[4, 0, 0, 0, 0x02, 1, 2, 3]];
    for bytes in undecodable {
        assert!(
            CallHeader::from_bytes(bytes).is_err(),
            "{bytes:02x?} decodes"
        );
    }
    each_transport(Limits::default(), |t, running, probe| async move {
        let cases: [(&[u8], StatusCode); 5] = [
            // "GET " is a call header of 542 MB: refused on its length alone.
            (
                b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
                StatusCode::ResourceExhausted,
            ),
            (&[0xff; 16], StatusCode::ResourceExhausted),
            (
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                StatusCode::ResourceExhausted,
            ),
            (undecodable[0], StatusCode::InvalidArgument),
            (undecodable[1], StatusCode::InvalidArgument),
        ];
        for (bytes, code) in cases {
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(bytes).await;
            let (status, took) = raw.expect_refusal(0, code, PROMPTLY).await;
            println!("{t:?}: {:?}... refused in {took:?}: {status}", &bytes[..4]);
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn an_oversized_call_header_is_refused_at_once() {
    each_transport(Limits::default(), |t, running, probe| async move {
        // A sequential connection whose call header claims 1 GiB: refused on the prefix,
        // long before the element timeout (10 s) could end it.
        let mut raw = Raw::connect(&running.endpoint).await;
        // (One write: the server closes as soon as it has the prefix, and a second write
        // could find the connection gone.)
        raw.send(&[&(1u32 << 30).to_le_bytes()[..], &[0x01, 0x4d, 0x3c]].concat())
            .await;
        let (status, took) = raw
            .expect_refusal(0, StatusCode::ResourceExhausted, PROMPTLY)
            .await;
        assert!(status.detail().contains("1073741824"), "{status}");
        println!("{t:?}: 1 GiB call header refused in {took:?}");
        // On a multiplexed connection a call header travels in a frame: one larger than
        // the call header limit (16 KiB) but within the frame limit is refused too.
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        let mut big = call_header(Some(svc::ECHO.id), &[]);
        big.resize(20 << 10, 0);
        raw.send(&frame(FrameFlags::NONE, 1, &big)).await;
        raw.expect_refusal(1, StatusCode::ResourceExhausted, PROMPTLY)
            .await;
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn a_4_gib_frame_is_refused_without_reading_it() {
    each_transport(Limits::default(), |t, running, probe| async move {
        let huge_end = [0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0];
        // Sequential: the call header, then the header of a 4 GiB request frame, and
        // nothing of its payload. Were the server waiting for the payload, only the element
        // timeout (10 s) would end the connection.
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&call_header(Some(svc::ECHO.id), &[])).await;
        raw.send(&huge_end).await;
        let (status, took) = raw
            .expect_refusal(0, StatusCode::ResourceExhausted, PROMPTLY)
            .await;
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert!(status.detail().contains("4294967295"), "{status}");
        println!("{t:?}: 4 GiB frame refused in {took:?}");
        // With a cursor too, and on a multiplexed connection's stream 1; and one byte over
        // the 4 MiB limit.
        let over = ((4u32 << 20) + 1).to_le_bytes();
        for (flags, length) in [(0x10, [0xff; 4]), (0x00, [0xff; 4]), (0x00, over)] {
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(&mux_preface()).await;
            let mut head = length.to_vec();
            head.push(flags);
            head.extend(1u32.to_le_bytes());
            raw.send(&head).await;
            let (_, took) = raw
                .expect_refusal(1, StatusCode::ResourceExhausted, PROMPTLY)
                .await;
            assert!(took < Duration::from_secs(1), "{took:?}");
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn multiplexed_stream_ids_must_be_new_odd_and_increasing() {
    each_transport(Limits::default(), |_, running, _| async move {
        // A stream id used again after its call ended.
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        raw.send(&mux_echo(1, "one")).await;
        let reply = raw.next_frame(PROMPTLY).await.unwrap();
        assert_eq!((reply.flags, reply.stream_id), (0x01, 1));
        assert_eq!(Note::from_bytes(&reply.payload).unwrap().text, "one");
        // Let the server retire the call (the response is sent before it is retired).
        tokio::time::sleep(Duration::from_millis(100)).await;
        raw.send(&mux_echo(1, "again")).await;
        let (status, _) = raw
            .expect_refusal(1, StatusCode::InvalidArgument, PROMPTLY)
            .await;
        assert!(status.detail().contains("already used"), "{status}");

        // A stream id below the last one.
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        raw.send(&mux_echo(5, "five")).await;
        assert_eq!(raw.next_frame(PROMPTLY).await.unwrap().stream_id, 5);
        raw.send(&mux_echo(3, "three")).await;
        raw.expect_refusal(3, StatusCode::InvalidArgument, PROMPTLY)
            .await;

        // Even and zero stream ids belong to no client call.
        for id in [2, 0, 0xffff_fffe] {
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(&mux_preface()).await;
            raw.send(&mux_echo(id, "even")).await;
            let (status, _) = raw
                .expect_refusal(id, StatusCode::InvalidArgument, PROMPTLY)
                .await;
            assert!(status.detail().contains("odd"), "{status}");
        }
    });
}

#[test]
fn invalid_flag_combinations_are_refused() {
    each_transport(Limits::default(), |_, running, probe| async move {
        // ERROR without END_STREAM, TRAILER without END_STREAM, ERROR with TRAILER.
        for flags in [0x02, 0x08, 0x0a, 0x0b, 0x12] {
            // Sequential: the frame that would open the call.
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(&call_header(Some(svc::ECHO.id), &[])).await;
            let payload = encode(&note("x"));
            let mut bytes = frame_bits(flags, 0, &payload);
            if flags & 0x10 != 0 {
                bytes.extend(7u64.to_le_bytes());
            }
            raw.send(&bytes).await;
            let (status, _) = raw
                .expect_refusal(0, StatusCode::InvalidArgument, PROMPTLY)
                .await;
            assert!(status.detail().contains("flags"), "{flags:#04x}: {status}");
            // Multiplexed: on a call in progress.
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(&mux_preface()).await;
            raw.send(&mux_samples(1, 1000, "slow:5")).await;
            assert_eq!(raw.next_frame(PROMPTLY).await.unwrap().cursor, Some(1));
            raw.send(&frame_bits(flags & 0x0f, 1, b"\x01\x02\x03"))
                .await;
            let (frames, _) = raw.until_closed(PROMPTLY).await;
            let last = frames.last().expect("an error frame");
            assert_eq!(last.stream_id, 1);
            assert_eq!(
                last.status().code(),
                StatusCode::InvalidArgument,
                "{flags:#04x}"
            );
            // Before it, only samples of the stream.
            assert!(
                frames[..frames.len() - 1].iter().all(|f| f.flags == 0x10),
                "{frames:?}"
            );
        }
        eventually("every stream was cancelled", || {
            probe.dropped.load(Ordering::SeqCst) == 5
        })
        .await;
    });
}

#[test]
fn truncated_elements_then_eof_close_quietly() {
    each_transport(Limits::default(), |_, running, probe| async move {
        let header = call_header(Some(svc::ECHO.id), &[]);
        let request = frame(FrameFlags::END_STREAM, 0, &encode(&note("cut short")));
        // Cut inside the call header, inside the frame header, inside the payload.
        for cut in [
            &header[..3],
            &[&header[..], &request[..5]].concat(),
            &[&header[..], &request[..12]].concat(),
        ] {
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(cut).await;
            raw.end().await;
            let (frames, took) = raw.until_closed(PROMPTLY).await;
            assert!(frames.is_empty(), "{frames:?}");
            assert!(took < Duration::from_secs(1), "{took:?}");
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
        // A multiplexed connection cut inside a frame while a stream runs: the stream's
        // handler is cancelled.
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        raw.send(&mux_samples(1, 100_000, "slow:5")).await;
        assert_eq!(raw.next_frame(PROMPTLY).await.unwrap().cursor, Some(1));
        raw.send(&mux_echo(3, "cut")[..14]).await;
        raw.end().await;
        let (frames, _) = raw.until_closed(PROMPTLY).await;
        assert!(
            frames.iter().all(|f| f.flags == 0x10 && f.stream_id == 1),
            "{frames:?}"
        );
        eventually("the stream was cancelled", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
    });
}

/// The unary call of `docs/rpc.md` ("Example: a unary call on the wire") byte for byte, on a
/// sequential connection: the call header
/// `06 00 00 00 01 <method id> 00`, the request frame on stream 0, and the response frame
/// with `END_STREAM` on stream 0 whose payload is the response. Echo takes and returns a
/// `Note { text }`, a struct whose encoding is that of its one string; so the response is
/// the request frame again. The connection then carries a second call.
#[test]
fn the_unary_exchange_of_rpc_section_7_1() {
    let id = svc::ECHO.id.to_le_bytes();
    let header = [0x06, 0, 0, 0, 0x01, id[0], id[1], id[2], id[3], 0x00];
    let alice: [u8; 19] = [
        0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x41, 0x6c,
        0x69, 0x63, 0x65, 0x00,
    ];
    // The helpers agree with the specification's bytes.
    assert_eq!(call_header(Some(svc::ECHO.id), &[]), header);
    assert_eq!(
        frame(FrameFlags::END_STREAM, 0, &encode(&note("Alice"))),
        alice
    );
    each_transport(Limits::default(), |_, running, probe| async move {
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&header).await;
        raw.send(&alice).await;
        let mut response = [0u8; 19];
        tokio::time::timeout(PROMPTLY, raw.io.read_exact(&mut response))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response, alice, "{response:02x?}");
        // The next call header starts the next call on the same connection.
        let bob = frame(FrameFlags::END_STREAM, 0, &encode(&note("Bob")));
        raw.send(&[&header[..], &bob[..]].concat()).await;
        let mut response = vec![0u8; bob.len()];
        tokio::time::timeout(PROMPTLY, raw.io.read_exact(&mut response))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response, bob);
        raw.end().await;
        let (frames, _) = raw.until_closed(PROMPTLY).await;
        assert!(frames.is_empty(), "{frames:?}");
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
    });
}

// ---------------------------------------------------------------------------------------
// Peers that are slow, idle, too many, or never read

/// A call header sent one byte every 200 ms, with a 1 s element timeout: the server gives
/// up with `UNAVAILABLE` on stream 0 and closes.
///
/// The limit is documented as counting from the element's first byte (so ~1 s here). The
/// server applies it to the call header's length prefix and to its body separately, so the
/// close comes after ~1.6 s (prefix complete at 0.6 s, then 1 s for the body); this test
/// allows up to 2.2 s, and [`element_timeout_counts_from_the_first_byte`] pins the
/// documented behaviour.
#[test]
fn slowloris_call_header_is_cut_off() {
    let limits = Limits {
        element_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    each_transport(limits, |t, running, probe| async move {
        let (status, took) = slowloris(
            &running,
            &call_header(Some(svc::ECHO.id), &[]),
            Duration::from_millis(200),
        )
        .await;
        println!(
            "{t:?}: a call header at one byte per 200 ms was cut off after {took:?}: {status}"
        );
        assert_eq!(status.code(), StatusCode::Unavailable, "{status}");
        assert!(took >= Duration::from_millis(900), "{took:?}");
        assert!(took < Duration::from_millis(2200), "{took:?}");
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

/// Sends `element` one byte per `every` and returns the server's refusal and when it came
/// after the first byte.
async fn slowloris(running: &Running, element: &[u8], every: Duration) -> (Status, Duration) {
    let raw = Raw::connect(&running.endpoint).await;
    let (rd, mut wr) = tokio::io::split(raw.io);
    let element = element.to_vec();
    let started = Instant::now();
    let writer = tokio::spawn(async move {
        for b in element {
            if wr.write_all(&[b]).await.is_err() || wr.flush().await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
        // Hold the connection open (sending nothing) until the server closes it.
        std::future::pending::<()>().await;
    });
    let mut reader = Raw::over(Box::new(tokio::io::join(rd, tokio::io::sink())));
    let (frames, _) = reader.until_closed(Duration::from_secs(10)).await;
    let took = started.elapsed();
    writer.abort();
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0].stream_id, 0);
    (frames[0].status(), took)
}

/// `element_timeout` is "how long the rest of an element may take to arrive once its
/// first byte has". A frame whose header, payload and cursor each arrive just within the
/// limit of the one before must still be refused once the limit has passed since its first
/// byte.
#[test]
fn element_timeout_counts_from_the_first_byte() {
    let limits = Limits {
        element_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    each_transport(limits, |t, running, probe| async move {
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        // The opening frame of an Echo call, with a cursor: its header (less one byte),
        // then the last header byte, the payload and the cursor 0.8 s apart. The whole
        // frame takes 2.4 s to arrive with a 1 s element timeout.
        let mut opening = frame(FrameFlags::NONE, 1, &call_header(Some(svc::ECHO.id), &[]));
        opening[4] = 0x10;
        opening.extend(0u64.to_le_bytes());
        let payload_end = opening.len() - 8;
        let started = Instant::now();
        let parts = [
            &opening[..8],
            &opening[8..9],
            &opening[9..payload_end],
            &opening[payload_end..],
        ];
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(800)).await;
            }
            if raw.io.write_all(part).await.is_err() {
                break;
            }
        }
        let _ = raw
            .io
            .write_all(&frame(FrameFlags::END_STREAM, 1, &encode(&note("slow"))))
            .await;
        let got = raw.next_frame(Duration::from_secs(5)).await;
        let took = started.elapsed();
        println!(
            "{t:?}: a frame spread over 2.4 s with a 1 s element timeout: {got:?} after {took:?}"
        );
        // Each gap is under the limit, so only a deadline for the whole element, counted
        // from its first byte, refuses it: on stream 0, as a connection error. (The time is
        // that of the writes, which go on into the socket buffer after the server closed.)
        let got = got.expect("an answer");
        assert_eq!(got.stream_id, 0, "the server answered the call: {got:?}");
        assert_eq!(got.status().code(), StatusCode::Unavailable);
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn idle_connections_are_closed() {
    let limits = Limits {
        idle_timeout: Some(Duration::from_millis(500)),
        ..Limits::default()
    };
    each_transport(limits, |t, running, probe| async move {
        // Silent from the start, silent after the multiplexing preface, silent after a
        // sequential call.
        let header = call_header(Some(svc::ECHO.id), &[]);
        let call = [
            &header[..],
            &frame(FrameFlags::END_STREAM, 0, &encode(&note("x"))),
        ]
        .concat();
        for (sent, answers) in [(&[][..], 0), (&mux_preface()[..], 0), (&call[..], 1)] {
            let mut raw = Raw::connect(&running.endpoint).await;
            raw.send(sent).await;
            let (frames, took) = raw.until_closed(Duration::from_secs(5)).await;
            assert_eq!(frames.len(), answers, "{frames:?}");
            assert!(took >= Duration::from_millis(400), "{took:?}");
            assert!(
                took < Duration::from_secs(3),
                "{t:?}: an idle connection closed after {took:?}"
            );
        }
        // A connection whose call outlasts the idle timeout is not idle.
        let client = running.client().await;
        let lab = Running::lab(&client);
        let reply = lab
            .echo(&note("sleep:1200"), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(reply.into_inner().text, "sleep:1200");
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(3), client.closed())
            .await
            .expect("the client's connection closed once idle");
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn connections_over_the_limit_are_refused() {
    let limits = Limits {
        max_connections: 2,
        ..Limits::default()
    };
    each_transport(limits, |_, running, _| async move {
        let a = running.client().await;
        let b = running.client().await;
        for c in [&a, &b] {
            Running::lab(c)
                .echo(&note("in"), CallOptions::new())
                .await
                .unwrap();
        }
        assert_eq!(running.server.connections(), 2);
        // Refused at once, whether the client says something or not (the server does not
        // read it: a write may find the connection already closed).
        for say in [
            &[][..],
            &mux_preface()[..],
            &[&mux_preface()[..], &mux_echo(1, "third")[..]].concat(),
        ] {
            let mut raw = Raw::connect(&running.endpoint).await;
            let _ = raw.io.write_all(say).await;
            let (status, _) = raw
                .expect_refusal(0, StatusCode::ResourceExhausted, PROMPTLY)
                .await;
            assert!(
                status.detail().contains("at most 2 connections"),
                "{status}"
            );
        }
        // A normal client over the limit fails its call: with the server's answer, or,
        // should its write find the connection closed first, UNAVAILABLE.
        let c = running.client().await;
        let e = Running::lab(&c)
            .echo(&note("third"), CallOptions::new())
            .await
            .unwrap_err();
        assert!(
            matches!(
                e.code(),
                StatusCode::ResourceExhausted | StatusCode::Unavailable
            ),
            "{e}"
        );
        tokio::time::timeout(PROMPTLY, c.closed()).await.unwrap();
        drop(c);
        assert_eq!(running.server.connections(), 2);
        // A slot frees when a client leaves.
        drop(a);
        eventually("a slot freed", || running.server.connections() == 1).await;
        let c = running.client().await;
        Running::lab(&c)
            .echo(&note("now"), CallOptions::new())
            .await
            .unwrap();
        drop((b, c));
    });
}

/// `write_timeout` is "how long a write may make no progress": a client reading steadily,
/// if slowly, is not cut off, however long one large response takes to reach it. Here a
/// 1 MiB response (Shout echoing a 1 MiB note) is read at ~1 MiB/s over a Unix socket
/// (whose buffers hold far less than the response; on TCP loopback the kernel's send buffer
/// swallows it whole), with a 500 ms write timeout: every 30 ms 32 KiB of it moves.
#[test]
fn a_slow_but_steady_reader_is_not_cut_off() {
    let limits = Limits {
        write_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let _lock = shared();
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Unix, lab_server(&probe).limits(limits)).await;
        let mut raw = Raw::connect(&running.endpoint).await;
        let text = "q".repeat(1 << 20);
        let mut bytes = mux_preface();
        bytes.extend(frame(
            FrameFlags::NONE,
            1,
            &call_header(Some(svc::SHOUT.id), &[]),
        ));
        bytes.extend(frame(FrameFlags::NONE, 1, &encode(&note(&text))));
        bytes.extend(frame(FrameFlags::END_STREAM, 1, &[]));
        raw.send(&bytes).await;
        let started = Instant::now();
        let mut got = Vec::new();
        let mut chunk = vec![0u8; 32 << 10];
        let response = loop {
            if let Ok((f, used)) = bebop_runtime::rpc::parse_frame(&got, usize::MAX) {
                if let Ok((end, _)) = bebop_runtime::rpc::parse_frame(&got[used..], usize::MAX) {
                    break Some((
                        f.header,
                        Note::from_bytes(f.payload).unwrap().text,
                        end.header,
                    ));
                }
            }
            match tokio::time::timeout(Duration::from_secs(5), raw.io.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break None,
                Ok(Ok(n)) => got.extend_from_slice(&chunk[..n]),
                Err(_) => panic!("stalled after {} bytes, {:?}", got.len(), started.elapsed()),
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        };
        let took = started.elapsed();
        println!(
            "read {} bytes at ~1 MiB/s in {took:?}; complete: {}",
            got.len(),
            response.is_some()
        );
        let (head, echoed, end) = response.unwrap_or_else(|| {
            panic!(
                "the server closed the connection after {} of 1 MiB, {took:?} in",
                got.len()
            )
        });
        assert_eq!(head.stream_id, 1);
        assert!(echoed == text.to_uppercase());
        assert_eq!(end.flags, FrameFlags::END_STREAM);
        drop(raw);
        still_serves(&running).await;
        running.stop().await;
    });
}

/// A multiplexed call whose opening frame does not decode is answered `INVALID_ARGUMENT`
/// and its stream kept until the client ends it, like a call the server finished before
/// the client did; such streams count against `max_concurrent_calls`, and more of them
/// than that closes the connection (`RESOURCE_EXHAUSTED`, "too many calls left
/// unfinished"). Either way, the server keeps no more than the limit's worth of them.
#[test]
fn undecodable_opening_frames_do_not_pile_up() {
    let limits = Limits {
        max_concurrent_calls: 8,
        ..Limits::default()
    };
    each_transport(limits, |t, running, _| async move {
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        let mut bytes = Vec::new();
        for i in 0..100u32 {
            bytes.extend(frame(FrameFlags::NONE, 2 * i + 1, &[0xff]));
        }
        bytes.extend(mux_echo(1001, "after"));
        raw.send(&bytes).await;
        let mut refused = 0;
        let outcome = loop {
            let Some(f) = raw.next_frame(PROMPTLY).await else {
                break "closed without a connection error".to_string();
            };
            if f.stream_id == 0 {
                let status = f.status();
                assert_eq!(status.code(), StatusCode::ResourceExhausted, "{status}");
                break format!("closed after {refused} refusals: {status}");
            }
            if f.stream_id == 1001 {
                if f.flags == 0x01 {
                    break "the next call was served".to_string();
                }
                let status = f.status();
                panic!(
                    "{t:?}: after {refused} undecodable opening frames the next call was refused: {status}"
                );
            }
            assert_eq!(f.status().code(), StatusCode::InvalidArgument);
            refused += 1;
        };
        println!("{t:?}: {outcome}");
    });
}

fn proc_status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn rss_mib() -> f64 {
    proc_status_kib("VmRSS") as f64 / 1024.0
}

/// A raw connection whose receive buffer is small (TCP), so that a client that never
/// reads stalls the server's writes sooner.
async fn small_window(endpoint: &Endpoint) -> Raw {
    match endpoint {
        Endpoint::Tcp(addr) => {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.set_recv_buffer_size(4096).unwrap();
            let s = socket.connect(*addr).await.unwrap();
            Raw::over(Box::new(s))
        }
        _ => Raw::connect(endpoint).await,
    }
}

/// A client that never reads while the server streams to it: the server's queue for the
/// connection fills (`response_buffer` bytes), its write makes no progress for
/// `write_timeout`, and it closes the connection and cancels the handler. With large
/// items (1 MiB notes echoed by the duplex Shout), memory stays bounded by the queues
/// (`request_queue` frames + `response_buffer` bytes) and the socket buffers.
///
/// Measured in debug on a 2-core machine: the endless stream of small samples is cancelled
/// ~0.5 s after it starts on a Unix socket, ~2 s on TCP (where ~110,000 samples fit in the
/// kernel's buffers first); the duplex of 1 MiB notes is closed after ~0.55 s, having taken
/// 15 to 21 notes, with resident memory grown by 0 to 4 MiB. Bounds: cancelled and closed
/// within 10 s, 96 MiB of growth (the client offers 128 MiB).
#[test]
fn a_client_that_never_reads_is_cut_off() {
    let limits = Limits {
        write_timeout: Duration::from_millis(500),
        response_buffer: 8 << 10,
        request_queue: 4,
        ..Limits::default()
    };
    let _alone = alone();
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let running = Running::start(transport, lab_server(&probe).limits(limits.clone())).await;
            // An endless stream of small samples.
            let mut raw = small_window(&running.endpoint).await;
            raw.send(&mux_preface()).await;
            let started = Instant::now();
            raw.send(&mux_samples(1, u32::MAX, "")).await;
            eventually("the stream was cancelled", || probe.dropped.load(Ordering::SeqCst) == 1).await;
            let took = started.elapsed();
            eventually("the connection closed", || running.server.connections() == 0).await;
            println!(
                "{transport:?}: a stream to a client that never reads was cancelled after {took:?}, {} samples sent",
                probe.sent.load(Ordering::SeqCst)
            );
            assert!(took < Duration::from_secs(10), "{took:?}");
            drop(raw);

            // Large items, both ways.
            let before = rss_mib();
            let raw = small_window(&running.endpoint).await;
            let (mut rd, mut wr) = tokio::io::split(raw.io);
            let offered = Arc::new(AtomicUsize::new(0));
            let writer = tokio::spawn({
                let offered = offered.clone();
                async move {
                    let mut bytes = mux_preface();
                    bytes.extend(frame(FrameFlags::NONE, 1, &call_header(Some(svc::SHOUT.id), &[])));
                    if wr.write_all(&bytes).await.is_err() {
                        return;
                    }
                    let big = frame(FrameFlags::NONE, 1, &encode(&note(&"a".repeat(1 << 20))));
                    for _ in 0..128 {
                        if wr.write_all(&big).await.is_err() {
                            return;
                        }
                        offered.fetch_add(1, Ordering::SeqCst);
                    }
                    std::future::pending::<()>().await;
                }
            });
            let started = Instant::now();
            eventually("the shout's connection was accepted", || running.server.connections() == 1).await;
            eventually("the shout was cut off", || running.server.connections() == 0).await;
            let took = started.elapsed();
            let grown = rss_mib() - before;
            writer.abort();
            // Whatever the server managed to send before giving up, then the close.
            let mut sink = Vec::new();
            let _ = tokio::time::timeout(PROMPTLY, rd.read_to_end(&mut sink)).await.unwrap();
            println!(
                "{transport:?}: a duplex of 1 MiB notes to a client that never reads closed after {took:?}; \
                 the client sent {} notes and got {} KiB back; RSS grew {grown:.1} MiB",
                offered.load(Ordering::SeqCst),
                sink.len() >> 10
            );
            assert!(took < Duration::from_secs(10), "{took:?}");
            assert!(grown < 96.0, "{grown:.1} MiB");
            still_serves(&running).await;
            running.stop().await;
        });
    }
}

/// A client that opens calls far past `max_concurrent_calls` on one multiplexed
/// connection and never reads: refused calls must not pile up on the server either. The
/// refusals are queued for writing like any answer; once the client's receive window and
/// the server's queue are full, each further refused call would be a task waiting to write
/// its refusal. The live tasks of the runtime stay within the limit plus the connection's
/// own.
#[test]
fn calls_over_the_concurrency_limit_do_not_pile_up() {
    let limits = Limits {
        max_concurrent_calls: 8,
        ..Limits::default()
    };
    let _alone = alone();
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Unix, lab_server(&probe).limits(limits)).await;
        let metrics = tokio::runtime::Handle::current().metrics();
        let tasks_before = metrics.num_alive_tasks();
        let before = rss_mib();
        let mut raw = Raw::connect(&running.endpoint).await;
        raw.send(&mux_preface()).await;
        const CALLS: u32 = 20_000;
        let mut bytes = Vec::new();
        for i in 0..CALLS {
            bytes.extend(mux_echo(2 * i + 1, "sleep:60000"));
        }
        // The server closes the connection once the client has left more than twice the
        // limit of calls unfinished, so the write may fail part way.
        let _ = raw.io.write_all(&bytes).await;
        // Give the server time to read it all.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let tasks = metrics.num_alive_tasks() - tasks_before;
        let grown = rss_mib() - before;
        println!("{CALLS} calls opened past a limit of 8 by a client that never reads: {tasks} live tasks, RSS grew {grown:.1} MiB");
        drop(raw);
        eventually("the connection closed", || running.server.connections() == 0).await;
        still_serves(&running).await;
        running.stop().await;
        // The connection's reader and writer, the 8 calls, some slack.
        assert!(tasks < 64, "{tasks} live tasks");
    });
}

// ---------------------------------------------------------------------------------------
// Arbitrary bytes

/// A small deterministic generator (xorshift64*), so that a failing case can be replayed
/// from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// One arbitrary byte sequence: noise, noise after a valid call header or preface, frames
/// with arbitrary flags, ids and lengths, or a valid exchange with bytes flipped.
fn arbitrary_case(rng: &mut Rng) -> Vec<u8> {
    let echo_header = call_header(Some(svc::ECHO.id), &[]);
    let n = rng.below(512) as usize;
    match rng.below(5) {
        0 => rng.bytes(n),
        1 => [echo_header, rng.bytes(n)].concat(),
        2 => [mux_preface(), rng.bytes(n)].concat(),
        3 => {
            let mut out = if rng.below(2) == 0 {
                mux_preface()
            } else {
                echo_header
            };
            for _ in 0..rng.below(8) + 1 {
                let len = rng.below(64) as usize;
                let payload = rng.bytes(len);
                let flags = rng.next() as u8;
                let id = match rng.below(3) {
                    0 => rng.below(8) as u32,
                    1 => rng.next() as u32,
                    _ => 1,
                };
                let mut f = frame_bits(flags, id, &payload);
                if rng.below(4) == 0 {
                    f[..4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
                }
                if flags & 0x10 != 0 {
                    f.extend(rng.bytes(8));
                }
                out.extend(f);
            }
            out
        }
        _ => {
            let mut out = mux_preface();
            out.extend(mux_echo(1, "a"));
            out.extend(mux_samples(3, 5, ""));
            out.extend(mux_echo(5, "md:x"));
            for _ in 0..rng.below(6) + 1 {
                let i = rng.below(out.len() as u64) as usize;
                out[i] = rng.next() as u8;
            }
            if rng.below(2) == 0 {
                out.truncate(rng.below(out.len() as u64) as usize);
            }
            out
        }
    }
}

/// Panics on the runtime's worker threads, where the server's tasks run.
static WORKER_PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_worker_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some("tokio-runtime-worker") {
                WORKER_PANICS.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

/// 64 arbitrary byte sequences, each on a fresh connection that the client then half
/// closes: the server never panics, answers only well-formed frames, closes every
/// connection within a bound, and serves a normal client afterwards. `RPC_HOSTILE_SEED`
/// replays another seed.
#[test]
fn arbitrary_bytes_never_break_the_server() {
    count_worker_panics();
    let seed: u64 = std::env::var("RPC_HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f00d_b0b0_2024);
    let limits = Limits {
        element_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    each_transport(limits, move |t, running, _| async move {
        let mut rng = Rng(seed);
        let mut answered = 0;
        for case in 0..64 {
            let bytes = arbitrary_case(&mut rng);
            let mut raw = Raw::connect(&running.endpoint).await;
            // The server may close before taking everything: a failed write is an answer.
            let sent = raw.io.write_all(&bytes).await.is_ok() && raw.io.shutdown().await.is_ok();
            let (frames, took) = tokio::time::timeout(
                Duration::from_secs(10),
                raw.until_closed(Duration::from_secs(5)),
            )
            .await
            .unwrap_or_else(|_| {
                panic!("{t:?} seed {seed:#x} case {case}: still open: {bytes:02x?}")
            });
            for f in &frames {
                if f.flags & 0x02 != 0 {
                    f.status();
                }
            }
            answered += usize::from(!frames.is_empty());
            assert!(
                took < Duration::from_secs(5),
                "{t:?} seed {seed:#x} case {case} (sent: {sent}) took {took:?}: {bytes:02x?}"
            );
            assert_eq!(
                WORKER_PANICS.load(Ordering::SeqCst),
                0,
                "{t:?} seed {seed:#x} case {case}: {bytes:02x?}"
            );
        }
        println!("{t:?}: 64 arbitrary byte sequences, {answered} answered with frames, all closed");
    });
    assert_eq!(WORKER_PANICS.load(Ordering::SeqCst), 0);
}
