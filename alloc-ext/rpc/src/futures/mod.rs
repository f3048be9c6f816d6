//! The storage of futures (`docs/rpc.md`, "Futures storage"): the records a server keeps
//! for the calls it runs in the background (methods 2 to 4 of the protocol: dispatch,
//! resolve, cancel), behind the object-safe trait [`FutureStore`].
//!
//! Three stores implement it: [`MemoryStore`] here (one process, lost on restart), the
//! SQLite store of `bebop-rpc-sqlite` (one server process, results survive a restart) and
//! the PostgreSQL store of `bebop-rpc-postgres` (several server processes sharing one
//! database, each seeing the others' completions and cancel requests).
//!
//! How a server uses a store:
//!
//! - **Dispatch** (method 2): [`FutureStore::insert`] with the caller's identity as owner and
//!   the request's idempotency key. [`Insertion::Inserted`] means: run the call on a
//!   background task, then [`FutureStore::complete`] it. [`Insertion::Existing`] is a
//!   retried dispatch: answer the same handle, run nothing. [`Insertion::KeyOfAnotherOwner`]
//!   is answered `PERMISSION_DENIED`, [`Insertion::Full`] `RESOURCE_EXHAUSTED`.
//! - **Resolve** (method 3): [`FutureStore::subscribe`] first (so that nothing completing in
//!   between is missed), then replay what already completed with
//!   [`FutureStore::fetch_completed`] (the ids of the request) or
//!   [`FutureStore::completed_page`] (no ids: everything the caller owns), then push each
//!   [`Event::Completed`] of the caller's futures, read with [`FutureStore::get`].
//!   [`FutureRecord::to_future_result`] encodes the stream element. For a future dispatched
//!   with `discard_result`, [`FutureStore::discard`] it once delivered.
//! - **Cancel** (method 4): [`FutureStore::cancel`]; the server running the future (its
//!   [`runner`](FutureRecord::runner)) gets [`Event::CancelRequested`] and cancels the task.
//! - **Housekeeping**: [`FutureStore::fail_runner`] once at startup, with the server's own
//!   runner name (futures a previous run left pending can never complete);
//!   [`FutureStore::evict`] now and then with the retention policy.
//!
//! ```
//! use bebop_rpc::futures::{Event, FutureStore, Insertion, MemoryStore, NewFuture, Outcome};
//! use futures_util::StreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), bebop_rpc::futures::StoreError> {
//! let store = MemoryStore::new();
//! let mut events = store.subscribe();
//! let key = bebop_runtime::Uuid::from_u128(7);
//!
//! let Insertion::Inserted(id) = store.insert(NewFuture::new("alice", 0x1234).with_key(key)).await? else {
//!     unreachable!()
//! };
//! // A retried dispatch gets the same future; another caller may not use alice's key.
//! assert_eq!(store.insert(NewFuture::new("alice", 0x1234).with_key(key)).await?, Insertion::Existing(id));
//! assert_eq!(store.insert(NewFuture::new("bob", 0x1234).with_key(key)).await?, Insertion::KeyOfAnotherOwner);
//!
//! assert!(store.complete(id, Outcome::success(b"done".to_vec())).await?);
//! assert!(!store.complete(id, Outcome::success(b"again".to_vec())).await?); // only once
//! assert_eq!(events.next().await, Some(Event::Completed { id, owner: "alice".into() }));
//!
//! let record = store.get(id).await?.expect("stored");
//! assert!(record.to_future_result().is_some()); // the resolve stream's element
//! # Ok(()) }
//! ```

mod client;
mod memory;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use bebop_runtime::rpc::{FutureOutcome, FutureResult, FutureSuccess, RpcError, StatusCode};
use bebop_runtime::{Decode, Map, Uuid};
use futures_core::Stream;

pub use client::{DispatchOptions, Dispatched, FutureResponse, Resolutions, Resolved};
pub use memory::MemoryStore;

use crate::metadata::Metadata;
pub use crate::server::BoxFuture;
use crate::status::Status;

/// A boxed, sendable stream: what [`FutureStore::fetch_completed`] and
/// [`FutureStore::subscribe`] return.
pub type BoxStream<'a, T> = Pin<Box<dyn Stream<Item = T> + Send + 'a>>;

/// The stream of a store's [`Event`]s, from [`FutureStore::subscribe`].
pub type EventStream = BoxStream<'static, Event>;

/// The detail of the failure [`FutureStore::fail_runner`] records.
pub const RESTARTED_DETAIL: &str = "the server restarted before the future completed";

/// The most ids one query of a SQL store looks up: [`fetch_in_batches`] cuts longer lists.
pub const FETCH_CHUNK: usize = 512;

/// The most result bytes (payload, detail and metadata) a SQL store reads in one query of
/// [`FutureStore::fetch_completed`] or [`FutureStore::completed_page`] (one larger result is
/// still read, alone). Together with [`StoreConfig::max_result_bytes`] it bounds the memory
/// a fetch holds, however many ids it names.
pub const FETCH_BUDGET: usize = 8 << 20;

