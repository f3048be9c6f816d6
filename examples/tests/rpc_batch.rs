//! Batches (method 1, `docs/rpc.md`, "Batches") end to end, on every carrier of calls: the
//! Lab and a Pipeline service (`schemas/pipeline.bop`) whose handlers log when they start
//! and end, fail on purpose and wait at a barrier, called through `Client::batch` and as
//! raw `BatchRequest`s.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bebop_rpc::{
    Batch, CallOptions, Client, Context, Limits, RawMessage, ResponseSink, ServerBuilder, Status,
};
use bebop_rpc::{BatchResults, StatusCode};
use bebop_runtime::rpc::{BatchCall, BatchOutcome, BatchRequest, BatchResponse, Encoded};
use bebop_runtime::{Array, Decode, Map};
use common::schema::owned::pipeline::Word;
use common::schema::pipeline::pipeline as pipe;
use common::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// What the Pipeline's handlers saw.
#[derive(Default)]
struct State {
    /// `start TEXT` and `end TEXT` of every `Step`, in order.
    log: Mutex<Vec<String>>,
    /// Handler invocations of every Pipeline method.
    calls: AtomicUsize,
    /// Where `Meet` waits.
    barrier: Mutex<Option<Arc<tokio::sync::Barrier>>>,
}

impl State {
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn at(&self, entry: &str) -> usize {
        let log = self.log();
        log.iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("no {entry:?} in {log:?}"))
    }
}

struct Steps(Arc<State>);

impl pipe::AsyncHandler for Steps {
    /// `sleep:MS` sleeps, then appends `>`; `set:K=V;REST` sets response metadata `K` and
    /// returns `REST`; `md:K` returns request metadata `K` (or `<none>`); anything else
    /// comes back with `>` appended.
    async fn step(&self, ctx: &Context, request: Word) -> Result<Word, Status> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        let text = request.text;
        self.0.log.lock().unwrap().push(format!("start {text}"));
        let out = if let Some(ms) = text.strip_prefix("sleep:") {
            let ms: u64 = ms.parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            format!("{text}>")
        } else if let Some(rest) = text.strip_prefix("set:") {
            let (kv, rest) = rest.split_once(';').unwrap_or((rest, ""));
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            ctx.set_response_metadata(k, v);
            rest.to_string()
        } else if let Some(key) = text.strip_prefix("md:") {
            ctx.metadata().get(key).unwrap_or("<none>").to_string()
        } else {
            format!("{text}>")
        };
        self.0.log.lock().unwrap().push(format!("end {text}"));
        Ok(Word { text: out })
    }

    async fn fail(&self, _ctx: &Context, request: Word) -> Result<Word, Status> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        Err(
            Status::unavailable(format!("{} failed on purpose", request.text))
                .with_metadata("failed", request.text),
        )
    }

    /// Waits (at most five seconds) until the barrier's count of calls wait together.
    async fn meet(&self, _ctx: &Context, request: Word) -> Result<Word, Status> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        let barrier = self.0.barrier.lock().unwrap().clone();
        let Some(barrier) = barrier else {
            return Err(Status::internal("no barrier set"));
        };
        match tokio::time::timeout(Duration::from_secs(5), barrier.wait()).await {
            Ok(_) => Ok(request),
            Err(_) => Err(Status::deadline_exceeded(
                "the other calls never reached the barrier: they did not run concurrently",
            )),
        }
    }

    async fn spell(
        &self,
        _ctx: &Context,
        request: Word,
        mut responses: ResponseSink<Word>,
    ) -> Result<(), Status> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        for c in request.text.chars() {
            responses.send(&word(&c.to_string())).await?;
        }
        Ok(())
    }
}

/// One test's server and client.
struct Fixture {
    transport: Transport,
    running: Running,
    client: Client,
    probe: Arc<Probe>,
    state: Arc<State>,
}

impl Fixture {
    async fn start(transport: Transport, setup: &dyn Fn(ServerBuilder) -> ServerBuilder) -> Self {
        let probe = Arc::new(Probe::default());
        let state = Arc::new(State::default());
        let builder = lab_server(&probe).add_service(pipe::AsyncServer::new(Steps(state.clone())));
        let running = Running::start(transport, setup(builder)).await;
        let client = running.client().await;
        Fixture {
            transport,
            running,
            client,
            probe,
            state,
        }
    }

