//! Values between the compiler's model and Lua: the arguments a block receives (`self`,
//! `target`, the parameters) and the data an export block returns.

use bebopc::decorator::{DecoratorCall, SpanInfo, TargetKind};
use bebopc::model::Value;
use bebopc::source::Span;
use mlua::{Lua, MultiValue, Table};

use crate::scalars::{LuaDuration, LuaTimestamp, LuaUuid};

/// A model value as a Lua value.
///
/// Integers become Lua integers when they fit in 64 bits and floats otherwise; strings and
/// byte strings become Lua strings; UUIDs, timestamps and durations become userdata (see
/// [`crate::scalars`]).
pub(crate) fn value_to_lua(lua: &Lua, value: &Value) -> mlua::Result<mlua::Value> {
    Ok(match value {
        Value::Bool(b) => mlua::Value::Boolean(*b),
        Value::Int(i) => match i64::try_from(*i) {
            Ok(i) => mlua::Value::Integer(i),
            Err(_) => mlua::Value::Number(*i as f64),
        },
        Value::UInt(u) => match i64::try_from(*u) {
            Ok(i) => mlua::Value::Integer(i),
            Err(_) => mlua::Value::Number(*u as f64),
        },
        Value::Float(f) => mlua::Value::Number(*f),
        Value::String { value, .. } => mlua::Value::String(lua.create_string(value)?),
        Value::Bytes(b) => mlua::Value::String(lua.create_string(b)?),
        Value::Uuid(u) => mlua::Value::UserData(lua.create_userdata(LuaUuid(*u))?),
        Value::Timestamp(t) => mlua::Value::UserData(lua.create_userdata(LuaTimestamp(*t))?),
        Value::Duration(d) => mlua::Value::UserData(lua.create_userdata(LuaDuration(*d))?),
    })
}

/// A span table: `off`, `len`, `start_line`, `start_col`.
fn span_table(lua: &Lua, call: &DecoratorCall<'_>, span: Span) -> mlua::Result<Table> {
    let info = SpanInfo::new(call.sources, span);
    let t = lua.create_table_with_capacity(0, 4)?;
    t.raw_set("off", i64::from(info.offset))?;
    t.raw_set("len", i64::from(info.len))?;
    t.raw_set("start_line", i64::from(info.start.line))?;
    t.raw_set("start_col", i64::from(info.start.column))?;
    Ok(t)
}

/// The `target` table, as the reference fills it: `kind` is `"definition"`, `"field"`,
/// `"enum_member"`, `"branch"` or `"method"`; definitions also have `fqn` and `def_kind`,
/// fields `parent_kind`. Members, branches and methods get `parent_kind` too (GRAMMAR.md
/// lists it for them; the reference leaves it out).
fn target_table(lua: &Lua, call: &DecoratorCall<'_>) -> mlua::Result<Table> {
    let target = &call.target;
    let t = lua.create_table()?;
    let kind = match target.kind {
        TargetKind::Field => "field",
        TargetKind::Member => "enum_member",
        TargetKind::Branch => "branch",
        TargetKind::Method => "method",
        TargetKind::Enum
        | TargetKind::Struct
        | TargetKind::Message
        | TargetKind::Union
        | TargetKind::Service
        | TargetKind::Const => "definition",
    };
    t.raw_set("kind", kind)?;
    t.raw_set("name", target.name)?;
    if kind == "definition" {
        if let Some(fqn) = target.fqn {
            t.raw_set("fqn", fqn)?;
        }
        if let Some(k) = target.def_kind {
            t.raw_set("def_kind", k.name())?;
        }
    }
    if let Some(k) = target.parent_kind {
        t.raw_set("parent_kind", k.name())?;
    }
    Ok(t)
}

/// A Lua-safe local name for a parameter: Lua keywords cannot be locals, so such parameters
/// are bound to `_` (their span is still in `self`).
pub(crate) fn local_name(name: &str) -> &str {
    const KEYWORDS: [&str; 22] = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ];
    let valid = name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    if valid && !KEYWORDS.contains(&name) {
        name
    } else {
        "_"
    }
}

