//! How Bebop RPC maps onto HTTP (`docs/rpc.md`, "HTTP transport"): the content types, the
//! protocol headers, the status table in both directions, request metadata as headers and
//! the `bebop-deadline` header.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bebop_rpc::{Metadata, Status, StatusCode};
use http::header::{HeaderMap, HeaderName, HeaderValue};

/// The content type of a unary call's bodies: a bare Bebop value (request, response or
/// `RpcError`), no framing.
pub const CONTENT_TYPE_UNARY: &str = "application/bebop";
/// The content type of streaming bodies: binary frames (stream id 0), end to end.
pub const CONTENT_TYPE_STREAM: &str = "application/bebop+stream";
/// The request header carrying the call's deadline, in decimal Unix milliseconds.
pub const DEADLINE_HEADER: &str = "bebop-deadline";
/// The request header carrying the cursor a server stream resumes after (decimal `uint64`;
/// the binary transport's `CallHeader.cursor`). Not in the upstream document.
pub const CURSOR_HEADER: &str = "bebop-cursor";
/// The response header of a failed call answered with an HTTP error: the Bebop status code
/// in decimal.
pub const STATUS_HEADER: &str = "bebop-status";

/// Headers that belong to HTTP itself and never travel as metadata: the server leaves them
/// out of a call's request metadata and the client out of a unary response's metadata, and
/// a client refuses to send metadata under these names.
pub const TRANSPORT_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "alt-svc",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "date",
    "expect",
    "host",
    "http2-settings",
    "keep-alive",
    "proxy-connection",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
];

/// Whether `name` (lowercase) is a header of HTTP or of this mapping (`bebop-deadline`,
/// `bebop-cursor`, `bebop-status`) rather than metadata.
pub fn is_reserved_header(name: &str) -> bool {
    TRANSPORT_HEADERS.contains(&name)
        || name == DEADLINE_HEADER
        || name == CURSOR_HEADER
        || name == STATUS_HEADER
}

/// The HTTP status a unary call failing with `code` is answered with (upstream §17.4).
/// Codes the table does not name (the reserved 6, 9, 10, 11 and 15, and application codes
/// 17 to 255) are `500`; `OK` is `200`.
///
/// ```
/// use bebop_rpc::StatusCode;
/// use bebop_rpc_http::mapping::http_status;
///
/// assert_eq!(http_status(StatusCode::NotFound).as_u16(), 404);
/// assert_eq!(http_status(StatusCode::Cancelled).as_u16(), 499);
/// assert_eq!(http_status(StatusCode::Unrecognized(42)).as_u16(), 500);
/// ```
pub fn http_status(code: StatusCode) -> http::StatusCode {
    let n = match code {
        StatusCode::Ok => 200,
        StatusCode::Cancelled => 499,
        StatusCode::InvalidArgument => 400,
        StatusCode::DeadlineExceeded => 408,
        StatusCode::NotFound => 404,
        StatusCode::PermissionDenied => 403,
        StatusCode::ResourceExhausted => 429,
        StatusCode::Unimplemented => 501,
        StatusCode::Internal => 500,
        StatusCode::Unavailable => 503,
        StatusCode::Unauthenticated => 401,
        StatusCode::Unknown | StatusCode::Unrecognized(_) => 500,
    };
    http::StatusCode::from_u16(n).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR)
}

