//! Method 1: a batch of calls run on the server in one round trip (`docs/rpc.md`,
//! "Batches").

use std::sync::Arc;

use super::Shared;
use super::call::ServerCall;
use crate::status::Status;

/// Serves one batch call.
pub(crate) async fn serve(_shared: Arc<Shared>, call: ServerCall) {
    call.reject(Status::unimplemented("batches are not served yet"))
        .await
}