/// The most records one [`FutureStore::completed_page`] returns.
pub const MAX_PAGE: usize = 1000;

/// The id of a future: a version 4 UUID from the operating system's cryptographically
/// secure random number generator (`docs/RPC.md` 14.6: ids are unguessable; ownership is
/// checked all the same).
///
/// ```
/// use bebop_rpc::futures::FutureId;
///
/// let id = FutureId::random()?;
/// assert_eq!(id.as_bytes()[6] >> 4, 4); // version 4
/// assert_eq!(id.as_bytes()[8] >> 6, 0b10); // RFC 4122 variant
/// assert_eq!(id.to_string().parse::<FutureId>()?, id);
/// assert!(FutureId::from_slice(&[0; 15]).is_err()); // not 16 bytes
/// # Ok::<(), bebop_rpc::futures::StoreError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FutureId(Uuid);

impl FutureId {
    /// The all-zero id, which [`random`](Self::random) never returns: the lower bound of
    /// every id.
    pub const NIL: FutureId = FutureId(Uuid::NIL);

    /// A new random version 4 id.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the operating system's generator fails (it does not
    /// on any supported system once booted).
    pub fn random() -> Result<FutureId, StoreError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| {
            StoreError::Unavailable(format!(
                "the operating system's random number generator failed: {e}"
            ))
        })?;
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        Ok(FutureId(Uuid::from_array(bytes)))
    }

    /// The id of a UUID (as a client sends it: any UUID, version 4 or not, names a future
    /// or none).
    pub const fn from_uuid(uuid: Uuid) -> Self {
        FutureId(uuid)
    }

    /// The id of 16 bytes.
    pub const fn from_array(bytes: [u8; 16]) -> Self {
        FutureId(Uuid::from_array(bytes))
    }

    /// The id of a byte slice, as a database returns it.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidArgument`] when the slice is not 16 bytes long.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, StoreError> {
        let array: [u8; 16] = bytes.try_into().map_err(|_| {
            StoreError::InvalidArgument(format!("a future id is 16 bytes, not {}", bytes.len()))
        })?;
        Ok(Self::from_array(array))
    }

    /// The UUID.
    pub const fn uuid(&self) -> Uuid {
        self.0
    }

    /// The 16 bytes.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }
}

impl From<Uuid> for FutureId {
    fn from(uuid: Uuid) -> Self {
        FutureId(uuid)
    }
}

impl From<FutureId> for Uuid {
    fn from(id: FutureId) -> Self {
        id.0
    }
}

impl fmt::Display for FutureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for FutureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FutureId({})", self.0)
    }
}

impl FromStr for FutureId {
    type Err = StoreError;

    /// Parses the canonical text form of a UUID.
    fn from_str(s: &str) -> Result<Self, StoreError> {
        Uuid::parse(s)
            .map(FutureId)
            .map_err(|e| StoreError::InvalidArgument(format!("not a future id: {e}")))
    }
}

/// Where a future is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FutureState {
    /// Dispatched, not completed: its runner is running it.
    Pending,
    /// The call succeeded: its encoded response and response metadata.
    Succeeded {
        /// The encoded response.
        payload: Vec<u8>,
        /// The response metadata.
        metadata: Metadata,
    },
    /// The call failed (the handler's error, a passed deadline, or a restart of its
    /// runner: see [`FutureStore::fail_runner`]).
    Failed {
        /// The status code.
        code: StatusCode,
        /// The detail text.
        detail: String,
        /// The error's metadata.
        metadata: Metadata,
    },
    /// Cancelled (by [`FutureStore::cancel`], or completed so by its runner). Its
    /// idempotency key is released.
    Cancelled,
    /// Completed, and the result delivered and discarded ([`FutureStore::discard`], for a
    /// future dispatched with `discard_result`): nothing left to replay, but the
    /// idempotency key still dedups a retried dispatch until the record is evicted.
    Discarded,
}

impl FutureState {
    /// The number a SQL store keeps for the state: 0 pending, 1 succeeded, 2 failed,
    /// 3 cancelled, 4 discarded.
    pub const fn code(&self) -> i16 {
        match self {
            FutureState::Pending => 0,
            FutureState::Succeeded { .. } => 1,
            FutureState::Failed { .. } => 2,
            FutureState::Cancelled => 3,
            FutureState::Discarded => 4,
        }
    }

    /// Whether the future has not completed yet.
    pub const fn is_pending(&self) -> bool {
        matches!(self, FutureState::Pending)
    }

    /// Whether the future completed with a result to deliver: succeeded, failed or
    /// cancelled (not pending, not discarded).
    pub const fn is_deliverable(&self) -> bool {
        matches!(
            self,
            FutureState::Succeeded { .. } | FutureState::Failed { .. } | FutureState::Cancelled
        )
    }
}

