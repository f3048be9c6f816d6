//! What Lua code sees and reports: spans of errors and warnings, parameter values, the
//! target table, export data.

#![allow(clippy::unwrap_used)]

mod support;

use bebop_core::{Duration, Timestamp, Uuid};
use bebop_lua::LuaRuntime;
use bebopc::model::Value;
use support::{compile, diags, export_of};

const RANGE: &str = r#"#decorator(range) {
    targets = FIELD
    param min!: int32
    param max!: int32
    validate [[
        if min >= max then
            error("min must be less than max", self.min.span)
        end
        if max > 100 then warn("large max", self.max.span) end
        if min < 0 then error("negative") end
        if min == 7 then local t = nil; local _ = t.x end
        if min == 8 then error("custom", { start_line = 2, start_col = 5 }) end
        if min == 9 then warn("whole usage", self.span) end
    ]]
}
"#;

fn with_struct(fields: &str) -> String {
    format!("{RANGE}struct S {{\n{fields}}}\n")
}

/// Line 16 is the first line after `struct S {`.
const FIRST: u32 = 17;

#[test]
fn error_and_warn_point_where_lua_says() {
    let c = compile(&with_struct(
        "    @range(min: 5, max: 1)\n    a: int32;\n    @range(min: 1, max: 500)\n    b: int32;\n    @range(min: -1, max: 5)\n    c: int32;\n    @range(min: 8, max: 9)\n    d: int32;\n    @range(min: 9, max: 10)\n    e: int32;\n",
    ));
    let d = diags(&c);
    let expect = |code: &str, line: u32, col: u32, msg: &str| {
        assert!(
            d.iter()
                .any(|x| x.0 == code && x.1 == line && x.2 == col && x.3 == msg),
            "no {code} {line}:{col} {msg:?} in {d:#?}"
        );
    };
    // `self.min.span` is the argument `min: 5`.
    expect("E089", FIRST, 12, "min must be less than max");
    // `self.max.span` is the argument `max: 500`.
    expect("W007", FIRST + 2, 20, "large max");
    // No span: the usage.
    expect("E089", FIRST + 4, 5, "negative");
    // A span table made by Lua code.
    expect("E089", 2, 5, "custom");
    // `self.span` is the usage.
    expect("W007", FIRST + 8, 5, "whole usage");
    assert_eq!(d.len(), 5, "{d:#?}");
    // The error span covers the argument; the usage span covers `@range(...)`.
    let e = c
        .errors()
        .find(|e| e.message.starts_with("min must"))
        .unwrap();
    assert_eq!(c.sources.slice(e.span), "min: 5");
    let w = c.warnings().find(|e| e.message == "whole usage").unwrap();
    assert_eq!(c.sources.slice(w.span), "@range(min: 9, max: 10)");
}

#[test]
fn runtime_errors_point_at_the_line_of_the_block() {
    let c = compile(&with_struct("    @range(min: 7, max: 9)\n    a: int32;\n"));
    let d = diags(&c);
    assert_eq!(d.len(), 1, "{d:#?}");
    // Line 11 of the file holds `if min == 7 then local t = nil; local _ = t.x end`.
    assert_eq!((d[0].0.as_str(), d[0].1, d[0].2), ("E089", 11, 9), "{d:#?}");
    assert!(
        d[0].3.contains("attempt to index a nil value (local 't')"),
        "{}",
        d[0].3
    );
    assert!(
        d[0].3.contains("validate block of decorator 'range'"),
        "{}",
        d[0].3
    );
    assert!(d[0].3.contains("field 'a' at test.bop:17:5"), "{}", d[0].3);
    let e = &c.diagnostics[0];
    assert_eq!(
        c.sources.slice(e.span),
        "if min == 7 then local t = nil; local _ = t.x end"
    );
}

