//! Literal values: numbers, strings with `$(VAR)` substitution, UUIDs, timestamps,
//! durations and byte strings, checked against the type they are assigned to.
//!
//! Integers use the full range of their type (`uint64` above 2^63, `int128`, `uint128`) and
//! narrow types are range-checked. Timestamps are ISO 8601 with a zone, converted to UTC
//! with the offset kept; durations are unit sequences such as `1h30m` or `1.5s`.
//!
//! ```
//! use bebopc::literal::{parse_duration, parse_timestamp};
//!
//! let t = parse_timestamp("2024-01-15T10:30:00.5+05:00").unwrap();
//! assert_eq!((t.seconds(), t.nanos(), t.offset_ms()), (1705296600, 500_000_000, 18_000_000));
//! let d = parse_duration("1h30m").unwrap();
//! assert_eq!(d.seconds(), 5400);
//! ```

use bebop_core::{Duration, Timestamp, Uuid};

use crate::ast::{Literal, LiteralKind};
use crate::diag::{Code, Diagnostic};
use crate::model::{ParamType, ScalarType, Value};

/// What a number's text is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer (decimal or `0x` hex) and its magnitude.
    Integer(u128),
    /// An integer too large for 128 bits.
    IntegerTooLarge,
    /// A decimal number with a fraction or an exponent.
    Float(f64),
    /// Not a number.
    Malformed,
}

/// Classifies the text of a number token (no sign).
pub fn classify_number(text: &str) -> Number {
    let bytes = text.as_bytes();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Number::Malformed;
        }
        return accumulate(hex, 16);
    }
    if !bytes.first().is_some_and(u8::is_ascii_digit) {
        return Number::Malformed;
    }
    if bytes.iter().all(u8::is_ascii_digit) {
        return accumulate(text, 10);
    }
    if is_float_syntax(text) {
        return match text.parse::<f64>() {
            Ok(v) => Number::Float(v),
            Err(_) => Number::Malformed,
        };
    }
    Number::Malformed
}

fn accumulate(digits: &str, radix: u32) -> Number {
    let mut v: u128 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else {
            return Number::Malformed;
        };
        v = match v
            .checked_mul(radix as u128)
            .and_then(|v| v.checked_add(d as u128))
        {
            Some(v) => v,
            None => return Number::IntegerTooLarge,
        };
    }
    Number::Integer(v)
}

/// `digits ('.' digits)? ([eE] [+-]? digits)?` with at least a fraction or an exponent.
fn is_float_syntax(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    if !digits(&mut i) {
        return false;
    }
    let mut fancy = false;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
        fancy = true;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
        fancy = true;
    }
    fancy && i == b.len()
}

/// Parses an unsigned integer (decimal or hex) such as a tag or an array size.
pub fn parse_unsigned(text: &str) -> Result<u128, &'static str> {
    match classify_number(text) {
        Number::Integer(v) => Ok(v),
        Number::IntegerTooLarge => Err("the number is too large"),
        Number::Float(_) => Err("expected a whole number"),
        Number::Malformed => Err("malformed number"),
    }
}

