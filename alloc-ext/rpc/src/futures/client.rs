//! Futures from the client side (`docs/rpc.md`, "Futures from the client side"): typed
//! handles over methods 2 to 4. [`Client::dispatch`] starts a call in the background and
//! returns a [`Dispatched`] handle, [`Client::resolve`] streams the results of some handles
//! ([`Resolutions`] of [`Resolved`]), [`Client::resolve_one`] waits for one, and
//! [`Client::cancel`] cancels one.
//!
//! ```
//! use bebop_rpc::{CallOptions, Client, DispatchOptions, Dispatched, RawMessage, Server};
//! use bebop_rpc::futures::MemoryStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Discovery (method 0) is a unary method every server has: dispatch it as a future.
//! let server = Server::builder().futures(MemoryStore::new()).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! tokio::spawn({
//!     let server = server.clone();
//!     async move { server.serve_tcp(listener).await }
//! });
//! let client = Client::connect_tcp(addr).await?;
//!
//! let handle: Dispatched<RawMessage> = client
//!     .dispatch(0, &bebop_runtime::rpc::Empty {}, DispatchOptions::new())
//!     .await?;
//! // The handle is a plain id: store it, reload it with `Dispatched::from_id`.
//! let reloaded = Dispatched::<RawMessage>::from_id(handle.id());
//! assert_eq!(reloaded, handle);
//!
//! let services = client.resolve_one(reloaded, CallOptions::new()).await?.into_inner();
//! assert_eq!(services.0, [0, 0, 0, 0]); // DiscoveryResponse { services: [] }
//!
//! // An empty list of ids resolves nothing, without a call; `resolve_all` is everything.
//! let mut none = client.resolve(&[], CallOptions::new()).await?;
//! assert!(none.next().await?.is_none());
//! server.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok(()) }
//! ```

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::time::{Duration, SystemTime};

use bebop_runtime::rpc::{
    Empty, FutureCancelRequest, FutureDispatchRequest, FutureHandle, FutureOutcome,
    FutureResolveRequest, FutureResult,
};
use bebop_runtime::{Array, Decode, Encode, Map, Uuid};

use crate::batch::{Batch, BatchResults};
use crate::client::{Client, Response, Streaming};
use crate::context::CallOptions;
use crate::metadata::Metadata;
use crate::server::dispatch::{CANCEL_METHOD_ID, DISPATCH_METHOD_ID, RESOLVE_METHOD_ID};
use crate::status::Status;
use crate::wire::RawMessage;

/// The inner call's deadline, fixed when the future is dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InnerDeadline {
    /// This long after the dispatch.
    Timeout(Duration),
    /// At this time.
    At(SystemTime),
}

/// How [`Client::dispatch`] dispatches a future: what goes in the `FutureDispatchRequest`
/// (the inner call's idempotency key, deadline and metadata, whether to keep its result)
/// and the [`CallOptions`] of the dispatch call itself. The default is no key, no inner
/// deadline, no inner metadata, the result kept, and default call options.
///
/// ```
/// use std::time::Duration;
/// use bebop_rpc::{CallOptions, DispatchOptions};
///
/// let options = DispatchOptions::new()
///     .idempotency_key(bebop_runtime::Uuid::from_u128(42))
///     .timeout(Duration::from_secs(30)) // the inner call's deadline
///     .metadata("tenant", "acme") // the inner call's metadata
///     .call_options(CallOptions::new().metadata("authorization", "Bearer t0k3n"));
/// assert_eq!(options.get_idempotency_key(), Some(bebop_runtime::Uuid::from_u128(42)));
/// assert_eq!(options.get_metadata().get("tenant"), Some("acme"));
/// assert_eq!(options.get_call_options().get_metadata().get("authorization"), Some("Bearer t0k3n"));
/// assert!(!options.get_discard_result());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DispatchOptions {
    idempotency_key: Option<Uuid>,
    discard_result: bool,
    deadline: Option<InnerDeadline>,
    metadata: Metadata,
    call: CallOptions,
}