    async fn batch(&self, batch: &Batch) -> BatchResults {
        self.client
            .batch(batch, CallOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{:?}: the batch failed: {e}", self.transport))
    }

    /// Sends raw bytes as the request of method 1.
    async fn raw(&self, request: &[u8]) -> Result<Vec<u8>, Status> {
        self.client
            .unary::<Encoded<'_>, RawMessage>(1, &Encoded(request), CallOptions::new())
            .await
            .map(|r| r.into_inner().0)
    }

    async fn stop(self) {
        self.running.stop().await;
    }
}

/// Runs `test` once per carrier of calls (TCP, Unix socket, in process) on a fresh server
/// serving the Lab and the Pipeline, built through `setup`.
fn each_carrier<F, Fut>(setup: impl Fn(ServerBuilder) -> ServerBuilder, test: F)
where
    F: Fn(Fixture) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for transport in CALL_TRANSPORTS {
        rt().block_on(async {
            let fixture = Fixture::start(transport, &setup).await;
            tokio::time::timeout(Duration::from_secs(60), test(fixture))
                .await
                .unwrap_or_else(|_| panic!("{transport:?}: the test timed out"));
        });
    }
}

fn word(text: &str) -> Word {
    Word { text: text.into() }
}

fn text(results: &BatchResults, call: bebop_rpc::CallRef) -> String {
    results
        .get::<Word>(call)
        .unwrap_or_else(|e| panic!("call {} failed: {e}", call.call_id()))
        .text
}

fn settings(count: u32, label: &str) -> Settings {
    Settings {
        interval_ms: Some(count),
        label: Some(label.into()),
    }
}

/// One call of a raw batch: `(call_id, method_id, payload, input_from)`.
type RawCall = (i32, u32, Vec<u8>, i32);

/// A `BatchRequest` of raw calls, encoded.
fn raw_batch(calls: &[RawCall]) -> Vec<u8> {
    let views: Vec<BatchCall<'_>> = calls
        .iter()
        .map(|(call_id, method_id, payload, input_from)| BatchCall {
            call_id: *call_id,
            method_id: *method_id,
            payload,
            input_from: *input_from,
        })
        .collect();
    bebop_runtime::encode_to_vec(&BatchRequest {
        calls: Array::from_slice(&views),
        metadata: Map::default(),
    })
    .unwrap()
}

fn encoded(w: &Word) -> Vec<u8> {
    bebop_runtime::encode_to_vec(w).unwrap()
}

#[test]
fn the_pipelining_example_of_the_specification() {
    // Upstream §13.1: call 1 takes call 0's response as its request; calls 0 and 2 are
    // independent.
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            let create = batch.call(pipe::STEP, &word("widget")).unwrap();
            let fetch = batch.call_from(pipe::STEP, create);
            let settings = batch.call(pipe::STEP, &word("settings")).unwrap();
            let results = fx.batch(&batch).await;
            assert_eq!(results.len(), 3);
            assert_eq!(text(&results, create), "widget>");
            // Call 1 got "widget>", call 0's output, as its request.
            assert_eq!(text(&results, fetch), "widget>>");
            assert_eq!(text(&results, settings), "settings>");
            assert!(fx.state.at("end widget") < fx.state.at("start widget>"));
            // The raw response has one result per call, in the order of the request.
            let raw = fx.raw(&batch.to_bytes().unwrap()).await.unwrap();
            let response = BatchResponse::from_bytes(&raw).unwrap();
            let ids: Vec<i32> = response.results.iter().map(|r| r.call_id).collect();
            assert_eq!(ids, [0, 1, 2]);
            fx.stop().await;
        },
    );
}

