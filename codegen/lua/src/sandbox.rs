//! The sandboxed Lua state a decorator usage runs in.
//!
//! Every usage gets a state of its own (see [`new_state`]), so nothing one usage does can be
//! seen by another. The state has the base library and `string`, `table`, `math` and `utf8`;
//! it never has `io`, `os`, `package`/`require`, `debug` or `coroutine`. From the base library
//! `dofile`, `loadfile`, `load`, `rawget`, `rawset`, `rawequal` and `rawlen` are removed (as
//! the reference compiler does), `string.dump` is removed, `collectgarbage` only accepts the
//! harmless options, and `print` prints nothing.
//!
//! Some code runs with debug hooks switched off, where the instruction limit could not stop
//! it: finalizers (`__gc`), `xpcall` message handlers, `__close` handlers when the limit
//! interrupts their function (mlua closes them from inside the hook), and `__tostring` when
//! Lua's error handling turns an error value into text. So `setmetatable` refuses metatables
//! with `__gc` or `__close` (userdata metatables are out of reach, and `getmetatable("")`
//! returns a copy of the string metatable), `xpcall` calls its handler after the stack has
//! unwound, and `assert` raises its message as a string.
//!
//! Two limits apply, both reported by [`RunState::limit`]:
//! - instructions: a count hook charges every block for the VM instructions it runs and
//!   raises an error once the budget is spent; `pcall` and `xpcall` are wrapped so that they
//!   cannot swallow that error (nor an out-of-memory error), and every later hook call raises
//!   it again;
//! - memory: the state's allocator refuses to grow past the limit, which Lua reports as
//!   "not enough memory".
//!
//! Library functions that loop in C without running VM instructions are replaced by versions
//! that charge their loops to the same budget: [`crate::table_loops`] for `table.insert`,
//! `table.remove` and `table.move`, [`crate::patterns`] for `string.find`, `match`,
//! `gmatch` and `gsub`.

use bebopc::diag::Severity;
use mlua::{ChunkMode, HookTriggers, Lua, LuaOptions, StdLib, Value, VmState};

use crate::Limits;
use crate::{patterns, table_loops};

/// How often (in VM instructions) the count hook runs.
pub(crate) const HOOK_INTERVAL: u32 = 1000;

/// The message of the error raised when the instruction budget is spent.
pub(crate) const INSTRUCTION_LIMIT_ERROR: &str = "decorator instruction limit exceeded";

/// Messages `error` and `warn` may record per block; later ones are counted, not kept.
pub(crate) const MAX_MESSAGES: usize = 50;

/// Bytes of one recorded message that are kept.
pub(crate) const MAX_MESSAGE_LEN: usize = 4096;

/// The message Lua gives to allocation failures.
pub(crate) const MEMORY_ERROR: &str = "not enough memory";

/// Why a block was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LimitHit {
    /// The instruction budget was spent; the line (of the chunk) running at the time.
    Instructions {
        /// 1-based line in the block, when Lua knew it.
        line: Option<usize>,
    },
    /// The memory limit was reached.
    Memory,
    /// The compilation's budget (all blocks together) ran out during this block.
    Budget {
        /// 1-based line in the block, when Lua knew it.
        line: Option<usize>,
    },
}

/// A position given by Lua code to `error` or `warn`, read from a span table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawSpan {
    /// `off`: byte offset, when given.
    pub off: Option<i64>,
    /// `len`: length in bytes, when given.
    pub len: Option<i64>,
    /// `start_line` (1-based).
    pub line: i64,
    /// `start_col` (1-based).
    pub col: i64,
}

/// A message recorded by `error` or `warn`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawMessage {
    /// Error or warning.
    pub severity: Severity,
    /// The text.
    pub message: String,
    /// Where, when a valid span table was given.
    pub span: Option<RawSpan>,
}