/// How a future ends: what [`FutureStore::complete`] records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The call succeeded.
    Succeeded {
        /// The encoded response.
        payload: Vec<u8>,
        /// The response metadata.
        metadata: Metadata,
    },
    /// The call failed.
    Failed {
        /// The status code.
        code: StatusCode,
        /// The detail text.
        detail: String,
        /// The error's metadata.
        metadata: Metadata,
    },
    /// The call was cancelled.
    Cancelled,
}

impl Outcome {
    /// A success without response metadata.
    pub fn success(payload: Vec<u8>) -> Self {
        Outcome::Succeeded {
            payload,
            metadata: Metadata::new(),
        }
    }

    /// A failure with the code, detail and metadata of `status`.
    pub fn failure(status: Status) -> Self {
        Outcome::Failed {
            code: status.code(),
            detail: status.detail().to_owned(),
            metadata: status.metadata().clone(),
        }
    }

    /// The bytes the outcome takes in a store, held against
    /// [`StoreConfig::max_result_bytes`]: the payload, the detail text and the metadata as
    /// encoded.
    pub fn size(&self) -> usize {
        match self {
            Outcome::Succeeded { payload, metadata } => payload.len() + metadata_size(metadata),
            Outcome::Failed {
                detail, metadata, ..
            } => detail.len() + metadata_size(metadata),
            Outcome::Cancelled => 0,
        }
    }

    /// The state the outcome leaves a future in.
    pub fn into_state(self) -> FutureState {
        match self {
            Outcome::Succeeded { payload, metadata } => {
                FutureState::Succeeded { payload, metadata }
            }
            Outcome::Failed {
                code,
                detail,
                metadata,
            } => FutureState::Failed {
                code,
                detail,
                metadata,
            },
            Outcome::Cancelled => FutureState::Cancelled,
        }
    }
}

impl From<Status> for Outcome {
    fn from(status: Status) -> Self {
        Outcome::failure(status)
    }
}

fn metadata_size(metadata: &Metadata) -> usize {
    if metadata.is_empty() {
        0
    } else {
        metadata.wire_size()
    }
}

/// A future as a store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutureRecord {
    /// Its id.
    pub id: FutureId,
    /// The caller identity that dispatched it (`docs/RPC.md` 14.6); only it may resolve or
    /// cancel the future.
    pub owner: String,
    /// The idempotency key of the dispatch, if any.
    pub idempotency_key: Option<Uuid>,
    /// The method the future runs (1 for a batch).
    pub method_id: u32,
    /// Where it is in its life, with its result once completed.
    pub state: FutureState,
    /// Whether the result is to be discarded once delivered.
    pub discard_result: bool,
    /// The server process that runs it ([`StoreConfig::runner`] of the store that inserted
    /// it).
    pub runner: String,
    /// When it was dispatched (the store's clock: the database's for PostgreSQL).
    pub created_at: SystemTime,
    /// When it completed, if it has.
    pub completed_at: Option<SystemTime>,
}

impl FutureRecord {
    /// The outcome as a status-or-response: `None` while pending or once discarded.
    pub fn result(&self) -> Option<Result<(&[u8], &Metadata), Status>> {
        match &self.state {
            FutureState::Pending | FutureState::Discarded => None,
            FutureState::Succeeded { payload, metadata } => Some(Ok((payload, metadata))),
            FutureState::Failed {
                code,
                detail,
                metadata,
            } => {
                let mut status = Status::new(*code, detail.clone());
                status.metadata_mut().merge(metadata);
                Some(Err(status))
            }
            FutureState::Cancelled => Some(Err(Status::cancelled("the future was cancelled"))),
        }
    }

    /// The encoded `FutureResult` of the future: the element of a resolve stream (method 3).
    /// `None` while pending or once discarded.
    pub fn to_future_result(&self) -> Option<Vec<u8>> {
        let result = self.result()?;
        let encoded = match &result {
            Ok((payload, metadata)) => {
                let pairs: Vec<(&str, &str)> = metadata.iter().collect();
                bebop_runtime::encode_to_vec(&FutureResult {
                    id: self.id.uuid(),
                    outcome: FutureOutcome::Success(FutureSuccess {
                        payload,
                        metadata: Map::from_slice(&pairs),
                    }),
                })
            }
            Err(status) => {
                let pairs: Vec<(&str, &str)> = status.metadata().iter().collect();
                bebop_runtime::encode_to_vec(&FutureResult {
                    id: self.id.uuid(),
                    outcome: FutureOutcome::Error(RpcError {
                        code: Some(status.code()),
                        detail: (!status.detail().is_empty()).then_some(status.detail()),
                        metadata: (!pairs.is_empty()).then(|| Map::from_slice(&pairs)),
                    }),
                })
            }
        };
        encoded.ok()
    }
}

/// A future to insert: what a dispatch (method 2) records before it runs anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFuture {
    /// The caller identity (`docs/RPC.md` 14.6).
    pub owner: String,
    /// The idempotency key of the dispatch request, if any.
    pub idempotency_key: Option<Uuid>,
    /// The method to run.
    pub method_id: u32,
    /// `FutureDispatchRequest.discard_result`.
    pub discard_result: bool,
}