/// The arguments of a block: `self`, `target`, then every parameter's value in declaration
/// order (the argument, else the default, else `nil`).
pub(crate) fn block_arguments(lua: &Lua, call: &DecoratorCall<'_>) -> mlua::Result<MultiValue> {
    let usage = call.usage;
    let this = lua.create_table()?;
    this.raw_set("span", span_table(lua, call, usage.span)?)?;
    let mut values = Vec::with_capacity(call.decorator.params.len());
    for param in &call.decorator.params {
        let arg = usage.args.iter().find(|a| a.name == param.name);
        let entry = lua.create_table()?;
        entry.raw_set(
            "span",
            span_table(lua, call, arg.map_or(usage.span, |a| a.span))?,
        )?;
        this.raw_set(param.name.as_str(), entry)?;
        values.push(match arg.map(|a| &a.value).or(param.default.as_ref()) {
            Some(v) => value_to_lua(lua, v)?,
            None => mlua::Value::Nil,
        });
    }
    let mut args = MultiValue::new();
    args.push_back(mlua::Value::Table(this));
    args.push_back(mlua::Value::Table(target_table(lua, call)?));
    for v in values {
        args.push_back(v);
    }
    Ok(args)
}

/// Why an export table could not be turned into export data.
#[derive(Debug, PartialEq)]
pub(crate) enum ExportError {
    /// The block returned something other than a table.
    NotATable(&'static str),
    /// A key is not a string.
    Key(&'static str),
    /// A key is not valid UTF-8.
    KeyNotUtf8,
    /// A value has an unsupported type.
    Value(String, &'static str),
    /// A string value is not valid UTF-8.
    ValueNotUtf8(String),
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::NotATable(t) => write!(f, "must return a table, but returned a {t}"),
            ExportError::Key(t) => {
                write!(f, "returned a table with a {t} key; keys must be strings")
            }
            ExportError::KeyNotUtf8 => {
                f.write_str("returned a table with a key that is not valid UTF-8")
            }
            ExportError::Value(k, t) => write!(
                f,
                "returned a {t} for '{k}'; values must be booleans, numbers or strings (or uuid, timestamp, duration parameters)"
            ),
            ExportError::ValueNotUtf8(k) => {
                write!(f, "returned a string for '{k}' that is not valid UTF-8")
            }
        }
    }
}

/// Converts the value an export block returned into export entries, in the order Lua's
/// `next` visits them (the reference's order before its own map reorders them).
pub(crate) fn export_entries(result: &mlua::Value) -> Result<Vec<(String, Value)>, ExportError> {
    let mlua::Value::Table(table) = result else {
        return Err(ExportError::NotATable(result.type_name()));
    };
    let mut out = Vec::new();
    let mut failure = None;
    let walked = table.for_each::<mlua::Value, mlua::Value>(|k, v| {
        if failure.is_some() {
            return Ok(());
        }
        match export_entry(&k, &v) {
            Ok(entry) => out.push(entry),
            Err(e) => failure = Some(e),
        }
        Ok(())
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if walked.is_err() {
        return Err(ExportError::NotATable("table that cannot be read"));
    }
    Ok(out)
}

fn export_entry(k: &mlua::Value, v: &mlua::Value) -> Result<(String, Value), ExportError> {
    let mlua::Value::String(k) = k else {
        return Err(ExportError::Key(k.type_name()));
    };
    let key = k.to_str().map_err(|_| ExportError::KeyNotUtf8)?.to_string();
    let value = match v {
        mlua::Value::Boolean(b) => Value::Bool(*b),
        mlua::Value::Integer(i) => Value::Int(i128::from(*i)),
        mlua::Value::Number(f) => Value::Float(*f),
        mlua::Value::String(s) => match s.to_str() {
            Ok(s) => Value::String {
                value: s.to_string(),
                raw: None,
            },
            Err(_) => return Err(ExportError::ValueNotUtf8(key)),
        },
        mlua::Value::UserData(ud) => {
            if let Ok(u) = ud.borrow::<LuaUuid>() {
                Value::Uuid(u.0)
            } else if let Ok(t) = ud.borrow::<LuaTimestamp>() {
                Value::Timestamp(t.0)
            } else if let Ok(d) = ud.borrow::<LuaDuration>() {
                Value::Duration(d.0)
            } else {
                return Err(ExportError::Value(key, "userdata"));
            }
        }
        other => return Err(ExportError::Value(key, other.type_name())),
    };
    Ok((key, value))
}
