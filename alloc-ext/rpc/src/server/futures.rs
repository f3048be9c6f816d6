//! Methods 2 to 4: futures (`docs/rpc.md`, "Futures"), on a [`FutureStore`].
//!
//! - Dispatch (2) checks the inner call, records a pending future owned by the caller and
//!   runs the inner call on a task of its own (tracked by the server, independent of the
//!   dispatch's connection) through [`Server::start_admitted`], so it passes the same
//!   checks, interceptors, deadline and handler as a call from a connection; the outcome is
//!   then [`FutureStore::complete`]d.
//! - Resolve (3) subscribes to the store's events, replays what already completed, then
//!   pushes each completion of the caller's futures.
//! - Cancel (4) cancels through the store, which tells the runner of the future (this
//!   process or another) to stop the task.
//!
//! A housekeeping task, started with the first use (or when the server is built inside a
//! runtime), fails the futures a previous run of this runner left pending
//! ([`FutureStore::fail_runner`]), evicts what the retention policy no longer keeps, and
//! cancels the local tasks of futures cancelled through the store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, SystemTime};

use bebop_runtime::rpc::{
    BATCH_METHOD_ID, DISCOVERY_METHOD_ID, Empty, FutureCancelRequest, FutureDispatchRequest,
    FutureHandle, FutureResolveRequest, RESERVED_METHOD_IDS,
};
use bebop_runtime::{Decode, MethodKind};
use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::call::ServerCall;
use super::{Server, Shared};
use crate::context::{Context, Peer};
use crate::futures::{
    Cancellation, Event, FutureId, FutureRecord, FutureStore, Insertion, MAX_PAGE, NewFuture,
    Outcome, Retention, StoreError,
};
use crate::metadata::Metadata;
use crate::status::Status;
use crate::transport::{CallStart, ResponseKind, ResponseStream};

/// How a server runs futures (methods 2 to 4 of the protocol): see
/// [`ServerBuilder::futures`](super::ServerBuilder::futures). The store's own settings
/// ([`StoreConfig`](crate::futures::StoreConfig): the runner name, the most pending futures,
/// the largest result) are the store's.
///
/// ```
/// use std::time::Duration;
/// use bebop_rpc::FuturesConfig;
/// use bebop_rpc::futures::Retention;
///
/// let config = FuturesConfig {
///     retention: Retention { max_age: Duration::from_secs(600), max_completed: Some(1000) },
///     ..FuturesConfig::default()
/// };
/// assert_eq!(config.eviction_interval, Duration::from_secs(30));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuturesConfig {
    /// How long completed futures are kept, and how many (`docs/RPC.md` 14.8).
    pub retention: Retention,
    /// How often the retention policy is applied ([`FutureStore::evict`]).
    pub eviction_interval: Duration,
}

impl Default for FuturesConfig {
    /// The default [`Retention`] (an hour, 100,000 completed futures), applied every 30
    /// seconds.
    fn default() -> Self {
        FuturesConfig {
            retention: Retention::default(),
            eviction_interval: Duration::from_secs(30),
        }
    }
}

/// A server's futures: the store, and the tasks this process runs.
pub(crate) struct Futures {
    pub store: Arc<dyn FutureStore>,
    pub config: FuturesConfig,
    /// The futures this process runs, with what cancels each.
    running: Mutex<HashMap<FutureId, CancellationToken>>,
    /// The results of local futures dispatched with `discard_result`, for the resolve
    /// streams of this process: such a result is discarded as soon as it is sent here, so
    /// a stream may find it gone when it reads the store.
    local: broadcast::Sender<Arc<FutureRecord>>,
    /// Set once the restart recovery ran and the housekeeping task started.
    ready: tokio::sync::OnceCell<Result<(), Status>>,
}

impl Futures {
    pub(crate) fn new(store: Arc<dyn FutureStore>, config: FuturesConfig) -> Futures {
        let capacity = store.config().event_capacity.max(16);
        Futures {
            store,
            config,
            running: Mutex::new(HashMap::new()),
            local: broadcast::channel(capacity).0,
            ready: tokio::sync::OnceCell::new(),
        }
    }

