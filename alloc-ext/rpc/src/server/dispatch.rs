//! Starting a call, whatever carries it: the checks every call passes before its handler
//! runs (`docs/rpc.md`, "Starting a call") and the supervised task that runs it. The binary
//! connection and the transports of [`crate::transport`] both start calls here.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use bebop_runtime::rpc::{BATCH_METHOD_ID, DISCOVERY_METHOD_ID, RESERVED_METHOD_IDS};

use bebop_runtime::{MethodInfo, MethodKind};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Service;
use super::Shared;
use super::call::{BoxFuture, Responder, ServerCall, spawn_call};
use crate::context::{Context, Peer};
use crate::queue::Outbox;
use crate::status::Status;
use crate::wire::{MUX_KEY, OwnedCallHeader, OwnedFrame};

/// Method 2: dispatch a future.
pub(crate) const DISPATCH_METHOD_ID: u32 = 2;
/// Method 3: resolve futures.
pub(crate) const RESOLVE_METHOD_ID: u32 = 3;
/// Method 4: cancel a future.
pub(crate) const CANCEL_METHOD_ID: u32 = 4;

/// What serves a call.
#[derive(Clone)]
pub(crate) enum Target {
    /// A method of a registered service.
    Service(Arc<dyn Service>),
    /// Method 0: the server's own list of services.
    Discovery,
    /// Method 1: a batch of calls (`docs/rpc.md`, "Batches").
    Batch,
    /// Method 2: dispatch a future (`docs/rpc.md`, "Futures").
    Dispatch,
    /// Method 3: resolve futures.
    Resolve,
    /// Method 4: cancel a future.
    Cancel,
}

/// A call that passed the checks and may start.
pub(crate) struct Admitted {
    pub info: MethodInfo,
    pub target: Target,
}

/// The handles a carrier keeps of a started call.
pub(crate) struct Launched {
    /// Where the carrier delivers the call's request frames.
    pub requests: mpsc::Sender<OwnedFrame>,
    /// Set once the call's response has ended.
    pub response_ended: Arc<AtomicBool>,
    /// Cancels the call.
    pub cancel: CancellationToken,
}

impl Shared {
    /// The method a call header names, as far as routing tells.
    pub(crate) fn method_of(&self, method_id: u32) -> MethodInfo {
        if let Some(route) = self.routes.get(&method_id) {
            return route.info;
        }
        let (name, kind) = match method_id {
            DISCOVERY_METHOD_ID => ("discovery", MethodKind::Unary),
            BATCH_METHOD_ID => ("batch", MethodKind::Unary),
            DISPATCH_METHOD_ID => ("dispatch", MethodKind::Unary),
            RESOLVE_METHOD_ID => ("resolve", MethodKind::ServerStream),
            CANCEL_METHOD_ID => ("cancel", MethodKind::Unary),
            _ => ("unknown", MethodKind::Unary),
        };
        MethodInfo {
            service: "",
            name,
            id: method_id,
            kind,
        }
    }

    /// The checks that do not depend on what carries the call, in the order of `docs/rpc.md`
    /// ("Starting a call"): request metadata size, the deadline, reserved and unknown ids.
    pub(crate) fn admit(&self, header: &OwnedCallHeader) -> Result<Admitted, Status> {
        let limits = &self.limits;
        let method_id = header.method_id.unwrap_or(DISCOVERY_METHOD_ID);
        let size = header.metadata.wire_size();
        if size > limits.max_metadata {
            return Err(Status::resource_exhausted(format!(
                "request metadata of {size} bytes is over the limit of {}",
                limits.max_metadata
            )));
        }
        if header.bad_deadline {
            return Err(Status::invalid_argument("the deadline is out of range"));
        }
        if header.deadline.is_some_and(|d| d <= SystemTime::now()) {
            return Err(Status::deadline_exceeded(
                "the deadline passed before the call started",
            ));
        }
        let info = self.method_of(method_id);
        let target = match method_id {
            DISCOVERY_METHOD_ID => Target::Discovery,
            BATCH_METHOD_ID => Target::Batch,
            DISPATCH_METHOD_ID if self.futures.is_some() => Target::Dispatch,
            RESOLVE_METHOD_ID if self.futures.is_some() => Target::Resolve,
            CANCEL_METHOD_ID if self.futures.is_some() => Target::Cancel,
            id if RESERVED_METHOD_IDS.contains(&id) => {
                return Err(Status::unimplemented(format!(
                    "reserved method {method_id} is not served here"
                )));
            }
            id => match self.routes.get(&id) {
                Some(route) => Target::Service(route.service.clone()),
                None => return Err(Status::not_found(format!("no method {method_id:#010x}"))),
            },
        };
        Ok(Admitted { info, target })
    }

    /// Starts an admitted call on its own supervised task: interceptors, then the handler.
    /// Responses go to `out` on `stream_id`; `done` runs once the task has ended.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch(
        self: &Arc<Self>,
        admitted: Admitted,
        mut header: OwnedCallHeader,
        stream_id: u32,
        peer: Arc<Peer>,
        out: Arc<Outbox>,
        cancel: CancellationToken,
        done: impl FnOnce() + Send + 'static,
    ) -> Launched {
        let (tx, rx) = mpsc::channel(self.limits.request_queue.max(1));
        header.metadata.remove(MUX_KEY);
        let ctx = Arc::new(Context::new(
            admitted.info,
            stream_id,
            header.metadata,
            header.deadline,
            header.cursor,
            peer,
            cancel.clone(),
        ));
        let ended = Arc::new(AtomicBool::new(false));
        let responder = Responder {
            stream_id,
            out,
            ended: ended.clone(),
            cancel: cancel.clone(),
        };
        let call = ServerCall {
            ctx: ctx.clone(),
            requests: rx,
            responder: responder.clone(),
        };
        let shared = self.clone();
        let info = admitted.info;
        let work: BoxFuture<'static, ()> = Box::pin(async move {
            for interceptor in &shared.interceptors {
                if let Err(status) = interceptor.intercept(&call.ctx).await {
                    return call.reject(status).await;
                }
            }
            match admitted.target {
                Target::Service(service) => service.call(info, call).await,
                Target::Discovery => call.reply_encoded(&shared.discovery).await,
                Target::Batch => super::batch::serve(shared.clone(), call).await,
                Target::Dispatch => super::futures::dispatch(shared.clone(), call).await,
                Target::Resolve => super::futures::resolve(shared.clone(), call).await,
                Target::Cancel => super::futures::cancel(shared.clone(), call).await,
            }
        });
        spawn_call(&self.tracker, ctx, responder, work, done);
        Launched {
            requests: tx,
            response_ended: ended,
            cancel,
        }
    }
}