impl NewFuture {
    /// A future of `owner` running `method_id`, without idempotency key, keeping its
    /// result.
    pub fn new(owner: impl Into<String>, method_id: u32) -> Self {
        NewFuture {
            owner: owner.into(),
            idempotency_key: None,
            method_id,
            discard_result: false,
        }
    }

    /// With an idempotency key.
    pub fn with_key(mut self, key: Uuid) -> Self {
        self.idempotency_key = Some(key);
        self
    }

    /// With `discard_result` set.
    pub fn with_discard_result(mut self, discard: bool) -> Self {
        self.discard_result = discard;
        self
    }
}

/// What [`FutureStore::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insertion {
    /// A new pending future: run it.
    Inserted(FutureId),
    /// The owner already has a future with this idempotency key, pending or completed (not
    /// cancelled): answer its handle, run nothing.
    Existing(FutureId),
    /// Another owner's future holds this idempotency key: `PERMISSION_DENIED`.
    KeyOfAnotherOwner,
    /// The store already holds [`StoreConfig::max_pending`] pending futures:
    /// `RESOURCE_EXHAUSTED`.
    Full {
        /// The limit.
        limit: usize,
    },
}

/// What [`FutureStore::cancel`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cancellation {
    /// The future was pending: it is now [`FutureState::Cancelled`] (its key released, its
    /// late result ignored) and its runner was sent [`Event::CancelRequested`].
    Cancelled {
        /// The server process running it.
        runner: String,
    },
    /// The future had already completed; nothing changed.
    AlreadyCompleted,
    /// Another owner's future: `PERMISSION_DENIED`.
    NotOwner,
    /// No such future (never, or evicted).
    NotFound,
}

/// What happens in a store, as [`FutureStore::subscribe`] reports it.
///
/// Events are a notification, not a log: a subscriber that falls more than
/// [`StoreConfig::event_capacity`] events behind, or a PostgreSQL store whose listening
/// connection was lost and re-established, gets [`Event::Lagged`] in place of what it
/// missed, and then reads the store for what matters to it (the futures its resolve streams
/// wait for, the futures it runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A future completed (succeeded, failed or was cancelled). Read it with
    /// [`FutureStore::get`].
    Completed {
        /// The future.
        id: FutureId,
        /// Its owner: the resolve streams to push it to.
        owner: String,
    },
    /// A future's owner cancelled it: its runner is to stop the task.
    CancelRequested {
        /// The future.
        id: FutureId,
        /// The server process running it: the others ignore the event.
        runner: String,
    },
    /// Events were lost: see the type's description.
    Lagged,
}

/// The numbers of futures in a store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Not completed.
    pub pending: u64,
    /// Completed (succeeded, failed, cancelled or discarded) and not yet evicted.
    pub completed: u64,
}

/// A retention policy, applied by [`FutureStore::evict`] (`docs/RPC.md` 14.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Completed futures older than this (since completion) are evicted.
    pub max_age: Duration,
    /// The most completed futures kept; the oldest beyond it are evicted.
    pub max_completed: Option<u64>,
}

impl Default for Retention {
    /// An hour, at most 100,000 completed futures.
    fn default() -> Self {
        Retention {
            max_age: Duration::from_secs(3600),
            max_completed: Some(100_000),
        }
    }
}

/// One page of an owner's completed futures, from [`FutureStore::completed_page`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Completed futures in id order.
    pub records: Vec<FutureRecord>,
    /// Where the next page starts (its `after`), or `None` when this was the last.
    pub next: Option<FutureId>,
}

/// A store's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// The name of this server process, recorded as the runner of the futures it inserts.
    /// It must stay the same across restarts of one server (a host name, a pod name) and
    /// differ between servers sharing a database: [`FutureStore::fail_runner`] fails every
    /// pending future of a runner.
    pub runner: String,
    /// The most pending futures the store holds (all owners, and for a shared database all
    /// processes); more are [`Insertion::Full`].
    pub max_pending: usize,
    /// The largest result ([`Outcome::size`]) a future may complete with; a larger one is
    /// refused with [`StoreError::TooLarge`]. The default is the default frame payload
    /// limit of the server, 4 MiB, which a result must fit in to be delivered anyway.
    pub max_result_bytes: usize,
    /// The longest owner (caller identity) accepted, in bytes.
    pub max_owner_bytes: usize,
    /// How many events a subscriber may fall behind before it gets [`Event::Lagged`].
    pub event_capacity: usize,
}

impl StoreConfig {
    /// The defaults with this runner name.
    pub fn new(runner: impl Into<String>) -> Self {
        StoreConfig {
            runner: runner.into(),
            ..StoreConfig::default()
        }
    }

    /// Checks an owner against [`max_owner_bytes`](Self::max_owner_bytes).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidArgument`] for a longer one.
    pub fn check_owner(&self, owner: &str) -> Result<(), StoreError> {
        if owner.len() > self.max_owner_bytes {
            return Err(StoreError::InvalidArgument(format!(
                "an owner of {} bytes is longer than the store's limit of {}",
                owner.len(),
                self.max_owner_bytes
            )));
        }
        Ok(())
    }

