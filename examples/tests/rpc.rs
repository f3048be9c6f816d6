//! The blocking RPC of `bebop-core` end to end: the service generated from
//! `schemas/lab.bop` served by `bebop_runtime::rpc::Server` in one thread and called through the
//! generated typed client from another, over real Unix sockets and TCP on loopback.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use bebop_runtime::rpc::{
    CallContext, CallOptions, CallOutcome, CancelFlag, Channel, ClientError, Clock,
    DiscoveryResponse, Empty, Encoded, RequestStream, Server, ServerStream, Status, StatusCode,
    StreamChannel,
};
use bebop_runtime::{StdIo, SystemClock, Timestamp};

#[allow(dead_code)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::lab::{Identity, Note, Sample, Settings, Total, lab as svc};

/// The instrument: counts handler calls so tests can tell a handler ran.
struct Instrument {
    model: String,
    interval_ms: u32,
    label: String,
    calls: Arc<AtomicUsize>,
}

impl Instrument {
    fn new(calls: Arc<AtomicUsize>) -> Self {
        Instrument {
            model: "LAB-9".into(),
            interval_ms: 100,
            label: String::new(),
            calls,
        }
    }
}

impl svc::Handler for Instrument {
    fn identify<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        _request: schema::bebop::Empty,
    ) -> Result<Identity<'a>, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Identity {
            model: &self.model,
            serial: 4242,
        })
    }

    fn echo<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        request: Note<'a>,
    ) -> Result<Note<'a>, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(request)
    }

    fn configure<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        request: Settings<'a>,
    ) -> Result<Settings<'a>, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(ms) = request.interval_ms {
            if !(10..=60_000).contains(&ms) {
                return Err(Status::format(
                    StatusCode::InvalidArgument,
                    format_args!("interval_ms must be 10..=60000, not {ms}"),
                ));
            }
            self.interval_ms = ms;
        }
        if let Some(label) = request.label {
            self.label = label.to_string();
        }
        Ok(Settings {
            interval_ms: Some(self.interval_ms),
            label: Some(&self.label),
        })
    }

    /// Sends `interval_ms / 10` samples, each with its sequence number as cursor, starting
    /// after the cursor the client resumes from.
    fn samples(
        &mut self,
        ctx: &CallContext<'_>,
        request: Settings<'_>,
        responses: &mut ServerStream<'_>,
    ) -> Result<(), Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let count = request.interval_ms.unwrap_or(0) / 10;
        let start = u32::try_from(ctx.cursor()).unwrap_or(u32::MAX);
        for seq in start.saturating_add(1)..=count {
            let sample = Sample {
                seq,
                value: seq as f32 * 0.5,
            };
            responses.send_with_cursor(&sample, u64::from(seq))?;
        }
        Ok(())
    }

    fn upload(
        &mut self,
        _ctx: &CallContext<'_>,
        requests: &mut RequestStream<'_>,
    ) -> Result<Total, Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut total = Total { count: 0, sum: 0.0 };
        while let Some(sample) = requests.next::<Sample>() {
            total.count += 1;
            total.sum += f64::from(sample?.value);
        }
        Ok(total)
    }

    fn shout(
        &mut self,
        _ctx: &CallContext<'_>,
        stream: &mut bebop_runtime::rpc::DuplexStream<'_>,
    ) -> Result<(), Status> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        while let Some(next) = stream.next::<Note>() {
            let (note, mut out) = next?;
            let loud = note.text.to_uppercase();
            out.send(&Note { text: &loud })?;
        }
        Ok(())
    }
}

type StdChannel<T> = StreamChannel<StdIo<T>, 4096>;
type LabClient<T> = svc::Client<StdChannel<T>, Vec<u8>>;

fn client<T: std::io::Read + std::io::Write>(stream: T) -> LabClient<T> {
    svc::Client::new(
        bebop_runtime::std_channel(stream),
        vec![0; 4096],
        vec![0; 4096],
    )
}

/// Serves calls on `stream` until the client goes away; returns how each call ended.
fn serve<T: std::io::Read + std::io::Write>(
    stream: T,
    handler: Instrument,
    clock: &dyn Clock,
    cancel: &CancelFlag,
) -> Vec<CallOutcome> {
    let mut channel: StdChannel<T> = bebop_runtime::std_channel(stream);
    let (mut call, mut rx, mut tx) = ([0u8; 256], [0u8; 4096], [0u8; 4096]);
    let mut server = Server::new(clock, cancel, &mut call, &mut rx, &mut tx);
    let mut service = svc::Server(handler);
    let mut outcomes = Vec::new();
    while let Ok(outcome) = server.serve_one(&mut channel, &mut service) {
        outcomes.push(outcome);
    }
    outcomes
}

