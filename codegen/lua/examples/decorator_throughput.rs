//! Measures how long the Lua runtime takes per decorator usage, and how long runaway code
//! takes to be stopped. Run with `cargo run --release -p bebop-lua --example
//! decorator_throughput`.

use std::time::Instant;

use bebop_lua::LuaRuntime;
use bebopc::Compiler;

fn main() {
    let usages = 2000;
    let mut schema = String::from(
        "#decorator(range) { targets = FIELD param min!: int32 param max!: int32
           validate [[ if min >= max then error('min must be less than max') end ]]
           export [[ return { constraint = 'range', range_min = min, range_max = max, width = max - min } ]] }
         struct S {\n",
    );
    for i in 0..usages {
        schema.push_str(&format!(
            "@range(min: {i}, max: {})\n f{i}: int32;\n",
            i + 10
        ));
    }
    schema.push_str("}\n");

    let start = Instant::now();
    let plain = Compiler::new().compile_source("s.bop", &schema);
    let without = start.elapsed();
    let start = Instant::now();
    let with = Compiler::new()
        .decorator_runtime(LuaRuntime::new())
        .compile_source("s.bop", &schema);
    let lua = start.elapsed();
    assert!(!plain.has_errors() && !with.has_errors());
    println!(
        "{usages} usages with validate + export: {lua:?} ({:?} per usage; {without:?} without Lua)",
        lua.saturating_sub(without) / usages
    );

    for body in [
        "while true do end",
        "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 4096) .. i end",
        "local s = string.rep('a', 60) s:find(string.rep('a*', 60) .. 'b')",
        "table.move({}, 1, math.maxinteger - 1, 2)",
    ] {
        let schema = format!(
            "#decorator(c) {{ targets = FIELD validate [[ {body} ]] }} struct S {{ @c x: int32; }}"
        );
        let start = Instant::now();
        let result = Compiler::new()
            .decorator_runtime(LuaRuntime::new())
            .compile_source("s.bop", &schema);
        let message = result
            .errors()
            .next()
            .map_or("no error".to_string(), |e| e.message.clone());
        println!("{body}\n  stopped after {:?}: {message}", start.elapsed());
    }
}