/// Largest finite value of each float type.
fn float_max(t: ScalarType) -> f64 {
    match t {
        ScalarType::Float16 => 65504.0,
        ScalarType::Bfloat16 => 3.389_531_389_251_535_5e38,
        ScalarType::Float32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// Parses an ISO 8601 timestamp: `YYYY-MM-DD(T| )HH:MM:SS[.f{1,9}](Z|±HH:MM[:SS[.fff]])`.
/// The result is in UTC with the written offset kept.
pub fn parse_timestamp(s: &str) -> Result<Timestamp, String> {
    let mut c = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    let year = c.digits(4).ok_or("expected a 4-digit year")?;
    c.expect(b'-').ok_or("expected '-' after the year")?;
    let month = c.digits(2).ok_or("expected a 2-digit month")?;
    c.expect(b'-').ok_or("expected '-' after the month")?;
    let day = c.digits(2).ok_or("expected a 2-digit day")?;
    if !matches!(c.peek(), Some(b'T' | b't' | b' ')) {
        return Err("expected 'T' or a space between the date and the time".into());
    }
    c.i += 1;
    let hour = c.digits(2).ok_or("expected a 2-digit hour")?;
    c.expect(b':').ok_or("expected ':' after the hour")?;
    let minute = c.digits(2).ok_or("expected 2-digit minutes")?;
    c.expect(b':').ok_or("expected ':' after the minutes")?;
    let second = c.digits(2).ok_or("expected 2-digit seconds")?;
    let mut frac_nanos: i128 = 0;
    if c.peek() == Some(b'.') {
        c.i += 1;
        let (value, count) = c.fraction(9).ok_or("expected 1 to 9 digits after '.'")?;
        frac_nanos = value as i128 * 10i128.pow(9 - count);
    }
    let offset_ms: i64 = match c.peek() {
        Some(b'Z' | b'z') => {
            c.i += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let oh = c.digits(2).ok_or("expected a 2-digit offset hour")?;
            c.expect(b':')
                .ok_or("expected ':' in the offset (±HH:MM)")?;
            let om = c.digits(2).ok_or("expected 2-digit offset minutes")?;
            let mut os = 0;
            let mut oms = 0;
            if c.peek() == Some(b':') {
                c.i += 1;
                os = c.digits(2).ok_or("expected 2-digit offset seconds")?;
                if c.peek() == Some(b'.') {
                    c.i += 1;
                    let (v, n) = c
                        .fraction(3)
                        .ok_or("expected 1 to 3 digits of offset milliseconds")?;
                    oms = v * 10u64.pow(3 - n);
                }
            }
            if om > 59 || os > 59 {
                return Err("offset minutes and seconds must be below 60".into());
            }
            let total = ((oh * 60 + om) * 60 + os) as i64 * 1000 + oms as i64;
            if total > bebop_core::MAX_OFFSET_MS as i64 {
                return Err("the offset is larger than 24 hours".into());
            }
            if sign == b'-' { -total } else { total }
        }
        _ => return Err("expected 'Z' or an offset such as '+05:00' after the time".into()),
    };
    if c.i != c.s.len() {
        return Err("unexpected text after the timestamp".into());
    }
    if !(1..=12).contains(&month) {
        return Err(format!("month {month} does not exist"));
    }
    let dim = days_in_month(year as i64, month as u32);
    if day < 1 || day as u32 > dim {
        return Err(format!(
            "day {day} does not exist in {year:04}-{month:02} (it has {dim} days)"
        ));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err("the time of day is out of range".into());
    }
    let days = days_from_civil(year as i64, month as u32, day as u32);
    let local = (days * 86_400 + (hour * 3600 + minute * 60 + second) as i64) as i128;
    let total_nanos = local * 1_000_000_000 + frac_nanos - offset_ms as i128 * 1_000_000;
    let seconds = total_nanos.div_euclid(1_000_000_000) as i64;
    let nanos = total_nanos.rem_euclid(1_000_000_000) as i32;
    Timestamp::new(seconds, nanos, offset_ms as i32).map_err(|_| "timestamp out of range".into())
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        if self.peek() == Some(b) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// Exactly `n` digits.
    fn digits(&mut self, n: usize) -> Option<u64> {
        let part = self.s.get(self.i..self.i + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(part.iter().fold(0u64, |a, d| a * 10 + (d - b'0') as u64))
    }

    /// 1..=max digits; returns the value and how many digits.
    fn fraction(&mut self, max: u32) -> Option<(u64, u32)> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let n = (self.i - start) as u32;
        if n == 0 || n > max {
            return None;
        }
        let v = self.s[start..self.i]
            .iter()
            .fold(0u64, |a, d| a * 10 + (d - b'0') as u64);
        Some((v, n))
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a duration: an optional `-`, then numbers with units `h`, `m`, `s`, `ms`, `us`
/// (or `µs`), `ns` in that order, each at most once (`1h30m`, `500ms`, `1.5s`). Fractions
/// are allowed as long as the result is a whole number of nanoseconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const UNITS: [(&str, i128); 7] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("µs", 1_000),
        ("ns", 1),
    ];
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if body.is_empty() {
        return Err("empty duration; write e.g. \"1h30m\" or \"500ms\"".into());
    }
    let mut rest = body;
    let mut total: i128 = 0;
    let mut last_rank: Option<usize> = None;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_len);
        if num.is_empty() {
            return Err(format!("expected a number before '{after}'"));
        }
        let unit_len = after
            .find(|c: char| !(c.is_alphabetic()))
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let Some(index) = UNITS.iter().position(|(u, _)| *u == unit) else {
            return Err(if unit.is_empty() {
                format!("missing unit after '{num}' (use h, m, s, ms, us or ns)")
            } else {
                format!("unknown unit '{unit}' (use h, m, s, ms, us or ns)")
            });
        };
        // `us` and `µs` share a rank.
        let rank = if index >= 5 { index - 1 } else { index };
        if last_rank.is_some_and(|r| rank <= r) {
            return Err(format!(
                "unit '{unit}' is out of order or repeated (write units from hours down to nanoseconds)"
            ));
        }
        last_rank = Some(rank);
        let per = UNITS.get(index).map(|u| u.1).unwrap_or(1);
        let (int_part, frac_part) = match num.split_once('.') {
            Some((i, f)) => (i, f),
            None => (num, ""),
        };
        if int_part.is_empty() || (num.contains('.') && frac_part.is_empty()) {
            return Err(format!("malformed number '{num}'"));
        }
        if frac_part.contains('.') {
            return Err(format!("malformed number '{num}'"));
        }
        let whole: i128 = int_part
            .parse::<u64>()
            .map_err(|_| format!("'{int_part}' is too large"))? as i128;
        let mut amount = whole
            .checked_mul(per)
            .ok_or_else(|| "duration too large".to_string())?;
        if !frac_part.is_empty() {
            if frac_part.len() > 18 {
                return Err("too many fraction digits".into());
            }
            let f: i128 = frac_part.parse::<u64>().map_err(|_| "bad fraction")? as i128;
            let scale = 10i128.pow(frac_part.len() as u32);
            let scaled = f * per;
            if scaled % scale != 0 {
                return Err(format!(
                    "'{num}{unit}' is not a whole number of nanoseconds"
                ));
            }
            amount += scaled / scale;
        }
        total = total
            .checked_add(amount)
            .ok_or_else(|| "duration too large".to_string())?;
        rest = next;
    }
    let total = if negative { -total } else { total };
    Duration::from_nanos(total).ok_or_else(|| "duration too large".into())
}

