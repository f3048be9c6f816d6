//! The sandbox: forbidden functions are gone, limits stop runaway code with a clear error
//! in bounded time, and usages cannot see each other.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use bebop_lua::LuaRuntime;
use support::{compile, compile_with, diags};

/// A schema with one decorator whose validate block is `body`, used once on a field.
fn validate_schema(body: &str) -> String {
    format!(
        "#decorator(check) {{\n    targets = FIELD\n    validate [[\n{body}\n    ]]\n}}\n\nstruct S {{\n    @check\n    x: int32;\n}}\n"
    )
}

/// Runs `body` as a validate block and returns the diagnostics.
fn run(runtime: LuaRuntime, body: &str) -> Vec<(String, u32, u32, String)> {
    diags(&compile_with(runtime, &validate_schema(body)))
}

/// Asserts that `body` passes (any `error` it calls fails the test with its message).
fn passes(body: &str) {
    let d = run(LuaRuntime::new(), body);
    assert!(d.is_empty(), "{body}\n{d:#?}");
}

/// Asserts that `body` fails with one E089 whose message contains `needle`.
fn fails_with(runtime: LuaRuntime, body: &str, needle: &str) -> (u32, u32, String) {
    let d = run(runtime, body);
    let errors: Vec<_> = d.iter().filter(|e| e.0 == "E089").collect();
    assert!(
        errors.iter().any(|e| e.3.contains(needle)),
        "expected an E089 containing {needle:?} for\n{body}\ngot {d:#?}"
    );
    let e = errors
        .into_iter()
        .find(|e| e.3.contains(needle))
        .cloned()
        .unwrap();
    (e.1, e.2, e.3)
}

fn small() -> LuaRuntime {
    LuaRuntime::new().instruction_limit(200_000)
}

#[test]
fn forbidden_globals_are_absent() {
    for name in [
        "io",
        "os",
        "require",
        "package",
        "debug",
        "load",
        "loadstring",
        "dofile",
        "loadfile",
        "coroutine",
        "rawget",
        "rawset",
        "rawequal",
        "rawlen",
        "module",
        "setfenv",
        "getfenv",
        "newproxy",
        "unpack",
        "jit",
        "ffi",
    ] {
        passes(&format!(
            "if {name} ~= nil then error('{name} is reachable') end\n\
             if _G['{name}'] ~= nil then error('_G.{name} is reachable') end"
        ));
    }
    passes("if string.dump ~= nil then error('string.dump is reachable') end");
    passes(
        "if getmetatable('').__index.dump ~= nil then error('dump via the string metatable') end",
    );
    passes("if math.pow ~= nil or math.ldexp ~= nil then error('5.3 compatibility functions') end");
}

#[test]
fn calling_forbidden_functions_is_an_error_not_an_escape() {
    fails_with(
        small(),
        "io.open('/etc/passwd', 'r')",
        "attempt to index a nil value (global 'io')",
    );
    fails_with(small(), "os.exit(1)", "global 'os'");
    fails_with(small(), "load('return 1')()", "global 'load'");
    fails_with(small(), "require('os')", "global 'require'");
    fails_with(small(), "string.dump(print)", "field 'dump'");
    fails_with(
        small(),
        "local f = coroutine.wrap(function() while true do end end) f()",
        "global 'coroutine'",
    );
    fails_with(small(), "collectgarbage('stop')", "is not allowed");
    passes(
        "collectgarbage() collectgarbage('collect') if collectgarbage('count') <= 0 then error('count') end",
    );
    passes("print('this goes nowhere') if print(1) ~= nil then error('print returned') end");
}