#[test]
fn syntax_errors_point_into_the_block() {
    let schema = "#decorator(bad) {\n    targets = FIELD\n    validate [[\n        local x = 1\n        if x ==\n    ]]\n}\nstruct S {\n    @bad\n    a: int32;\n}\n";
    let d = diags(&compile(schema));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].0, "E089");
    assert!(
        d[0].3
            .starts_with("syntax error in the validate block of decorator 'bad'"),
        "{}",
        d[0].3
    );
    assert!(!d[0].3.contains("decorator:"), "{}", d[0].3);
    assert!(d[0].1 >= 5 && d[0].1 <= 6, "{d:#?}");

    let schema = "#decorator(bad) {\n    targets = FIELD\n    export [[\n        return { a = function() \n    ]]\n}\nstruct S {\n    @bad\n    a: int32;\n}\n";
    let d = diags(&compile(schema));
    // "'end' expected (to close 'function' at line 4)": the line is the file's.
    assert!(d[0].3.contains("at line 4)"), "{d:#?}");
}

#[test]
fn parameters_arrive_with_their_types() {
    let schema = r#"
#decorator(types) {
    targets = FIELD
    param i!: int32
    param big!: uint64
    param f!: float64
    param s!: string
    param b!: bool
    param u!: uuid
    param t!: timestamp
    param d!: duration
    param ty?: type
    param dflt?: int32 = 42
    param none?: string
    validate [[
        if math.type(i) ~= "integer" or i ~= -3 then error("i " .. tostring(i)) end
        if math.type(big) ~= "float" or big ~= 18446744073709551615 then error("big " .. tostring(big)) end
        if math.type(f) ~= "float" or f ~= 2.0 then error("f " .. tostring(f)) end
        if s ~= "hi" or b ~= true then error("s/b") end
        if tostring(u) ~= "550e8400-e29b-41d4-a716-446655440000" then error("u " .. tostring(u)) end
        if tostring(t) ~= "2024-01-15T10:30:00.5+05:00" or t.offset_ms ~= 18000000 then error("t " .. tostring(t)) end
        if tostring(d) ~= "5400s" or d.seconds ~= 5400 or d.total_seconds ~= 5400.0 then error("d " .. tostring(d)) end
        if "id " .. u ~= "id 550e8400-e29b-41d4-a716-446655440000" then error("concat") end
        if ty ~= nil or dflt ~= 42 or none ~= nil then error("optional") end
        if self.none.span.start_line ~= self.span.start_line then error("missing argument span") end
    ]]
    export [[
        return { i = i, f = f, s = s, b = b, u = u, t = t, d = d, dflt = dflt }
    ]]
}
struct S {
    @types(i: -3, big: 18446744073709551615, f: 2.0, s: "hi", b: true,
           u: "550e8400-e29b-41d4-a716-446655440000", t: "2024-01-15T10:30:00.5+05:00", d: "1h30m")
    a: int32;
}
"#;
    let c = compile(schema);
    assert!(!c.has_errors(), "{}", c.render_terminal(false));
    let mut got = export_of(&c, "S.a#0");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let s = |v: &str| Value::String {
        value: v.to_string(),
        raw: None,
    };
    assert_eq!(
        got,
        vec![
            ("b".to_string(), Value::Bool(true)),
            (
                "d".to_string(),
                Value::Duration(Duration::new(5400, 0).unwrap())
            ),
            ("dflt".to_string(), Value::Int(42)),
            ("f".to_string(), Value::Float(2.0)),
            ("i".to_string(), Value::Int(-3)),
            ("s".to_string(), s("hi")),
            (
                "t".to_string(),
                Value::Timestamp(Timestamp::new(1_705_296_600, 500_000_000, 18_000_000).unwrap())
            ),
            (
                "u".to_string(),
                Value::Uuid(Uuid::parse("550e8400-e29b-41d4-a716-446655440000").unwrap())
            ),
        ]
    );
}