#[test]
fn independent_calls_run_concurrently() {
    const N: usize = 8;
    each_carrier(
        |b| b,
        |fx| async move {
            // Each Meet waits until all N wait together: the batch can only succeed if the
            // N calls run at the same time (a sequential server fails them after 5 s).
            *fx.state.barrier.lock().unwrap() = Some(Arc::new(tokio::sync::Barrier::new(N)));
            let mut batch = Batch::new();
            let calls: Vec<_> = (0..N)
                .map(|i| batch.call(pipe::MEET, &word(&format!("m{i}"))).unwrap())
                .collect();
            let results = fx.batch(&batch).await;
            for (i, call) in calls.iter().enumerate() {
                assert_eq!(text(&results, *call), format!("m{i}"), "{:?}", fx.transport);
            }
            // The same for calls that all depend on one call: they start together once it
            // is done.
            let mut batch = Batch::new();
            let root = batch.call(pipe::STEP, &word("go")).unwrap();
            let calls: Vec<_> = (0..N).map(|_| batch.call_from(pipe::MEET, root)).collect();
            let results = fx.batch(&batch).await;
            for call in calls {
                assert_eq!(text(&results, call), "go>");
            }
            assert_eq!(fx.state.calls.load(Ordering::SeqCst), 2 * N + 1);
            fx.stop().await;
        },
    );
}

#[test]
fn a_dependent_call_starts_only_after_its_dependency_finished() {
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            let slow = batch.call(pipe::STEP, &word("sleep:150")).unwrap();
            let next = batch.call_from(pipe::STEP, slow);
            let last = batch.call_from(pipe::STEP, next);
            let quick = batch.call(pipe::STEP, &word("quick")).unwrap();
            let results = fx.batch(&batch).await;
            assert_eq!(text(&results, last), "sleep:150>>>");
            assert_eq!(text(&results, quick), "quick>");
            let state = &fx.state;
            assert!(state.at("end sleep:150") < state.at("start sleep:150>"));
            assert!(state.at("end sleep:150>") < state.at("start sleep:150>>"));
            // The independent call did not wait for the slow one.
            assert!(state.at("end quick") < state.at("end sleep:150"));
            fx.stop().await;
        },
    );
}

#[test]
fn invalid_batches_are_refused_whole_before_anything_runs() {
    each_carrier(
        |b| b,
        |fx| async move {
            let step = pipe::STEP.id;
            let w = encoded(&word("x"));
            let cases: Vec<(&str, Vec<RawCall>, &str)> = vec![
                (
                    "negative call_id",
                    vec![(0, step, w.clone(), -1), (-3, step, w.clone(), -1)],
                    "call 1 of the batch has the negative call_id -3",
                ),
                (
                    "duplicate call_id",
                    vec![(4, step, w.clone(), -1), (4, step, w.clone(), -1)],
                    "call_id 4 appears more than once in the batch",
                ),
                (
                    "forward reference",
                    vec![(0, step, w.clone(), 1), (1, step, w.clone(), -1)],
                    "call 0 takes its input from 1, which is not an earlier call of the batch",
                ),
                (
                    "self reference",
                    vec![(0, step, w.clone(), -1), (1, step, w.clone(), 1)],
                    "call 1 takes its input from 1",
                ),
                (
                    "unknown reference",
                    vec![(0, step, w.clone(), -1), (1, step, w.clone(), 9)],
                    "call 1 takes its input from 9",
                ),
                (
                    "negative reference",
                    vec![(0, step, w.clone(), -1), (1, step, w.clone(), -2)],
                    "call 1 takes its input from -2",
                ),
            ];
            for (what, calls, detail) in cases {
                // A valid call before the bad one must not have run either.
                let e = fx.raw(&raw_batch(&calls)).await.unwrap_err();
                assert_eq!(e.code(), StatusCode::InvalidArgument, "{what}: {e}");
                assert!(e.detail().starts_with(detail), "{what}: {e}");
            }
            assert_eq!(fx.state.calls.load(Ordering::SeqCst), 0);
            // Ids need not be positions; they only need to be unique and point back.
            let ok = raw_batch(&[(10, step, w.clone(), -1), (3, step, Vec::new(), 10)]);
            let response = fx.raw(&ok).await.unwrap();
            let response = BatchResponse::from_bytes(&response).unwrap();
            let ids: Vec<i32> = response.results.iter().map(|r| r.call_id).collect();
            assert_eq!(ids, [10, 3]);
            fx.stop().await;
        },
    );
}