#[test]
fn endless_loops_stop_with_a_clear_error_in_bounded_time() {
    let start = Instant::now();
    let (line, col, msg) = fails_with(
        LuaRuntime::new(),
        "while true do end",
        "10000000 Lua instructions",
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    // At the usage, naming the decorator and the element.
    assert_eq!((line, col), (9, 5));
    assert!(msg.contains("decorator 'check' on field 'x'"), "{msg}");
    // The block's first line is the rest of the `validate [[` line.
    assert!(msg.contains("line 2 of the block"), "{msg}");
}

#[test]
fn pcall_cannot_swallow_the_limits() {
    fails_with(
        small(),
        "while true do pcall(function() while true do end end) end",
        "Lua instructions",
    );
    let d = run(small(), "while true do pcall(error, 'x') end");
    // Every `error` call is an error (as in the reference), but only the first 50 are kept.
    assert_eq!(d.iter().filter(|e| e.3 == "x").count(), 50, "{d:#?}");
    assert!(
        d.iter()
            .any(|e| e.0 == "W007" && e.3.contains("more messages")),
        "{d:#?}"
    );
    assert!(d.iter().any(|e| e.3.contains("Lua instructions")), "{d:#?}");
    fails_with(
        small(),
        "while true do xpcall(function() while true do end end, function(e) while true do end end) end",
        "Lua instructions",
    );
    fails_with(
        small().memory_limit(1 << 20),
        "local t = {} while true do pcall(function() t[#t + 1] = string.rep('x', 1000) end) end",
        "used more than 1 MiB of memory",
    );
}

#[test]
fn tail_calls_and_deep_recursion_end_in_errors() {
    fails_with(
        small(),
        "local function f() return f() end f()",
        "Lua instructions",
    );
    // Each frame stays on Lua's own stack: this ends in "stack overflow" or the memory limit,
    // never in a crash.
    let d = run(
        LuaRuntime::new(),
        "local function f(n) return 1 + f(n + 1) end f(1)",
    );
    assert!(
        d.iter()
            .any(|e| e.0 == "E089" && (e.3.contains("stack overflow") || e.3.contains("memory"))),
        "{d:#?}"
    );
    // C-level recursion through metamethods is stopped by Lua's C stack limit.
    let d = run(
        LuaRuntime::new(),
        "local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end local _ = t.x",
    );
    assert!(
        d.iter()
            .any(|e| e.0 == "E089" && e.3.contains("stack overflow")),
        "{d:#?}"
    );
}

#[test]
fn memory_bombs_stop_at_the_memory_limit() {
    let start = Instant::now();
    let (line, _, _) = fails_with(
        LuaRuntime::new(),
        "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 4096) .. i end",
        "used more than 16 MiB of memory",
    );
    assert_eq!(line, 9);
    assert!(start.elapsed() < Duration::from_secs(20));
    fails_with(
        LuaRuntime::new(),
        "local s = string.rep('x', 1 << 30)",
        "16 MiB of memory",
    );
    fails_with(
        LuaRuntime::new(),
        "local s = string.rep('x', 1 << 50)",
        "resulting string too large",
    );
    fails_with(
        LuaRuntime::new(),
        "local s = string.rep('ab', 4000000) local r = s:gsub('.', '%0%0%0%0')",
        "16 MiB of memory",
    );
    fails_with(
        small(),
        "local t = {} for i = 1, 1e9 do t[i] = i end",
        "Lua instructions",
    );
}

#[test]
fn library_loops_count_against_the_instruction_limit() {
    // Catastrophic backtracking in C would run for years; the counted matcher stops it.
    let start = Instant::now();
    fails_with(
        LuaRuntime::new(),
        "local s = string.rep('a', 60) local p = string.rep('a*', 60) .. 'b' s:find(p)",
        "Lua instructions",
    );
    fails_with(
        small(),
        "string.rep('a', 5000):gsub('.-.-.-x', '')",
        "Lua instructions",
    );
    fails_with(
        small(),
        "for w in string.rep('a', 3000):gmatch('.-.-b') do end",
        "Lua instructions",
    );
    // C loops of the table library over huge ranges, also under pcall.
    fails_with(
        small(),
        "table.move({}, 1, math.maxinteger - 1, 2)",
        "Lua instructions",
    );
    fails_with(
        small(),
        "while true do pcall(table.move, {}, 1, math.maxinteger - 1, 2) end",
        "Lua instructions",
    );
    fails_with(
        small(),
        "local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end }) table.insert(t, 1, 'x')",
        "Lua instructions",
    );
    fails_with(
        small(),
        "local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end }) table.remove(t, 1)",
        "Lua instructions",
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn code_that_would_run_without_hooks_is_refused_or_moved() {
    // Finalizers run with hooks off: they are refused.
    fails_with(
        small(),
        "for i = 1, 100 do setmetatable({}, { __gc = function() while true do end end }) end",
        "__gc and __close metamethods are not allowed",
    );
    // Userdata metatables cannot be reached to plant one.
    passes("if getmetatable(setmetatable({}, {})) == nil then error('tables keep theirs') end");
    // Message handlers run with hooks off: xpcall calls them after unwinding, under the limit.
    let start = Instant::now();
    fails_with(
        small(),
        "xpcall(function() error('x') end, function(e) while true do end end)",
        "Lua instructions",
    );
    passes(
        "local ok, v = xpcall(function() local x = nil; return x.y end, function(e) return 'handled: ' .. e end)
         if ok or not v:find('handled: ') then error('xpcall: ' .. tostring(v)) end
         local ok2, a, b = xpcall(function(p, q) return p + q, p * q end, print, 2, 3)
         if not ok2 or a ~= 5 or b ~= 6 then error('xpcall results') end",
    );
    // __close handlers can run from inside the hook: they are refused too, also on strings.
    fails_with(
        small(),
        "local x <close> = setmetatable({}, { __close = function() while true do end end }) while true do end",
        "__gc and __close metamethods are not allowed",
    );
    fails_with(
        small(),
        "getmetatable('').__close = function() while true do end end local s <close> = 'x' while true do end",
        "non-closable value",
    );
    passes("local n <close> = nil local f <close> = false");
    // A __tostring that loops, met while Lua builds the error message.
    fails_with(
        small(),
        "assert(false, setmetatable({}, { __tostring = function() while true do end end }))",
        "Lua instructions",
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn usages_are_isolated() {
    // The first usage poisons its globals, the string metatable and the libraries; the
    // second must see none of it.
    let schema = r#"
#decorator(poison) {
    targets = FIELD
    validate [[
        leaked = "yes"
        string.len = function() return -1 end
        getmetatable("").__index = function() return "hacked" end
        math.floor = nil
        setmetatable(_G, { __index = function() return "global" end })
    ]]
}
#decorator(probe) {
    targets = FIELD
    validate [[
        if rawequal ~= nil then error("rawequal") end
        if leaked ~= nil then error("global leaked: " .. tostring(leaked)) end
        if ("abc"):len() ~= 3 then error("string metatable leaked") end
        if math.floor == nil then error("math leaked") end
    ]]
}
struct S {
    @poison
    a: int32;
    @probe
    b: int32;
}
"#;
    let d = diags(&compile(schema));
    assert!(d.is_empty(), "{d:#?}");
}

#[test]
fn validate_and_export_of_one_usage_share_a_state() {
    let c = compile(
        "#decorator(d) { targets = FIELD
           validate [[ computed = 41 ]]
           export [[ return { v = computed + 1 } ]] }
         struct S { @d x: int32; }",
    );
    assert_eq!(
        support::export_of(&c, "S.x#0"),
        vec![("v".to_string(), bebopc::model::Value::Int(42))]
    );
}

#[test]
fn random_numbers_are_reproducible() {
    let schema =
        "#decorator(d) { targets = FIELD export [[ return { r = math.random(1, 1000000) } ]] }
                  struct S { @d x: int32; @d y: int32; }";
    let a = compile(schema);
    let b = compile(schema);
    assert_eq!(
        support::export_of(&a, "S.x#0"),
        support::export_of(&b, "S.x#0")
    );
    assert_eq!(
        support::export_of(&a, "S.x#0"),
        support::export_of(&a, "S.y#0")
    );
}

#[test]
fn error_is_reported_even_when_caught() {
    // As in the reference: `error` records its message when it is called.
    let d = run(
        LuaRuntime::new(),
        "local ok = pcall(error, 'boom') if ok then error('pcall') end",
    );
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].0.as_str(), d[0].3.as_str()), ("E089", "boom"));
}