    /// Checks an outcome against [`max_result_bytes`](Self::max_result_bytes).
    ///
    /// # Errors
    ///
    /// [`StoreError::TooLarge`] for a larger one.
    pub fn check_outcome(&self, outcome: &Outcome) -> Result<(), StoreError> {
        let size = outcome.size();
        if size > self.max_result_bytes {
            return Err(StoreError::TooLarge {
                size,
                limit: self.max_result_bytes,
            });
        }
        Ok(())
    }
}

impl Default for StoreConfig {
    /// Runner `local`, 10,000 pending futures, results up to 4 MiB, owners up to 1 KiB,
    /// 4,096 events of lag.
    fn default() -> Self {
        StoreConfig {
            runner: "local".to_owned(),
            max_pending: 10_000,
            max_result_bytes: 4 << 20,
            max_owner_bytes: 1024,
            event_capacity: 4096,
        }
    }
}

/// Why a store operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The request is malformed: an id that is not 16 bytes, an owner that is too long, a
    /// setting out of range.
    InvalidArgument(String),
    /// A result larger than [`StoreConfig::max_result_bytes`]: the future stays pending (a
    /// server completes it with a smaller failure instead, `RESOURCE_EXHAUSTED`).
    TooLarge {
        /// Its size ([`Outcome::size`]).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The store holds data it cannot read (changed behind its back, or written by an
    /// incompatible version).
    Corrupt(String),
    /// The store cannot be reached now (a lost connection, a database that is locked, a
    /// stopped worker); the operation may succeed later.
    Unavailable(String),
    /// Another failure of the database.
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// A [`StoreError::Backend`] of any error.
    pub fn backend(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        StoreError::Backend(error.into())
    }

    /// The status a server answers for the error: `INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`,
    /// `UNAVAILABLE` or `INTERNAL`.
    pub fn to_status(&self) -> Status {
        match self {
            StoreError::InvalidArgument(_) => Status::invalid_argument(self.to_string()),
            StoreError::TooLarge { .. } => Status::resource_exhausted(self.to_string()),
            StoreError::Unavailable(_) => Status::unavailable(self.to_string()),
            StoreError::Corrupt(_) | StoreError::Backend(_) => Status::internal(self.to_string()),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            StoreError::TooLarge { size, limit } => write!(
                f,
                "a result of {size} bytes is larger than the store's limit of {limit}"
            ),
            StoreError::Corrupt(m) => write!(f, "the future store holds unreadable data: {m}"),
            StoreError::Unavailable(m) => write!(f, "the future store is unavailable: {m}"),
            StoreError::Backend(e) => write!(f, "the future store failed: {e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Backend(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<StoreError> for Status {
    fn from(e: StoreError) -> Self {
        e.to_status()
    }
}

/// The storage of futures: every operation a server supporting futures needs
/// (see the [module](self) for how a server uses them). Object-safe: a server holds an
/// `Arc<dyn FutureStore>`; the asynchronous operations return [`BoxFuture`]s.
///
/// Operations on one future are atomic: of two concurrent inserts with one idempotency
/// key exactly one inserts, of two completions exactly one wins, and a cancellation and a
/// completion racing each other leave one of them recorded. Every implementation passes
/// the suite of `futures::conformance` (feature `conformance`).
pub trait FutureStore: Send + Sync + 'static {
    /// The settings.
    fn config(&self) -> &StoreConfig;

    /// Inserts a pending future run by this store's runner, with a new random id: atomically
    /// (see [`Insertion`] for the answers). With an idempotency key, an owner's future
    /// holding the key (pending or completed, not cancelled) is returned instead, and
    /// another owner's is refused; the limit [`StoreConfig::max_pending`] only applies to
    /// futures actually inserted.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidArgument`] for an owner longer than
    /// [`StoreConfig::max_owner_bytes`], or the database's failure.
    fn insert(&self, future: NewFuture) -> BoxFuture<'_, Result<Insertion, StoreError>>;

    /// Records the outcome of a pending future and tells the subscribers
    /// ([`Event::Completed`]). Returns whether it did: `false` when the future is not
    /// pending (completed or cancelled already: the first outcome stays) or does not exist.
    ///
    /// # Errors
    ///
    /// [`StoreError::TooLarge`] for an outcome larger than
    /// [`StoreConfig::max_result_bytes`] (nothing changes), or the database's failure.
    fn complete(&self, id: FutureId, outcome: Outcome) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// One future, whoever owns it (the server checks the owner).
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn get(&self, id: FutureId) -> BoxFuture<'_, Result<Option<FutureRecord>, StoreError>>;

    /// The completed futures (succeeded, failed or cancelled) among `ids` that `owner` owns,
    /// each once, in id order; the others (pending, unknown, discarded, another owner's) are
    /// left out. Any number of ids: a SQL store looks them up [`FETCH_CHUNK`] at a time and
    /// holds about [`FETCH_BUDGET`] bytes of results at once ([`fetch_in_batches`]); the
    /// stream is lazy.
    fn fetch_completed<'a>(
        &'a self,
        owner: &'a str,
        ids: &'a [FutureId],
    ) -> BoxStream<'a, Result<FutureRecord, StoreError>>;

    /// A page of `owner`'s completed futures (succeeded, failed or cancelled) in id order,
    /// from the first id above `after` (`None`: from the start): at most `limit` records
    /// (at most [`MAX_PAGE`]), fewer when they hold more than [`FETCH_BUDGET`] bytes.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn completed_page<'a>(
        &'a self,
        owner: &'a str,
        after: Option<FutureId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Page, StoreError>>;

    /// Cancels `owner`'s pending future: atomically marks it [`FutureState::Cancelled`]
    /// (which releases its idempotency key), tells the subscribers it completed
    /// ([`Event::Completed`]) and its runner to stop it ([`Event::CancelRequested`]: the
    /// runner may be another server process). See [`Cancellation`] for the answers.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: FutureId,
    ) -> BoxFuture<'a, Result<Cancellation, StoreError>>;

    /// Drops the result of a succeeded or failed future once delivered (`discard_result`):
    /// it becomes [`FutureState::Discarded`], keeping its idempotency key until evicted.
    /// Returns whether it did (`false` for a pending, cancelled, discarded or unknown one).
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn discard(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Deletes a future whatever its state (its key is released). Returns whether it
    /// existed.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn delete(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Deletes the completed futures the retention policy no longer keeps: those completed
    /// longer than `max_age` ago, then the oldest beyond `max_completed`. Pending futures are
    /// never evicted. Returns how many were deleted. SQL stores delete in batches, letting
    /// other operations run in between.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn evict(&self, retention: Retention) -> BoxFuture<'_, Result<u64, StoreError>>;

    /// How many futures are pending and completed.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn counts(&self) -> BoxFuture<'_, Result<Counts, StoreError>>;

    /// Fails every pending future of `runner` with `UNAVAILABLE` and [`RESTARTED_DETAIL`],
    /// telling the subscribers. A server calls it once at startup with its own runner name,
    /// before it dispatches anything: the tasks of its previous run are gone, so their
    /// futures would stay pending forever. An operator may call it for a runner that is gone
    /// for good. Never call it for a runner that is running. Returns how many futures it
    /// failed.
    ///
    /// # Errors
    ///
    /// The database's failure.
    fn fail_runner<'a>(&'a self, runner: &'a str) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The events from now on: in-process for [`MemoryStore`] and SQLite (every store of one
    /// process on one file), across processes for PostgreSQL. See [`Event`] on lost events.
    fn subscribe(&self) -> EventStream;
}

/// Encodes metadata as a Bebop `map[string, string]`, as SQL stores keep it; empty metadata
/// is `None`.
pub fn encode_metadata(metadata: &Metadata) -> Option<Vec<u8>> {
    if metadata.is_empty() {
        return None;
    }
    let pairs: Vec<(&str, &str)> = metadata.iter().collect();
    bebop_runtime::encode_to_vec(&Map::from_slice(&pairs)).ok()
}

/// Decodes what [`encode_metadata`] made (`None`: empty).
///
/// # Errors
///
/// [`StoreError::Corrupt`] for bytes that are not a `map[string, string]`.
pub fn decode_metadata(bytes: Option<&[u8]>) -> Result<Metadata, StoreError> {
    match bytes {
        None => Ok(Metadata::new()),
        Some(bytes) => Map::<&str, &str>::from_bytes(bytes)
            .map(Metadata::from_view)
            .map_err(|e| StoreError::Corrupt(format!("stored metadata does not decode: {e}"))),
    }
}

/// What a SQL store holds of a result, column by column: the state code
/// ([`FutureState::code`]), payload, metadata (as [`encode_metadata`]), status code, detail
/// and size ([`Outcome::size`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutcomeColumns {
    /// [`FutureState::code`].
    pub state: i16,
    /// The payload of a success.
    pub payload: Option<Vec<u8>>,
    /// The metadata of a success or failure.
    pub metadata: Option<Vec<u8>>,
    /// The status code of a failure.
    pub code: Option<i16>,
    /// The detail of a failure.
    pub detail: Option<String>,
    /// [`Outcome::size`].
    pub size: i64,
}

