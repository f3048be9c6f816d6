//! Method 1: a batch of calls run on the server in one round trip (`docs/rpc.md`,
//! "Batches").
//!
//! The batch is validated whole, then every call runs as soon as the call it takes its input
//! from has succeeded (calls without `input_from` all start at once). Each call is started
//! with [`Server::start_admitted`], so it passes the same admission checks, interceptors,
//! deadline and handler as a call from a connection; its response frames are collected
//! into its `BatchResult`.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bebop_runtime::rpc::{
    BATCH_METHOD_ID, BatchOutcome, BatchRequest, BatchResponse, BatchResult, BatchSuccess, RpcError,
};
use bebop_runtime::{Array, Decode, Map, MethodKind};
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};

use super::call::ServerCall;
use super::{Server, Shared};
use crate::context::{Context, Peer, instant_of};
use crate::metadata::Metadata;
use crate::status::Status;
use crate::transport::{CallStart, ResponseKind, ResponseStream};

/// What every result takes at least in the encoded `BatchResponse`: its `call_id` (4), the
/// union's length and discriminator (5) and the smallest `RpcError` (a length, the code and
/// the end marker: 7). Reserved for every call before any runs, so that a result always
/// fits, if need be as a bare code.
const RESULT_RESERVE: usize = 16;

/// A call settled this close to the batch's deadline counts as settled after it: its
/// dependents are not started (the clocks of the batch and of its calls may differ by a
/// few microseconds).
const DEADLINE_SLACK: Duration = Duration::from_millis(1);

/// Serves one batch call.
pub(crate) async fn serve(shared: Arc<Shared>, mut call: ServerCall) {
    let request = match call.single_payload().await {
        Ok(r) => r,
        Err(status) => return call.reject(status).await,
    };
    let server = Server { shared };
    let ctx = call.context().clone();
    match run(&server, &ctx, &request).await {
        Ok(response) => call.respond_encoded(&response).await,
        Err(status) => call.reject(status).await,
    }
}

/// One call of the batch, validated.
struct Planned<'a> {
    call_id: i32,
    method_id: u32,
    payload: &'a [u8],
    /// Whether the call takes its own payload (`input_from` -1): it starts at once.
    root: bool,
    /// The calls that take their input from this one, by index.
    dependents: Vec<usize>,
}

/// What a call that succeeded returned, and what its payloads cost of the response budget.
struct Collected {
    payloads: Vec<Vec<u8>>,
    metadata: Metadata,
    charged: usize,
}

/// How a call ended, as it goes into the response.
enum Outcome {
    Success {
        payloads: Vec<Vec<u8>>,
        metadata: Metadata,
    },
    Failure(Status),
}

/// The bytes of the encoded response still free (`Limits::max_batch_response`), shared by
/// the calls running at once.
struct Budget {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    fn give(&self, bytes: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    fn full(&self) -> Status {
        Status::resource_exhausted(format!(
            "the batch response would be over {} bytes",
            self.limit
        ))
    }
}

/// Validates the request, runs its calls and encodes the response; an `Err` fails the whole
/// batch call.
async fn run(server: &Server, ctx: &Context, request: &[u8]) -> Result<Vec<u8>, Status> {
    let limits = &server.shared.limits;
    let batch = BatchRequest::from_bytes(request)
        .map_err(|e| Status::invalid_argument(format!("the batch request does not decode: {e}")))?;
    let count = batch.calls.len();
    if count > limits.max_batch_calls {
        return Err(Status::resource_exhausted(format!(
            "a batch of {count} calls is over the limit of {}",
            limits.max_batch_calls
        )));
    }
    let mut plan = validate(&batch)?;
    let shared_metadata = Metadata::from_view(batch.metadata);
    let budget = Budget {
        used: AtomicUsize::new(0),
        limit: limits.max_batch_response,
    };
    let least = count.saturating_mul(RESULT_RESERVE).saturating_add(4);
    if !budget.take(least) {
        return Err(Status::resource_exhausted(format!(
            "the response to a batch of {count} calls takes at least {least} bytes, over the \
             limit of {}",
            budget.limit
        )));
    }

    // The calls' deadline: the batch's, less what is kept back to send the response.
    let (deadline, expiry) = match ctx.deadline() {
        None => (None, None),
        Some(d) => {
            let left = d
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO);
            let reserve = (left / 10).min(limits.batch_deadline_reserve);
            let inner = d.checked_sub(reserve).unwrap_or(d);
            (Some(inner), Some(instant_of(inner)))
        }
    };
    let per_call_buffer = (limits.response_buffer / count.max(1))
        .max(1024)
        .min(limits.response_buffer.max(1));
    let runner = Runner {
        server,
        peer: ctx.peer_handle(),
        deadline,
        budget: &budget,
        response_buffer: per_call_buffer,
    };
    let mut scheduler = Scheduler {
        outcomes: (0..count).map(|_| None).collect(),
        budget: &budget,
        expiry,
    };

