//! Lua pattern matching (`string.find`, `match`, `gmatch`, `gsub`) that counts its work.
//!
//! Lua's own matcher runs in C and backtracks without executing VM instructions, so the
//! instruction hook cannot stop a pattern such as `("a"):rep(40):find(("a*"):rep(40) .. "b")`,
//! which would run for years. These replacements behave like Lua 5.4's (same pattern
//! language, same results, same error messages) but count the matcher's steps and charge
//! them to the block's instruction budget ([`STEPS_PER_INSTRUCTION`] steps per
//! instruction), so a runaway pattern ends with the same "instruction limit" error as a
//! runaway loop.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, MultiValue, Value};

use crate::sandbox::{INSTRUCTION_LIMIT_ERROR, LimitHit, MEMORY_ERROR, RunState};

/// Matcher steps that cost one VM instruction.
pub(crate) const STEPS_PER_INSTRUCTION: u64 = 4;

/// Maximum number of captures (`LUA_MAXCAPTURES`).
const MAX_CAPTURES: usize = 32;

/// Maximum recursion depth of the matcher (`MAXCCALLS`).
const MAX_MATCH_DEPTH: usize = 200;

/// Escape character of patterns.
const ESC: u8 = b'%';

/// Characters that make a pattern more than plain text.
const SPECIALS: &[u8] = b"^$*+?.([%-";

/// How a pattern match failed.
#[derive(Debug, PartialEq)]
enum Failure {
    /// A malformed pattern or a similar error, with Lua's message.
    Error(String),
    /// The step budget is spent.
    Budget,
}

/// Length of a capture.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CapLen {
    /// Still open.
    Unfinished,
    /// A position capture `()`.
    Position,
    /// Closed, with this length.
    Len(usize),
}

/// One match attempt's state, as in Lua's `MatchState`.
struct Matcher<'a> {
    src: &'a [u8],
    pat: &'a [u8],
    level: usize,
    captures: [(usize, CapLen); MAX_CAPTURES],
    depth: usize,
    steps: u64,
    max_steps: u64,
}

/// One value captured by a match.
#[derive(Clone, Debug, PartialEq)]
enum Captured<'a> {
    /// Text.
    Text(&'a [u8]),
    /// A 1-based position.
    Position(i64),
}