/// Runs `f` against a server on a Unix socket pair; returns its result, the call outcomes and
/// the number of handler calls.
fn with_server<R>(
    clock: &(dyn Clock + Sync),
    cancel: &CancelFlag,
    f: impl FnOnce(&mut LabClient<UnixStream>) -> R,
) -> (R, Vec<CallOutcome>, usize) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = Instrument::new(calls.clone());
    std::thread::scope(|s| {
        let server = s.spawn(move || serve(b, handler, clock, cancel));
        let mut c = client(a);
        let result = f(&mut c);
        drop(c);
        let outcomes = server.join().unwrap();
        (result, outcomes, calls.load(Ordering::SeqCst))
    })
}

fn status(e: ClientError) -> Status {
    match e {
        ClientError::Status(s) => s,
        other => panic!("expected a status, got {other:?}"),
    }
}

#[test]
fn every_kind_of_method_end_to_end() {
    let cancel = CancelFlag::new();
    let ((), outcomes, calls) = with_server(&SystemClock, &cancel, |c| {
        let none = CallOptions::new();
        let id = c.identify(&schema::bebop::Empty {}, &none).unwrap();
        assert_eq!((id.model, id.serial), ("LAB-9", 4242));

        let note = c.echo(&Note { text: "ping" }, &none).unwrap();
        assert_eq!(note.text, "ping");

        let set = Settings {
            interval_ms: Some(250),
            label: Some("run 7"),
        };
        let back = c.configure(&set, &none).unwrap();
        assert_eq!(back, set);
        let bad = Settings {
            interval_ms: Some(5),
            label: None,
        };
        let err = status(c.configure(&bad, &none).unwrap_err());
        assert_eq!(err.code(), StatusCode::InvalidArgument);
        assert_eq!(err.detail(), "interval_ms must be 10..=60000, not 5");

        // A stream of 5 samples with cursors, then the same stream resumed after cursor 3.
        let all = Settings {
            interval_ms: Some(50),
            label: None,
        };
        let mut got = Vec::new();
        let mut stream = c.samples(&all, &none).unwrap();
        while let Some(item) = stream.next::<Sample>() {
            let item = item.unwrap();
            got.push((item.value.seq, item.cursor));
        }
        assert_eq!(
            got,
            (1..=5).map(|s| (s, Some(u64::from(s)))).collect::<Vec<_>>()
        );
        let mut resumed = Vec::new();
        let mut stream = c.samples(&all, &CallOptions::new().cursor(3)).unwrap();
        while let Some(item) = stream.next::<Sample>() {
            resumed.push(item.unwrap().value.seq);
        }
        assert_eq!(resumed, [4, 5]);

        let mut upload = c.upload(&none).unwrap();
        for seq in 1..=4 {
            upload
                .send(&Sample {
                    seq,
                    value: seq as f32,
                })
                .unwrap();
        }
        let total: Total = upload.finish().unwrap();
        assert_eq!((total.count, total.sum), (4, 10.0));

        let mut shout = c.shout(&none).unwrap();
        for text in ["a", "bc"] {
            shout.send(&Note { text }).unwrap();
            let back: Note = shout.next().unwrap().unwrap();
            assert_eq!(back.text, text.to_uppercase());
        }
        shout.close().unwrap();
        assert!(shout.next::<Note>().is_none());

        // Owned types through the same client.
        let owned = c
            .echo_owned(
                &schema::owned::lab::Note {
                    text: "owned".into(),
                },
                &none,
            )
            .unwrap();
        assert_eq!(owned.text, "owned");

        // Discovery (method 0) lists every method with its id and type URLs.
        let discovery: DiscoveryResponse = c.0.unary(0, &Empty {}, &none).unwrap();
        let services: Vec<_> = discovery.services.iter().collect();
        assert_eq!(services.len(), 1);
        assert_eq!(services[0].name, "Lab");
        let methods: Vec<_> = services[0]
            .methods
            .iter()
            .map(|m| (m.name, m.method_id, m.method_type))
            .collect();
        assert_eq!(methods.len(), 6);
        assert_eq!(
            methods[1],
            ("Echo", svc::ECHO.id, bebop_runtime::rpc::MethodType::Unary)
        );
        assert_eq!(
            methods[5],
            (
                "Shout",
                svc::SHOUT.id,
                bebop_runtime::rpc::MethodType::DuplexStream
            )
        );
        assert_eq!(
            services[0].methods.iter().nth(3).unwrap().response_type_url,
            "type.bebop.sh/lab.Sample"
        );
    });
    assert_eq!(calls, 9, "every call but discovery reached the handler");
    assert_eq!(outcomes.len(), 10);
    assert!(outcomes.contains(&CallOutcome::Failed {
        method_id: svc::CONFIGURE.id,
        code: StatusCode::InvalidArgument
    }));
}