impl OutcomeColumns {
    /// The columns of an outcome.
    pub fn of(outcome: Outcome) -> Self {
        let size = i64::try_from(outcome.size()).unwrap_or(i64::MAX);
        match outcome {
            Outcome::Succeeded { payload, metadata } => OutcomeColumns {
                state: 1,
                payload: Some(payload),
                metadata: encode_metadata(&metadata),
                code: None,
                detail: None,
                size,
            },
            Outcome::Failed {
                code,
                detail,
                metadata,
            } => OutcomeColumns {
                state: 2,
                payload: None,
                metadata: encode_metadata(&metadata),
                code: Some(i16::from(u8::from(code))),
                detail: Some(detail),
                size,
            },
            Outcome::Cancelled => OutcomeColumns {
                state: 3,
                payload: None,
                metadata: None,
                code: None,
                detail: None,
                size,
            },
        }
    }

    /// The state these columns describe.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for an unknown state, a success without payload, a failure
    /// without or with an out-of-range code, or undecodable metadata.
    pub fn into_state(self) -> Result<FutureState, StoreError> {
        Ok(match self.state {
            0 => FutureState::Pending,
            1 => FutureState::Succeeded {
                payload: self.payload.ok_or_else(|| {
                    StoreError::Corrupt("a succeeded future without payload".to_owned())
                })?,
                metadata: decode_metadata(self.metadata.as_deref())?,
            },
            2 => {
                let code = self
                    .code
                    .and_then(|c| u8::try_from(c).ok())
                    .ok_or_else(|| {
                        StoreError::Corrupt(format!(
                            "a failed future with status code {:?}",
                            self.code
                        ))
                    })?;
                FutureState::Failed {
                    code: StatusCode::from(code),
                    detail: self.detail.unwrap_or_default(),
                    metadata: decode_metadata(self.metadata.as_deref())?,
                }
            }
            3 => FutureState::Cancelled,
            4 => FutureState::Discarded,
            n => return Err(StoreError::Corrupt(format!("unknown future state {n}"))),
        })
    }
}

