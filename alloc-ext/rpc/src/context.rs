//! The call context a handler sees ([`Context`]), who is calling ([`Peer`]), and what a
//! client sends with a call ([`CallOptions`]).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use bebop_runtime::MethodInfo;
use tokio_util::sync::CancellationToken;

use crate::metadata::Metadata;

/// Where a connection comes from or goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// A TCP peer.
    Tcp(SocketAddr),
    /// A Unix socket peer: its path (usually none for a client) and, when the operating
    /// system tells, its credentials.
    Unix {
        /// The socket path, if bound.
        path: Option<PathBuf>,
        /// The peer process's user and group ids (and pid where known).
        credentials: Option<Credentials>,
    },
    /// Anything else (a child process's pipes, an in-memory stream), described for logs.
    Other(String),
}

/// Unix socket peer credentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The peer's user id.
    pub uid: u32,
    /// The peer's group id.
    pub gid: u32,
    /// The peer's process id, where the platform reports it.
    pub pid: Option<i32>,
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "{a}"),
            Address::Unix { path, credentials } => {
                f.write_str("unix:")?;
                if let Some(p) = path {
                    write!(f, "{}", p.display())?;
                }
                if let Some(c) = credentials {
                    write!(f, "(uid {})", c.uid)?;
                }
                Ok(())
            }
            Address::Other(s) => f.write_str(s),
        }
    }
}

/// Who is on the other end of a connection: addresses, and an authenticated identity once a
/// transport hook or an interceptor has set one (`docs/rpc.md`, "Peers and identity").
#[derive(Debug)]
pub struct Peer {
    remote: Option<Address>,
    local: Option<Address>,
    identity: Mutex<Option<String>>,
}

impl Peer {
    /// A peer with these addresses and no identity yet.
    pub fn new(remote: Option<Address>, local: Option<Address>) -> Self {
        Peer {
            remote,
            local,
            identity: Mutex::new(None),
        }
    }

    /// The remote address.
    pub fn remote(&self) -> Option<&Address> {
        self.remote.as_ref()
    }

    /// The local address.
    pub fn local(&self) -> Option<&Address> {
        self.local.as_ref()
    }

    /// The authenticated identity, if one was set.
    pub fn identity(&self) -> Option<String> {
        lock(&self.identity).clone()
    }

    /// Sets the authenticated identity (for every later call on this connection too).
    pub fn set_identity(&self, identity: impl Into<String>) {
        *lock(&self.identity) = Some(identity.into());
    }