/// The Bebop status a client reads from an HTTP error that carries no `bebop-status` (a
/// proxy's or load balancer's own answer): the table of [`http_status`] read backwards,
/// with `502`, `503` and `504` as `UNAVAILABLE` (worth a retry), `413` and `431` as
/// `RESOURCE_EXHAUSTED`, `415` as `INVALID_ARGUMENT`, and anything else `UNKNOWN`.
///
/// ```
/// use bebop_rpc::StatusCode;
/// use bebop_rpc_http::mapping::status_code_of_http;
///
/// assert_eq!(status_code_of_http(http::StatusCode::BAD_GATEWAY), StatusCode::Unavailable);
/// assert_eq!(status_code_of_http(http::StatusCode::UNAUTHORIZED), StatusCode::Unauthenticated);
/// assert_eq!(status_code_of_http(http::StatusCode::IM_A_TEAPOT), StatusCode::Unknown);
/// ```
pub fn status_code_of_http(status: http::StatusCode) -> StatusCode {
    match status.as_u16() {
        400 | 415 => StatusCode::InvalidArgument,
        401 => StatusCode::Unauthenticated,
        403 => StatusCode::PermissionDenied,
        404 => StatusCode::NotFound,
        408 => StatusCode::DeadlineExceeded,
        413 | 429 | 431 => StatusCode::ResourceExhausted,
        499 => StatusCode::Cancelled,
        500 => StatusCode::Internal,
        501 => StatusCode::Unimplemented,
        502..=504 => StatusCode::Unavailable,
        _ => StatusCode::Unknown,
    }
}

/// The media type of a `content-type` value, without parameters, lowercased.
pub(crate) fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(http::header::CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next().unwrap_or("").trim();
    Some(media.to_ascii_lowercase())
}

/// Request metadata from request headers: every header but the reserved ones, a repeated
/// header's values joined with `", "` (as HTTP combines them). Values that are not UTF-8
/// are left out.
pub(crate) fn metadata_from_headers(headers: &HeaderMap) -> Metadata {
    let mut md = Metadata::new();
    for name in headers.keys() {
        let key = name.as_str();
        if is_reserved_header(key) {
            continue;
        }
        let mut joined = String::new();
        for value in headers.get_all(name) {
            let Ok(text) = std::str::from_utf8(value.as_bytes()) else {
                continue;
            };
            if !joined.is_empty() {
                joined.push_str(", ");
            }
            joined.push_str(text);
        }
        md.insert(key, joined);
    }
    md
}

/// Why one metadata entry cannot travel as an HTTP header.
pub(crate) fn header_of(key: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    if is_reserved_header(key) {
        return Err(format!(
            "metadata key `{key}` is an HTTP or protocol header and cannot travel as metadata"
        ));
    }
    if key.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "metadata key `{key}` is not lowercase, so it cannot travel as an HTTP header"
        ));
    }
    let name = HeaderName::from_bytes(key.as_bytes())
        .map_err(|_| format!("metadata key `{key}` is not a valid HTTP header name"))?;
    let value = HeaderValue::from_bytes(value.as_bytes()).map_err(|_| {
        format!("the value of metadata key `{key}` holds characters HTTP headers cannot carry")
    })?;
    Ok((name, value))
}

/// Puts `metadata` into `headers`; the first entry that cannot be a header is the error.
pub(crate) fn metadata_into_headers(
    metadata: &Metadata,
    headers: &mut HeaderMap,
) -> Result<(), String> {
    for (k, v) in metadata.iter() {
        let (name, value) = header_of(k, v)?;
        headers.insert(name, value);
    }
    Ok(())
}

/// Whether every entry of `metadata` can travel as a header.
pub(crate) fn fits_headers(metadata: &Metadata) -> bool {
    metadata.iter().all(|(k, v)| header_of(k, v).is_ok())
}

/// Reads a `bebop-deadline` value: decimal Unix milliseconds (a leading `-` for instants
/// before 1970). `None` for anything else, or an instant `SystemTime` cannot hold.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use bebop_rpc_http::mapping::parse_deadline;
///
/// assert_eq!(parse_deadline("1739412345678"), Some(UNIX_EPOCH + Duration::from_millis(1_739_412_345_678)));
/// assert_eq!(parse_deadline("soon"), None);
/// assert_eq!(parse_deadline("+5"), None);
/// ```
pub fn parse_deadline(value: &str) -> Option<SystemTime> {
    let (negative, digits) = match value.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms: u64 = digits.parse().ok()?;
    let offset = Duration::from_millis(ms);
    if negative {
        UNIX_EPOCH.checked_sub(offset)
    } else {
        UNIX_EPOCH.checked_add(offset)
    }
}