#[test]
fn protocol_errors_get_their_status_and_the_server_goes_on() {
    let cancel = CancelFlag::new();
    let ((), outcomes, calls) = with_server(&SystemClock, &cancel, |c| {
        let none = CallOptions::new();
        let err = status(
            c.0.unary::<Empty, _>(0x1234_5678, &Empty {}, &none)
                .unwrap_err(),
        );
        assert_eq!(err.code(), StatusCode::NotFound);
        assert_eq!(err.detail(), "no method 0x12345678");

        for reserved in 1..=4 {
            let err = status(
                c.0.unary::<Empty, _>(reserved, &Empty {}, &none)
                    .unwrap_err(),
            );
            assert_eq!(err.code(), StatusCode::Unimplemented, "method {reserved}");
        }

        // A request that does not decode: a string whose length runs past the payload.
        let err = status(
            c.0.unary::<Note, _>(svc::ECHO.id, &Encoded(&[9, 0, 0, 0, b'x']), &none)
                .unwrap_err(),
        );
        assert_eq!(err.code(), StatusCode::InvalidArgument);
        assert!(err.detail().starts_with("request does not decode"), "{err}");
        assert!(err.detail().contains("at byte 0"), "{err}");

        // A deadline already passed: answered without running the handler.
        let past = Timestamp::from_unix_seconds(1_000_000);
        let err = status(
            c.echo(&Note { text: "late" }, &CallOptions::new().deadline(past))
                .unwrap_err(),
        );
        assert_eq!(err.code(), StatusCode::DeadlineExceeded);
        // The deadline is checked before the method (docs/rpc.md, "Starting a call").
        let err = status(
            c.0.unary::<Note, _>(
                0x1234_5678,
                &Note { text: "late" },
                &CallOptions::new().deadline(past),
            )
            .unwrap_err(),
        );
        assert_eq!(err.code(), StatusCode::DeadlineExceeded);

        // A unary method called with a stream of requests.
        let mut call = c.0.client_stream(svc::ECHO.id, &none).unwrap();
        call.send(&Note { text: "one" }).unwrap();
        call.send(&Note { text: "two" }).unwrap();
        let err = status(call.finish::<Note>().unwrap_err());
        assert_eq!(err.code(), StatusCode::Unimplemented);

        // And the connection still serves.
        assert_eq!(c.echo(&Note { text: "ok" }, &none).unwrap().text, "ok");
    });
    assert_eq!(calls, 1, "only the last echo reached the handler");
    assert_eq!(outcomes.len(), 10);
}

/// A clock that moves one second forward each time it is read.
struct SteppingClock(AtomicI64);

impl Clock for SteppingClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(self.0.fetch_add(1, Ordering::SeqCst))
    }
}

#[test]
fn a_deadline_passing_during_a_stream_ends_it() {
    let clock = SteppingClock(AtomicI64::new(1_000));
    let cancel = CancelFlag::new();
    let (items, outcomes, _) = with_server(&clock, &cancel, |c| {
        let many = Settings {
            interval_ms: Some(10_000),
            label: None,
        };
        let deadline = Timestamp::from_unix_seconds(1_006);
        let mut stream = c
            .samples(&many, &CallOptions::new().deadline(deadline))
            .unwrap();
        let mut items = 0;
        loop {
            match stream.next::<Sample>() {
                Some(Ok(_)) => items += 1,
                Some(Err(e)) => {
                    assert_eq!(status(e).code(), StatusCode::DeadlineExceeded);
                    break;
                }
                None => panic!("the stream ended without an error"),
            }
        }
        items
    });
    assert!(
        (1..10).contains(&items),
        "{items} items before the deadline"
    );
    assert_eq!(
        outcomes,
        [CallOutcome::Failed {
            method_id: svc::SAMPLES.id,
            code: StatusCode::DeadlineExceeded
        }]
    );
}