impl DispatchOptions {
    /// The defaults: no key, no inner deadline or metadata, the result kept.
    pub fn new() -> Self {
        DispatchOptions::default()
    }

    /// The idempotency key: a dispatch retried with the same key (by the same caller) is
    /// answered the handle of the first one and runs nothing; another caller's key is
    /// `PERMISSION_DENIED`.
    pub fn idempotency_key(mut self, key: Uuid) -> Self {
        self.idempotency_key = Some(key);
        self
    }

    /// Whether the server forgets the result once it delivered it to the resolve streams
    /// open at that moment (`discard_result`): for fire-and-forget calls or callers that
    /// are already resolving. Off by default (the result is kept until evicted).
    pub fn discard_result(mut self, discard: bool) -> Self {
        self.discard_result = discard;
        self
    }

    /// The inner call's deadline, `timeout` after the dispatch (computed when the future is
    /// dispatched). Past it the future fails `DEADLINE_EXCEEDED`. This is not the dispatch
    /// call's deadline, which is [`call_options`](Self::call_options)'.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.deadline = Some(InnerDeadline::Timeout(timeout));
        self
    }

    /// The inner call's deadline as a point in time (one that already passed is not
    /// refused: the future fails `DEADLINE_EXCEEDED`).
    pub fn deadline_at(mut self, deadline: SystemTime) -> Self {
        self.deadline = Some(InnerDeadline::At(deadline));
        self
    }

    /// Sets an entry of the inner call's metadata (what its interceptors and handler see
    /// in `Context::metadata`). The dispatch call's own metadata does not propagate to the
    /// inner call: set it in [`call_options`](Self::call_options).
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key, value);
        self
    }

    /// Replaces the inner call's metadata.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// The options of the dispatch call itself (method 2): its metadata (authorization,
    /// say: the caller's identity decides who owns the future) and its deadline (how long
    /// the dispatch may take, not the inner call).
    pub fn call_options(mut self, options: CallOptions) -> Self {
        self.call = options;
        self
    }

    /// The idempotency key, if any.
    pub fn get_idempotency_key(&self) -> Option<Uuid> {
        self.idempotency_key
    }

    /// Whether the result is discarded once delivered.
    pub fn get_discard_result(&self) -> bool {
        self.discard_result
    }

    /// The inner call's metadata.
    pub fn get_metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The dispatch call's options.
    pub fn get_call_options(&self) -> &CallOptions {
        &self.call
    }

    /// The inner call's deadline if it were dispatched now.
    pub fn get_deadline(&self) -> Option<SystemTime> {
        match self.deadline? {
            InnerDeadline::Timeout(t) => Some(SystemTime::now() + t),
            InnerDeadline::At(at) => Some(at),
        }
    }
}

/// A response type a future's result decodes to: any decodable message, and
/// [`BatchResults`] for a batch dispatched with [`Client::dispatch_batch`].
pub trait FutureResponse: Sized {
    /// Decodes a successful future's payload. One that does not decode is `INTERNAL`.
    fn from_payload(payload: &[u8]) -> Result<Self, Status>;
}

impl<T: for<'a> Decode<'a>> FutureResponse for T {
    fn from_payload(payload: &[u8]) -> Result<Self, Status> {
        T::from_bytes(payload)
            .map_err(|e| Status::internal(format!("the future's response does not decode: {e}")))
    }
}

impl FutureResponse for BatchResults {
    fn from_payload(payload: &[u8]) -> Result<Self, Status> {
        BatchResults::from_bytes(payload)
    }
}

/// The handle of a dispatched future whose response is a `Resp`: its id and, in the type,
/// what its result decodes to. A plain id underneath (`Copy`, whatever `Resp` is): store
/// [`id`](Self::id) and rebuild the handle with [`from_id`](Self::from_id).
pub struct Dispatched<Resp> {
    id: Uuid,
    _resp: PhantomData<fn() -> Resp>,
}