/// Per-state bookkeeping, kept in the state's app data.
#[derive(Debug)]
pub(crate) struct RunState {
    /// Instruction budget of one block.
    pub instruction_limit: u64,
    /// Instructions charged to the current block.
    pub used: u64,
    /// Set once a limit stops the current block.
    pub limit: Option<LimitHit>,
    /// Messages recorded by `error` and `warn` during the current block.
    pub messages: Vec<RawMessage>,
    /// Whether `error` was called during the current block.
    pub error_raised: bool,
    /// Messages recorded past [`MAX_MESSAGES`] in the current block.
    pub dropped: usize,
    /// The memory limit, for buffers built outside Lua's heap.
    pub memory_limit: usize,
    /// Instructions left in the compilation's budget when the block started; past it the
    /// block stops with [`LimitHit::Budget`].
    pub budget_left: u64,
    /// When the compilation's time budget ends.
    pub deadline: Option<std::time::Instant>,
}

impl RunState {
    /// Charges `n` instructions; returns the error to raise when the budget is spent.
    pub(crate) fn charge(&mut self, n: u64, line: Option<usize>) -> Result<(), mlua::Error> {
        if self.limit.is_none() {
            self.used = self.used.saturating_add(n);
            let out_of_time = self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d);
            if self.used > self.budget_left || out_of_time {
                self.limit = Some(LimitHit::Budget { line });
            } else if self.used > self.instruction_limit {
                self.limit = Some(LimitHit::Instructions { line });
            } else {
                return Ok(());
            }
        }
        Err(mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR))
    }
}

/// Trusted Lua code run once in every new state, before any decorator code. It receives the
/// host functions as varargs and keeps the originals it wraps in locals, which decorator
/// code cannot reach (there is no `debug` library).
const PRELUDE: &str = r##"
local record, is_fatal, message_of = ...
local native_error, native_pcall = error, pcall
local native_setmetatable, native_rawget = setmetatable, rawget
local native_gc, native_type, native_select = collectgarbage, type, select
local native_tostring = tostring

local function pass(ok, ...)
  if not ok and is_fatal((...)) then native_error((...), 0) end
  return ok, ...
end
pcall = function(f, ...) return pass(native_pcall(f, ...)) end
-- Lua runs a message handler before it restores debug hooks, so a looping handler would be
-- out of the instruction limit's reach: the handler is called after the stack unwinds.
local function handled(handler, ok, ...)
  if ok then return true, ... end
  local err = (...)
  if is_fatal(err) then native_error(err, 0) end
  return pass(false, native_select(2, native_pcall(handler, err)))
end
xpcall = function(f, handler, ...) return handled(handler, native_pcall(f, ...)) end
-- Finalizers run with debug hooks off, and so may __close handlers (when the instruction
-- limit interrupts a function that has to-be-closed variables): neither is allowed. The
-- string metatable is shown through a copy, so that it cannot gain a __close either.
setmetatable = function(t, mt)
  if native_type(mt) == "table"
      and (native_rawget(mt, "__gc") ~= nil or native_rawget(mt, "__close") ~= nil) then
    native_error("__gc and __close metamethods are not allowed in decorator code", 2)
  end
  return native_setmetatable(t, mt)
end
rawset(getmetatable(""), "__metatable", { __index = string })

-- Host functions raise host errors; Lua's library raises strings with the caller's position.
local function unwrap(ok, ...)
  if ok then return ... end
  local err = (...)
  if is_fatal(err) then native_error(err, 0) end
  local message, positioned = message_of(err)
  native_error(message, positioned and 0 or 2)
end
local function guard(f)
  return function(...) return unwrap(native_pcall(f, ...)) end
end
local host_gmatch = string.gmatch
for lib, names in pairs({
  [string] = { "find", "match", "gsub" },
  [table] = { "insert", "remove", "move" },
  [bit] = { "band", "bor", "bxor", "bnot", "lshift", "rshift" },
}) do
  for _, name in ipairs(names) do lib[name] = guard(lib[name]) end