/// What one query of [`fetch_in_batches`] returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// The completed futures found, in id order.
    pub records: Vec<FutureRecord>,
    /// Whether the query stopped at its byte budget ([`FETCH_BUDGET`]) with more of the
    /// chunk's futures left: the next query of the chunk starts after the last record.
    pub more: bool,
}

/// The stream of [`FutureStore::fetch_completed`] for a SQL store: sorts and dedups a copy
/// of `ids`, cuts it into chunks of at most [`FETCH_CHUNK`] ids and calls `fetch(chunk,
/// after)` for each, lazily, as the stream is read: `fetch` returns the owner's completed
/// futures among `chunk` whose ids are above `after` ([`FutureId::NIL`] for a new chunk),
/// in id order, up to about [`FETCH_BUDGET`] bytes, and says whether more are left. So a
/// million ids cost about two thousand queries of constant shape, and a bounded amount of
/// memory beyond the sorted copy.
pub fn fetch_in_batches<'a, F>(
    ids: &[FutureId],
    fetch: F,
) -> BoxStream<'a, Result<FutureRecord, StoreError>>
where
    F: FnMut(Vec<FutureId>, FutureId) -> BoxFuture<'a, Result<Batch, StoreError>> + Send + 'a,
{
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    struct State<F> {
        sorted: Vec<FutureId>,
        next_chunk: usize,
        chunk: Option<Vec<FutureId>>,
        after: FutureId,
        buffered: VecDeque<FutureRecord>,
        fetch: F,
        failed: bool,
    }
    let state = State {
        sorted,
        next_chunk: 0,
        chunk: None,
        after: FutureId::NIL,
        buffered: VecDeque::new(),
        fetch,
        failed: false,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(record) = st.buffered.pop_front() {
                return Some((Ok(record), st));
            }
            if st.failed {
                return None;
            }
            let chunk = match st.chunk.take() {
                Some(chunk) => chunk,
                None => {
                    if st.next_chunk >= st.sorted.len() {
                        return None;
                    }
                    let end = (st.next_chunk + FETCH_CHUNK).min(st.sorted.len());
                    let chunk = st.sorted[st.next_chunk..end].to_vec();
                    st.next_chunk = end;
                    st.after = FutureId::NIL;
                    chunk
                }
            };
            match (st.fetch)(chunk.clone(), st.after).await {
                Ok(batch) => {
                    if let Some(last) = batch.records.last() {
                        st.after = last.id;
                    }
                    if batch.more && !batch.records.is_empty() {
                        st.chunk = Some(chunk);
                    }
                    st.buffered.extend(batch.records);
                }
                Err(e) => {
                    st.failed = true;
                    return Some((Err(e), st));
                }
            }
        }
    }))
}

/// The stream of a store's broadcast channel, turning a lag into [`Event::Lagged`].
pub fn broadcast_stream(receiver: tokio::sync::broadcast::Receiver<Event>) -> EventStream {
    use tokio::sync::broadcast::error::RecvError;
    Box::pin(futures_util::stream::unfold(
        receiver,
        |mut receiver| async move {
            match receiver.recv().await {
                Ok(event) => Some((event, receiver)),
                Err(RecvError::Lagged(_)) => Some((Event::Lagged, receiver)),
                Err(RecvError::Closed) => None,
            }
        },
    ))
}

/// Microseconds since the Unix epoch, as the SQLite store keeps times (times before the
/// epoch are negative).
pub fn to_micros(time: SystemTime) -> i64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_micros()).map_or(i64::MIN, |m| -m),
    }
}