impl<Resp> Dispatched<Resp> {
    /// The handle of the future `id` (one stored and reloaded, say). The type is the
    /// caller's word: a wrong `Resp` shows as an `INTERNAL` decode error when taking the
    /// result.
    pub fn from_id(id: Uuid) -> Self {
        Dispatched {
            id,
            _resp: PhantomData,
        }
    }

    /// The future's id.
    pub fn id(&self) -> Uuid {
        self.id
    }
}

impl<Resp: FutureResponse> Dispatched<Resp> {
    /// This future's result out of `resolved`, decoded: the response with the inner call's
    /// response metadata, or the status it failed with. `resolved` of another future is
    /// `INVALID_ARGUMENT`, a payload that does not decode as `Resp` `INTERNAL`.
    pub fn take(self, resolved: Resolved) -> Result<Response<Resp>, Status> {
        if resolved.id != self.id {
            return Err(Status::invalid_argument(format!(
                "the result of future {} is not that of future {}",
                resolved.id, self.id
            )));
        }
        resolved.decode()
    }
}

impl<Resp> Clone for Dispatched<Resp> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Resp> Copy for Dispatched<Resp> {}

impl<Resp> fmt::Debug for Dispatched<Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Dispatched").field(&self.id).finish()
    }
}

impl<Resp> PartialEq for Dispatched<Resp> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<Resp> Eq for Dispatched<Resp> {}

impl<Resp> Hash for Dispatched<Resp> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl<Resp> From<Dispatched<Resp>> for Uuid {
    fn from(handle: Dispatched<Resp>) -> Uuid {
        handle.id
    }
}

/// The result of one future, as a resolve stream delivered it: the response payload (not
/// decoded yet: [`decode`](Self::decode) it, or [`Dispatched::take`] it) with the inner
/// call's response metadata, or the status the inner call failed with.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The future's id.
    pub id: Uuid,
    /// Its outcome, as that of an ordinary unary call.
    pub outcome: Result<Response<RawMessage>, Status>,
}

impl Resolved {
    /// The outcome decoded as `Resp` (without checking which future it is: prefer
    /// [`Dispatched::take`]). A payload that does not decode is `INTERNAL`.
    pub fn decode<Resp: FutureResponse>(self) -> Result<Response<Resp>, Status> {
        let (raw, metadata) = self.outcome?.into_parts();
        Ok(Response::from_parts(Resp::from_payload(&raw.0)?, metadata))
    }

    fn from_bytes(bytes: &[u8]) -> Result<Resolved, Status> {
        let result = FutureResult::from_bytes(bytes)
            .map_err(|e| Status::internal(format!("a future's result does not decode: {e}")))?;
        let outcome = match result.outcome {
            FutureOutcome::Success(s) => Ok(Response::from_parts(
                RawMessage(s.payload.to_vec()),
                Metadata::from_view(s.metadata),
            )),
            FutureOutcome::Error(e) => Err(Status::from_rpc_error(&e)),
        };
        Ok(Resolved {
            id: result.id,
            outcome,
        })
    }
}

/// The results of a [`Client::resolve`] (or [`resolve_all`](Client::resolve_all)), in the
/// order they complete: the completed ones at once, then each pending one as it completes.
/// Dropping it cancels the resolve call (not the futures).
pub struct Resolutions {
    /// `None`: nothing to resolve (no call was made).
    stream: Option<Streaming<RawMessage>>,
}

impl Resolutions {
    /// The next result; `Ok(None)` once every future asked for was delivered (never, for
    /// [`resolve_all`](Client::resolve_all), before the server ends the stream). An id the
    /// caller owns no future of is skipped, not an error. An `Err` is the resolve call's
    /// failure (the connection broke, the deadline passed), not a future's: those are in
    /// [`Resolved::outcome`].
    pub async fn next(&mut self) -> Result<Option<Resolved>, Status> {
        let Some(stream) = &mut self.stream else {
            return Ok(None);
        };
        match stream.message().await? {
            Some(raw) => Resolved::from_bytes(&raw.0).map(Some),
            None => {
                self.stream = None;
                Ok(None)
            }
        }
    }
}