#[test]
fn a_failed_call_fails_its_dependents_transitively() {
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            let a = batch.call(pipe::FAIL, &word("a")).unwrap();
            let b = batch.call_from(pipe::STEP, a);
            let c = batch.call_from(pipe::STEP, b);
            let d = batch.call(pipe::STEP, &word("d")).unwrap();
            let e = batch.call_from(pipe::STEP, d);
            let results = fx.batch(&batch).await;
            let failed = results.get::<Word>(a).unwrap_err();
            assert_eq!(failed.code(), StatusCode::Unavailable);
            assert_eq!(failed.detail(), "a failed on purpose");
            assert_eq!(failed.metadata().get("failed"), Some("a"));
            for (call, upstream) in [(b, 0), (c, 1)] {
                let e = results.get::<Word>(call).unwrap_err();
                assert_eq!(e.code(), StatusCode::InvalidArgument);
                assert_eq!(e.detail(), format!("dependency {upstream} failed"));
            }
            assert_eq!(text(&results, d), "d>");
            assert_eq!(text(&results, e), "d>>");
            // B and C never ran: Fail, D and E did.
            assert_eq!(fx.state.calls.load(Ordering::SeqCst), 3);
            fx.stop().await;
        },
    );
}

#[test]
fn the_deadline_cuts_short_what_has_not_finished() {
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            let fast = batch.call(pipe::STEP, &word("fast")).unwrap();
            let after_fast = batch.call_from(pipe::STEP, fast);
            let slow = batch
                .call(
                    svc::ECHO,
                    &Note {
                        text: "sleep:5000".into(),
                    },
                )
                .unwrap();
            let after_slow = batch.call_from(pipe::STEP, slow);
            let waiting = batch.call_from(pipe::STEP, after_slow);
            let started = Instant::now();
            let results = fx
                .client
                .batch(
                    &batch,
                    CallOptions::new().timeout(Duration::from_millis(700)),
                )
                .await
                .unwrap_or_else(|e| panic!("{:?}: the batch itself failed: {e}", fx.transport));
            let took = started.elapsed();
            // Answered before the batch's deadline, with the time kept back to answer.
            assert!(took < Duration::from_millis(700), "{took:?}");
            assert!(took >= Duration::from_millis(500), "{took:?}");
            // Completed calls keep their results.
            assert_eq!(text(&results, fast), "fast>");
            assert_eq!(text(&results, after_fast), "fast>>");
            for call in [slow, after_slow, waiting] {
                let e = results.get::<Word>(call).unwrap_err();
                assert_eq!(e.code(), StatusCode::DeadlineExceeded, "call {call:?}: {e}");
            }
            // The slow handler was stopped, not left running.
            eventually("the slow handler is dropped", || {
                fx.probe.dropped.load(Ordering::SeqCst) == 1
            })
            .await;
            fx.stop().await;
        },
    );
}

