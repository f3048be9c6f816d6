//! Batches on the client (`docs/rpc.md`, "Batches"): [`Batch`] lists the calls of one batch,
//! [`Client::batch`](crate::Client::batch) sends it as one unary call of method 1, and
//! [`BatchResults`] decodes each call's result.
//!
//! ```
//! use bebop_rpc::{Batch, CallOptions, Client, Server, StatusCode};
//! use bebop_rpc::transport::InProcess;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), bebop_rpc::Status> {
//! // A server with no services still answers discovery (method 0) inside a batch.
//! let client = Client::over(InProcess::new(Server::builder().build()));
//! let mut batch = Batch::new();
//! let discovery = batch.call(0, &bebop_runtime::rpc::Empty {})?;
//! let unknown = batch.call(0x1234_5678, "hello")?;
//! // Takes `unknown`'s response as its request, so it never runs.
//! let after = batch.call_from(0x1234_5678, unknown);
//!
//! let results = client.batch(&batch, CallOptions::new()).await?;
//! let services: bebop_rpc::RawMessage = results.get(discovery)?;
//! assert_eq!(services.0, [0, 0, 0, 0]); // DiscoveryResponse { services: [] }
//! assert_eq!(results.get::<String>(unknown).unwrap_err().code(), StatusCode::NotFound);
//! let e = results.get::<String>(after).unwrap_err();
//! assert_eq!(e.code(), StatusCode::InvalidArgument);
//! assert_eq!(e.detail(), "dependency 1 failed");
//! # Ok(()) }
//! ```

use bebop_runtime::rpc::{BatchCall, BatchOutcome, BatchRequest, BatchResponse};
use bebop_runtime::{Array, Decode, Encode, Map, MethodInfo};

use crate::metadata::Metadata;
use crate::status::Status;

/// A method named in a [`Batch`]: by its id, or by the `MethodInfo` generated code gives
/// every method (`lab::ECHO`, say).
pub trait MethodRef {
    /// The method's id.
    fn method_id(&self) -> u32;
}

impl MethodRef for u32 {
    fn method_id(&self) -> u32 {
        *self
    }
}

impl MethodRef for MethodInfo {
    fn method_id(&self) -> u32 {
        self.id
    }
}

impl<T: MethodRef + ?Sized> MethodRef for &T {
    fn method_id(&self) -> u32 {
        (**self).method_id()
    }
}

/// One call of a [`Batch`]: what [`Batch::call`] returns, to feed it to later calls with
/// [`Batch::call_from`] and to find its result in [`BatchResults`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallRef(i32);

impl CallRef {
    /// The call's `call_id` on the wire (its position in the batch).
    pub fn call_id(self) -> i32 {
        self.0
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Planned {
    method_id: u32,
    payload: Vec<u8>,
    input_from: i32,
}

/// The calls of one batch (method 1): unary and server-stream calls the server runs in
/// one round trip, independent ones at the same time, each call given
/// [`call_from`](Self::call_from) another taking that call's (first) response as its
/// request. Calls are numbered from 0 in the order they are added.
///
/// ```
/// use bebop_rpc::Batch;
///
/// let mut batch = Batch::new();
/// batch.metadata("authorization", "Bearer t0k3n"); // given to every call
/// let create = batch.call(0x1a2b_3c4d, "widget").unwrap();
/// let fetch = batch.call_from(0x5e6f_7a8b, create);
/// assert_eq!((create.call_id(), fetch.call_id()), (0, 1));
/// assert_eq!(batch.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    calls: Vec<Planned>,
    metadata: Metadata,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Batch::default()
    }

    /// Sets an entry of the metadata every call of the batch receives
    /// (`BatchRequest.metadata`). The batch call's own [`CallOptions`](crate::CallOptions)
    /// metadata is for the batch call and its interceptors, not for the calls inside.
    pub fn metadata(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.metadata.insert(key, value);
        self
    }

    /// Adds a call of `method` with `request`. Fails only if the request does not encode.
    pub fn call<Req: Encode + ?Sized>(
        &mut self,
        method: impl MethodRef,
        request: &Req,
    ) -> Result<CallRef, Status> {
        let payload = bebop_runtime::encode_to_vec(request)
            .map_err(|e| Status::internal(format!("encoding the request failed: {e}")))?;
        Ok(self.push(method.method_id(), payload, -1))
    }