    fn running(&self) -> MutexGuard<'_, HashMap<FutureId, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn cancel_local(&self, id: FutureId) {
        if let Some(token) = self.running().get(&id) {
            token.cancel();
        }
    }

    fn runner(&self) -> &str {
        &self.store.config().runner
    }
}

impl Shared {
    /// Runs the restart recovery of this runner once and starts the housekeeping task; every
    /// futures method waits for it. A failed recovery (the store unreachable) is answered
    /// to every futures call, so the server does not run futures next to stale ones.
    pub(crate) async fn futures_ready(self: &Arc<Self>) -> Result<Arc<Futures>, Status> {
        let Some(futures) = self.futures.clone() else {
            return Err(Status::unimplemented("futures are not served here"));
        };
        let result = futures
            .ready
            .get_or_init(|| async {
                match futures.store.fail_runner(futures.runner()).await {
                    Ok(failed) => {
                        if failed > 0 {
                            tracing::info!(
                                failed,
                                runner = futures.runner(),
                                "failed the futures a previous run left pending"
                            );
                        }
                        self.tracker.spawn(housekeeping(
                            Arc::downgrade(&futures),
                            futures.store.subscribe(),
                            self.draining.clone(),
                            self.stop.clone(),
                        ));
                        Ok(())
                    }
                    Err(e) => Err(Status::unavailable(format!(
                        "the restart recovery of the future store failed: {e}"
                    ))),
                }
            })
            .await;
        result.clone().map(|()| futures)
    }
}

/// Applies the retention policy now and then, and cancels the local tasks of futures
/// cancelled through the store. Ends when the server has stopped (once shutdown began and
/// no future runs here any more, or when its grace period is over) or was dropped.
async fn housekeeping(
    futures: Weak<Futures>,
    mut events: crate::futures::EventStream,
    draining: CancellationToken,
    stop: CancellationToken,
) {
    let Some(interval) = futures
        .upgrade()
        .map(|f| f.config.eviction_interval.max(Duration::from_millis(10)))
    else {
        return;
    };
    let mut evict = tokio::time::interval(interval);
    evict.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut check = tokio::time::interval(Duration::from_millis(20));
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            event = events.next() => {
                let Some(f) = futures.upgrade() else { return };
                match event {
                    Some(Event::CancelRequested { id, runner }) if runner == f.runner() => {
                        f.cancel_local(id);
                    }
                    Some(Event::Lagged) => {
                        // Cancel requests may be lost: look at every local future.
                        let ids: Vec<FutureId> = f.running().keys().copied().collect();
                        for id in ids {
                            if let Ok(Some(record)) = f.store.get(id).await {
                                if !record.state.is_pending() {
                                    f.cancel_local(id);
                                }
                            }
                        }
                    }
                    Some(_) => {}
                    None => {
                        // The store's events ended: keep evicting, without them.
                        events = Box::pin(futures_util::stream::pending());
                    }
                }
            }
            _ = evict.tick() => {
                let Some(f) = futures.upgrade() else { return };
                match f.store.evict(f.config.retention).await {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(evicted = n, "evicted completed futures"),
                    Err(e) => tracing::warn!(error = %e, "evicting completed futures failed"),
                }
            }
            // (Wakes the loop when shutdown begins, so that the check below runs.)
            () = draining.cancelled(), if !draining.is_cancelled() => {}
            _ = check.tick(), if draining.is_cancelled() => {
                let Some(f) = futures.upgrade() else { return };
                if f.running().is_empty() {
                    return;
                }
            }
        }
    }
}

/// The caller's identity as the owner of futures (`docs/RPC.md` 14.6).
fn owner_of(ctx: &Context) -> Result<String, Status> {
    ctx.peer().owner().ok_or_else(|| {
        Status::unauthenticated(
            "futures need a caller identity or a remote address, and this call has neither",
        )
    })
}

fn store_status(e: StoreError) -> Status {
    e.to_status()
}

