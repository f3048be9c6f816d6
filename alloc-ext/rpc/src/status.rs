//! [`Status`]: how a call failed, with its detail text and the response metadata the server
//! sent with the error.

use std::fmt;

use bebop_runtime::rpc::{RpcError, StatusCode, status_name};
use bebop_runtime::{Decode, Map};

use crate::metadata::Metadata;

/// A failed call: status code, detail text and metadata (`RpcError.metadata`).
///
/// Handlers return it to fail a call; clients get it back from an `ERROR` frame, from a
/// deadline that passed, or from a connection that broke.
///
/// ```
/// use bebop_rpc::{Status, StatusCode};
///
/// let status = Status::not_found("no key `apple`").with_metadata("shard", "3");
/// assert_eq!(status.code(), StatusCode::NotFound);
/// assert_eq!(status.to_string(), "NOT_FOUND: no key `apple`");
/// assert_eq!(status.metadata().get("shard"), Some("3"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Status {
    code: StatusCode,
    detail: String,
    metadata: Metadata,
}

macro_rules! constructors {
    ($($(#[$doc:meta])* $name:ident => $code:ident,)*) => {
        $(
            $(#[$doc])*
            pub fn $name(detail: impl Into<String>) -> Self {
                Status::new(StatusCode::$code, detail)
            }
        )*
    };
}

impl Status {
    /// A status with a detail text.
    pub fn new(code: StatusCode, detail: impl Into<String>) -> Self {
        Status {
            code,
            detail: detail.into(),
            metadata: Metadata::new(),
        }
    }

    constructors! {
        /// `CANCELLED`: the caller gave up.
        cancelled => Cancelled,
        /// `UNKNOWN`.
        unknown => Unknown,
        /// `INVALID_ARGUMENT`: the request is malformed or invalid.
        invalid_argument => InvalidArgument,
        /// `DEADLINE_EXCEEDED`: the deadline passed first.
        deadline_exceeded => DeadlineExceeded,
        /// `NOT_FOUND`.
        not_found => NotFound,
        /// `PERMISSION_DENIED`: authenticated, not authorised.
        permission_denied => PermissionDenied,
        /// `RESOURCE_EXHAUSTED`: a limit, quota or backpressure.
        resource_exhausted => ResourceExhausted,
        /// `UNIMPLEMENTED`.
        unimplemented => Unimplemented,
        /// `INTERNAL`: a server-side bug.
        internal => Internal,
        /// `UNAVAILABLE`: transient; retry with backoff.
        unavailable => Unavailable,
        /// `UNAUTHENTICATED`: missing or invalid credentials.
        unauthenticated => Unauthenticated,
    }

    /// Adds (or replaces) a metadata entry sent with the error.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key, value);
        self
    }

    /// The status code.
    pub fn code(&self) -> StatusCode {
        self.code
    }

    /// The detail text.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The metadata sent with the error.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The metadata, to change.
    pub fn metadata_mut(&mut self) -> &mut Metadata {
        &mut self.metadata
    }

    /// Decodes the payload of an `ERROR` frame. A payload that does not decode becomes
    /// `INTERNAL` naming the decode error: the peer broke the protocol.
    pub fn from_error_payload(payload: &[u8]) -> Self {
        match RpcError::from_bytes(payload) {
            Ok(e) => Status::from_rpc_error(&e),
            Err(e) => Status::internal(format!("the peer sent an undecodable error frame: {e}")),
        }
    }

    /// The status a decoded `RpcError` carries (an `RpcError` without a code is `UNKNOWN`).
    pub(crate) fn from_rpc_error(e: &RpcError<'_>) -> Self {
        Status {
            code: e.code.unwrap_or(StatusCode::Unknown),
            detail: e.detail.unwrap_or("").to_owned(),
            metadata: e.metadata.map(Metadata::from_view).unwrap_or_default(),
        }
    }

    /// Encodes this status as an `RpcError` (the payload of an `ERROR` frame).
    pub fn to_error_payload(&self) -> Vec<u8> {
        let pairs = self.metadata.as_pairs();
        let error = RpcError {
            code: Some(self.code),
            detail: (!self.detail.is_empty()).then_some(self.detail.as_str()),
            metadata: (!pairs.is_empty()).then(|| Map::from_slice(&pairs)),
        };
        bebop_runtime::encode_to_vec(&error).unwrap_or_default()
    }
}

impl From<bebop_runtime::rpc::Status> for Status {
    fn from(s: bebop_runtime::rpc::Status) -> Self {
        Status::new(s.code(), s.detail())
    }
}

/// Any other error a handler hits becomes `INTERNAL` with the error's description
/// (`docs/rpc.md`, "Handler errors and panics"), so `?` works in handlers:
///
/// ```
/// use bebop_rpc::{Status, StatusCode};
///
/// fn read_config() -> Result<String, Status> {
///     Ok(std::fs::read_to_string("/nonexistent/bebop.conf")?)
/// }
/// assert_eq!(read_config().unwrap_err().code(), StatusCode::Internal);
/// ```
impl From<std::io::Error> for Status {
    fn from(e: std::io::Error) -> Self {
        Status::internal(e.to_string())
    }
}

impl From<bebop_runtime::Error> for Status {
    fn from(e: bebop_runtime::Error) -> Self {
        Status::internal(e.to_string())
    }
}

impl From<StatusCode> for Status {
    fn from(code: StatusCode) -> Self {
        Status::new(code, "")
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Status");
        d.field("code", &format_args!("{}", status_name(self.code)))
            .field("detail", &self.detail);
        if !self.metadata.is_empty() {
            d.field("metadata", &self.metadata);
        }
        d.finish()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            StatusCode::Unrecognized(n) => write!(f, "status {n}")?,
            code => f.write_str(status_name(code))?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_payload_round_trips_with_metadata_and_application_codes() {
        let s =
            Status::new(StatusCode::Unrecognized(42), "quota").with_metadata("retry-after", "5");
        let back = Status::from_error_payload(&s.to_error_payload());
        assert_eq!(back, s);
        assert_eq!(back.to_string(), "status 42: quota");
    }

    #[test]
    fn error_payload_of_rpc_section_5_3() {
        // NOT_FOUND "GreeterService.Helloo": the 34 payload bytes of docs/rpc.md,
        // "Example: an error frame".
        let s = Status::not_found("GreeterService.Helloo");
        let bytes = s.to_error_payload();
        assert_eq!(bytes.len(), 34);
        assert_eq!(&bytes[..7], &[0x1e, 0, 0, 0, 0x01, 0x05, 0x02]);
        assert_eq!(Status::from_error_payload(&bytes), s);
    }

    #[test]
    fn garbage_error_payload_is_internal() {
        let s = Status::from_error_payload(&[0xff, 0xff, 0xff, 0xff, 1]);
        assert_eq!(s.code(), StatusCode::Internal);
        assert!(s.detail().contains("undecodable"), "{s}");
    }
}