    /// The stable owner string (`docs/rpc.md`, "Peers and identity"): the identity, else the
    /// remote address.
    pub fn owner(&self) -> Option<String> {
        self.identity()
            .or_else(|| self.remote.as_ref().map(|a| a.to_string()))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Everything a handler knows about its call (`docs/rpc.md`, "Call context"): request metadata, the
/// deadline, the resume cursor, cancellation, the peer, response metadata to send back and
/// typed attachments.
///
/// ```
/// use std::time::Duration;
/// use bebop_rpc::{CallOptions, Context};
///
/// let ctx = Context::for_test(
///     CallOptions::new().metadata("authorization", "t").timeout(Duration::from_secs(5)),
/// );
/// assert_eq!(ctx.metadata().get("authorization"), Some("t"));
/// ctx.set_response_metadata("rows", "3");
///
/// // A downstream call on behalf of this caller: same metadata, never a later deadline.
/// let downstream = ctx.forwarding().timeout(Duration::from_secs(60));
/// assert_eq!(downstream.deadline(), ctx.deadline());
/// ```
pub struct Context {
    method: MethodInfo,
    stream_id: u32,
    metadata: Metadata,
    deadline: Option<SystemTime>,
    cursor: u64,
    peer: Arc<Peer>,
    cancel: CancellationToken,
    response_metadata: Mutex<Metadata>,
    attachments: Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
}

impl Context {
    pub(crate) fn new(
        method: MethodInfo,
        stream_id: u32,
        metadata: Metadata,
        deadline: Option<SystemTime>,
        cursor: u64,
        peer: Arc<Peer>,
        cancel: CancellationToken,
    ) -> Self {
        Context {
            method,
            stream_id,
            metadata,
            deadline,
            cursor,
            peer,
            cancel,
            response_metadata: Mutex::new(Metadata::new()),
            attachments: Mutex::new(HashMap::new()),
        }
    }

    /// A context as a server would build it from `options`, for testing handlers without a
    /// connection.
    pub fn for_test(options: CallOptions) -> Self {
        Context::new(
            MethodInfo {
                service: "",
                name: "test",
                id: 0,
                kind: bebop_runtime::MethodKind::Unary,
            },
            1,
            options.metadata,
            options.deadline,
            options.cursor,
            Arc::new(Peer::new(None, None)),
            CancellationToken::new(),
        )
    }

    /// The method called.
    pub fn method(&self) -> MethodInfo {
        self.method
    }

    /// The call's stream id on its connection.
    pub fn stream_id(&self) -> u32 {
        self.stream_id
    }

    /// The request metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The absolute deadline, if the caller set one.
    pub fn deadline(&self) -> Option<SystemTime> {
        self.deadline
    }

    /// The time left before the deadline (zero once passed); `None` without a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|d| {
            d.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO)
        })
    }

    /// The resume cursor of a server stream (0: from the start).
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Whether the client went away, cancelled, or the deadline passed.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when [`is_cancelled`](Self::is_cancelled) becomes true.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// The cancellation token, to hand to work the handler spawns.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Who is calling.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The peer, shared (the calls of a batch are made as the batch's peer).
    pub(crate) fn peer_handle(&self) -> Arc<Peer> {
        self.peer.clone()
    }

    /// Sets a response (trailing) metadata entry: sent in a `TRAILER` frame after the
    /// response, or in the `RpcError` if the call fails.
    pub fn set_response_metadata(&self, key: impl Into<String>, value: impl Into<String>) {
        lock(&self.response_metadata).insert(key, value);
    }

    /// The response metadata set so far.
    pub fn response_metadata(&self) -> Metadata {
        lock(&self.response_metadata).clone()
    }

    pub(crate) fn take_response_metadata(&self) -> Metadata {
        std::mem::take(&mut *lock(&self.response_metadata))
    }

    /// Stores a typed value on the call (one per type): how interceptors pass what they
    /// learnt to handlers.
    pub fn attach<T: Any + Send + Sync + Clone>(&self, value: T) {
        lock(&self.attachments).insert(TypeId::of::<T>(), Box::new(value));
    }

    /// The value of type `T` attached to this call.
    pub fn attachment<T: Any + Send + Sync + Clone>(&self) -> Option<T> {
        lock(&self.attachments)
            .get(&TypeId::of::<T>())
            .and_then(|b| b.downcast_ref::<T>())
            .cloned()
    }

    /// Options for a downstream call on behalf of this caller: the same metadata, deadline
    /// and cursor (`docs/rpc.md`, "Call context").
    pub fn forwarding(&self) -> CallOptions {
        CallOptions {
            metadata: self.metadata.clone(),
            deadline: self.deadline,
            cursor: self.cursor,
        }
    }

    /// Like [`forwarding`](Self::forwarding), with extra metadata entries that override
    /// forwarded ones.
    pub fn deriving<K: Into<String>, V: Into<String>>(
        &self,
        extra: impl IntoIterator<Item = (K, V)>,
    ) -> CallOptions {
        let mut options = self.forwarding();
        for (k, v) in extra {
            options.metadata.insert(k, v);
        }
        options
    }

    pub(crate) fn deadline_instant(&self) -> Option<Instant> {
        self.deadline.map(instant_of)
    }
}