#[test]
fn server_streams_are_collected_and_streaming_requests_refused_per_call() {
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            let three = batch.call(svc::SAMPLES, &settings(3, "")).unwrap();
            let none = batch.call(svc::SAMPLES, &settings(0, "")).unwrap();
            let trailer = batch.call(svc::SAMPLES, &settings(2, "trailer")).unwrap();
            let broken = batch.call(svc::SAMPLES, &settings(5, "fail:3")).unwrap();
            let spell = batch.call(pipe::SPELL, &word("abc")).unwrap();
            // The first element of a stream is the request of a call that takes from it.
            let first = batch.call_from(pipe::STEP, spell);
            let silent = batch.call(pipe::SPELL, &word("")).unwrap();
            let from_silent = batch.call_from(pipe::STEP, silent);
            let upload = batch.call(svc::UPLOAD, &sample(1)).unwrap();
            let shout = batch.call(svc::SHOUT, &Note { text: "hi".into() }).unwrap();
            let nested = batch
                .call(1u32, &RawMessage(Batch::new().to_bytes().unwrap()))
                .unwrap();
            let unknown = batch.call(0xdead_beefu32, &word("x")).unwrap();
            let reserved = batch.call(2u32, &word("x")).unwrap();
            let discovery = batch.call(0u32, &schema::bebop::Empty {}).unwrap();
            let step = batch.call(pipe::STEP, &word("still")).unwrap();
            let results = fx.batch(&batch).await;

            assert_eq!(
                results.stream::<Sample>(three).unwrap(),
                [sample(1), sample(2), sample(3)]
            );
            assert_eq!(results.payloads(three).unwrap().len(), 3);
            assert!(results.stream::<Sample>(none).unwrap().is_empty());
            assert_eq!(results.stream::<Sample>(trailer).unwrap().len(), 2);
            assert_eq!(results.metadata(trailer).unwrap().get("count"), Some("2"));
            let e = results.stream::<Sample>(broken).unwrap_err();
            assert_eq!(e.code(), StatusCode::Unavailable);
            assert_eq!(e.detail(), "sensor failed at 3");
            let letters: Vec<String> = results
                .stream::<Word>(spell)
                .unwrap()
                .into_iter()
                .map(|w| w.text)
                .collect();
            assert_eq!(letters, ["a", "b", "c"]);
            assert_eq!(text(&results, first), "a>");
            assert!(results.stream::<Word>(silent).unwrap().is_empty());
            let e = results.get::<Word>(from_silent).unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument);
            assert_eq!(
                e.detail(),
                format!(
                    "call {} returned no payload to take as input",
                    silent.call_id()
                )
            );
            // `none` ended at once, with nothing: a success without payloads.
            assert!(results.payloads(none).unwrap().is_empty());
            for (call, what) in [(upload, "Lab.Upload"), (shout, "Lab.Shout")] {
                let e = results.get::<Total>(call).unwrap_err();
                assert_eq!(e.code(), StatusCode::InvalidArgument);
                assert!(e.detail().starts_with(what), "{e}");
            }
            let e = results.get::<Word>(nested).unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument);
            assert_eq!(e.detail(), "a batch cannot contain a batch (method 1)");
            let e = results.get::<Word>(unknown).unwrap_err();
            assert_eq!(e.code(), StatusCode::NotFound);
            assert_eq!(e.detail(), "no method 0xdeadbeef");
            let e = results.get::<Word>(reserved).unwrap_err();
            assert_eq!(e.code(), StatusCode::Unimplemented);
            let d = results.get::<RawMessage>(discovery).unwrap();
            let d = bebop_runtime::rpc::DiscoveryResponse::from_bytes(&d.0).unwrap();
            let names: Vec<_> = d.services.iter().map(|s| s.name).collect();
            assert_eq!(names, ["Lab", "Pipeline"]);
            assert_eq!(text(&results, step), "still>");
            // Samples ran four times, Upload and Shout never.
            assert_eq!(fx.probe.calls.load(Ordering::SeqCst), 4);
            fx.stop().await;
        },
    );
}

#[test]
fn metadata_comes_from_the_batch_and_from_upstream_calls() {
    each_carrier(
        |b| b,
        |fx| async move {
            let mut batch = Batch::new();
            batch.metadata("k", "batch").metadata("a", "1");
            let set = batch
                .call(pipe::STEP, &word("set:k=upstream;md:k"))
                .unwrap();
            let overridden = batch.call_from(pipe::STEP, set);
            let plain = batch.call(pipe::STEP, &word("md:k")).unwrap();
            let header = batch.call(pipe::STEP, &word("md:hdr")).unwrap();
            let set_other = batch.call(pipe::STEP, &word("set:x=2;md:a")).unwrap();
            let kept = batch.call_from(pipe::STEP, set_other);
            let meta = batch
                .call(
                    svc::ECHO,
                    &Note {
                        text: "meta".into(),
                    },
                )
                .unwrap();
            let fail = batch
                .call(
                    svc::ECHO,
                    &Note {
                        text: "fail".into(),
                    },
                )
                .unwrap();
            let results = fx
                .client
                .batch(&batch, CallOptions::new().metadata("hdr", "header"))
                .await
                .unwrap();
            assert_eq!(text(&results, set), "md:k");
            assert_eq!(results.metadata(set).unwrap().get("k"), Some("upstream"));
            // Upstream response metadata overrides the batch's.
            assert_eq!(text(&results, overridden), "upstream");
            assert_eq!(text(&results, plain), "batch");
            // The batch call's own metadata is not given to the calls inside.
            assert_eq!(text(&results, header), "<none>");
            // Batch keys the upstream call did not set are still there.
            assert_eq!(text(&results, kept), "1");
            let md = results.metadata(meta).unwrap();
            assert_eq!((md.get("rows"), md.get("cache")), (Some("3"), Some("miss")));
            let e = results.get::<Note>(fail).unwrap_err();
            assert_eq!(e.metadata().get("attempt"), Some("1"));
            assert_eq!(e.metadata().get("hint"), Some("try again"));
            assert_eq!(results.metadata(fail), Some(e.metadata()));
            fx.stop().await;
        },
    );
}