/// Serves one dispatch call (method 2).
pub(crate) async fn dispatch(shared: Arc<Shared>, mut call: ServerCall) {
    let request = match call.single_payload().await {
        Ok(r) => r,
        Err(status) => return call.reject(status).await,
    };
    let ctx = call.context().clone();
    match dispatch_future(&shared, &ctx, &request).await {
        Ok(id) => match bebop_runtime::encode_to_vec(&FutureHandle { id: id.uuid() }) {
            Ok(bytes) => call.respond_encoded(&bytes).await,
            Err(e) => {
                call.reject(Status::internal(format!("encoding the handle failed: {e}")))
                    .await
            }
        },
        Err(status) => call.reject(status).await,
    }
}

/// The checks of a dispatch, the insertion and the start of the inner call.
async fn dispatch_future(
    shared: &Arc<Shared>,
    ctx: &Context,
    request: &[u8],
) -> Result<FutureId, Status> {
    let futures = shared.futures_ready().await?;
    let req = FutureDispatchRequest::from_bytes(request).map_err(|e| {
        Status::invalid_argument(format!("the dispatch request does not decode: {e}"))
    })?;
    let method_id = req
        .method_id
        .ok_or_else(|| Status::invalid_argument("the dispatch request names no method_id"))?;
    check_dispatchable(shared, method_id)?;
    let metadata = req.metadata.map(Metadata::from_view).unwrap_or_default();
    let size = metadata.wire_size();
    if size > shared.limits.max_metadata {
        return Err(Status::resource_exhausted(format!(
            "the inner call's metadata of {size} bytes is over the limit of {}",
            shared.limits.max_metadata
        )));
    }
    let deadline = match req.deadline {
        None => None,
        Some(t) => Some(bebop_runtime::timestamp_to_system_time(t).ok_or_else(|| {
            Status::invalid_argument("the inner call's deadline is out of range")
        })?),
    };
    let owner = owner_of(ctx)?;
    let mut new =
        NewFuture::new(owner, method_id).with_discard_result(req.discard_result.unwrap_or(false));
    if let Some(key) = req.idempotency_key {
        new = new.with_key(key);
    }
    let discard = new.discard_result;
    let id = match futures.store.insert(new).await.map_err(store_status)? {
        Insertion::Inserted(id) => id,
        Insertion::Existing(id) => return Ok(id),
        Insertion::KeyOfAnotherOwner => {
            return Err(Status::permission_denied(
                "the idempotency key belongs to another caller's future",
            ));
        }
        Insertion::Full { limit } => {
            return Err(Status::resource_exhausted(format!(
                "the server holds its limit of {limit} pending futures"
            )));
        }
    };
    let token = shared.stop.child_token();
    futures.running().insert(id, token.clone());
    let job = Job {
        server: Server {
            shared: shared.clone(),
        },
        futures,
        id,
        method_id,
        payload: req.payload.unwrap_or_default().to_vec(),
        metadata,
        deadline,
        peer: ctx.peer_handle(),
        discard,
        token,
    };
    shared.tracker.spawn(job.run());
    Ok(id)
}

/// Only unary methods and batches may be dispatched (`docs/RPC.md` 14.1).
fn check_dispatchable(shared: &Shared, method_id: u32) -> Result<(), Status> {
    match method_id {
        BATCH_METHOD_ID | DISCOVERY_METHOD_ID => Ok(()),
        id if RESERVED_METHOD_IDS.contains(&id) => Err(Status::invalid_argument(format!(
            "reserved method {id} cannot be dispatched as a future"
        ))),
        id => match shared.routes.get(&id) {
            None => Err(Status::not_found(format!("no method {id:#010x}"))),
            Some(route) if route.info.kind != MethodKind::Unary => {
                Err(Status::invalid_argument(format!(
                    "{}.{} is a streaming method; only unary methods and batches can be \
                     dispatched as futures",
                    route.info.service, route.info.name
                )))
            }
            Some(_) => Ok(()),
        },
    }
}

/// A dispatched future's inner call, run on its own task.
struct Job {
    server: Server,
    futures: Arc<Futures>,
    id: FutureId,
    method_id: u32,
    payload: Vec<u8>,
    metadata: Metadata,
    deadline: Option<SystemTime>,
    peer: Arc<Peer>,
    discard: bool,
    token: CancellationToken,
}

impl Job {
    async fn run(self) {
        let outcome = self.call().await;
        // The grace period of a shutdown is over: the call was cut short.
        let outcome = if self.server.shared.stop.is_cancelled() {
            Outcome::failure(Status::unavailable(
                "the server shut down before the future completed",
            ))
        } else {
            outcome
        };
        self.complete(outcome).await;
        self.futures.running().remove(&self.id);
    }