/// The monotonic instant of a wall-clock deadline (now, if it has passed).
pub(crate) fn instant_of(deadline: SystemTime) -> Instant {
    let now = Instant::now();
    match deadline.duration_since(SystemTime::now()) {
        Ok(left) => now
            .checked_add(left)
            .unwrap_or(now + Duration::from_secs(86_400 * 365)),
        Err(_) => now,
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field(
                "method",
                &format_args!("{}.{}", self.method.service, self.method.name),
            )
            .field("stream_id", &self.stream_id)
            .field("metadata", &self.metadata)
            .field("deadline", &self.deadline)
            .field("cursor", &self.cursor)
            .field("peer", &self.peer)
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// What a client sends with a call: metadata, an absolute deadline and a resume cursor.
///
/// ```
/// use std::time::Duration;
/// use bebop_rpc::CallOptions;
///
/// let options = CallOptions::new()
///     .metadata("authorization", "Bearer t0k3n")
///     .timeout(Duration::from_millis(250));
/// assert!(options.deadline().is_some());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallOptions {
    pub(crate) metadata: Metadata,
    pub(crate) deadline: Option<SystemTime>,
    pub(crate) cursor: u64,
}

impl CallOptions {
    /// No metadata, no deadline, cursor 0.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Adds a metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key, value);
        self
    }

    /// Replaces all metadata.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the deadline to `deadline`, or keeps an earlier one (a deadline is never
    /// extended).
    pub fn deadline_at(mut self, deadline: SystemTime) -> Self {
        self.deadline = Some(match self.deadline {
            Some(d) if d < deadline => d,
            _ => deadline,
        });
        self
    }

    /// Sets the deadline `timeout` from now, or keeps an earlier one.
    pub fn timeout(self, timeout: Duration) -> Self {
        let at = SystemTime::now()
            .checked_add(timeout)
            .unwrap_or_else(|| SystemTime::now() + Duration::from_secs(86_400 * 365 * 100));
        self.deadline_at(at)
    }

    /// Sets the resume cursor of a server stream.
    pub fn cursor(mut self, cursor: u64) -> Self {
        self.cursor = cursor;
        self
    }

    /// The deadline.
    pub fn deadline(&self) -> Option<SystemTime> {
        self.deadline
    }

    /// The metadata.
    pub fn get_metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The cursor.
    pub fn get_cursor(&self) -> u64 {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_never_extended() {
        let soon = SystemTime::now() + Duration::from_secs(1);
        let o = CallOptions::new()
            .deadline_at(soon)
            .timeout(Duration::from_secs(60));
        assert_eq!(o.deadline(), Some(soon));
        let o = CallOptions::new()
            .timeout(Duration::from_secs(60))
            .deadline_at(soon);
        assert_eq!(o.deadline(), Some(soon));
    }

    #[test]
    fn deriving_overrides_and_forwards() {
        let ctx = Context::for_test(
            CallOptions::new()
                .metadata("a", "1")
                .metadata("b", "2")
                .cursor(7),
        );
        let o = ctx.deriving([("b", "3"), ("c", "4")]);
        assert_eq!(o.get_metadata().get("a"), Some("1"));
        assert_eq!(o.get_metadata().get("b"), Some("3"));
        assert_eq!(o.get_metadata().get("c"), Some("4"));
        assert_eq!(o.get_cursor(), 7);
    }

    #[test]
    fn attachments_are_typed() {
        #[derive(Clone, Debug, PartialEq)]
        struct User(String);
        let ctx = Context::for_test(CallOptions::new());
        assert_eq!(ctx.attachment::<User>(), None);
        ctx.attach(User("ada".into()));
        ctx.attach(5u32);
        assert_eq!(ctx.attachment::<User>(), Some(User("ada".into())));
        assert_eq!(ctx.attachment::<u32>(), Some(5));
    }

    #[test]
    fn owner_prefers_identity() {
        let peer = Peer::new(Some(Address::Tcp("127.0.0.1:9".parse().unwrap())), None);
        assert_eq!(peer.owner().as_deref(), Some("127.0.0.1:9"));
        peer.set_identity("user:ada");
        assert_eq!(peer.owner().as_deref(), Some("user:ada"));
    }
}
