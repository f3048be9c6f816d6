//! Lua values for the parameter types Lua has no type for: `uuid`, `timestamp`, `duration`.
//!
//! They are userdata: `tostring` gives their text form (`550e8400-e29b-41d4-a716-446655440000`,
//! `2024-01-15T10:30:00.5+05:00`, `5400.5s`), `==`, `<` and `<=` compare them, `..`
//! concatenates them with strings and numbers, and an export block may return them, in which
//! case the descriptor gets a value of the same kind. Timestamps have the fields `seconds`,
//! `nanos` and `offset_ms`; durations `seconds`, `nanos` and `total_seconds` (a float).
//!
//! The reference compiler passes `nil` for parameters of these types; giving the value
//! itself is this implementation's choice.

use bebop_core::{Duration, Timestamp, Uuid};
use mlua::{AnyUserData, Lua, MetaMethod, UserData, UserDataFields, UserDataMethods, Value};

/// A `uuid` in Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LuaUuid(pub Uuid);

/// A `timestamp` in Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LuaTimestamp(pub Timestamp);

/// A `duration` in Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LuaDuration(pub Duration);

/// Text of a value for `..`: strings, numbers and these userdata.
fn concat_text(lua: &Lua, v: &Value) -> mlua::Result<Vec<u8>> {
    if let Value::UserData(ud) = v {
        if let Some(text) = userdata_text(ud) {
            return Ok(text.into_bytes());
        }
    }
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => Ok(lua
            .coerce_string(v.clone())?
            .map(|s| s.as_bytes().to_vec())
            .unwrap_or_default()),
        other => Err(mlua::Error::runtime(format!(
            "attempt to concatenate a {} value",
            other.type_name()
        ))),
    }
}

/// The text form of one of these userdata.
fn userdata_text(ud: &AnyUserData) -> Option<String> {
    if let Ok(u) = ud.borrow::<LuaUuid>() {
        return Some(u.0.to_string());
    }
    if let Ok(t) = ud.borrow::<LuaTimestamp>() {
        return Some(format_timestamp(&t.0));
    }
    if let Ok(d) = ud.borrow::<LuaDuration>() {
        return Some(format_duration(&d.0));
    }
    None
}

fn add_concat<T: UserData + 'static, M: UserDataMethods<T>>(methods: &mut M) {
    methods.add_meta_function(MetaMethod::Concat, |lua, (a, b): (Value, Value)| {
        let mut text = concat_text(lua, &a)?;
        text.extend(concat_text(lua, &b)?);
        lua.create_string(&text)
    });
}

impl UserData for LuaUuid {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(this.0.to_string()));
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other.borrow::<LuaUuid>().is_ok_and(|o| o.0 == this.0))
        });
        add_concat(methods);
    }
}

impl UserData for LuaTimestamp {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("seconds", |_, this| Ok(this.0.seconds()));
        fields.add_field_method_get("nanos", |_, this| Ok(this.0.nanos()));
        fields.add_field_method_get("offset_ms", |_, this| Ok(this.0.offset_ms()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format_timestamp(&this.0))
        });
        let key = |t: &Timestamp| (t.seconds(), t.nanos());
        methods.add_meta_method(MetaMethod::Eq, move |_, this, other: AnyUserData| {
            Ok(other
                .borrow::<LuaTimestamp>()
                .is_ok_and(|o| key(&o.0) == key(&this.0)))
        });
        methods.add_meta_method(
            MetaMethod::Lt,
            move |_, this, other: mlua::UserDataRef<LuaTimestamp>| Ok(key(&this.0) < key(&other.0)),
        );
        methods.add_meta_method(MetaMethod::Le, move |_, this, other: mlua::UserDataRef<LuaTimestamp>| {
            Ok(key(&this.0) <= key(&other.0))
        });
        add_concat(methods);
    }
}

impl UserData for LuaDuration {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("seconds", |_, this| Ok(this.0.seconds()));
        fields.add_field_method_get("nanos", |_, this| Ok(this.0.nanos()));
        fields.add_field_method_get("total_seconds", |_, this| {
            Ok(this.0.seconds() as f64 + f64::from(this.0.nanos()) / 1e9)
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format_duration(&this.0))
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other
                .borrow::<LuaDuration>()
                .is_ok_and(|o| o.0.as_nanos() == this.0.as_nanos()))
        });
        methods.add_meta_method(
            MetaMethod::Lt,
            |_, this, other: mlua::UserDataRef<LuaDuration>| {
                Ok(this.0.as_nanos() < other.0.as_nanos())
            },
        );
        methods.add_meta_method(
            MetaMethod::Le,
            |_, this, other: mlua::UserDataRef<LuaDuration>| {
                Ok(this.0.as_nanos() <= other.0.as_nanos())
            },
        );
        add_concat(methods);
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// ISO 8601 in the timestamp's own offset: `2024-01-15T10:30:00.5+05:00`, `...Z` for UTC.
pub(crate) fn format_timestamp(t: &Timestamp) -> String {
    let offset_ms = i64::from(t.offset_ms());
    let local = t.seconds().saturating_add(offset_ms.div_euclid(1000));
    let (days, secs) = (local.div_euclid(86_400), local.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if t.nanos() != 0 {
        let frac = format!("{:09}", t.nanos());
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if offset_ms == 0 {
        out.push('Z');
    } else {
        let sign = if offset_ms < 0 { '-' } else { '+' };
        let abs = offset_ms.unsigned_abs();
        out.push_str(&format!(
            "{sign}{:02}:{:02}",
            abs / 3_600_000,
            abs / 60_000 % 60
        ));
        let rest = abs % 60_000;
        if rest != 0 {
            out.push_str(&format!(":{:02}", rest / 1000));
            if rest % 1000 != 0 {
                out.push_str(&format!(".{:03}", rest % 1000));
            }
        }
    }
    out
}

/// Seconds with the fraction trimmed: `5400.5s`, `-1.25s`, `0s`.
pub(crate) fn format_duration(d: &Duration) -> String {
    let nanos = d.as_nanos();
    let sign = if nanos < 0 { "-" } else { "" };
    let abs = nanos.unsigned_abs();
    let (secs, frac) = (abs / 1_000_000_000, abs % 1_000_000_000);
    if frac == 0 {
        format!("{sign}{secs}s")
    } else {
        let frac = format!("{frac:09}");
        format!("{sign}{secs}.{}s", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_in_their_offset() {
        let t = Timestamp::new(0, 0, 0).unwrap();
        assert_eq!(format_timestamp(&t), "1970-01-01T00:00:00Z");
        // 2024-01-15T10:30:00.5+05:00 is 05:30:00.5 UTC.
        let t = Timestamp::new(1_705_296_600, 500_000_000, 5 * 3_600_000).unwrap();
        assert_eq!(format_timestamp(&t), "2024-01-15T10:30:00.5+05:00");
        let t = Timestamp::new(-1, 0, -90 * 60_000).unwrap();
        assert_eq!(format_timestamp(&t), "1969-12-31T22:29:59-01:30");
        let t = Timestamp::new(0, 0, 43_201_133).unwrap();
        assert_eq!(format_timestamp(&t), "1970-01-01T12:00:01+12:00:01.133");
    }

    #[test]
    fn durations_format_as_seconds() {
        assert_eq!(
            format_duration(&Duration::new(5400, 500_000_000).unwrap()),
            "5400.5s"
        );
        assert_eq!(
            format_duration(&Duration::new(-1, -250_000_000).unwrap()),
            "-1.25s"
        );
        assert_eq!(format_duration(&Duration::new(0, 0).unwrap()), "0s");
    }
}