    async fn call(&self) -> Outcome {
        let start = CallStart::new(self.method_id, self.peer.clone())
            .metadata(self.metadata.clone())
            .deadline(self.deadline);
        let call = match self
            .server
            .start_admitted(start, self.server.shared.limits.response_buffer)
        {
            Ok(call) => call,
            Err(status) => return Outcome::failure(status),
        };
        let (mut requests, mut responses) = call.into_parts();
        let payload = self.payload.clone();
        tokio::select! {
            outcome = async {
                // A call that stops taking requests has answered already.
                let _ = requests.send(payload, true).await;
                collect(&mut responses).await
            } => outcome,
            () = self.token.cancelled() => {
                responses.cancel();
                Outcome::Cancelled
            }
        }
    }

    async fn complete(&self, outcome: Outcome) {
        let store = &self.futures.store;
        let completed = match store.complete(self.id, outcome).await {
            Ok(done) => done,
            Err(StoreError::TooLarge { size, limit }) => {
                let status = Status::resource_exhausted(format!(
                    "the result of {size} bytes is over the future store's limit of {limit}"
                ));
                self.complete_failure(status).await
            }
            Err(e) => {
                tracing::warn!(id = %self.id, error = %e, "recording a future's result failed");
                self.complete_failure(Status::internal(format!(
                    "recording the result failed: {e}"
                )))
                .await
            }
        };
        if completed && self.discard {
            match store.get(self.id).await {
                Ok(Some(record)) => {
                    let _ = self.futures.local.send(Arc::new(record));
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(id = %self.id, error = %e, "reading a future failed"),
            }
            if let Err(e) = store.discard(self.id).await {
                tracing::warn!(id = %self.id, error = %e, "discarding a result failed");
            }
        }
    }

    async fn complete_failure(&self, status: Status) -> bool {
        match self
            .futures
            .store
            .complete(self.id, Outcome::failure(status))
            .await
        {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(id = %self.id, error = %e, "recording a future's failure failed");
                false
            }
        }
    }
}

/// Reads a unary call's response to its end: its message and response metadata, or its
/// error.
async fn collect(responses: &mut ResponseStream) -> Outcome {
    let mut payload: Option<Vec<u8>> = None;
    loop {
        let Some(frame) = responses.next().await else {
            return Outcome::failure(Status::cancelled("the call ended without a response"));
        };
        match frame.kind() {
            ResponseKind::Message => {
                if payload.is_some() {
                    responses.cancel();
                    return Outcome::failure(Status::internal(
                        "the method sent more than one response to a unary call",
                    ));
                }
                payload = Some(frame.payload().to_vec());
                if frame.is_end() {
                    return Outcome::Succeeded {
                        payload: payload.unwrap_or_default(),
                        metadata: Metadata::new(),
                    };
                }
            }
            ResponseKind::End => {
                return Outcome::Succeeded {
                    payload: payload.unwrap_or_default(),
                    metadata: Metadata::new(),
                };
            }
            ResponseKind::Trailer => {
                return Outcome::Succeeded {
                    payload: payload.unwrap_or_default(),
                    metadata: frame.trailer_metadata().unwrap_or_default(),
                };
            }
            ResponseKind::Error => {
                return Outcome::failure(
                    frame
                        .status()
                        .unwrap_or_else(|| Status::internal("an error frame without a status")),
                );
            }
        }
    }
}

/// Serves one cancel call (method 4).
pub(crate) async fn cancel(shared: Arc<Shared>, mut call: ServerCall) {
    let request = match call.single_payload().await {
        Ok(r) => r,
        Err(status) => return call.reject(status).await,
    };
    let ctx = call.context().clone();
    match cancel_future(&shared, &ctx, &request).await {
        Ok(()) => match bebop_runtime::encode_to_vec(&Empty {}) {
            Ok(bytes) => call.respond_encoded(&bytes).await,
            Err(e) => {
                call.reject(Status::internal(format!("encoding failed: {e}")))
                    .await
            }
        },
        Err(status) => call.reject(status).await,
    }
}