end
is_power_of_two = guard(is_power_of_two)
is_valid_identifier = guard(is_valid_identifier)
string.gmatch = function(...)
  local iterate = unwrap(native_pcall(host_gmatch, ...))
  return function() return unwrap(native_pcall(iterate)) end
end

-- Error values are kept to strings (and host errors): converting another value to text runs
-- its __tostring, which must not happen inside Lua's error machinery, where hooks are off.
assert = function(v, message, ...)
  if v then return v, message, ... end
  if message == nil then native_error("assertion failed!", 2) end
  if native_type(message) ~= "string" then message = native_tostring(message) end
  native_error(message, 0)
end
error = function(message, span) native_error(record("error", message, span), 0) end
warn = function(message, span) record("warning", message, span) end
print = function() end

local gc_allowed = { collect = true, count = true, step = true, isrunning = true }
collectgarbage = function(option, ...)
  if option == nil then option = "collect" end
  if not gc_allowed[option] then
    native_error("bad argument #1 to 'collectgarbage' (option '" .. native_tostring(option)
      .. "' is not allowed in decorator code)", 2)
  end
  return native_gc(option, ...)
end

local seed = math.randomseed
math.randomseed = function(...)
  if native_select("#", ...) == 0 then return seed(0) end
  return seed(...)
end
math.randomseed(0)

"##;

/// Makes a fresh sandboxed state with the limits set and the decorator API installed.
pub(crate) fn new_state(limits: &Limits) -> mlua::Result<Lua> {
    let lua = Lua::new_with(
        StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8,
        LuaOptions::new(),
    )?;
    lua.set_app_data(RunState {
        instruction_limit: limits.instructions,
        used: 0,
        limit: None,
        messages: Vec::new(),
        error_raised: false,
        dropped: 0,
        memory_limit: limits.memory,
        budget_left: u64::MAX,
        deadline: None,
    });

    install_helpers(&lua)?;
    patterns::install(&lua)?;
    table_loops::install(&lua)?;

    // The prelude keeps the originals it needs in locals before they leave the globals.
    let record = lua.create_function(record_message)?;
    let is_fatal = lua.create_function(is_fatal_error)?;
    let message_of = lua.create_function(|_, err: Value| Ok(host_error_message(&err)))?;
    lua.load(PRELUDE)
        .set_name("=bebop prelude")
        .set_mode(ChunkMode::Text)
        .call::<()>((record, is_fatal, message_of))?;

    let globals = lua.globals();
    for name in [
        "dofile",
        "loadfile",
        "load",
        "loadstring",
        "rawget",
        "rawset",
        "rawequal",
        "rawlen",
        "require",
        "module",
        "package",
        "debug",
        "io",
        "os",
        "coroutine",
    ] {
        globals.raw_set(name, Value::Nil)?;
    }
    let string: mlua::Table = globals.raw_get("string")?;
    string.raw_set("dump", Value::Nil)?;
    // The reference builds Lua without LUA_COMPAT_5_3; these come from that option only.
    let math: mlua::Table = globals.raw_get("math")?;
    for name in ["pow", "cosh", "sinh", "tanh", "frexp", "ldexp", "log10"] {
        math.raw_set(name, Value::Nil)?;
    }

    lua.set_memory_limit(limits.memory)?;
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_INTERVAL),
        |lua, debug| {
            let Some(mut state) = lua.app_data_mut::<RunState>() else {
                return Err(mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR));
            };
            state.charge(u64::from(HOOK_INTERVAL), debug.current_line())?;
            Ok(VmState::Continue)
        },
    )?;
    Ok(lua)
}

/// Resets the per-block bookkeeping before a block runs, with `budget_left` instructions
/// and until `deadline` left of the compilation's budget.
pub(crate) fn begin_block(lua: &Lua, budget_left: u64, deadline: Option<std::time::Instant>) {
    if let Some(mut state) = lua.app_data_mut::<RunState>() {
        state.budget_left = budget_left;
        state.deadline = deadline;
        state.used = 0;
        state.limit = None;
        state.messages.clear();
        state.error_raised = false;
        state.dropped = 0;
    }
}