    let mut running = FuturesUnordered::new();
    for (i, call) in plan.iter().enumerate().filter(|(_, c)| c.root) {
        running.push(runner.run(
            i,
            call.method_id,
            call.payload.to_vec(),
            shared_metadata.clone(),
        ));
    }
    let mut timer = pin!(sleep_until(expiry));
    while !running.is_empty() {
        let event = tokio::select! {
            biased;
            done = running.next() => done,
            () = &mut timer => None,
        };
        match event {
            Some((i, result)) => {
                for (next, request, metadata) in
                    scheduler.settle(&mut plan, i, result, &shared_metadata)
                {
                    if let Some(call) = plan.get(next) {
                        running.push(runner.run(next, call.method_id, request, metadata));
                    }
                }
            }
            // (`running` is not empty, so its end is never the event.)
            None => {
                // The deadline passed: keep what has already come back, and give up on the
                // rest (dropping a call's response stream cancels it).
                scheduler.expire();
                while let Some(Some((i, result))) = running.next().now_or_never() {
                    let _ = scheduler.settle(&mut plan, i, result, &shared_metadata);
                }
                break;
            }
        }
    }
    drop(running);
    let outcomes = scheduler.finish();
    encode_response(&plan, outcomes)
}

/// The checks of `docs/rpc.md` ("Batches") on the whole batch, before anything runs.
fn validate<'a>(batch: &BatchRequest<'a>) -> Result<Vec<Planned<'a>>, Status> {
    let mut index: HashMap<i32, usize> = HashMap::with_capacity(batch.calls.len());
    let mut plan: Vec<Planned<'a>> = Vec::with_capacity(batch.calls.len());
    for (i, call) in batch.calls.iter().enumerate() {
        let id = call.call_id;
        if id < 0 {
            return Err(Status::invalid_argument(format!(
                "call {i} of the batch has the negative call_id {id}"
            )));
        }
        if index.contains_key(&id) {
            return Err(Status::invalid_argument(format!(
                "call_id {id} appears more than once in the batch"
            )));
        }
        match call.input_from {
            -1 => {}
            from => match index.get(&from) {
                Some(&upstream) => {
                    if let Some(p) = plan.get_mut(upstream) {
                        p.dependents.push(i);
                    }
                }
                None => {
                    return Err(Status::invalid_argument(format!(
                        "call {id} takes its input from {from}, which is not an earlier \
                         call of the batch"
                    )));
                }
            },
        }
        index.insert(id, i);
        plan.push(Planned {
            call_id: id,
            method_id: call.method_id,
            payload: call.payload,
            root: call.input_from == -1,
            dependents: Vec::new(),
        });
    }
    Ok(plan)
}

/// Starts and collects single calls of a batch.
struct Runner<'a> {
    server: &'a Server,
    peer: Arc<Peer>,
    deadline: Option<SystemTime>,
    budget: &'a Budget,
    response_buffer: usize,
}

impl Runner<'_> {
    /// Runs call `index` (method `method_id`) with `request` and `metadata` to its end.
    async fn run(
        &self,
        index: usize,
        method_id: u32,
        request: Vec<u8>,
        metadata: Metadata,
    ) -> (usize, Result<Collected, Status>) {
        (index, self.call(method_id, request, metadata).await)
    }

    async fn call(
        &self,
        method_id: u32,
        request: Vec<u8>,
        metadata: Metadata,
    ) -> Result<Collected, Status> {
        if method_id == BATCH_METHOD_ID {
            return Err(Status::invalid_argument(
                "a batch cannot contain a batch (method 1)",
            ));
        }
        let method = self.server.method(method_id);
        if let Some(m) = method {
            if matches!(m.kind, MethodKind::ClientStream | MethodKind::DuplexStream) {
                return Err(Status::invalid_argument(format!(
                    "{}.{} takes a stream of requests; a batch takes unary and server-stream \
                     methods only",
                    m.service, m.name
                )));
            }
        }
        let streaming = method.is_some_and(|m| m.kind == MethodKind::ServerStream);
        // Cursors are not carried into a batch: every call starts at 0.
        let start = CallStart::new(method_id, self.peer.clone())
            .metadata(metadata)
            .deadline(self.deadline);
        let (mut requests, mut responses) = self
            .server
            .start_admitted(start, self.response_buffer)?
            .into_parts();
        // A call that stops taking requests has answered already; its response says why.
        let _ = requests.send(request, true).await;
        let mut charged = 0;
        let collected = collect(&mut responses, streaming, self.budget, &mut charged).await;
        match collected {
            Ok((payloads, metadata)) => Ok(Collected {
                payloads,
                metadata,
                charged,
            }),
            Err(status) => {
                self.budget.give(charged);
                Err(status)
            }
        }
    }
}