#[test]
fn reference_helpers_are_there() {
    passes(
        "if bit.band(0xFF, 0x0F) ~= 0x0F then error('band') end
         if bit.bor(0xF0, 0x0F) ~= 0xFF then error('bor') end
         if bit.bxor(0xFF, 0x0F) ~= 0xF0 then error('bxor') end
         if bit.bnot(0) ~= -1 then error('bnot') end
         if bit.lshift(1, 4) ~= 16 then error('lshift') end
         if bit.rshift(16, 4) ~= 1 then error('rshift') end
         if bit.rshift(-1, 60) ~= 15 then error('rshift is logical') end
         if not is_power_of_two(8) or is_power_of_two(6) or is_power_of_two(0) then error('pot') end
         if not is_valid_identifier('_foo1') or is_valid_identifier('1a') or is_valid_identifier('') then error('ident') end
         if STRUCT ~= 2 or MESSAGE ~= 4 or UNION ~= 8 or ENUM ~= 1 or FIELD ~= 16 or MEMBER ~= 16 then error('targets') end
         if SERVICE ~= 32 or METHOD ~= 64 or BRANCH ~= 128 or ALL ~= 255 then error('targets') end
         if _VERSION ~= 'Lua 5.4' then error(_VERSION) end",
    );
}

#[test]
fn the_standard_library_still_works() {
    passes(
        "local t = {3, 1, 2} table.sort(t) if table.concat(t, ',') ~= '1,2,3' then error('sort') end
         table.insert(t, 4) table.insert(t, 1, 0) if table.concat(t, ',') ~= '0,1,2,3,4' then error('insert ' .. table.concat(t, ',')) end
         if table.remove(t) ~= 4 or table.remove(t, 1) ~= 0 then error('remove') end
         if table.concat(table.move({1, 2, 3}, 1, 3, 2), ',') ~= '1,1,2,3' then error('move') end
         if table.concat(table.move({1, 2, 3}, 1, 3, 1, {}), ',') ~= '1,2,3' then error('move to') end
         if string.format('%d-%s', 4, 'x') ~= '4-x' then error('format') end
         if ('hello world'):find('o w') ~= 5 then error('find') end
         if ('a.b'):find('.', 1, true) ~= 2 then error('plain find') end
         local fs, fe, fc = ('abc'):find('(b)') if fs ~= 2 or fe ~= 2 or fc ~= 'b' then error('find captures') end
         if ('abc'):find('c', -1) ~= 3 or ('abc'):find('a', 10) ~= nil then error('find init') end
         local k, v = ('key=value'):match('(%w+)=(%w+)') if k ~= 'key' or v ~= 'value' then error('match') end
         if ('  x  '):match('^%s*(.-)%s*$') ~= 'x' then error('trim') end
         local n = 0 for w in ('one two three'):gmatch('%a+') do n = n + 1 end if n ~= 3 then error('gmatch') end
         local s, c = ('hello'):gsub('l', 'L') if s ~= 'heLLo' or c ~= 2 then error('gsub') end
         if ('abc'):gsub('%w', '%0%0') ~= 'aabbcc' then error('gsub %0') end
         if ('abc'):gsub('', '-') ~= '-a-b-c-' then error('gsub empty') end
         if ('hello world'):gsub('(%w+)', { hello = 'HI' }) ~= 'HI world' then error('gsub table') end
         if ('abc'):gsub('%w', function(c) return c:upper() end) ~= 'ABC' then error('gsub function') end
         if ('x = 1'):gsub('%s', '', 1) ~= 'x= 1' then error('gsub max') end
         if ('THE (quick) fox'):find('%f[%a]%a+', 5) ~= 6 then error('frontier') end
         if ('f(a(b)c)'):match('%b()') ~= '(a(b)c)' then error('balance') end
         if ('()'):match('()') ~= 1 then error('position') end
         if utf8.len('héllo') ~= 5 then error('utf8') end
         local aok, ae = pcall(assert, false, 'm') if aok or ae ~= 'm' then error('assert message') end
         local bok, be = pcall(assert, nil) if bok or be ~= 'assertion failed!' then error('assert default: ' .. tostring(be)) end
         local a1, a2 = assert(1, 2) if a1 ~= 1 or a2 ~= 2 then error('assert results') end
         if math.type(3) ~= 'integer' or math.type(3.0) ~= 'float' then error('math.type') end
         local ok, e = pcall(string.find, 'x', '[a') if ok or not tostring(e):find('missing') then error('malformed: ' .. tostring(e)) end
         local ok2, e2 = pcall(function() local x = nil; return x.y end)
         if ok2 or not e2:find('attempt to index') then error('pcall: ' .. tostring(e2)) end",
    );
}