/// What a block left behind.
#[derive(Debug, Default)]
pub(crate) struct BlockEnd {
    /// Messages recorded by `error` and `warn`.
    pub messages: Vec<RawMessage>,
    /// How many more were recorded and dropped.
    pub dropped: usize,
    /// Whether `error` was called.
    pub error_raised: bool,
    /// The limit that stopped the block.
    pub limit: Option<LimitHit>,
    /// Instructions the block ran (to the nearest hook interval).
    pub used: u64,
}

/// Collects what a block left behind.
pub(crate) fn end_block(lua: &Lua) -> BlockEnd {
    match lua.app_data_mut::<RunState>() {
        Some(mut state) => BlockEnd {
            messages: std::mem::take(&mut state.messages),
            dropped: state.dropped,
            error_raised: state.error_raised,
            limit: state.limit,
            used: state.used,
        },
        None => BlockEnd::default(),
    }
}

/// Prepares a state for closing: finalizers (`__gc`) still run when it is dropped, so from
/// now on every instruction raises an error and each of them stops at once.
pub(crate) fn shut_down(lua: &Lua) {
    if let Some(mut state) = lua.app_data_mut::<RunState>() {
        state.limit = Some(LimitHit::Instructions { line: None });
    }
    // A failure here only means the finalizers keep the normal interval.
    let _ = lua.set_hook(HookTriggers::new().every_nth_instruction(1), |_, _| {
        Err(mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR))
    });
}

/// `record(kind, message, span)`: the host side of `error` and `warn`. Returns the message,
/// which `error` then raises.
fn record_message(
    lua: &Lua,
    (kind, message, span): (String, Value, Value),
) -> mlua::Result<String> {
    let (severity, default, fname) = if kind == "error" {
        (Severity::Error, "validation error", "error")
    } else {
        (Severity::Warning, "validation warning", "warn")
    };
    let text = match message {
        Value::Nil => default.to_string(),
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        Value::Number(_) => lua
            .coerce_string(message)?
            .map(|s| s.to_string_lossy())
            .unwrap_or_default(),
        other => {
            return Err(mlua::Error::runtime(format!(
                "bad argument #1 to '{fname}' (string expected, got {})",
                other.type_name()
            )));
        }
    };
    let span = read_span(&span);
    if let Some(mut state) = lua.app_data_mut::<RunState>() {
        if severity == Severity::Error {
            state.error_raised = true;
        }
        if state.messages.len() < MAX_MESSAGES {
            let mut message = text.clone();
            if message.len() > MAX_MESSAGE_LEN {
                let mut cut = MAX_MESSAGE_LEN;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                message.truncate(cut);
                message.push_str("...");
            }
            state.messages.push(RawMessage {
                severity,
                message,
                span,
            });
        } else {
            state.dropped += 1;
        }
    }
    Ok(text)
}

/// Reads a span table the way the reference does: `start_line` and `start_col` must be
/// integers (otherwise the usage's span is used); `off` and `len` are optional.
fn read_span(value: &Value) -> Option<RawSpan> {
    let Value::Table(t) = value else {
        return None;
    };
    let int = |key: &str| match t.raw_get::<Value>(key) {
        Ok(Value::Integer(i)) => Some(i),
        _ => None,
    };
    Some(RawSpan {
        line: int("start_line")?,
        col: int("start_col")?,
        off: int("off"),
        len: int("len"),
    })
}

/// `is_fatal(err)`: whether an error caught by `pcall`/`xpcall` must be raised again: a
/// spent instruction budget or an allocation failure.
fn is_fatal_error(lua: &Lua, err: Value) -> mlua::Result<bool> {
    let out_of_memory = matches!(&err, Value::String(s) if s.as_bytes() == MEMORY_ERROR.as_bytes())
        || matches!(&err, Value::Error(e) if matches!(**e, mlua::Error::MemoryError(_)));
    let Some(mut state) = lua.app_data_mut::<RunState>() else {
        return Ok(true);
    };
    if out_of_memory && state.limit.is_none() {
        state.limit = Some(LimitHit::Memory);
    }
    Ok(state.limit.is_some())
}