impl fmt::Debug for Resolutions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolutions")
            .field("open", &self.stream.is_some())
            .finish()
    }
}

impl Client {
    /// Dispatches a call of the unary method `method_id` with `request` as a future
    /// (method 2, `docs/rpc.md`, "Futures"): the server answers a handle at once and runs
    /// the call in the background, owned by the caller's identity. Errors are the dispatch's:
    /// `NOT_FOUND` for an unknown method, `INVALID_ARGUMENT` for a streaming one,
    /// `UNIMPLEMENTED` on a server without futures, `PERMISSION_DENIED` for another caller's
    /// idempotency key; what the inner call returns is the future's result.
    pub async fn dispatch<Req, Resp>(
        &self,
        method_id: u32,
        request: &Req,
        options: DispatchOptions,
    ) -> Result<Dispatched<Resp>, Status>
    where
        Req: Encode + ?Sized,
    {
        let payload = bebop_runtime::encode_to_vec(request)
            .map_err(|e| Status::internal(format!("encoding the request failed: {e}")))?;
        let id = self.dispatch_payload(method_id, &payload, options).await?;
        Ok(Dispatched::from_id(id))
    }

    /// Dispatches `batch` as a future (a dispatch of method 1): its result is the batch's
    /// [`BatchResults`], as [`Client::batch`] would return them. The batch's calls run with
    /// [`Batch::metadata`]; the inner metadata of `options` reaches the batch call.
    pub async fn dispatch_batch(
        &self,
        batch: &Batch,
        options: DispatchOptions,
    ) -> Result<Dispatched<BatchResults>, Status> {
        let payload = batch.to_bytes()?;
        let id = self
            .dispatch_payload(bebop_runtime::rpc::BATCH_METHOD_ID, &payload, options)
            .await?;
        Ok(Dispatched::from_id(id))
    }

    async fn dispatch_payload(
        &self,
        method_id: u32,
        payload: &[u8],
        options: DispatchOptions,
    ) -> Result<Uuid, Status> {
        let deadline = match options.get_deadline() {
            None => None,
            Some(at) => Some(bebop_runtime::system_time_to_timestamp(at).ok_or_else(|| {
                Status::invalid_argument("the inner call's deadline is out of range")
            })?),
        };
        let pairs = options.metadata.as_pairs();
        let request = FutureDispatchRequest {
            method_id: Some(method_id),
            payload: Some(payload),
            idempotency_key: options.idempotency_key,
            metadata: (!pairs.is_empty()).then(|| Map::from_slice(&pairs)),
            deadline,
            discard_result: options.discard_result.then_some(true),
        };
        let handle = self
            .unary::<_, FutureHandle>(DISPATCH_METHOD_ID, &request, options.call)
            .await?;
        Ok(handle.into_inner().id)
    }

    /// Resolves the futures `ids` (method 3): their results as they complete, then the end.
    /// Ids of no future of the caller (unknown, evicted, discarded, another caller's) are
    /// skipped. An empty `ids` resolves nothing: the [`Resolutions`] ends at once and no
    /// call is made (decision: use [`resolve_all`](Self::resolve_all) for every future).
    pub async fn resolve(&self, ids: &[Uuid], options: CallOptions) -> Result<Resolutions, Status> {
        if ids.is_empty() {
            return Ok(Resolutions { stream: None });
        }
        self.resolve_request(Some(ids), options).await
    }

    /// Resolves every future of the caller (method 3 without ids): the completed results
    /// the server still holds, then each one as it completes, until the server ends the
    /// stream or the [`Resolutions`] is dropped.
    pub async fn resolve_all(&self, options: CallOptions) -> Result<Resolutions, Status> {
        self.resolve_request(None, options).await
    }

    async fn resolve_request(
        &self,
        ids: Option<&[Uuid]>,
        options: CallOptions,
    ) -> Result<Resolutions, Status> {
        let request = FutureResolveRequest {
            ids: ids.map(Array::from_slice),
        };
        let stream = self
            .server_stream::<_, RawMessage>(RESOLVE_METHOD_ID, &request, options)
            .await?;
        Ok(Resolutions {
            stream: Some(stream),
        })
    }