#[test]
fn interceptors_run_on_every_call_of_a_batch() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = seen.clone();
    each_carrier(
        move |b| {
            let log = log.clone();
            b.interceptor(move |ctx: &Context| {
                let name = ctx.method().name;
                log.lock().unwrap().push(name.to_string());
                if name == "batch" {
                    // The batch call authenticates the peer; the calls inside see it.
                    return match ctx.metadata().get("authorization") {
                        Some("Bearer ok") => {
                            ctx.peer().set_identity("batcher");
                            Ok(())
                        }
                        _ => Err(Status::unauthenticated("no credentials")),
                    };
                }
                if name == "Configure" {
                    return Err(Status::permission_denied("Configure is not for batches"));
                }
                Ok(())
            })
        },
        |fx| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().clear();
                let mut batch = Batch::new();
                let who = batch.call(svc::IDENTIFY, &schema::bebop::Empty {}).unwrap();
                let configure = batch.call(svc::CONFIGURE, &settings(100, "")).unwrap();
                let step = batch.call(pipe::STEP, &word("x")).unwrap();
                let e = fx
                    .client
                    .batch(&batch, CallOptions::new())
                    .await
                    .unwrap_err();
                assert_eq!(e.code(), StatusCode::Unauthenticated);
                assert_eq!(*seen.lock().unwrap(), ["batch"]);
                let auth = CallOptions::new().metadata("authorization", "Bearer ok");
                let results = fx.client.batch(&batch, auth).await.unwrap();
                let id: Identity = results.get(who).unwrap();
                assert_eq!(id.model, "batcher");
                let e = results.get::<Settings>(configure).unwrap_err();
                assert_eq!(e.code(), StatusCode::PermissionDenied);
                assert_eq!(text(&results, step), "x>");
                let names: HashSet<String> = seen.lock().unwrap().iter().cloned().collect();
                let want: HashSet<String> = ["batch", "Identify", "Configure", "Step"]
                    .map(String::from)
                    .into();
                assert_eq!(names, want);
                // Configure's handler never ran; Identify's did.
                assert_eq!(fx.probe.calls.load(Ordering::SeqCst), 1);
                fx.stop().await;
            }
        },
    );
}

#[test]
fn hostile_batches_are_refused_cleanly() {
    each_carrier(
        |b| b,
        |fx| async move {
            // 100,000 calls (2.2 MB, under the frame limit): refused whole, nothing runs.
            let mut batch = Batch::new();
            for _ in 0..100_000 {
                batch.call(pipe::STEP, &word("x")).unwrap();
            }
            let e = fx
                .client
                .batch(&batch, CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::ResourceExhausted);
            assert_eq!(
                e.detail(),
                "a batch of 100000 calls is over the limit of 1000"
            );
            // The limit itself is served: 1000 calls at once.
            let mut batch = Batch::new();
            let calls: Vec<_> = (0..1000)
                .map(|i| batch.call(pipe::STEP, &word(&i.to_string())).unwrap())
                .collect();
            let results = fx.batch(&batch).await;
            for (i, call) in calls.into_iter().enumerate() {
                assert_eq!(text(&results, call), format!("{i}>"));
            }
            assert_eq!(fx.state.calls.load(Ordering::SeqCst), 1000);
            // Requests that do not decode.
            for bad in [&[][..], &[1, 0, 0, 0, 9][..], &[0xff; 12][..]] {
                let e = fx.raw(bad).await.unwrap_err();
                assert_eq!(e.code(), StatusCode::InvalidArgument, "{bad:?}");
                assert!(
                    e.detail().starts_with("the batch request does not decode"),
                    "{e}"
                );
            }
            // An empty batch has no results.
            let results = fx.batch(&Batch::new()).await;
            assert!(results.is_empty());
            fx.stop().await;
        },
    );
}