/// The message of an error raised by a host function, and whether it already names a
/// position (an error raised by Lua code a host function called back).
fn host_error_message(err: &Value) -> (String, bool) {
    let text = match err {
        Value::Error(e) => root_message(e),
        Value::String(s) => s.to_string_lossy(),
        other => format!("{other:?}"),
    };
    let positioned = crate::diagnostics::split_location(&text).0.is_some();
    (text, positioned)
}

/// The message of the innermost error, without tracebacks.
fn root_message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => return root_message(cause),
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::FromLuaConversionError { from, to, .. } => {
            format!("bad argument ({to} expected, got {from})")
        }
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The reference's helpers: `bit`, `is_power_of_two`, `is_valid_identifier` and the target
/// constants.
fn install_helpers(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    let bit = lua.create_table()?;
    bit.raw_set(
        "band",
        lua.create_function(|_, (a, b): (i64, i64)| Ok(a & b))?,
    )?;
    bit.raw_set(
        "bor",
        lua.create_function(|_, (a, b): (i64, i64)| Ok(a | b))?,
    )?;
    bit.raw_set(
        "bxor",
        lua.create_function(|_, (a, b): (i64, i64)| Ok(a ^ b))?,
    )?;
    bit.raw_set("bnot", lua.create_function(|_, a: i64| Ok(!a))?)?;
    bit.raw_set(
        "lshift",
        lua.create_function(|_, (a, n): (i64, i64)| Ok(shift_left(a, n)))?,
    )?;
    bit.raw_set(
        "rshift",
        lua.create_function(|_, (a, n): (i64, i64)| Ok(shift_left(a, n.wrapping_neg())))?,
    )?;
    globals.raw_set("bit", bit)?;
    globals.raw_set(
        "is_power_of_two",
        lua.create_function(|_, n: i64| Ok(n > 0 && n & (n - 1) == 0))?,
    )?;
    globals.raw_set(
        "is_valid_identifier",
        lua.create_function(|_, s: mlua::String| Ok(is_identifier(&s.as_bytes())))?,
    )?;
    for (name, bit) in [
        ("ENUM", 0),
        ("STRUCT", 1),
        ("MESSAGE", 2),
        ("UNION", 3),
        ("FIELD", 4),
        ("MEMBER", 4),
        ("SERVICE", 5),
        ("METHOD", 6),
        ("BRANCH", 7),
    ] {
        globals.raw_set(name, 1i64 << bit)?;
    }
    globals.raw_set("ALL", 255i64)?;
    Ok(())
}

/// A logical shift as Lua's `<<` does it: negative counts shift right, counts of 64 or more
/// give 0.
fn shift_left(a: i64, n: i64) -> i64 {
    if n <= -64 || n >= 64 {
        0
    } else if n >= 0 {
        ((a as u64) << n) as i64
    } else {
        ((a as u64) >> (-n)) as i64
    }
}

/// Whether `s` is a Bebop identifier: an ASCII letter or `_`, then letters, digits or `_`.
fn is_identifier(s: &[u8]) -> bool {
    match s.split_first() {
        Some((first, rest)) => {
            (first.is_ascii_alphabetic() || *first == b'_')
                && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        }
        None => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shifts_follow_lua() {
        assert_eq!(shift_left(1, 4), 16);
        assert_eq!(shift_left(16, -4), 1);
        assert_eq!(shift_left(-1, -60), 15);
        assert_eq!(shift_left(1, 64), 0);
        assert_eq!(shift_left(1, -64), 0);
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier(b"hello"));
        assert!(is_identifier(b"_foo123"));
        assert!(!is_identifier(b"123abc"));
        assert!(!is_identifier(b""));
        assert!(!is_identifier(b"a-b"));
    }
}