    /// Waits for the result of one future and decodes it: the inner call's response and
    /// response metadata, or the status it failed with. `NOT_FOUND` when the server has no
    /// such future of the caller (never dispatched by it, evicted, or discarded).
    pub async fn resolve_one<Resp: FutureResponse>(
        &self,
        handle: Dispatched<Resp>,
        options: CallOptions,
    ) -> Result<Response<Resp>, Status> {
        let mut results = self.resolve(&[handle.id()], options).await?;
        while let Some(resolved) = results.next().await? {
            if resolved.id == handle.id() {
                return handle.take(resolved);
            }
        }
        Err(Status::not_found(format!(
            "the server has no future {} of this caller",
            handle.id()
        )))
    }

    /// Cancels a future (method 4): the inner call is cancelled if it still runs and the
    /// future's result is `CANCELLED`; one already completed is left as it is. Another
    /// caller's future is `PERMISSION_DENIED`, an unknown one `NOT_FOUND`. Takes an id or a
    /// [`Dispatched`] handle.
    pub async fn cancel(&self, id: impl Into<Uuid>, options: CallOptions) -> Result<(), Status> {
        let request = FutureCancelRequest { id: id.into() };
        self.unary::<_, Empty>(CANCEL_METHOD_ID, &request, options)
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_runtime::rpc::{FutureSuccess, RpcError, StatusCode};

    fn result_bytes(id: u128, outcome: FutureOutcome<'_>) -> Vec<u8> {
        bebop_runtime::encode_to_vec(&FutureResult {
            id: Uuid::from_u128(id),
            outcome,
        })
        .unwrap()
    }

    #[test]
    fn resolved_decodes_success_with_metadata_and_errors() {
        let pairs = [("rows", "3")];
        let ok = result_bytes(
            1,
            FutureOutcome::Success(FutureSuccess {
                payload: &[7],
                metadata: Map::from_slice(&pairs),
            }),
        );
        let r = Resolved::from_bytes(&ok).unwrap();
        let handle = Dispatched::<u8>::from_id(Uuid::from_u128(1));
        let response = handle.take(r.clone()).unwrap();
        assert_eq!(*response.get_ref(), 7);
        assert_eq!(response.metadata().get("rows"), Some("3"));
        // Another future's result, or a payload of another type, is an error.
        let other = Dispatched::<u8>::from_id(Uuid::from_u128(2));
        assert_eq!(
            other.take(r.clone()).unwrap_err().code(),
            StatusCode::InvalidArgument
        );
        let wide = Dispatched::<u64>::from_id(Uuid::from_u128(1));
        assert_eq!(wide.take(r).unwrap_err().code(), StatusCode::Internal);

        let err = result_bytes(
            3,
            FutureOutcome::Error(RpcError {
                code: Some(StatusCode::NotFound),
                detail: Some("gone"),
                metadata: None,
            }),
        );
        let e = Resolved::from_bytes(&err)
            .unwrap()
            .decode::<u8>()
            .unwrap_err();
        assert_eq!((e.code(), e.detail()), (StatusCode::NotFound, "gone"));
        assert!(Resolved::from_bytes(&ok[..5]).is_err());
    }

    #[test]
    fn handles_are_plain_ids() {
        struct NotClone;
        let a = Dispatched::<NotClone>::from_id(Uuid::from_u128(5));
        let b = a;
        assert_eq!(a, b);
        assert_eq!(Uuid::from(b), Uuid::from_u128(5));
        assert!(format!("{a:?}").starts_with("Dispatched("));
    }

    #[test]
    fn dispatch_options_fix_the_inner_deadline_at_dispatch() {
        let o = DispatchOptions::new().timeout(Duration::from_secs(60));
        let at = o.get_deadline().unwrap();
        assert!(at > SystemTime::now() + Duration::from_secs(50));
        assert_eq!(DispatchOptions::new().get_deadline(), None);
    }
}