/// The cancel flag, raised from another thread as an interrupt would, ends a stream without
/// an error frame; the server then serves the next call.
#[test]
fn the_cancel_flag_ends_a_stream() {
    let cancel = CancelFlag::new();
    let (got, outcomes, _) = with_server(&SystemClock, &cancel, |c| {
        let endless = Settings {
            interval_ms: Some(u32::MAX),
            label: None,
        };
        c.0.channel_mut()
            .get_mut()
            .0
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut stream = c.samples(&endless, &CallOptions::new()).unwrap();
        let mut got = 0u32;
        let mut cancelled = false;
        loop {
            match stream.next::<Sample>() {
                Some(Ok(item)) => {
                    got = item.value.seq;
                    if got == 3 {
                        cancel.cancel();
                        cancelled = true;
                    }
                }
                Some(Err(ClientError::Channel(_))) if cancelled => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        got
    });
    assert!(got >= 3);
    assert_eq!(
        outcomes,
        [CallOutcome::Cancelled {
            method_id: svc::SAMPLES.id
        }]
    );
}

#[test]
fn tcp_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = Instrument::new(calls.clone());
    let cancel = CancelFlag::new();
    std::thread::scope(|s| {
        let cancel = &cancel;
        let server = s.spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            serve(stream, handler, &SystemClock, cancel)
        });
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut c = client(stream);
        let none = CallOptions::new();
        let text = "x".repeat(1000);
        assert_eq!(c.echo(&Note { text: &text }, &none).unwrap().text, text);
        let mut n = 0;
        let all = Settings {
            interval_ms: Some(2000),
            label: None,
        };
        let mut stream = c.samples(&all, &none).unwrap();
        while let Some(item) = stream.next::<Sample>() {
            n += 1;
            assert_eq!(item.unwrap().value.seq, n);
        }
        assert_eq!(n, 200);
        drop(c);
        assert_eq!(server.join().unwrap().len(), 2);
    });
}