async fn cancel_future(shared: &Arc<Shared>, ctx: &Context, request: &[u8]) -> Result<(), Status> {
    let futures = shared.futures_ready().await?;
    let req = FutureCancelRequest::from_bytes(request).map_err(|e| {
        Status::invalid_argument(format!("the cancel request does not decode: {e}"))
    })?;
    let owner = owner_of(ctx)?;
    let id = FutureId::from_uuid(req.id);
    match futures
        .store
        .cancel(&owner, id)
        .await
        .map_err(store_status)?
    {
        Cancellation::Cancelled { runner } => {
            // The store told the runner; when it is this process, do not wait for the
            // event to come round.
            if runner == futures.runner() {
                futures.cancel_local(id);
            }
            Ok(())
        }
        Cancellation::AlreadyCompleted => Ok(()),
        Cancellation::NotOwner => Err(Status::permission_denied(format!(
            "future {id} belongs to another caller"
        ))),
        Cancellation::NotFound => Err(Status::not_found(format!("no future {id}"))),
    }
}

/// Serves one resolve call (method 3).
pub(crate) async fn resolve(shared: Arc<Shared>, mut call: ServerCall) {
    let request = match call.single_payload().await {
        Ok(r) => r,
        Err(status) => return call.reject(status).await,
    };
    let result = resolve_stream(&shared, &call, &request).await;
    call.end_stream(result).await
}

async fn resolve_stream(
    shared: &Arc<Shared>,
    call: &ServerCall,
    request: &[u8],
) -> Result<(), Status> {
    let futures = shared.futures_ready().await?;
    let req = FutureResolveRequest::from_bytes(request).map_err(|e| {
        Status::invalid_argument(format!("the resolve request does not decode: {e}"))
    })?;
    let owner = owner_of(call.context())?;
    // Subscribe before reading the store, so that nothing completing in between is missed.
    let events = futures.store.subscribe();
    let local = futures.local.subscribe();
    let mut stream = Resolver {
        futures: &futures,
        call,
        owner,
        events,
        local,
    };
    match req.ids {
        Some(ids) if !ids.is_empty() => {
            let ids: Vec<FutureId> = ids.iter().map(FutureId::from_uuid).collect();
            stream.these(ids).await
        }
        _ => stream.all().await,
    }
}

/// One resolve stream.
struct Resolver<'a> {
    futures: &'a Futures,
    call: &'a ServerCall,
    owner: String,
    events: crate::futures::EventStream,
    local: broadcast::Receiver<Arc<FutureRecord>>,
}

/// What a resolve stream waits for next.
enum Next {
    /// A future of the caller completed.
    Completed(FutureId),
    /// A local result, before it is discarded.
    Local(Arc<FutureRecord>),
    /// Events were lost.
    Lagged,
}