/// Writes a deadline as `bebop-deadline` does: Unix milliseconds, rounded down (never
/// later than the deadline).
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use bebop_rpc_http::mapping::format_deadline;
///
/// assert_eq!(format_deadline(UNIX_EPOCH + Duration::from_micros(1_500)), "1");
/// ```
pub fn format_deadline(deadline: SystemTime) -> String {
    match deadline.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis().to_string(),
        Err(e) => {
            // Before 1970: round away from zero, which is earlier.
            let d = e.duration();
            let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
            format!("-{ms}")
        }
    }
}

/// The `bebop-status` header of `status`.
pub(crate) fn status_header_value(code: StatusCode) -> HeaderValue {
    HeaderValue::from(u16::from(u8::from(code)))
}

/// A status from an HTTP error without Bebop content (no `bebop-status`, or a body that is
/// not an `RpcError`): mapped from the HTTP status, with it in the detail, and `snippet` (the
/// start of a text body) after it.
pub(crate) fn status_of_foreign_error(
    http: http::StatusCode,
    code: Option<StatusCode>,
    snippet: &str,
) -> Status {
    let code = code.unwrap_or_else(|| status_code_of_http(http));
    let mut detail = format!("HTTP {http}");
    if code == StatusCode::Unknown || snippet.is_empty() {
        detail.push_str(" (not a Bebop response)");
    }
    if !snippet.is_empty() {
        detail.push_str(": ");
        detail.push_str(snippet);
    }
    Status::new(code, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_trip_and_reject_garbage() {
        let t = UNIX_EPOCH + Duration::from_millis(1_739_412_345_678);
        assert_eq!(format_deadline(t), "1739412345678");
        assert_eq!(parse_deadline(&format_deadline(t)), Some(t));
        let before = UNIX_EPOCH - Duration::from_millis(5);
        assert_eq!(format_deadline(before), "-5");
        assert_eq!(parse_deadline("-5"), Some(before));
        for bad in [
            "",
            "-",
            " 1",
            "1 ",
            "1.5",
            "0x10",
            "99999999999999999999999",
            "18446744073709551616",
        ] {
            assert_eq!(parse_deadline(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_status_table_reads_back() {
        for code in [
            StatusCode::Cancelled,
            StatusCode::InvalidArgument,
            StatusCode::DeadlineExceeded,
            StatusCode::NotFound,
            StatusCode::PermissionDenied,
            StatusCode::ResourceExhausted,
            StatusCode::Unimplemented,
            StatusCode::Internal,
            StatusCode::Unavailable,
            StatusCode::Unauthenticated,
        ] {
            assert_eq!(status_code_of_http(http_status(code)), code);
        }
    }

    #[test]
    fn headers_become_metadata_without_transport_headers() {
        let mut h = HeaderMap::new();
        h.insert("host", HeaderValue::from_static("x"));
        h.insert(
            "content-type",
            HeaderValue::from_static("application/bebop"),
        );
        h.insert("bebop-deadline", HeaderValue::from_static("1"));
        h.insert("authorization", HeaderValue::from_static("Bearer t"));
        h.append("x-tag", HeaderValue::from_static("a"));
        h.append("x-tag", HeaderValue::from_static("b"));
        let md = metadata_from_headers(&h);
        assert_eq!(md.len(), 2);
        assert_eq!(md.get("authorization"), Some("Bearer t"));
        assert_eq!(md.get("x-tag"), Some("a, b"));
        assert!(header_of("content-type", "x").is_err());
        assert!(header_of("X-Upper", "x").is_err());
        assert!(header_of("bad key", "x").is_err());
        assert!(header_of("k", "line\nbreak").is_err());
        assert!(header_of("k", "ключ").is_ok());
    }
}