/// A schema with `n` fields, each carrying the looping decorator `spin`.
fn many_spinning_usages(n: usize) -> String {
    let fields: String = (0..n)
        .map(|i| format!("    @spin\n    f{i}: int32;\n"))
        .collect();
    format!(
        "#decorator(spin) {{\n    targets = FIELD\n    validate [[\n while true do end\n    ]]\n}}\n\nstruct S {{\n{fields}}}\n"
    )
}

/// The compilation's budget: 1,000 usages that each loop to the block limit end after the
/// budget's worth of instructions, the block that spends it says so (naming its decorator
/// and field), and every later block fails at once instead of running its own limit.
#[test]
fn the_compilation_budget_bounds_many_looping_usages() {
    let runtime = LuaRuntime::new()
        .instruction_limit(1_000_000)
        .total_budget(Some(5_000_000), Some(Duration::from_secs(60)));
    let start = Instant::now();
    let d = diags(&compile_with(runtime, &many_spinning_usages(1000)));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
    let per_block = d
        .iter()
        .filter(|e| e.3.contains("1000000 Lua instructions"))
        .count();
    let budget: Vec<_> = d
        .iter()
        .filter(|e| e.3.contains("Lua budget of the whole compilation"))
        .collect();
    assert!(
        (4..=5).contains(&per_block),
        "{per_block} blocks ran to their own limit"
    );
    // Every usage is reported, up to the 500 diagnostics kept per file.
    assert_eq!(per_block + budget.len(), 500);
    assert!(d.iter().any(|e| e.3.contains("too many diagnostics")));
    assert!(
        budget[0].3.contains("decorator 'spin' on field 'f"),
        "{}",
        budget[0].3
    );
    assert!(
        budget[0].3.contains("5000000 instructions"),
        "{}",
        budget[0].3
    );
}

/// A time budget stops the compilation's Lua too, however many instructions are left.
#[test]
fn the_compilation_time_budget_bounds_lua() {
    let runtime = LuaRuntime::new().total_budget(None, Some(Duration::from_millis(300)));
    let start = Instant::now();
    let d = diags(&compile_with(runtime, &many_spinning_usages(200)));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        d.iter()
            .any(|e| e.3.contains("Lua budget of the whole compilation")),
        "{d:#?}"
    );
}