/// Parses a UUID in the `8-4-4-4-12` form (or 32 hex digits).
pub fn parse_uuid(s: &str) -> Result<Uuid, String> {
    s.parse::<Uuid>()
        .map_err(|_| format!("'{s}' is not a UUID (expected 8-4-4-4-12 hex digits)"))
}

/// Problems in `$(NAME)` substitution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvError {
    /// The variable is not set.
    Missing(String),
    /// `$(` without `)` or with an empty name.
    Malformed(&'static str),
}

/// Replaces every `$(NAME)` with the variable's value. Returns the new text and whether
/// there was any reference. Missing variables are reported and left as written.
pub fn substitute_env(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (String, bool, Vec<EnvError>) {
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut had = false;
    let mut rest = text;
    while let Some(at) = rest.find("$(") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(close) = after.find(')') else {
            errors.push(EnvError::Malformed("'$(' without a closing ')'"));
            out.push_str(&rest[at..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        had = true;
        if name.is_empty() {
            errors.push(EnvError::Malformed("empty variable name in '$()'"));
            out.push_str("$()");
        } else {
            match lookup(name) {
                Some(v) => out.push_str(&v),
                None => {
                    errors.push(EnvError::Missing(name.to_string()));
                    out.push_str(&rest[at..at + 3 + close]);
                }
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    (out, had, errors)
}

/// The types a literal can be evaluated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A scalar constant or parameter.
    Scalar(ScalarType),
    /// `byte[]`
    ByteArray,
    /// A decorator parameter of type `type`.
    TypeName,
}

impl From<ParamType> for Target {
    fn from(p: ParamType) -> Target {
        match p {
            ParamType::Scalar(s) => Target::Scalar(s),
            ParamType::Type => Target::TypeName,
        }
    }
}

impl Target {
    fn describe(self) -> String {
        match self {
            Target::Scalar(s) => format!("'{s}'"),
            Target::ByteArray => "'byte[]'".to_string(),
            Target::TypeName => "'type'".to_string(),
        }
    }
}

/// Evaluates a literal for a target type. `lookup` resolves environment variables.
pub fn evaluate(
    lit: &Literal,
    target: Target,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, Vec<Diagnostic>> {
    let span = lit.span;
    let err = |code: Code, msg: String| vec![Diagnostic::error(code, span, msg)];
    let mismatch = || {
        err(
            Code::E023,
            format!(
                "expected a value of type {}, found {}",
                target.describe(),
                lit.kind.describe()
            ),
        )
    };
    let substituted = |s: &str| -> Result<Value, Vec<Diagnostic>> {
        let (value, had, errors) = substitute_env(s, lookup);
        if !errors.is_empty() {
            return Err(errors
                .into_iter()
                .map(|e| match e {
                    EnvError::Missing(name) => Diagnostic::error(
                        Code::E027,
                        span,
                        format!("environment variable '{name}' is not set"),
                    )
                    .with_help(format!("set {name} in the environment of the compiler")),
                    EnvError::Malformed(why) => Diagnostic::error(Code::E028, span, why),
                })
                .collect());
        }
        Ok(Value::String {
            value,
            raw: had.then(|| s.to_string()),
        })
    };
    match target {
        Target::TypeName => match &lit.kind {
            LiteralKind::String(s) => substituted(s),
            _ => Err(mismatch()),
        },
        Target::ByteArray => match &lit.kind {
            LiteralKind::Bytes(b) => Ok(Value::Bytes(b.clone())),
            LiteralKind::String(s) => match substituted(s)? {
                Value::String { value, .. } => Ok(Value::Bytes(value.into_bytes())),
                other => Ok(other),
            },
            _ => Err(mismatch()),
        },
        Target::Scalar(t) => match t {
            ScalarType::Bool => match lit.kind {
                LiteralKind::Bool(b) => Ok(Value::Bool(b)),
                _ => Err(mismatch()),
            },
            ScalarType::String => match &lit.kind {
                LiteralKind::String(s) => substituted(s),
                _ => Err(mismatch()),
            },
            ScalarType::Uuid => match &lit.kind {
                LiteralKind::String(s) => {
                    let v = substituted(s)?;
                    let text = v.as_str().unwrap_or_default();
                    parse_uuid(text)
                        .map(Value::Uuid)
                        .map_err(|m| err(Code::E024, m))
                }
                _ => Err(mismatch()),
            },
            ScalarType::Timestamp => match &lit.kind {
                LiteralKind::String(s) => {
                    let v = substituted(s)?;
                    let text = v.as_str().unwrap_or_default();
                    parse_timestamp(text)
                        .map(Value::Timestamp)
                        .map_err(|m| err(Code::E025, format!("invalid timestamp '{text}': {m}")))
                }
                _ => Err(mismatch()),
            },
            ScalarType::Duration => match &lit.kind {
                LiteralKind::String(s) => {
                    let v = substituted(s)?;
                    let text = v.as_str().unwrap_or_default();
                    parse_duration(text)
                        .map(Value::Duration)
                        .map_err(|m| err(Code::E026, format!("invalid duration '{text}': {m}")))
                }
                _ => Err(mismatch()),
            },
            t if t.is_float() => {
                let v = match &lit.kind {
                    LiteralKind::Infinity { negative } => {
                        return Ok(Value::Float(if *negative {
                            f64::NEG_INFINITY
                        } else {
                            f64::INFINITY
                        }));
                    }
                    LiteralKind::Nan => return Ok(Value::Float(f64::NAN)),
                    LiteralKind::Number { text, negative } => {
                        let magnitude = match classify_number(text) {
                            Number::Integer(i) => i as f64,
                            Number::IntegerTooLarge => text.parse::<f64>().unwrap_or(f64::INFINITY),
                            Number::Float(f) => f,
                            Number::Malformed => {
                                return Err(err(Code::E020, format!("malformed number '{text}'")));
                            }
                        };
                        if *negative { -magnitude } else { magnitude }
                    }
                    _ => return Err(mismatch()),
                };
                if !v.is_finite() || v.abs() > float_max(t) {
                    return Err(err(
                        Code::E022,
                        format!("{} is out of range for '{t}'", source_number(lit)),
                    ));
                }
                Ok(Value::Float(v))
            }
            t => {
                let (min, max) = t.int_range().unwrap_or((0, 0));
                let LiteralKind::Number { text, negative } = &lit.kind else {
                    return Err(mismatch());
                };
                let magnitude = match classify_number(text) {
                    Number::Integer(i) => i,
                    Number::IntegerTooLarge => {
                        return Err(err(
                            Code::E021,
                            format!("{} does not fit in '{t}'", source_number(lit)),
                        ));
                    }
                    Number::Float(_) => {
                        return Err(err(
                            Code::E023,
                            format!("'{t}' needs a whole number, found '{text}'"),
                        ));
                    }
                    Number::Malformed => {
                        return Err(err(Code::E020, format!("malformed number '{text}'")));
                    }
                };
                let range_error = || {
                    err(
                        Code::E021,
                        format!(
                            "{} is out of range for '{t}' ({min}..={max})",
                            source_number(lit)
                        ),
                    )
                };
                if *negative && magnitude != 0 {
                    let value = if magnitude == 1u128 << 127 {
                        i128::MIN
                    } else {
                        match i128::try_from(magnitude) {
                            Ok(m) => -m,
                            Err(_) => return Err(range_error()),
                        }
                    };
                    if value < min {
                        return Err(range_error());
                    }
                    Ok(Value::Int(value))
                } else {
                    if magnitude > max {
                        return Err(range_error());
                    }
                    if t.is_signed() {
                        Ok(Value::Int(magnitude as i128))
                    } else {
                        Ok(Value::UInt(magnitude))
                    }
                }
            }
        },
    }
}

fn source_number(lit: &Literal) -> String {
    match &lit.kind {
        LiteralKind::Number { text, negative } => {
            format!("'{}{text}'", if *negative { "-" } else { "" })
        }
        _ => "the value".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceId, Span};

    fn lit(kind: LiteralKind) -> Literal {
        Literal {
            kind,
            span: Span::new(SourceId(0), 0, 1),
        }
    }

    fn num(text: &str, negative: bool) -> Literal {
        lit(LiteralKind::Number {
            text: text.to_string(),
            negative,
        })
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn eval(l: &Literal, t: ScalarType) -> Result<Value, Code> {
        evaluate(l, Target::Scalar(t), &no_env).map_err(|d| d[0].code)
    }

    #[test]
    fn classify() {
        assert_eq!(classify_number("123"), Number::Integer(123));
        assert_eq!(classify_number("0xFF"), Number::Integer(255));
        assert_eq!(classify_number("0X1f"), Number::Integer(31));
        assert_eq!(classify_number("1.5"), Number::Float(1.5));
        assert_eq!(
            classify_number("123.45678e9"),
            Number::Float(123_456_780_000.0)
        );
        assert_eq!(classify_number("1e-3"), Number::Float(0.001));
        assert_eq!(classify_number("2x"), Number::Malformed);
        assert_eq!(classify_number("1."), Number::Malformed);
        assert_eq!(classify_number("0x"), Number::Malformed);
        assert_eq!(classify_number("1_000"), Number::Malformed);
        assert_eq!(
            classify_number("340282366920938463463374607431768211455"),
            Number::Integer(u128::MAX)
        );
        assert_eq!(
            classify_number("340282366920938463463374607431768211456"),
            Number::IntegerTooLarge
        );
    }

    #[test]
    fn integers_use_full_range_and_check_narrow_types() {
        assert_eq!(
            eval(&num("255", false), ScalarType::Byte),
            Ok(Value::UInt(255))
        );
        assert_eq!(eval(&num("256", false), ScalarType::Byte), Err(Code::E021));
        assert_eq!(eval(&num("1", true), ScalarType::Byte), Err(Code::E021));
        assert_eq!(eval(&num("0", true), ScalarType::Byte), Ok(Value::UInt(0)));
        assert_eq!(
            eval(&num("128", true), ScalarType::Int8),
            Ok(Value::Int(-128))
        );
        assert_eq!(eval(&num("129", true), ScalarType::Int8), Err(Code::E021));
        assert_eq!(
            eval(&num("18446744073709551615", false), ScalarType::Uint64),
            Ok(Value::UInt(u64::MAX as u128))
        );
        assert_eq!(
            eval(&num("18446744073709551616", false), ScalarType::Uint64),
            Err(Code::E021)
        );
        assert_eq!(
            eval(
                &num("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", false),
                ScalarType::Uint128
            ),
            Ok(Value::UInt(u128::MAX))
        );
        assert_eq!(
            eval(
                &num("170141183460469231731687303715884105728", true),
                ScalarType::Int128
            ),
            Ok(Value::Int(i128::MIN))
        );
        assert_eq!(
            eval(
                &num("170141183460469231731687303715884105728", false),
                ScalarType::Int128
            ),
            Err(Code::E021)
        );
        assert_eq!(
            eval(
                &num("9999999999999999999999999999999999999999", false),
                ScalarType::Int128
            ),
            Err(Code::E021)
        );
        assert_eq!(eval(&num("1.5", false), ScalarType::Int32), Err(Code::E023));
        assert_eq!(eval(&num("2x", false), ScalarType::Int32), Err(Code::E020));
        assert_eq!(
            eval(&lit(LiteralKind::Bool(true)), ScalarType::Int32),
            Err(Code::E023)
        );
    }

    #[test]
    fn floats() {
        assert_eq!(
            eval(&num("1.5", true), ScalarType::Float64),
            Ok(Value::Float(-1.5))
        );
        assert_eq!(
            eval(&num("3", false), ScalarType::Float32),
            Ok(Value::Float(3.0))
        );
        assert_eq!(
            eval(&num("0x10", false), ScalarType::Float64),
            Ok(Value::Float(16.0))
        );
        assert_eq!(
            eval(&num("1e39", false), ScalarType::Float32),
            Err(Code::E022)
        );
        assert_eq!(
            eval(&num("70000", false), ScalarType::Float16),
            Err(Code::E022)
        );
        assert_eq!(
            eval(&num("1e400", false), ScalarType::Float64),
            Err(Code::E022)
        );
        assert_eq!(
            eval(
                &lit(LiteralKind::Infinity { negative: true }),
                ScalarType::Float64
            ),
            Ok(Value::Float(f64::NEG_INFINITY))
        );
        match eval(&lit(LiteralKind::Nan), ScalarType::Bfloat16) {
            Ok(Value::Float(f)) => assert!(f.is_nan()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            eval(&lit(LiteralKind::Nan), ScalarType::Int32),
            Err(Code::E023)
        );
    }

    #[test]
    fn timestamps() {
        let t = parse_timestamp("1970-01-01T00:00:00Z").unwrap();
        assert_eq!((t.seconds(), t.nanos(), t.offset_ms()), (0, 0, 0));
        let t = parse_timestamp("2024-01-15T10:30:00.123456789Z").unwrap();
        assert_eq!((t.seconds(), t.nanos()), (1_705_314_600, 123_456_789));
        let t = parse_timestamp("2024-01-15 10:30:00-08:00").unwrap();
        assert_eq!((t.seconds(), t.offset_ms()), (1_705_343_400, -28_800_000));
        // Offsets down to the millisecond.
        let t = parse_timestamp("2024-01-15T10:30:00+12:00:01.133").unwrap();
        assert_eq!(t.offset_ms(), 43_201_133);
        assert_eq!(
            t.seconds() * 1000 + (t.nanos() / 1_000_000) as i64,
            1_705_314_600_000 - 43_201_133
        );
        // Before the epoch, nanoseconds stay positive.
        let t = parse_timestamp("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!((t.seconds(), t.nanos()), (-1, 500_000_000));
        assert!(parse_timestamp("2024-02-29T00:00:00Z").is_ok());
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-00-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.1234567890Z",
            "2024-01-01T00:00:00+25:00",
            "2024-01-01T00:00:00+05",
            "2024-01-01T00:00:00Zjunk",
            "24-01-01T00:00:00Z",
            "",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        let d = |s: &str| parse_duration(s).map(|d| d.as_nanos());
        assert_eq!(d("1h"), Ok(3_600_000_000_000));
        assert_eq!(d("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(d("500ms"), Ok(500_000_000));
        assert_eq!(d("10us"), Ok(10_000));
        assert_eq!(d("10µs"), Ok(10_000));
        assert_eq!(d("7ns"), Ok(7));
        assert_eq!(d("1.5s"), Ok(1_500_000_000));
        assert_eq!(d("1h30m45s500ms"), Ok(5_445_500_000_000));
        assert_eq!(d("-2s"), Ok(-2_000_000_000));
        let neg = parse_duration("-1.5s").unwrap();
        assert_eq!((neg.seconds(), neg.nanos()), (-1, -500_000_000));
        for bad in [
            "", "5", "1x", "1s1h", "1s1s", "1.s", ".5s", "1.5ns", "1 s", "-", "s", "1.2.3s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("99999999999999999999h").is_err());
        assert!(parse_duration("9223372036854775807s1s").is_err());
    }

    #[test]
    fn env_substitution() {
        let env = |k: &str| (k == "HOST").then(|| "example.org".to_string());
        assert_eq!(
            substitute_env("host=$(HOST);x", &env),
            ("host=example.org;x".to_string(), true, vec![])
        );
        assert_eq!(
            substitute_env("plain $ (x)", &env),
            ("plain $ (x)".to_string(), false, vec![])
        );
        let (_, _, errs) = substitute_env("$(NOPE) $(HOST) $(", &env);
        assert_eq!(
            errs,
            vec![
                EnvError::Missing("NOPE".into()),
                EnvError::Malformed("'$(' without a closing ')'")
            ]
        );
        let s = lit(LiteralKind::String("$(HOST)".into()));
        assert_eq!(
            evaluate(&s, Target::Scalar(ScalarType::String), &env),
            Ok(Value::String {
                value: "example.org".into(),
                raw: Some("$(HOST)".into())
            })
        );
        let missing = lit(LiteralKind::String("$(MISSING)".into()));
        let e = evaluate(&missing, Target::Scalar(ScalarType::String), &env).unwrap_err();
        assert_eq!(e[0].code, Code::E027);
    }

    #[test]
    fn strings_uuids_bytes() {
        let s = lit(LiteralKind::String(
            "550e8400-e29b-41d4-a716-446655440000".into(),
        ));
        match eval(&s, ScalarType::Uuid) {
            Ok(Value::Uuid(u)) => assert_eq!(u.as_bytes()[0], 0x55),
            other => panic!("{other:?}"),
        }
        let bad = lit(LiteralKind::String("550e8400".into()));
        assert_eq!(eval(&bad, ScalarType::Uuid), Err(Code::E024));
        let b = lit(LiteralKind::Bytes(vec![0x89, b'P']));
        assert_eq!(
            evaluate(&b, Target::ByteArray, &no_env),
            Ok(Value::Bytes(vec![0x89, b'P']))
        );
        assert_eq!(eval(&b, ScalarType::String), Err(Code::E023));
        let with_nul = lit(LiteralKind::String("a\0b".into()));
        assert_eq!(
            eval(&with_nul, ScalarType::String),
            Ok(Value::String {
                value: "a\0b".into(),
                raw: None
            })
        );
        let ts = lit(LiteralKind::String("2024-02-30T00:00:00Z".into()));
        assert_eq!(eval(&ts, ScalarType::Timestamp), Err(Code::E025));
        let du = lit(LiteralKind::String("90m".into()));
        assert_eq!(
            eval(&du, ScalarType::Duration),
            Ok(Value::Duration(Duration::from_secs(5400)))
        );
    }
}