/// Reads a call's response to its end: its messages (one for a unary method, every element
/// of a server stream), then its response metadata or its error. Every message is charged
/// to `budget` as it comes (into `charged`); past the budget the call is cancelled.
async fn collect(
    responses: &mut ResponseStream,
    streaming: bool,
    budget: &Budget,
    charged: &mut usize,
) -> Result<(Vec<Vec<u8>>, Metadata), Status> {
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    loop {
        let Some(frame) = responses.next().await else {
            return Err(Status::cancelled("the call ended without a response"));
        };
        match frame.kind() {
            ResponseKind::Message => {
                if !streaming && !payloads.is_empty() {
                    return Err(Status::internal(
                        "the method sent more than one response to a unary call",
                    ));
                }
                let payload = frame.payload();
                let cost = 4 + payload.len();
                if !budget.take(cost) {
                    responses.cancel();
                    return Err(budget.full());
                }
                *charged += cost;
                payloads.push(payload.to_vec());
                if frame.is_end() {
                    return Ok((payloads, Metadata::new()));
                }
            }
            ResponseKind::End => {
                if !streaming && payloads.is_empty() {
                    // A unary response that is empty (`bebop.Empty`) is still one payload.
                    if !budget.take(4) {
                        return Err(budget.full());
                    }
                    *charged += 4;
                    payloads.push(Vec::new());
                }
                return Ok((payloads, Metadata::new()));
            }
            ResponseKind::Trailer => {
                return Ok((payloads, frame.trailer_metadata().unwrap_or_default()));
            }
            ResponseKind::Error => {
                return Err(frame
                    .status()
                    .unwrap_or_else(|| Status::internal("an error frame without a status")));
            }
        }
    }
}

/// The results so far, and which calls may start next.
struct Scheduler<'a> {
    outcomes: Vec<Option<Outcome>>,
    budget: &'a Budget,
    expiry: Option<Instant>,
}