/// The time of [`to_micros`].
///
/// # Errors
///
/// [`StoreError::Corrupt`] for a time the system clock cannot hold.
pub fn from_micros(micros: i64) -> Result<SystemTime, StoreError> {
    let magnitude = Duration::from_micros(micros.unsigned_abs());
    let time = if micros >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(magnitude)
    } else {
        SystemTime::UNIX_EPOCH.checked_sub(magnitude)
    };
    time.ok_or_else(|| StoreError::Corrupt(format!("a time of {micros} µs since 1970")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_version_4() {
        let a = FutureId::random().unwrap();
        let b = FutureId::random().unwrap();
        assert_ne!(a, b);
        for id in [a, b] {
            assert_eq!(id.as_bytes()[6] >> 4, 4);
            assert_eq!(id.as_bytes()[8] >> 6, 2);
        }
        assert_eq!(FutureId::from_slice(a.as_bytes()).unwrap(), a);
        for len in [0, 1, 15, 17, 32] {
            let err = FutureId::from_slice(&vec![0; len]).unwrap_err();
            assert!(
                matches!(err, StoreError::InvalidArgument(_)),
                "{len}: {err}"
            );
        }
        assert!("not-a-uuid".parse::<FutureId>().is_err());
    }

    #[test]
    fn outcome_columns_round_trip() {
        let md: Metadata = [("k", "v")].into_iter().collect();
        for outcome in [
            Outcome::Succeeded {
                payload: vec![1, 2, 3],
                metadata: md.clone(),
            },
            Outcome::Succeeded {
                payload: vec![],
                metadata: Metadata::new(),
            },
            Outcome::Failed {
                code: StatusCode::Unrecognized(200),
                detail: "x".into(),
                metadata: md.clone(),
            },
            Outcome::Cancelled,
        ] {
            let cols = OutcomeColumns::of(outcome.clone());
            assert_eq!(cols.size, outcome.size() as i64);
            assert_eq!(cols.into_state().unwrap(), outcome.into_state());
        }
        let bad = OutcomeColumns {
            state: 2,
            payload: None,
            metadata: None,
            code: Some(300),
            detail: None,
            size: 0,
        };
        assert!(matches!(bad.into_state(), Err(StoreError::Corrupt(_))));
        let bad = OutcomeColumns {
            state: 1,
            payload: Some(vec![]),
            metadata: Some(vec![9, 9]),
            code: None,
            detail: None,
            size: 0,
        };
        assert!(matches!(bad.into_state(), Err(StoreError::Corrupt(_))));
        let bad = OutcomeColumns {
            state: 9,
            payload: None,
            metadata: None,
            code: None,
            detail: None,
            size: 0,
        };
        assert!(matches!(bad.into_state(), Err(StoreError::Corrupt(_))));
    }

    #[test]
    fn times_round_trip_in_micros() {
        let now = SystemTime::now();
        let back = from_micros(to_micros(now)).unwrap();
        assert!(now.duration_since(back).unwrap() < Duration::from_micros(1));
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(to_micros(before), -5_000_000);
        assert_eq!(from_micros(-5_000_000).unwrap(), before);
    }

    #[test]
    fn future_results_encode_as_the_protocol_says() {
        let id = FutureId::random().unwrap();
        let mut record = FutureRecord {
            id,
            owner: "o".into(),
            idempotency_key: None,
            method_id: 1,
            state: FutureState::Pending,
            discard_result: false,
            runner: "r".into(),
            created_at: SystemTime::now(),
            completed_at: None,
        };
        assert_eq!(record.to_future_result(), None);
        record.state = FutureState::Succeeded {
            payload: b"hi".to_vec(),
            metadata: [("a", "b")].into_iter().collect(),
        };
        let bytes = record.to_future_result().unwrap();
        let decoded = FutureResult::from_bytes(&bytes).unwrap();
        assert_eq!(decoded.id, id.uuid());
        match decoded.outcome {
            FutureOutcome::Success(s) => {
                assert_eq!(s.payload, b"hi");
                assert_eq!(s.metadata.iter().collect::<Vec<_>>(), vec![("a", "b")]);
            }
            other => panic!("{other:?}"),
        }
        record.state = FutureState::Cancelled;
        let bytes = record.to_future_result().unwrap();
        match FutureResult::from_bytes(&bytes).unwrap().outcome {
            FutureOutcome::Error(e) => assert_eq!(e.code, Some(StatusCode::Cancelled)),
            other => panic!("{other:?}"),
        }
        record.state = FutureState::Discarded;
        assert_eq!(record.to_future_result(), None);
    }

    #[test]
    fn errors_map_to_statuses() {
        assert_eq!(
            StoreError::TooLarge { size: 2, limit: 1 }
                .to_status()
                .code(),
            StatusCode::ResourceExhausted
        );
        assert_eq!(
            StoreError::Unavailable("x".into()).to_status().code(),
            StatusCode::Unavailable
        );
        assert_eq!(
            Status::from(StoreError::backend("boom")).code(),
            StatusCode::Internal
        );
    }
}