#[test]
fn the_target_table_describes_the_element() {
    let schema = r#"package p;
#decorator(probe) {
    targets = ALL
    param want!: string
    validate [[
        local parts = {}
        for _, k in ipairs({ "kind", "name", "fqn", "def_kind", "parent_kind" }) do
            parts[#parts + 1] = k .. "=" .. tostring(target[k])
        end
        local got = table.concat(parts, " ")
        if got ~= want then error(got) end
    ]]
    export [[ return { kind = target.kind } ]]
}
@probe(want: "kind=definition name=S fqn=p.S def_kind=struct parent_kind=nil")
struct S {
    @probe(want: "kind=field name=x fqn=nil def_kind=nil parent_kind=struct")
    x: int32;
}
@probe(want: "kind=definition name=M fqn=p.M def_kind=message parent_kind=nil")
message M {
    @probe(want: "kind=field name=y fqn=nil def_kind=nil parent_kind=message")
    y(1): int32;
}
@probe(want: "kind=definition name=E fqn=p.E def_kind=enum parent_kind=nil")
enum E {
    @probe(want: "kind=enum_member name=A fqn=nil def_kind=nil parent_kind=enum")
    A = 0;
}
union U {
    @probe(want: "kind=branch name=B fqn=nil def_kind=nil parent_kind=union")
    B(1): S;
}
service Svc {
    @probe(want: "kind=method name=Get fqn=nil def_kind=nil parent_kind=service")
    Get(S): S;
}
"#;
    let c = compile(schema);
    assert!(!c.has_errors(), "{}", c.render_terminal(false));
    assert_eq!(
        export_of(&c, "p.E.A#0"),
        vec![(
            "kind".to_string(),
            Value::String {
                value: "enum_member".into(),
                raw: None
            }
        )]
    );
}

#[test]
fn export_tables_must_hold_plain_values() {
    for (body, needle) in [
        ("return 5", "must return a table, but returned a integer"),
        ("return { [1] = 'x' }", "integer key; keys must be strings"),
        ("return { nested = {} }", "returned a table for 'nested'"),
        ("return { f = print }", "returned a function for 'f'"),
        ("return { bad = '\\xff' }", "not valid UTF-8"),
    ] {
        let schema = format!(
            "#decorator(d) {{ targets = FIELD export [[ {body} ]] }}\nstruct S {{ @d x: int32; }}\n"
        );
        let d = diags(&compile(&schema));
        assert!(
            d.len() == 1
                && d[0].0 == "E089"
                && d[0].3.contains(needle)
                && d[0].3.contains("decorator 'd'"),
            "{body}: {d:#?}"
        );
    }
    // Numbers keep their Lua subtype; strings that look like numbers stay strings.
    let c = compile(
        "#decorator(d) { targets = FIELD export [[ return { i = 3, f = 3.0, n = '12', no = false } ]] }
         struct S { @d x: int32; }",
    );
    let mut got = export_of(&c, "S.x#0");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            ("f".to_string(), Value::Float(3.0)),
            ("i".to_string(), Value::Int(3)),
            (
                "n".to_string(),
                Value::String {
                    value: "12".into(),
                    raw: None
                }
            ),
            ("no".to_string(), Value::Bool(false)),
        ]
    );
    // An empty table exports nothing.
    let c = compile(
        "#decorator(d) { targets = FIELD export [[ return {} ]] } struct S { @d x: int32; }",
    );
    assert!(export_of(&c, "S.x#0").is_empty());
}

#[test]
fn export_order_is_stable_and_follows_the_reference_map_beyond_seven_keys() {
    let keys: Vec<String> = (0..12).map(|i| format!("key_{i}")).collect();
    let table = keys
        .iter()
        .map(|k| format!("{k} = 1"))
        .collect::<Vec<_>>()
        .join(", ");
    let schema = format!(
        "#decorator(d) {{ targets = FIELD export [[ return {{ {table} }} ]] }}\nstruct S {{ @d x: int32; @d y: int32; }}\n"
    );
    let a: Vec<String> = export_of(&compile(&schema), "S.x#0")
        .into_iter()
        .map(|e| e.0)
        .collect();
    let b: Vec<String> = export_of(&compile(&schema), "S.y#0")
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(a, b);
    let mut sorted = a.clone();
    sorted.sort();
    let mut expected = keys.clone();
    expected.sort();
    assert_eq!(sorted, expected);
}