impl Resolver<'_> {
    /// Sends one result.
    async fn deliver(&mut self, record: &FutureRecord) -> Result<(), Status> {
        let Some(bytes) = record.to_future_result() else {
            return Ok(());
        };
        // (A `discard_result` future is discarded by its runner, once it handed the result
        // to the streams of its process: a stream discarding it could take it from another
        // stream still to read it.)
        self.call.send_encoded(&bytes).await
    }

    async fn next(&mut self) -> Result<Next, Status> {
        loop {
            tokio::select! {
                event = self.events.next() => match event {
                    Some(Event::Completed { id, owner }) if owner == self.owner => {
                        return Ok(Next::Completed(id));
                    }
                    Some(Event::Lagged) => return Ok(Next::Lagged),
                    Some(_) => {}
                    None => {
                        return Err(Status::unavailable("the future store's events ended"));
                    }
                },
                record = self.local.recv() => match record {
                    Ok(record) if record.owner == self.owner => return Ok(Next::Local(record)),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => return Ok(Next::Lagged),
                    Err(broadcast::error::RecvError::Closed) => {
                        return Err(Status::unavailable("the server's futures stopped"));
                    }
                },
            }
        }
    }

    /// The local results already sent to this stream's receiver, the caller's: a stream that
    /// reads a result discarded (`discard_result`) by this process finds it here, since the
    /// runner sends it before it discards it.
    fn queued_local(&mut self) -> Vec<Arc<FutureRecord>> {
        let mut out = Vec::new();
        loop {
            match self.local.try_recv() {
                Ok(record) if record.owner == self.owner => out.push(record),
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return out,
            }
        }
    }

    /// The futures `ids` names: the completed ones at once, then the others as they
    /// complete; ids of no future of the caller (unknown, evicted, discarded, another
    /// caller's) are skipped. Ends once every one was delivered.
    async fn these(&mut self, ids: Vec<FutureId>) -> Result<(), Status> {
        let mut waiting: HashSet<FutureId> = ids.iter().copied().collect();
        {
            let futures = self.futures;
            let owner = self.owner.clone();
            let mut replay = futures.store.fetch_completed(&owner, &ids);
            while let Some(record) = replay.next().await {
                let record = record.map_err(store_status)?;
                if waiting.remove(&record.id) {
                    self.deliver(&record).await?;
                }
            }
        }
        drop(ids);
        let rest: Vec<FutureId> = waiting.iter().copied().collect();
        self.recheck(&mut waiting, rest).await?;
        while !waiting.is_empty() {
            match self.next().await? {
                Next::Completed(id) => {
                    if waiting.contains(&id) {
                        self.recheck(&mut waiting, vec![id]).await?;
                    }
                }
                Next::Local(record) => {
                    if waiting.remove(&record.id) {
                        self.deliver(&record).await?;
                    }
                }
                Next::Lagged => {
                    let rest: Vec<FutureId> = waiting.iter().copied().collect();
                    self.recheck(&mut waiting, rest).await?;
                }
            }
        }
        Ok(())
    }

    /// Reads each of `ids` from the store: delivers (and stops waiting for) the completed
    /// ones, stops waiting for those that are no future of the caller, keeps the pending
    /// ones.
    async fn recheck(
        &mut self,
        waiting: &mut HashSet<FutureId>,
        ids: Vec<FutureId>,
    ) -> Result<(), Status> {
        for id in ids {
            match self.futures.store.get(id).await.map_err(store_status)? {
                Some(record) if record.owner == self.owner => {
                    if record.state.is_pending() {
                        continue;
                    }
                    if !record.state.is_deliverable() {
                        // Discarded: delivered here already if this process ran it.
                        for queued in self.queued_local() {
                            if waiting.remove(&queued.id) {
                                self.deliver(&queued).await?;
                            }
                        }
                    }
                    if waiting.remove(&id) {
                        self.deliver(&record).await?;
                    }
                }
                _ => {
                    waiting.remove(&id);
                }
            }
        }
        Ok(())
    }

    /// Every future of the caller: the completed ones the store still holds first, then
    /// each as it completes, until the client goes away.
    async fn all(&mut self) -> Result<(), Status> {
        let mut delivered: HashSet<FutureId> = HashSet::new();
        self.replay_all(&mut delivered).await?;
        loop {
            match self.next().await? {
                Next::Completed(id) => {
                    if delivered.contains(&id) {
                        continue;
                    }
                    if let Some(record) = self.futures.store.get(id).await.map_err(store_status)? {
                        if record.owner != self.owner {
                            continue;
                        }
                        if record.state.is_deliverable() {
                            if delivered.insert(id) {
                                self.deliver(&record).await?;
                            }
                        } else if !record.state.is_pending() {
                            // Discarded: delivered here already if this process ran it.
                            for queued in self.queued_local() {
                                if delivered.insert(queued.id) {
                                    self.deliver(&queued).await?;
                                }
                            }
                        }
                    }
                }
                Next::Local(record) => {
                    if delivered.insert(record.id) {
                        self.deliver(&record).await?;
                    }
                }
                Next::Lagged => self.replay_all(&mut delivered).await?,
            }
        }
    }

    async fn replay_all(&mut self, delivered: &mut HashSet<FutureId>) -> Result<(), Status> {
        let mut after = None;
        loop {
            let page = self
                .futures
                .store
                .completed_page(&self.owner, after, MAX_PAGE)
                .await
                .map_err(store_status)?;
            for record in &page.records {
                if delivered.insert(record.id) {
                    self.deliver(record).await?;
                }
            }
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(()),
            }
        }
    }
}