impl<'a> Matcher<'a> {
    fn new(src: &'a [u8], pat: &'a [u8], max_steps: u64) -> Matcher<'a> {
        Matcher {
            src,
            pat,
            level: 0,
            captures: [(0, CapLen::Unfinished); MAX_CAPTURES],
            depth: MAX_MATCH_DEPTH,
            steps: 0,
            max_steps,
        }
    }

    /// Resets the state before an attempt at a new position (`reprepstate`).
    fn reset(&mut self) {
        self.level = 0;
        self.depth = MAX_MATCH_DEPTH;
    }

    fn step(&mut self, n: u64) -> Result<(), Failure> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.max_steps {
            Err(Failure::Budget)
        } else {
            Ok(())
        }
    }

    /// The pattern byte at `i`, or 0 past the end (C strings end with NUL).
    fn p(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    /// The subject byte at `i`, or 0 past the end.
    fn s(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    fn class_end(&self, mut p: usize) -> Result<usize, Failure> {
        let c = self.p(p);
        p += 1;
        if c == ESC {
            if p >= self.pat.len() {
                return Err(error("malformed pattern (ends with '%')"));
            }
            return Ok(p + 1);
        }
        if c == b'[' {
            if self.p(p) == b'^' {
                p += 1;
            }
            loop {
                if p >= self.pat.len() {
                    return Err(error("malformed pattern (missing ']')"));
                }
                let c = self.p(p);
                p += 1;
                if c == ESC && p < self.pat.len() {
                    p += 1;
                }
                if self.p(p) == b']' {
                    break;
                }
            }
            return Ok(p + 1);
        }
        Ok(p)
    }

    fn single_match(&mut self, s: usize, p: usize, ep: usize) -> Result<bool, Failure> {
        self.step(1)?;
        if s >= self.src.len() {
            return Ok(false);
        }
        let c = self.src[s];
        Ok(match self.p(p) {
            b'.' => true,
            ESC => match_class(c, self.p(p + 1)),
            b'[' => self.bracket_class(c, p, ep - 1),
            other => other == c,
        })
    }

    fn bracket_class(&self, c: u8, mut p: usize, ec: usize) -> bool {
        let mut sig = true;
        if self.p(p + 1) == b'^' {
            sig = false;
            p += 1;
        }
        loop {
            p += 1;
            if p >= ec {
                break;
            }
            if self.p(p) == ESC {
                p += 1;
                if match_class(c, self.p(p)) {
                    return sig;
                }
            } else if self.p(p + 1) == b'-' && p + 2 < ec {
                p += 2;
                if self.p(p - 2) <= c && c <= self.p(p) {
                    return sig;
                }
            } else if self.p(p) == c {
                return sig;
            }
        }
        !sig
    }

    fn do_match(&mut self, s: usize, p: usize) -> Result<Option<usize>, Failure> {
        if self.depth == 0 {
            return Err(error("pattern too complex"));
        }
        self.depth -= 1;
        let r = self.match_inner(s, p);
        self.depth += 1;
        r
    }

    fn match_inner(&mut self, mut s: usize, mut p: usize) -> Result<Option<usize>, Failure> {
        loop {
            self.step(1)?;
            if p == self.pat.len() {
                return Ok(Some(s));
            }
            match self.p(p) {
                b'(' => {
                    return if self.p(p + 1) == b')' {
                        self.start_capture(s, p + 2, CapLen::Position)
                    } else {
                        self.start_capture(s, p + 1, CapLen::Unfinished)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                ESC if self.p(p + 1) == b'b' => match self.match_balance(s, p + 2)? {
                    Some(next) => {
                        s = next;
                        p += 4;
                        continue;
                    }
                    None => return Ok(None),
                },
                ESC if self.p(p + 1) == b'f' => {
                    p += 2;
                    if self.p(p) != b'[' {
                        return Err(error("missing '[' after '%f' in pattern"));
                    }
                    let ep = self.class_end(p)?;
                    let previous = if s == 0 { 0 } else { self.s(s - 1) };
                    let current = self.s(s);
                    if !self.bracket_class(previous, p, ep - 1)
                        && self.bracket_class(current, p, ep - 1)
                    {
                        p = ep;
                        continue;
                    }
                    return Ok(None);
                }
                ESC if self.p(p + 1).is_ascii_digit() => {
                    match self.match_capture(s, self.p(p + 1))? {
                        Some(next) => {
                            s = next;
                            p += 2;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {
                    let ep = self.class_end(p)?;
                    let q = self.p(ep);
                    if !self.single_match(s, p, ep)? {
                        if matches!(q, b'*' | b'?' | b'-') {
                            p = ep + 1;
                            continue;
                        }
                        return Ok(None);
                    }
                    match q {
                        b'?' => {
                            if let Some(res) = self.do_match(s + 1, ep + 1)? {
                                return Ok(Some(res));
                            }
                            p = ep + 1;
                            continue;
                        }
                        b'+' => return self.max_expand(s + 1, p, ep),
                        b'*' => return self.max_expand(s, p, ep),
                        b'-' => return self.min_expand(s, p, ep),
                        _ => {
                            s += 1;
                            p = ep;
                            continue;
                        }
                    }
                }
            }
        }
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> Result<Option<usize>, Failure> {
        let mut i = 0usize;
        while self.single_match(s + i, p, ep)? {
            i += 1;
        }
        loop {
            if let Some(res) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(res));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(&mut self, mut s: usize, p: usize, ep: usize) -> Result<Option<usize>, Failure> {
        loop {
            if let Some(res) = self.do_match(s, ep + 1)? {
                return Ok(Some(res));
            }
            if self.single_match(s, p, ep)? {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(
        &mut self,
        s: usize,
        p: usize,
        what: CapLen,
    ) -> Result<Option<usize>, Failure> {
        if self.level >= MAX_CAPTURES {
            return Err(error("too many captures"));
        }
        self.captures[self.level] = (s, what);
        self.level += 1;
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.level -= 1;
        }
        Ok(res)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> Result<Option<usize>, Failure> {
        let l = self.capture_to_close()?;
        self.captures[l].1 = CapLen::Len(s - self.captures[l].0);
        let res = self.do_match(s, p)?;
        if res.is_none() {
            self.captures[l].1 = CapLen::Unfinished;
        }
        Ok(res)
    }

    fn capture_to_close(&self) -> Result<usize, Failure> {
        (0..self.level)
            .rev()
            .find(|&l| self.captures[l].1 == CapLen::Unfinished)
            .ok_or_else(|| error("invalid pattern capture"))
    }

    fn match_balance(&mut self, s: usize, p: usize) -> Result<Option<usize>, Failure> {
        if p + 1 >= self.pat.len() {
            return Err(error("malformed pattern (missing arguments to '%b')"));
        }
        if self.s(s) != self.p(p) {
            return Ok(None);
        }
        let (open, close) = (self.p(p), self.p(p + 1));
        let mut depth = 1usize;
        let mut i = s;
        loop {
            i += 1;
            if i >= self.src.len() {
                return Ok(None);
            }
            self.step(1)?;
            let c = self.src[i];
            if c == close {
                depth -= 1;
                if depth == 0 {
                    return Ok(Some(i + 1));
                }
            } else if c == open {
                depth += 1;
            }
        }
    }

    fn match_capture(&mut self, s: usize, digit: u8) -> Result<Option<usize>, Failure> {
        let l = self.check_capture(digit)?;
        let (start, len) = self.captures[l];
        let CapLen::Len(len) = len else {
            // A position capture never matches as text.
            return Ok(None);
        };
        self.step(len as u64)?;
        if self.src.len() - s.min(self.src.len()) >= len
            && self.src.get(start..start + len) == self.src.get(s..s + len)
        {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }

    fn check_capture(&self, digit: u8) -> Result<usize, Failure> {
        let l = i32::from(digit) - i32::from(b'1');
        if l < 0 || l as usize >= self.level || self.captures[l as usize].1 == CapLen::Unfinished {
            return Err(error(&format!("invalid capture index %{}", l + 1)));
        }
        Ok(l as usize)
    }

    /// Capture `i` of a match of `s..e` (`get_onecapture`).
    fn capture(&self, i: usize, s: usize, e: usize) -> Result<Captured<'a>, Failure> {
        if i >= self.level {
            if i != 0 {
                return Err(error(&format!("invalid capture index %{}", i + 1)));
            }
            return Ok(Captured::Text(&self.src[s..e]));
        }
        let (start, len) = self.captures[i];
        match len {
            CapLen::Unfinished => Err(error("unfinished capture")),
            CapLen::Position => Ok(Captured::Position(start as i64 + 1)),
            CapLen::Len(len) => Ok(Captured::Text(&self.src[start..start + len])),
        }
    }

    /// All captures of a match (`push_captures`); with `whole`, the whole match when the
    /// pattern has none.
    fn captures(&self, s: usize, e: usize, whole: bool) -> Result<Vec<Captured<'a>>, Failure> {
        let n = if self.level == 0 && whole {
            1
        } else {
            self.level
        };
        (0..n).map(|i| self.capture(i, s, e)).collect()
    }
}

fn error(message: &str) -> Failure {
    Failure::Error(message.to_string())
}

/// Lua's `match_class` in the C locale.
fn match_class(c: u8, class: u8) -> bool {
    let res = match class.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        _ => return class == c,
    };
    if class.is_ascii_uppercase() {
        !res
    } else {
        res
    }
}

/// `posrelatI`: a 1-based start position from a possibly negative one.
fn start_position(pos: i64, len: usize) -> usize {
    if pos > 0 {
        pos as usize
    } else if pos == 0 || pos.unsigned_abs() > len as u64 {
        1
    } else {
        (len as i64 + pos + 1) as usize
    }
}

/// The budget bookkeeping of one library call.
struct Budget {
    max_steps: u64,
}

impl Budget {
    /// The steps left in the block's instruction budget.
    fn open(lua: &Lua) -> mlua::Result<Budget> {
        let state = lua
            .app_data_ref::<RunState>()
            .ok_or_else(|| mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR))?;
        if state.limit.is_some() {
            return Err(mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR));
        }
        let left = state.instruction_limit.saturating_sub(state.used);
        Ok(Budget {
            max_steps: left.saturating_mul(STEPS_PER_INSTRUCTION),
        })
    }

    /// Charges `steps` to the block; an error once the budget is spent.
    fn charge(lua: &Lua, steps: u64) -> mlua::Result<()> {
        let mut state = lua
            .app_data_mut::<RunState>()
            .ok_or_else(|| mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR))?;
        state.charge(steps.div_ceil(STEPS_PER_INSTRUCTION), None)
    }

    /// Turns a matcher failure into the Lua error to raise.
    fn fail(lua: &Lua, failure: Failure) -> mlua::Error {
        match failure {
            Failure::Error(message) => mlua::Error::runtime(message),
            Failure::Budget => {
                if let Some(mut state) = lua.app_data_mut::<RunState>() {
                    if state.limit.is_none() {
                        state.limit = Some(LimitHit::Instructions { line: None });
                    }
                }
                mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR)
            }
        }
    }
}

/// `luaL_checklstring`: a string or a number (converted).
fn check_bytes(lua: &Lua, v: &Value, arg: usize, fname: &str) -> mlua::Result<Vec<u8>> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => Ok(lua
            .coerce_string(v.clone())?
            .map(|s| s.as_bytes().to_vec())
            .unwrap_or_default()),
        other => Err(bad_argument(
            arg,
            fname,
            &format!("string expected, got {}", type_name(other)),
        )),
    }
}

/// `luaL_checkinteger`.
pub(crate) fn check_integer(lua: &Lua, v: &Value, arg: usize, fname: &str) -> mlua::Result<i64> {
    match v {
        Value::Nil => Err(bad_argument(arg, fname, "number expected, got nil")),
        _ => opt_integer(lua, v, arg, fname, 0),
    }
}

/// `luaL_optinteger`.
fn opt_integer(lua: &Lua, v: &Value, arg: usize, fname: &str, default: i64) -> mlua::Result<i64> {
    match v {
        Value::Nil => Ok(default),
        Value::Integer(i) => Ok(*i),
        Value::Number(_) | Value::String(_) => match lua.coerce_integer(v.clone()) {
            Ok(Some(i)) => Ok(i),
            _ if matches!(v, Value::Number(_)) => Err(bad_argument(
                arg,
                fname,
                "number has no integer representation",
            )),
            _ => Err(bad_argument(
                arg,
                fname,
                &format!("number expected, got {}", type_name(v)),
            )),
        },
        other => Err(bad_argument(
            arg,
            fname,
            &format!("number expected, got {}", type_name(other)),
        )),
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::UserData(_) | Value::LightUserData(_) => "userdata",
        Value::Thread(_) => "thread",
        _ => "no value",
    }
}

pub(crate) fn bad_argument(arg: usize, fname: &str, why: &str) -> mlua::Error {
    mlua::Error::runtime(format!("bad argument #{arg} to '{fname}' ({why})"))
}

fn arg(args: &MultiValue, i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}

fn to_lua(lua: &Lua, captured: &[Captured<'_>]) -> mlua::Result<MultiValue> {
    captured
        .iter()
        .map(|c| match c {
            Captured::Text(t) => lua.create_string(t).map(Value::String),
            Captured::Position(p) => Ok(Value::Integer(*p)),
        })
        .collect()
}

/// Plain substring search (`lmemfind`), counting compared bytes.
fn find_plain(
    m: &mut Matcher<'_>,
    hay: &[u8],
    needle: &[u8],
    from: usize,
) -> Result<Option<usize>, Failure> {
    if needle.is_empty() {
        return Ok(Some(from));
    }
    if needle.len() > hay.len() - from {
        return Ok(None);
    }
    let last = hay.len() - needle.len();
    let mut i = from;
    while i <= last {
        m.step(1)?;
        if hay[i] == needle[0] {
            let mut k = 1;
            while k < needle.len() && hay[i + k] == needle[k] {
                k += 1;
            }
            m.step(k as u64)?;
            if k == needle.len() {
                return Ok(Some(i));
            }
        }
        i += 1;
    }
    Ok(None)
}

/// `string.find` and `string.match`.
fn find_aux(lua: &Lua, args: MultiValue, find: bool) -> mlua::Result<MultiValue> {
    let fname = if find { "find" } else { "match" };
    let s = check_bytes(lua, &arg(&args, 0), 1, fname)?;
    let pat = check_bytes(lua, &arg(&args, 1), 2, fname)?;
    let init = start_position(opt_integer(lua, &arg(&args, 2), 3, fname, 1)?, s.len()) - 1;
    let fail = || Ok(MultiValue::from_iter([Value::Nil]));
    if init > s.len() {
        return fail();
    }
    let budget = Budget::open(lua)?;
    let mut m = Matcher::new(&s, &pat, budget.max_steps);
    let plain = arg(&args, 3);
    let plain = !matches!(plain, Value::Nil | Value::Boolean(false));
    if find && (plain || !pat.iter().any(|c| SPECIALS.contains(c))) {
        let found = find_plain(&mut m, &s, &pat, init).map_err(|f| Budget::fail(lua, f))?;
        Budget::charge(lua, m.steps)?;
        return match found {
            Some(i) => Ok(MultiValue::from_iter([
                Value::Integer(i as i64 + 1),
                Value::Integer((i + pat.len()) as i64),
            ])),
            None => fail(),
        };
    }
    let anchor = pat.first() == Some(&b'^');
    let p0 = usize::from(anchor);
    let mut s1 = init;
    let result = loop {
        m.reset();
        match m.do_match(s1, p0) {
            Ok(Some(e)) => {
                let out = if find {
                    let caps = m.captures(s1, e, false);
                    caps.map(|c| (Some((s1, e)), c))
                } else {
                    m.captures(s1, e, true).map(|c| (None, c))
                };
                break out.map(Some);
            }
            Ok(None) => {}
            Err(f) => break Err(f),
        }
        s1 += 1;
        if anchor || s1 > s.len() {
            break Ok(None);
        }
    };
    let steps = m.steps;
    let result = result.map_err(|f| Budget::fail(lua, f))?;
    Budget::charge(lua, steps)?;
    match result {
        None => fail(),
        Some((range, caps)) => {
            let mut out = MultiValue::new();
            if let Some((start, end)) = range {
                out.push_back(Value::Integer(start as i64 + 1));
                out.push_back(Value::Integer(end as i64));
            }
            for v in to_lua(lua, &caps)? {
                out.push_back(v);
            }
            Ok(out)
        }
    }
}

/// State of a `gmatch` iterator.
struct GmatchState {
    src: Vec<u8>,
    pat: Vec<u8>,
    pos: usize,
    last_match: Option<usize>,
}

/// `string.gmatch`.
fn gmatch(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::Function> {
    let src = check_bytes(lua, &arg(&args, 0), 1, "gmatch")?;
    let pat = check_bytes(lua, &arg(&args, 1), 2, "gmatch")?;
    let mut pos = start_position(opt_integer(lua, &arg(&args, 2), 3, "gmatch", 1)?, src.len()) - 1;
    if pos > src.len() {
        pos = src.len() + 1;
    }
    let state = Rc::new(RefCell::new(GmatchState {
        src,
        pat,
        pos,
        last_match: None,
    }));
    lua.create_function(move |lua, ()| {
        let mut st = state.borrow_mut();
        let budget = Budget::open(lua)?;
        let st = &mut *st;
        let mut m = Matcher::new(&st.src, &st.pat, budget.max_steps);
        let mut found = Ok(None);
        let mut src = st.pos;
        while src <= st.src.len() {
            m.reset();
            match m.do_match(src, 0) {
                Ok(Some(e)) if Some(e) != st.last_match => {
                    found = m.captures(src, e, true).map(|c| Some((e, c)));
                    break;
                }
                Ok(_) => {}
                Err(f) => {
                    found = Err(f);
                    break;
                }
            }
            src += 1;
        }
        let steps = m.steps;
        let found = found.map_err(|f| Budget::fail(lua, f))?;
        Budget::charge(lua, steps)?;
        match found {
            Some((e, caps)) => {
                let out = to_lua(lua, &caps)?;
                st.pos = e;
                st.last_match = Some(e);
                Ok(out)
            }
            None => {
                st.pos = st.src.len() + 1;
                Ok(MultiValue::from_iter([Value::Nil]))
            }
        }
    })
}

/// `string.gsub`.
fn gsub(lua: &Lua, args: MultiValue) -> mlua::Result<(Value, i64)> {
    let subject = arg(&args, 0);
    let src = check_bytes(lua, &subject, 1, "gsub")?;
    let pat = check_bytes(lua, &arg(&args, 1), 2, "gsub")?;
    let repl = arg(&args, 2);
    if !matches!(
        repl,
        Value::Integer(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Table(_)
            | Value::Function(_)
    ) {
        return Err(bad_argument(
            3,
            "gsub",
            &format!("string/function/table expected, got {}", type_name(&repl)),
        ));
    }
    let repl_text = match &repl {
        Value::String(_) | Value::Integer(_) | Value::Number(_) => {
            Some(check_bytes(lua, &repl, 3, "gsub")?)
        }
        _ => None,
    };
    let max_n = opt_integer(lua, &arg(&args, 3), 4, "gsub", src.len() as i64 + 1)?;
    let anchor = pat.first() == Some(&b'^');
    let p0 = usize::from(anchor);
    let mut out: Vec<u8> = Vec::new();
    let mut changed = false;
    let mut n: i64 = 0;
    let mut pos = 0usize;
    let mut last_match: Option<usize> = None;
    while n < max_n {
        let budget = Budget::open(lua)?;
        let mut m = Matcher::new(&src, &pat, budget.max_steps);
        m.reset();
        let attempt = m.do_match(pos, p0);
        let steps = m.steps;
        let attempt = attempt.map_err(|f| Budget::fail(lua, f))?;
        match attempt {
            Some(e) if Some(e) != last_match => {
                n += 1;
                let caps = m.captures(pos, e, true).map_err(|f| Budget::fail(lua, f))?;
                Budget::charge(lua, steps + (e - pos) as u64)?;
                let whole = &src[pos..e];
                let replacement: Option<Vec<u8>> = match &repl_text {
                    Some(text) => Some(
                        expand_replacement(&m, text, pos, e).map_err(|f| Budget::fail(lua, f))?,
                    ),
                    None => {
                        let value = match &repl {
                            Value::Table(t) => {
                                let key = to_lua(lua, &caps[..1])?;
                                t.get::<Value>(key.into_iter().next().unwrap_or(Value::Nil))?
                            }
                            Value::Function(f) => f.call::<Value>(to_lua(lua, &caps)?)?,
                            _ => Value::Nil,
                        };
                        match value {
                            Value::Nil | Value::Boolean(false) => None,
                            Value::String(s) => Some(s.as_bytes().to_vec()),
                            v @ (Value::Integer(_) | Value::Number(_)) => Some(
                                lua.coerce_string(v)?
                                    .map(|s| s.as_bytes().to_vec())
                                    .unwrap_or_default(),
                            ),
                            other => {
                                return Err(mlua::Error::runtime(format!(
                                    "invalid replacement value (a {})",
                                    type_name(&other)
                                )));
                            }
                        }
                    }
                };
                match replacement {
                    Some(r) => {
                        changed = true;
                        out.extend_from_slice(&r);
                    }
                    None => out.extend_from_slice(whole),
                }
                check_output(lua, out.len())?;
                pos = e;
                last_match = Some(e);
            }
            _ if pos < src.len() => {
                Budget::charge(lua, steps + 1)?;
                out.push(src[pos]);
                pos += 1;
            }
            _ => {
                Budget::charge(lua, steps)?;
                break;
            }
        }
        if anchor {
            break;
        }
    }
    let result = if changed {
        out.extend_from_slice(&src[pos.min(src.len())..]);
        Value::String(lua.create_string(&out)?)
    } else {
        match subject {
            Value::String(_) => subject,
            _ => Value::String(lua.create_string(&src)?),
        }
    };
    Ok((result, n))
}

/// Stops a result that would grow past the memory limit (it is built outside Lua's heap).
fn check_output(lua: &Lua, len: usize) -> mlua::Result<()> {
    let Some(mut state) = lua.app_data_mut::<RunState>() else {
        return Ok(());
    };
    if len > state.memory_limit {
        if state.limit.is_none() {
            state.limit = Some(LimitHit::Memory);
        }
        return Err(mlua::Error::runtime(MEMORY_ERROR));
    }
    Ok(())
}

/// Expands `%0`-`%9` and `%%` in a replacement string (`add_s`).
fn expand_replacement(
    m: &Matcher<'_>,
    text: &[u8],
    s: usize,
    e: usize,
) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c != ESC {
            out.push(c);
            i += 1;
            continue;
        }
        let d = text.get(i + 1).copied().unwrap_or(0);
        if d == ESC {
            out.push(ESC);
        } else if d == b'0' {
            out.extend_from_slice(&m.src[s..e]);
        } else if d.is_ascii_digit() {
            match m.capture(usize::from(d - b'1'), s, e)? {
                Captured::Text(t) => out.extend_from_slice(t),
                Captured::Position(p) => out.extend_from_slice(p.to_string().as_bytes()),
            }
        } else {
            return Err(error("invalid use of '%' in replacement string"));
        }
        i += 2;
    }
    Ok(out)
}

/// Replaces the four pattern functions of the `string` table.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let string: mlua::Table = lua.globals().raw_get("string")?;
    string.raw_set(
        "find",
        lua.create_function(|lua, args: MultiValue| find_aux(lua, args, true))?,
    )?;
    string.raw_set(
        "match",
        lua.create_function(|lua, args: MultiValue| find_aux(lua, args, false))?,
    )?;
    string.raw_set("gmatch", lua.create_function(gmatch)?)?;
    string.raw_set("gsub", lua.create_function(gsub)?)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn find(s: &str, p: &str) -> Option<(usize, usize, Vec<Captured<'static>>)> {
        let s: &'static [u8] = Box::leak(s.as_bytes().to_vec().into_boxed_slice());
        let p: &'static [u8] = Box::leak(p.as_bytes().to_vec().into_boxed_slice());
        let mut m = Matcher::new(s, p, u64::MAX);
        let anchor = p.first() == Some(&b'^');
        for start in 0..=s.len() {
            m.reset();
            if let Some(e) = m.do_match(start, usize::from(anchor)).ok()? {
                return Some((start, e, m.captures(start, e, false).ok()?));
            }
            if anchor {
                break;
            }
        }
        None
    }

    #[test]
    fn classes_and_quantifiers() {
        assert_eq!(find("hello world", "o w").map(|r| (r.0, r.1)), Some((4, 7)));
        assert_eq!(find("abc123", "%d+").map(|r| (r.0, r.1)), Some((3, 6)));
        assert_eq!(
            find("  trim  ", "^%s*(.-)%s*$").map(|r| r.2),
            Some(vec![Captured::Text(b"trim")])
        );
        assert_eq!(find("key=value", "(%w+)=(%w+)").map(|r| r.2.len()), Some(2));
        assert_eq!(find("f(a(b)c)d", "%b()").map(|r| (r.0, r.1)), Some((1, 8)));
        assert_eq!(
            find("THE (quick) fox", "%f[%a]%a+").map(|r| (r.0, r.1)),
            Some((0, 3))
        );
        assert_eq!(find("abcabc", "(abc)%1").map(|r| r.1), Some(6));
        assert_eq!(
            find("x", "()x()").map(|r| r.2),
            Some(vec![Captured::Position(1), Captured::Position(2)])
        );
        assert_eq!(find("a]b", "[%]]").map(|r| r.0), Some(1));
        assert_eq!(find("a-b", "[a%-]+").map(|r| r.1), Some(2));
        assert!(find("abc", "^b").is_none());
        assert!(find("abc", "[^abc]").is_none());
    }

    #[test]
    fn malformed_patterns_are_errors() {
        for (p, msg) in [
            ("%", "malformed pattern (ends with '%')"),
            ("[a", "malformed pattern (missing ']')"),
            ("%b", "malformed pattern (missing arguments to '%b')"),
            ("%fa", "missing '[' after '%f' in pattern"),
            ("(a", "unfinished capture"),
            ("a)", "invalid pattern capture"),
            ("%1", "invalid capture index %1"),
        ] {
            let mut m = Matcher::new(b"aaa", p.as_bytes(), u64::MAX);
            let r = m.do_match(0, 0).and_then(|e| match e {
                Some(e) => m.captures(0, e, true).map(|_| ()),
                None => Ok(()),
            });
            assert_eq!(r, Err(Failure::Error(msg.to_string())), "pattern {p}");
        }
    }

    #[test]
    fn catastrophic_patterns_run_out_of_budget() {
        let s = "a".repeat(40);
        let p = format!("{}b", "a*".repeat(40));
        let mut m = Matcher::new(s.as_bytes(), p.as_bytes(), 1_000_000);
        assert_eq!(m.do_match(0, 0), Err(Failure::Budget));
        assert!(m.steps > 1_000_000 && m.steps < 1_000_010);
    }

    #[test]
    fn deep_patterns_are_too_complex() {
        let p = "a?".repeat(300);
        let s = "a".repeat(300);
        let mut m = Matcher::new(s.as_bytes(), p.as_bytes(), u64::MAX);
        assert_eq!(m.do_match(0, 0), Err(error("pattern too complex")));
    }
}