    /// Adds a call of `method` whose request is the first response of `from` (a call added
    /// before). When `from` fails, this call fails too without running (`INVALID_ARGUMENT`,
    /// "dependency {id} failed"); it also receives `from`'s response metadata over the
    /// batch's.
    pub fn call_from(&mut self, method: impl MethodRef, from: CallRef) -> CallRef {
        self.push(method.method_id(), Vec::new(), from.0)
    }

    fn push(&mut self, method_id: u32, payload: Vec<u8>, input_from: i32) -> CallRef {
        // Two billion calls would not fit in memory, let alone in a request; should it
        // happen, the repeated id has the server refuse the batch.
        let id = i32::try_from(self.calls.len()).unwrap_or(i32::MAX);
        self.calls.push(Planned {
            method_id,
            payload,
            input_from,
        });
        CallRef(id)
    }

    /// The number of calls.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether the batch has no calls.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The encoded `BatchRequest`: the request of method 1 (or the body of an HTTP
    /// `POST /_bebop/batch`).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Status> {
        let calls: Vec<BatchCall<'_>> = self
            .calls
            .iter()
            .zip(0..)
            .map(|(c, call_id)| BatchCall {
                call_id,
                method_id: c.method_id,
                payload: &c.payload,
                input_from: c.input_from,
            })
            .collect();
        let pairs = self.metadata.as_pairs();
        bebop_runtime::encode_to_vec(&BatchRequest {
            calls: Array::from_slice(&calls),
            metadata: Map::from_slice(&pairs),
        })
        .map_err(|e| Status::internal(format!("encoding the batch failed: {e}")))
    }
}

/// A call of a batch that succeeded: its payloads and response metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Success {
    payloads: Vec<Vec<u8>>,
    metadata: Metadata,
}

/// What the calls of a batch returned (`BatchResponse`), one result per call: decode a
/// unary call's response with [`get`](Self::get) and a server stream's elements with
/// [`stream`](Self::stream). A call that failed returns its `Status` from either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchResults {
    results: Vec<(i32, Result<Success, Status>)>,
}

impl BatchResults {
    /// Decodes an encoded `BatchResponse` (the response of method 1, or of an HTTP
    /// `POST /_bebop/batch`). One that does not decode is `INTERNAL`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Status> {
        let response = BatchResponse::from_bytes(bytes)
            .map_err(|e| Status::internal(format!("the batch response does not decode: {e}")))?;
        let results = response
            .results
            .iter()
            .map(|r| {
                let outcome = match r.outcome {
                    BatchOutcome::Success(s) => Ok(Success {
                        payloads: s.payloads.iter().map(<[u8]>::to_vec).collect(),
                        metadata: Metadata::from_view(s.metadata),
                    }),
                    BatchOutcome::Error(e) => Err(Status::from_rpc_error(&e)),
                };
                (r.call_id, outcome)
            })
            .collect();
        Ok(BatchResults { results })
    }

    /// Checks that the server answered every call of `batch`, in order.
    pub(crate) fn check(&self, batch: &Batch) -> Result<(), Status> {
        if self.results.len() != batch.len() {
            return Err(Status::internal(format!(
                "the server answered {} calls of a batch of {}",
                self.results.len(),
                batch.len()
            )));
        }
        match self.results.iter().zip(0..).find(|((id, _), i)| id != i) {
            Some(((id, _), i)) => Err(Status::internal(format!(
                "the server answered call {id} where call {i} was expected"
            ))),
            None => Ok(()),
        }
    }

    fn find(&self, call: CallRef) -> Result<&Result<Success, Status>, Status> {
        let at = usize::try_from(call.0).ok();
        let hit = at
            .and_then(|i| self.results.get(i))
            .filter(|(id, _)| *id == call.0)
            .or_else(|| self.results.iter().find(|(id, _)| *id == call.0));
        hit.map(|(_, r)| r)
            .ok_or_else(|| Status::not_found(format!("the batch has no call {}", call.0)))
    }

    /// The raw payloads of a call that succeeded (one for a unary method, one per element
    /// of a server stream), or the status it failed with.
    pub fn payloads(&self, call: CallRef) -> Result<&[Vec<u8>], Status> {
        match self.find(call)? {
            Ok(s) => Ok(&s.payloads),
            Err(status) => Err(status.clone()),
        }
    }

    /// The response of a unary call, decoded; the status it failed with otherwise.
    pub fn get<T: for<'a> Decode<'a>>(&self, call: CallRef) -> Result<T, Status> {
        match self.payloads(call)? {
            [one] => decode(call, one),
            more => Err(Status::internal(format!(
                "call {} returned {} payloads, not one",
                call.0,
                more.len()
            ))),
        }
    }

    /// The elements of a server-stream call, decoded (none is a stream that ended at once);
    /// the status it failed with otherwise.
    pub fn stream<T: for<'a> Decode<'a>>(&self, call: CallRef) -> Result<Vec<T>, Status> {
        self.payloads(call)?
            .iter()
            .map(|p| decode(call, p))
            .collect()
    }

    /// The response metadata of a call: what its handler set, whether it succeeded or
    /// failed (then the same as its status's metadata). `None` for a call not in the batch.
    pub fn metadata(&self, call: CallRef) -> Option<&Metadata> {
        match self.find(call).ok()? {
            Ok(s) => Some(&s.metadata),
            Err(status) => Some(status.metadata()),
        }
    }

    /// The status a call failed with; `None` if it succeeded or is not in the batch.
    pub fn status(&self, call: CallRef) -> Option<&Status> {
        self.find(call).ok()?.as_ref().err()
    }

    /// The number of results.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether there are no results (the batch was empty).
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }
}