impl Scheduler<'_> {
    /// Treats the deadline as passed from now on.
    fn expire(&mut self) {
        self.expiry = Some(Instant::now());
    }

    fn expired(&self) -> bool {
        self.expiry
            .is_some_and(|at| Instant::now() + DEADLINE_SLACK >= at)
    }

    /// Records how call `index` ended and decides about its dependents: each starts (the
    /// returned requests: index, request bytes, metadata) or fails, with its own
    /// dependents, without running.
    fn settle(
        &mut self,
        plan: &mut [Planned<'_>],
        index: usize,
        result: Result<Collected, Status>,
        shared_metadata: &Metadata,
    ) -> Vec<(usize, Vec<u8>, Metadata)> {
        let outcome = match result {
            Ok(c) => {
                // The rest of the result: the payload count, the metadata and the union,
                // less the reserve the call already holds.
                let rest = (13 + c.metadata.wire_size()).saturating_sub(RESULT_RESERVE);
                if self.budget.take(rest) {
                    Outcome::Success {
                        payloads: c.payloads,
                        metadata: c.metadata,
                    }
                } else {
                    self.budget.give(c.charged);
                    self.failure(self.budget.full())
                }
            }
            Err(status) => self.failure(status),
        };
        let dependents = plan
            .get_mut(index)
            .map(|p| std::mem::take(&mut p.dependents))
            .unwrap_or_default();
        let call_id = plan.get(index).map_or(-1, |p| p.call_id);
        let mut start = Vec::new();
        if self.expired() {
            let status =
                Status::deadline_exceeded("the batch deadline passed before the call started");
            for d in dependents {
                self.fail_with_dependents(plan, d, status.clone(), false);
            }
        } else {
            match &outcome {
                Outcome::Success { payloads, metadata } => {
                    for d in dependents {
                        match payloads.first() {
                            Some(first) => {
                                // Upstream response metadata overrides the batch's.
                                let mut md = shared_metadata.clone();
                                md.merge(metadata);
                                start.push((d, first.clone(), md));
                            }
                            None => {
                                let status = Status::invalid_argument(format!(
                                    "call {call_id} returned no payload to take as input"
                                ));
                                self.fail_with_dependents(plan, d, status, true);
                            }
                        }
                    }
                }
                Outcome::Failure(_) => {
                    let status = Status::invalid_argument(format!("dependency {call_id} failed"));
                    for d in dependents {
                        self.fail_with_dependents(plan, d, status.clone(), true);
                    }
                }
            }
        }
        if let Some(slot) = self.outcomes.get_mut(index) {
            *slot = Some(outcome);
        }
        start
    }

    /// Fails call `index` with `status` and everything that depends on it, transitively:
    /// each with "dependency {id} failed" naming its own upstream call when `cascade`, or
    /// with the same status otherwise (a passed deadline).
    fn fail_with_dependents(
        &mut self,
        plan: &mut [Planned<'_>],
        index: usize,
        status: Status,
        cascade: bool,
    ) {
        let mut stack = vec![(index, status)];
        while let Some((i, status)) = stack.pop() {
            let dependents = plan
                .get_mut(i)
                .map(|p| std::mem::take(&mut p.dependents))
                .unwrap_or_default();
            let next = if cascade {
                let id = plan.get(i).map_or(-1, |p| p.call_id);
                Status::invalid_argument(format!("dependency {id} failed"))
            } else {
                status.clone()
            };
            for d in dependents {
                stack.push((d, next.clone()));
            }
            let outcome = self.failure(status);
            if let Some(slot) = self.outcomes.get_mut(i) {
                *slot = Some(outcome);
            }
        }
    }

    /// A failure, charged to the budget: with its detail and metadata when they fit, as a
    /// bare code otherwise (which the call's reserve always holds).
    fn failure(&self, status: Status) -> Outcome {
        let size = status.to_error_payload().len();
        if self.budget.take(size.saturating_sub(7)) {
            Outcome::Failure(status)
        } else {
            Outcome::Failure(Status::new(status.code(), ""))
        }
    }

    /// Every outcome; calls still without one had not finished when the deadline passed.
    fn finish(self) -> Vec<Outcome> {
        let budget = self.budget;
        self.outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    let status = Status::deadline_exceeded(
                        "the batch deadline passed before the call finished",
                    );
                    let size = status.to_error_payload().len();
                    if budget.take(size.saturating_sub(7)) {
                        Outcome::Failure(status)
                    } else {
                        Outcome::Failure(Status::new(status.code(), ""))
                    }
                })
            })
            .collect()
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// The encoded `BatchResponse`: one result per call, in the order of the request.
fn encode_response(plan: &[Planned<'_>], outcomes: Vec<Outcome>) -> Result<Vec<u8>, Status> {
    let payloads: Vec<Vec<&[u8]>> = outcomes
        .iter()
        .map(|o| match o {
            Outcome::Success { payloads, .. } => payloads.iter().map(Vec::as_slice).collect(),
            Outcome::Failure(_) => Vec::new(),
        })
        .collect();
    let pairs: Vec<Vec<(&str, &str)>> = outcomes
        .iter()
        .map(|o| match o {
            Outcome::Success { metadata, .. } => metadata.as_pairs(),
            Outcome::Failure(status) => status.metadata().as_pairs(),
        })
        .collect();
    let results: Vec<BatchResult<'_>> = plan
        .iter()
        .zip(&outcomes)
        .zip(payloads.iter().zip(&pairs))
        .map(|((call, outcome), (payloads, pairs))| BatchResult {
            call_id: call.call_id,
            outcome: match outcome {
                Outcome::Success { .. } => BatchOutcome::Success(BatchSuccess {
                    payloads: Array::from_slice(payloads),
                    metadata: Map::from_slice(pairs),
                }),
                Outcome::Failure(status) => BatchOutcome::Error(RpcError {
                    code: Some(status.code()),
                    detail: (!status.detail().is_empty()).then_some(status.detail()),
                    metadata: (!pairs.is_empty()).then(|| Map::from_slice(pairs)),
                }),
            },
        })
        .collect();
    bebop_runtime::encode_to_vec(&BatchResponse {
        results: Array::from_slice(&results),
    })
    .map_err(|e| Status::internal(format!("encoding the batch response failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_runtime::rpc::StatusCode;

    fn planned(call_id: i32) -> Planned<'static> {
        Planned {
            call_id,
            method_id: 0,
            payload: &[],
            root: true,
            dependents: Vec::new(),
        }
    }

    #[test]
    fn response_bytes_by_hand() {
        let plan = [planned(0), planned(1)];
        let outcomes = vec![
            Outcome::Success {
                payloads: vec![vec![0x2a]],
                metadata: Metadata::new(),
            },
            Outcome::Failure(Status::not_found("x")),
        ];
        let bytes = encode_response(&plan, outcomes).unwrap();
        #[rustfmt::skip]
        let want: &[u8] = &[
            2, 0, 0, 0,                 // results: 2
            0, 0, 0, 0,                 // call_id 0
            14, 0, 0, 0, 1,             // union: 14 bytes, Success(1)
            1, 0, 0, 0,                 //   payloads: 1
            1, 0, 0, 0, 0x2a,           //     [0x2a]
            0, 0, 0, 0,                 //   metadata: none
            1, 0, 0, 0,                 // call_id 1
            15, 0, 0, 0, 2,             // union: 15 bytes, Error(2)
            10, 0, 0, 0,                //   RpcError message: 10 bytes
            1, 5,                       //     code(1) = NOT_FOUND
            2, 1, 0, 0, 0, b'x', 0,     //     detail(2) = "x"
            0,                          //     end
        ];
        assert_eq!(bytes, want);
        let back = BatchResponse::from_bytes(&bytes).unwrap();
        let results: Vec<_> = back.results.iter().collect();
        assert_eq!(results.len(), 2);
        match results[1].outcome {
            BatchOutcome::Error(e) => assert_eq!(e.code, Some(StatusCode::NotFound)),
            BatchOutcome::Success(_) => panic!("call 1 should have failed"),
        }
    }

    #[test]
    fn the_reserve_holds_the_smallest_result() {
        let plan = [planned(7)];
        let bytes = encode_response(
            &plan,
            vec![Outcome::Failure(Status::new(StatusCode::Internal, ""))],
        )
        .unwrap();
        assert_eq!(bytes.len(), 4 + RESULT_RESERVE);
        let empty = encode_response(
            &plan,
            vec![Outcome::Success {
                payloads: Vec::new(),
                metadata: Metadata::new(),
            }],
        )
        .unwrap();
        // 13 bytes and the metadata, as `Scheduler::settle` charges.
        assert_eq!(empty.len(), 4 + 13 + Metadata::new().wire_size());
    }

    #[test]
    fn budget_never_goes_over() {
        let b = Budget {
            used: AtomicUsize::new(0),
            limit: 10,
        };
        assert!(b.take(6));
        assert!(!b.take(5));
        assert!(b.take(4));
        b.give(4);
        assert!(b.take(3));
        assert_eq!(b.used.load(Ordering::Acquire), 9);
    }

    fn call(call_id: i32, input_from: i32) -> bebop_runtime::rpc::BatchCall<'static> {
        bebop_runtime::rpc::BatchCall {
            call_id,
            method_id: 9,
            payload: &[],
            input_from,
        }
    }

    fn check(calls: &[bebop_runtime::rpc::BatchCall<'static>]) -> Result<(), Status> {
        let batch = BatchRequest {
            calls: Array::from_slice(calls),
            metadata: Map::default(),
        };
        validate(&batch).map(|_| ())
    }

    #[test]
    fn validation_rejects_what_the_specification_lists() {
        assert!(check(&[call(0, -1), call(5, 0), call(2, 5)]).is_ok());
        for (calls, detail) in [
            (vec![call(-1, -1)], "negative call_id -1"),
            (
                vec![call(0, -1), call(0, -1)],
                "call_id 0 appears more than once",
            ),
            (vec![call(0, 1), call(1, -1)], "not an earlier call"),
            (vec![call(0, 0)], "not an earlier call"),
            (vec![call(0, 3)], "not an earlier call"),
            (vec![call(0, -1), call(1, -2)], "not an earlier call"),
        ] {
            let e = check(&calls).unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument);
            assert!(e.detail().contains(detail), "{e}");
        }
    }
}
