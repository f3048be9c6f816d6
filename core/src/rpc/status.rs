//! [`Status`]: how a call failed, with a short detail text held inline (no heap).

use core::fmt::{self, Write as _};

use super::types::{RpcError, StatusCode};

/// The most bytes of detail text a [`Status`] keeps; longer text is cut at a character
/// boundary.
pub const DETAIL_CAPACITY: usize = 96;

/// A failed call's status code and detail text: what a handler returns to fail a call, what a
/// client gets back from an `ERROR` frame. `Copy`, no heap: the detail lives inline (up to
/// [`DETAIL_CAPACITY`] bytes).
///
/// ```
/// use bebop_core::rpc::{Status, StatusCode};
///
/// let s = Status::new(StatusCode::InvalidArgument, "interval_ms must be 10..=60000");
/// assert_eq!(s.code(), StatusCode::InvalidArgument);
/// assert_eq!(s.detail(), "interval_ms must be 10..=60000");
///
/// let s = Status::format(StatusCode::NotFound, format_args!("no method {:#010x}", 0xdead_beef_u32));
/// assert_eq!(s.detail(), "no method 0xdeadbeef");
/// assert_eq!(s.to_string(), "NOT_FOUND: no method 0xdeadbeef");
/// ```
#[derive(Clone, Copy)]
pub struct Status {
    code: StatusCode,
    len: u8,
    detail: [u8; DETAIL_CAPACITY],
}

impl Status {
    /// A status with a detail text (cut to [`DETAIL_CAPACITY`] bytes).
    pub fn new(code: StatusCode, detail: &str) -> Self {
        let mut status = Status::code_only(code);
        status.push_str(detail);
        status
    }

    /// A status without detail.
    pub const fn code_only(code: StatusCode) -> Self {
        Status {
            code,
            len: 0,
            detail: [0; DETAIL_CAPACITY],
        }
    }

    /// A status whose detail is formatted (and cut to [`DETAIL_CAPACITY`] bytes).
    pub fn format(code: StatusCode, args: fmt::Arguments<'_>) -> Self {
        let mut status = Status::code_only(code);
        // Writing into a Status never fails; it stops at capacity.
        let _ = status.write_fmt(args);
        status
    }

    /// The status code.
    pub const fn code(&self) -> StatusCode {
        self.code
    }

    /// The detail text.
    pub fn detail(&self) -> &str {
        // Only whole characters are ever pushed, so the bytes are valid UTF-8.
        core::str::from_utf8(&self.detail[..self.len as usize]).unwrap_or_default()
    }

    /// The `RpcError` record an `ERROR` frame carries for this status (no metadata).
    pub fn to_rpc_error(&self) -> RpcError<'_> {
        RpcError {
            code: Some(self.code),
            detail: (self.len > 0).then(|| self.detail()),
            metadata: None,
        }
    }

    /// The status an `RpcError` record describes (`UNKNOWN` when it carries no code).
    pub fn from_rpc_error(error: &RpcError<'_>) -> Self {
        Status::new(
            error.code.unwrap_or(StatusCode::Unknown),
            error.detail.unwrap_or_default(),
        )
    }

    fn push_str(&mut self, s: &str) {
        let room = DETAIL_CAPACITY - self.len as usize;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        let start = self.len as usize;
        self.detail[start..start + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take as u8;
    }
}

impl fmt::Write for Status {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl PartialEq for Status {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.detail() == other.detail()
    }
}

impl Eq for Status {}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Status")
            .field("code", &self.code)
            .field("detail", &self.detail())
            .finish()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(status_name(self.code))?;
        if let StatusCode::Unrecognized(n) = self.code {
            write!(f, "({n})")?;
        }
        if self.len > 0 {
            write!(f, ": {}", self.detail())?;
        }
        Ok(())
    }
}

impl core::error::Error for Status {}

#[cfg(feature = "defmt")]
impl defmt::Format for Status {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{}: {=str}", self.code, self.detail());
    }
}

impl From<StatusCode> for Status {
    fn from(code: StatusCode) -> Self {
        Status::code_only(code)
    }
}

/// The protocol's name of a status code (`NOT_FOUND`), or `APPLICATION` for codes 17 to 255
/// and `RESERVED` for the reserved ones.
pub const fn status_name(code: StatusCode) -> &'static str {
    match code {
        StatusCode::Ok => "OK",
        StatusCode::Cancelled => "CANCELLED",
        StatusCode::Unknown => "UNKNOWN",
        StatusCode::InvalidArgument => "INVALID_ARGUMENT",
        StatusCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
        StatusCode::NotFound => "NOT_FOUND",
        StatusCode::PermissionDenied => "PERMISSION_DENIED",
        StatusCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
        StatusCode::Unimplemented => "UNIMPLEMENTED",
        StatusCode::Internal => "INTERNAL",
        StatusCode::Unavailable => "UNAVAILABLE",
        StatusCode::Unauthenticated => "UNAUTHENTICATED",
        StatusCode::Unrecognized(n) if n >= 17 => "APPLICATION",
        StatusCode::Unrecognized(_) => "RESERVED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn detail_is_cut_at_a_character_boundary() {
        let long = "é".repeat(100);
        let s = Status::new(StatusCode::Internal, &long);
        assert_eq!(s.detail().len(), DETAIL_CAPACITY);
        assert!(s.detail().chars().all(|c| c == 'é'));
        let s = Status::new(StatusCode::Internal, &"€".repeat(40));
        assert_eq!(s.detail().len(), 96);
        let s = Status::new(StatusCode::Internal, &("a".to_string() + &"€".repeat(40)));
        assert_eq!(s.detail().len(), 94, "a + 31 three-byte characters");
    }

    #[test]
    fn application_codes_survive_and_display() {
        let s = Status::from(StatusCode::Unrecognized(42));
        assert_eq!(s.to_string(), "APPLICATION(42)");
        assert_eq!(s.to_rpc_error().code, Some(StatusCode::Unrecognized(42)));
        assert_eq!(Status::from_rpc_error(&s.to_rpc_error()), s);
    }
}