fn decode<T: for<'a> Decode<'a>>(call: CallRef, payload: &[u8]) -> Result<T, Status> {
    T::from_bytes(payload).map_err(|e| {
        Status::internal(format!(
            "the response of call {} does not decode: {e}",
            call.0
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::RawMessage;
    use bebop_runtime::rpc::StatusCode;

    #[test]
    fn request_bytes_by_hand() {
        let mut batch = Batch::new();
        batch.metadata("a", "b");
        let first = batch.call(0x4d62_beb5, &RawMessage(vec![1, 2])).unwrap();
        batch.call_from(0x4d62_beb5, first);
        #[rustfmt::skip]
        let want: &[u8] = &[
            2, 0, 0, 0,                         // calls: 2
            0, 0, 0, 0,                         //   call_id 0
            0xb5, 0xbe, 0x62, 0x4d,             //   method_id 0x4d62beb5
            2, 0, 0, 0, 1, 2,                   //   payload: 2 bytes
            0xff, 0xff, 0xff, 0xff,             //   input_from -1
            1, 0, 0, 0,                         //   call_id 1
            0xb5, 0xbe, 0x62, 0x4d,             //   method_id 0x4d62beb5
            0, 0, 0, 0,                         //   payload: none
            0, 0, 0, 0,                         //   input_from 0
            1, 0, 0, 0,                         // metadata: 1 entry
            1, 0, 0, 0, b'a', 0,                //   "a"
            1, 0, 0, 0, b'b', 0,                //   "b"
        ];
        assert_eq!(batch.to_bytes().unwrap(), want);
        let back = BatchRequest::from_bytes(want).unwrap();
        assert_eq!(back.calls.len(), 2);
        assert_eq!(back.calls.get(1).map(|c| c.input_from), Some(0));
    }

    #[test]
    fn results_decode_by_call() {
        #[rustfmt::skip]
        let bytes: &[u8] = &[
            2, 0, 0, 0,
            0, 0, 0, 0, 14, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0x2a, 0, 0, 0, 0,
            1, 0, 0, 0, 15, 0, 0, 0, 2, 10, 0, 0, 0, 1, 5, 2, 1, 0, 0, 0, b'x', 0, 0,
        ];
        let results = BatchResults::from_bytes(bytes).unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results.get::<u8>(CallRef(0)).unwrap(), 0x2a);
        assert_eq!(results.stream::<u8>(CallRef(0)).unwrap(), [0x2a]);
        assert_eq!(results.metadata(CallRef(0)), Some(&Metadata::new()));
        let e = results.get::<u8>(CallRef(1)).unwrap_err();
        assert_eq!((e.code(), e.detail()), (StatusCode::NotFound, "x"));
        assert_eq!(results.status(CallRef(1)), Some(&e));
        assert_eq!(
            results.get::<u8>(CallRef(2)).unwrap_err().code(),
            StatusCode::NotFound
        );
        // A decode error of a payload is the caller's to see, not a panic.
        let e = results.get::<u32>(CallRef(0)).unwrap_err();
        assert_eq!(e.code(), StatusCode::Internal);
        assert!(BatchResults::from_bytes(&bytes[..20]).is_err());
    }
}