#[test]
fn decorators_without_blocks_cost_nothing_and_limits_are_configurable() {
    let c = compile("#decorator(plain) { targets = FIELD } struct S { @plain x: int32; }");
    assert!(!c.has_errors());
    let rt = LuaRuntime::new()
        .instruction_limit(1234)
        .memory_limit(2 << 20);
    assert_eq!(rt.limits().instructions, 1234);
    assert_eq!(rt.limits().memory, 2 << 20);
    let c = support::compile_with(
        rt,
        "#decorator(d) { targets = FIELD validate [[ for i = 1, 100000 do end ]] } struct S { @d x: int32; }",
    );
    let d = diags(&c);
    assert!(
        d.iter()
            .any(|e| e.3.contains("more than 1234 Lua instructions")),
        "{d:#?}"
    );
}

#[test]
fn failing_validations_modelled_on_the_fixture() {
    let Some(conformance) = support::conformance() else {
        return;
    };
    let fixture = std::fs::read_to_string(
        conformance.join("reference-fixtures/valid/dec_validate_export.bop"),
    )
    .expect("fixture");
    let decorators = &fixture[..fixture.find("struct Product").expect("struct Product")];
    let base_line = decorators.lines().count() as u32;
    let schema = format!(
        "{decorators}struct Bad {{\n    @range(min: 10, max: 5)\n    a: int32;\n    @indexed(key: \"bogus\")\n    b: int32;\n    @computed(formula: \"\")\n    c: int32;\n    @indexed(key: \"name\", unique: true)\n    d: int32;\n}}\n"
    );
    let d = diags(&compile(&schema));
    let usage = |n: u32| base_line + 2 + 2 * n;
    assert_eq!(
        d,
        vec![
            (
                "E089".to_string(),
                usage(0),
                5,
                "min must be less than max".to_string()
            ),
            (
                "E089".to_string(),
                usage(1),
                5,
                "invalid index key: bogus".to_string()
            ),
            (
                "E089".to_string(),
                usage(2),
                5,
                "formula cannot be empty".to_string()
            ),
        ]
    );
}

#[test]
fn library_errors_are_strings_with_the_callers_position() {
    let schema = "#decorator(d) {\n    targets = FIELD\n    validate [[\n        local ok, e = pcall(string.find, 'x', '[a')\n        if ok or e ~= \"malformed pattern (missing ']')\" then error('direct: ' .. tostring(e)) end\n        local ok2, e2 = pcall(function() local r = ('x'):find('[a') return r end)\n        if ok2 or type(e2) ~= 'string' or not e2:find(\"^decorator:4: malformed\") then error('nested: ' .. tostring(e2)) end\n        local ok3, e3 = pcall(bit.band, 'x', 1)\n        if ok3 or type(e3) ~= 'string' then error('bit: ' .. tostring(e3)) end\n        local ok4, e4 = pcall(function() ('abc'):gsub('%w', function() local x = nil; x.y = 1 end) end)\n        if ok4 or type(e4) ~= 'string' or not e4:find('^decorator:8: attempt to index') then error('callback: ' .. tostring(e4)) end\n        table.insert({}, 5, 1)\n    ]]\n}\nstruct S {\n    @d\n    a: int32;\n}\n";
    let d = diags(&compile(schema));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].0.as_str(), d[0].1), ("E089", 12), "{d:#?}");
    assert!(
        d[0].3
            .ends_with("bad argument #2 to 'insert' (position out of bounds)"),
        "{}",
        d[0].3
    );
}