#[test]
fn collected_streams_are_bounded_per_batch() {
    each_carrier(
        |b| {
            b.limits(Limits {
                max_batch_response: 64 << 10,
                ..Limits::default()
            })
        },
        |fx| async move {
            // 100,000 samples of 12 bytes each would be 1.2 MB: that call fails alone.
            let mut batch = Batch::new();
            let huge = batch.call(svc::SAMPLES, &settings(100_000, "")).unwrap();
            let results = fx.batch(&batch).await;
            let e = results.stream::<Sample>(huge).unwrap_err();
            assert_eq!(e.code(), StatusCode::ResourceExhausted);
            assert_eq!(e.detail(), "the batch response would be over 65536 bytes");
            // The stream was cancelled, not run to its end.
            eventually("the huge stream is dropped", || {
                fx.probe.dropped.load(Ordering::SeqCst) == 1
            })
            .await;
            assert!(fx.probe.sent.load(Ordering::SeqCst) < 100_000);

            // Streams under the limit are collected whole.
            let mut batch = Batch::new();
            let small = batch.call(svc::SAMPLES, &settings(1000, "")).unwrap();
            let step = batch.call(pipe::STEP, &word("ok")).unwrap();
            let results = fx.batch(&batch).await;
            assert_eq!(results.stream::<Sample>(small).unwrap().len(), 1000);
            assert_eq!(text(&results, step), "ok>");

            // Streams running together share the budget: some fail, the others are whole,
            // and the response still fits.
            let mut batch = Batch::new();
            let calls: Vec<_> = (0..20)
                .map(|_| batch.call(svc::SAMPLES, &settings(1000, "")).unwrap())
                .collect();
            let raw = fx.raw(&batch.to_bytes().unwrap()).await.unwrap();
            assert!(raw.len() <= 64 << 10, "{}", raw.len());
            let results = BatchResults::from_bytes(&raw).unwrap();
            let mut ok = 0;
            for call in calls {
                match results.stream::<Sample>(call) {
                    Ok(samples) => {
                        assert_eq!(samples.len(), 1000);
                        ok += 1;
                    }
                    Err(e) => assert_eq!(e.code(), StatusCode::ResourceExhausted),
                }
            }
            // 12 kB each in 64 KiB: at least one (and at most five) fit.
            assert!((1..=5).contains(&ok), "{ok} of 20 fit");
            fx.stop().await;
        },
    );
}

mod model {
    //! Random batches against a sequential model of `docs/rpc.md`, "Batches".

    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    /// One random call: what it calls, and the index of an earlier call it takes its input
    /// from.
    #[derive(Clone, Debug)]
    pub struct Call {
        method: Method,
        from: Option<usize>,
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Method {
        Step,
        Fail,
        Unknown,
    }

    impl Method {
        fn id(self) -> u32 {
            match self {
                Method::Step => pipe::STEP.id,
                Method::Fail => pipe::FAIL.id,
                Method::Unknown => 0x0bad_0bad,
            }
        }
    }