/// Hostile bytes on the wire: each gets a clean answer and costs only itself.
#[test]
fn hostile_elements_are_answered() {
    let cancel = CancelFlag::new();
    let (a, b) = UnixStream::pair().unwrap();
    a.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = Instrument::new(calls.clone());
    std::thread::scope(|s| {
        let cancel = &cancel;
        let server = s.spawn(move || serve(b, handler, &SystemClock, cancel));
        let mut raw = a.try_clone().unwrap();
        let mut reader: StdChannel<UnixStream> = bebop_runtime::std_channel(a);
        let mut buf = [0u8; 4096];
        fn next_error(reader: &mut StdChannel<UnixStream>, buf: &mut [u8]) -> Status {
            let n = reader.recv(bebop_runtime::rpc::Expect::Frame, buf).unwrap();
            let (frame, _) = bebop_runtime::rpc::parse_frame(&buf[..n], n).unwrap();
            assert!(
                frame
                    .flags()
                    .contains(bebop_runtime::rpc::FrameFlags::ERROR)
            );
            let e: bebop_runtime::rpc::RpcError = frame.decode().unwrap();
            Status::from_rpc_error(&e)
        }

        // A call header larger than the server's 256-byte buffer: refused, its bytes
        // skipped.
        raw.write_all(&1000u32.to_le_bytes()).unwrap();
        raw.write_all(&[0xAB; 1000]).unwrap();
        let e = next_error(&mut reader, &mut buf);
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");

        // Then a good call still works.
        let mut header = [0u8; 64];
        let call = bebop_runtime::rpc::CallHeader {
            method_id: Some(svc::ECHO.id),
            ..Default::default()
        };
        let n = bebop_runtime::rpc::encode_call_header(&mut header, &call).unwrap();
        raw.write_all(&header[..n]).unwrap();
        let mut frame = [0u8; 64];
        let m = bebop_runtime::rpc::encode_frame(
            &mut frame,
            bebop_runtime::rpc::FrameFlags::END_STREAM,
            1,
            &Note { text: "hi" },
            None,
        )
        .unwrap();
        raw.write_all(&frame[..m]).unwrap();
        let n = reader
            .recv(bebop_runtime::rpc::Expect::Frame, &mut buf)
            .unwrap();
        let (reply, _) = bebop_runtime::rpc::parse_frame(&buf[..n], n).unwrap();
        assert_eq!(reply.decode::<Note>().unwrap().text, "hi");

        // A frame announcing nearly 4 GiB: RESOURCE_EXHAUSTED at once, nothing buffered.
        raw.write_all(&header[..encode_len(&call)]).unwrap();
        let mut huge = [0u8; 9];
        huge[..4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
        huge[4] = 1;
        raw.write_all(&huge).unwrap();
        let e = next_error(&mut reader, &mut buf);
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        drop(raw);
        drop(reader);
        let outcomes = server.join().unwrap();
        assert_eq!(outcomes.len(), 3);
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

fn encode_len(call: &bebop_runtime::rpc::CallHeader<'_>) -> usize {
    bebop_runtime::Encode::encoded_size(call)
}

/// The server's channel is `dyn`: any transport works, including one written in a test.
#[test]
fn channels_are_object_safe() {
    fn takes(_: &mut dyn Channel) {}
    let (a, _b) = UnixStream::pair().unwrap();
    let mut ch: StdChannel<UnixStream> = bebop_runtime::std_channel(a);
    takes(&mut ch);
}

type PacketLink = bebop_runtime::rpc::link::PacketChannel<StdIo<TcpStream>, 4096>;

/// The serial link layer end to end over TCP loopback (as QEMU's UART is): the same server
/// and generated client over `PacketChannel`. Noise and a damaged packet between calls cost
/// only themselves; a server stream abandoned mid-way (the client sends its next call) is
/// resumed from its cursor with nothing lost or repeated; a packet over the server's limit
/// is refused with `RESOURCE_EXHAUSTED`.
#[test]
fn serial_link_layer_over_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = Instrument::new(calls.clone());
    let cancel = CancelFlag::new();
    std::thread::scope(|s| {
        let cancel = &cancel;
        let server = s.spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut channel: bebop_runtime::rpc::link::PacketChannel<_, 1200> =
                bebop_runtime::packet_channel(stream);
            let (mut call, mut rx, mut tx) = ([0u8; 256], [0u8; 1200], [0u8; 1200]);
            let mut server = Server::new(&SystemClock, cancel, &mut call, &mut rx, &mut tx);
            let mut service = svc::Server(handler);
            let mut outcomes = Vec::new();
            while let Ok(outcome) = server.serve_one(&mut channel, &mut service) {
                outcomes.push(outcome);
            }
            (outcomes, channel.counters())
        });
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut raw = stream.try_clone().unwrap();
        let channel: PacketLink = bebop_runtime::packet_channel(stream);
        let mut c = svc::Client::new(channel, vec![0; 4096], vec![0; 4096]);
        let none = CallOptions::new();
        assert_eq!(c.echo(&Note { text: "one" }, &none).unwrap().text, "one");

        // Noise, then a damaged copy of a packet: dropped; the next call is served.
        raw.write_all(&[0x55, 0xAA, 0x01, 0x00]).unwrap();
        let mut element = [0u8; 64];
        let n = bebop_runtime::rpc::encode_call_header(
            &mut element,
            &bebop_runtime::rpc::CallHeader {
                method_id: Some(svc::ECHO.id),
                ..Default::default()
            },
        )
        .unwrap();
        let mut packet = [0u8; 80];
        let m = bebop_runtime::rpc::link::encode_packet(&element[..n], &mut packet).unwrap();
        packet[m / 2] ^= 0x40;
        raw.write_all(&packet[..m]).unwrap();
        assert_eq!(c.echo(&Note { text: "two" }, &none).unwrap().text, "two");

        // A stream of 30 samples abandoned after 10, then resumed from the last cursor.
        let thirty = Settings {
            interval_ms: Some(300),
            label: None,
        };
        let mut seen = Vec::new();
        {
            // Abandoned: the next call is what tells the server.
            let mut stream = c.samples(&thirty, &none).unwrap();
            while let Some(item) = stream.next::<Sample>() {
                let item = item.unwrap();
                seen.push((item.value.seq, item.cursor));
                if seen.len() == 10 {
                    break;
                }
            }
        }
        let last = seen.last().and_then(|s| s.1).unwrap();
        let mut stream = c
            .samples(&thirty, &CallOptions::new().cursor(last))
            .unwrap();
        while let Some(item) = stream.next::<Sample>() {
            let item = item.unwrap();
            seen.push((item.value.seq, item.cursor));
        }
        assert_eq!(
            seen,
            (1..=30)
                .map(|s| (s, Some(u64::from(s))))
                .collect::<Vec<_>>()
        );

        // Over the server's 1200-byte limit: refused, and the link goes on.
        let big = "y".repeat(2000);
        let err = status(c.echo(&Note { text: &big }, &none).unwrap_err());
        assert_eq!(err.code(), StatusCode::ResourceExhausted, "{err}");
        assert_eq!(
            c.echo(&Note { text: "three" }, &none).unwrap().text,
            "three"
        );
        drop(c);
        drop(raw);
        let (outcomes, counters) = server.join().unwrap();
        assert!(outcomes.contains(&CallOutcome::Damaged), "{outcomes:?}");
        assert!(outcomes.contains(&CallOutcome::Failed {
            method_id: svc::ECHO.id,
            code: StatusCode::ResourceExhausted
        }));
        // The noise (ended by its zero) and the damaged copy.
        assert_eq!(
            (counters.damaged, counters.too_large),
            (2, 1),
            "{counters:?}"
        );
    });
}