    /// Up to 10 calls, each taking input from an earlier one or not, with call ids that are
    /// distinct but neither positions nor in order.
    pub fn batches() -> impl Strategy<Value = (Vec<Call>, Vec<i32>)> {
        let call = (
            prop_oneof![
                6 => Just(Method::Step),
                2 => Just(Method::Fail),
                1 => Just(Method::Unknown),
            ],
            any::<bool>(),
            any::<prop::sample::Index>(),
        );
        prop::collection::vec(call, 0..10).prop_flat_map(|raw| {
            let calls: Vec<Call> = raw
                .iter()
                .enumerate()
                .map(|(i, (method, chained, at))| Call {
                    method: *method,
                    from: (*chained && i > 0).then(|| at.index(i)),
                })
                .collect();
            let n = calls.len();
            let ids = Just((0..n as i32).collect::<Vec<_>>())
                .prop_shuffle()
                .prop_map(|ids| ids.into_iter().map(|id| id * 3 + 1).collect());
            (Just(calls), ids)
        })
    }

    /// What the server must answer: the text of each call's response, or its code and
    /// detail (an empty detail: not checked).
    fn expected(calls: &[Call], ids: &[i32]) -> Vec<Result<String, (StatusCode, String)>> {
        let mut out: Vec<Result<String, (StatusCode, String)>> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let input = match call.from {
                None => Ok(format!("w{i}")),
                Some(from) => match &out[from] {
                    Ok(text) => Ok(text.clone()),
                    Err(_) => Err((
                        StatusCode::InvalidArgument,
                        format!("dependency {} failed", ids[from]),
                    )),
                },
            };
            out.push(input.and_then(|text| match call.method {
                Method::Step => Ok(format!("{text}>")),
                Method::Fail => Err((StatusCode::Unavailable, format!("{text} failed on purpose"))),
                Method::Unknown => Err((StatusCode::NotFound, String::new())),
            }));
        }
        out
    }

    pub async fn check(client: &Client, calls: &[Call], ids: &[i32]) -> Result<(), TestCaseError> {
        let raw: Vec<RawCall> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let payload = match c.from {
                    None => encoded(&word(&format!("w{i}"))),
                    Some(_) => Vec::new(),
                };
                (
                    ids[i],
                    c.method.id(),
                    payload,
                    c.from.map_or(-1, |f| ids[f]),
                )
            })
            .collect();
        let bytes = client
            .unary::<Encoded<'_>, RawMessage>(1, &Encoded(&raw_batch(&raw)), CallOptions::new())
            .await
            .map_err(|e| TestCaseError::fail(format!("the batch failed: {e}")))?
            .into_inner()
            .0;
        let response = BatchResponse::from_bytes(&bytes)
            .map_err(|e| TestCaseError::fail(format!("the response does not decode: {e}")))?;
        let results: Vec<_> = response.results.iter().collect();
        prop_assert_eq!(results.len(), calls.len());
        for (i, (result, want)) in results.iter().zip(expected(calls, ids)).enumerate() {
            prop_assert_eq!(result.call_id, ids[i]);
            match (&result.outcome, want) {
                (BatchOutcome::Success(s), Ok(text)) => {
                    let payloads: Vec<&[u8]> = s.payloads.iter().collect();
                    prop_assert_eq!(payloads.len(), 1);
                    let got = Word::from_bytes(payloads[0])
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(got.text, text, "call {}", i);
                }
                (BatchOutcome::Error(e), Err((code, detail))) => {
                    prop_assert_eq!(e.code, Some(code), "call {}", i);
                    if !detail.is_empty() {
                        prop_assert_eq!(e.detail, Some(detail.as_str()), "call {}", i);
                    }
                }
                (got, want) => {
                    return Err(TestCaseError::fail(format!(
                        "call {i}: got {got:?}, expected {want:?}"
                    )));
                }
            }
        }
        Ok(())
    }

    pub fn runner() -> TestRunner {
        TestRunner::new(Config {
            cases: 48,
            failure_persistence: None,
            ..Config::default()
        })
    }
}

#[test]
fn random_batches_match_a_sequential_model() {
    for transport in CALL_TRANSPORTS {
        let rt = rt();
        let fx = rt.block_on(Fixture::start(transport, &|b| b));
        let mut runner = model::runner();
        let result = runner.run(&model::batches(), |(calls, ids)| {
            rt.block_on(model::check(&fx.client, &calls, &ids))
        });
        if let Err(e) = result {
            panic!("{transport:?}: {e}");
        }
        rt.block_on(fx.stop());
    }
}
