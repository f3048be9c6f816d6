//! `table.insert`, `table.remove` and `table.move`, whose loops count.
//!
//! The standard versions shift or copy elements in a C loop that runs no VM instruction, so
//! `table.move({}, 1, math.maxinteger - 1, 2)`, or `table.insert` on a table whose `__len`
//! claims a huge length, would run for ages out of the instruction limit's reach. These
//! versions behave the same (same checks, same messages, metamethods honoured) but charge
//! [`INSTRUCTIONS_PER_ELEMENT`] instructions per element moved (a get and a set through the
//! host cost about that many VM instructions).

use mlua::{Lua, MultiValue, Table, Value};

use crate::patterns::{bad_argument, check_integer, type_name};
use crate::sandbox::{INSTRUCTION_LIMIT_ERROR, RunState};

/// Instructions charged per element moved.
pub(crate) const INSTRUCTIONS_PER_ELEMENT: u64 = 8;

/// Charges one moved element.
fn charge(lua: &Lua) -> mlua::Result<()> {
    let mut state = lua
        .app_data_mut::<RunState>()
        .ok_or_else(|| mlua::Error::runtime(INSTRUCTION_LIMIT_ERROR))?;
    state.charge(INSTRUCTIONS_PER_ELEMENT, None)
}

fn arg(args: &MultiValue, i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}

fn check_table(args: &MultiValue, i: usize, fname: &str) -> mlua::Result<Table> {
    match args.get(i) {
        Some(Value::Table(t)) => Ok(t.clone()),
        Some(other) => Err(bad_argument(
            i + 1,
            fname,
            &format!("table expected, got {}", type_name(other)),
        )),
        None => Err(bad_argument(i + 1, fname, "table expected, got no value")),
    }
}

/// `table.insert(t, [pos,] value)`.
fn insert(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    let t = check_table(&args, 0, "insert")?;
    let end = t.len()?.wrapping_add(1);
    match args.len() {
        2 => t.set(end, arg(&args, 1)),
        3 => {
            let pos = check_integer(lua, &arg(&args, 1), 2, "insert")?;
            if (pos as u64).wrapping_sub(1) >= end as u64 {
                return Err(bad_argument(2, "insert", "position out of bounds"));
            }
            let mut i = end;
            while i > pos {
                charge(lua)?;
                t.set(i, t.get::<Value>(i - 1)?)?;
                i -= 1;
            }
            t.set(pos, arg(&args, 2))
        }
        _ => Err(mlua::Error::runtime(
            "wrong number of arguments to 'insert'",
        )),
    }
}

/// `table.remove(t [, pos])`.
fn remove(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    let t = check_table(&args, 0, "remove")?;
    let size = t.len()?;
    let mut pos = match arg(&args, 1) {
        Value::Nil => size,
        v => check_integer(lua, &v, 2, "remove")?,
    };
    if pos != size && (pos as u64).wrapping_sub(1) > size as u64 {
        return Err(bad_argument(2, "remove", "position out of bounds"));
    }
    let result = t.get::<Value>(pos)?;
    while pos < size {
        charge(lua)?;
        t.set(pos, t.get::<Value>(pos + 1)?)?;
        pos += 1;
    }
    t.set(pos, Value::Nil)?;
    Ok(result)
}

/// `table.move(a1, f, e, t [, a2])`.
fn move_elements(lua: &Lua, args: MultiValue) -> mlua::Result<Table> {
    let a1 = check_table(&args, 0, "move")?;
    let f = check_integer(lua, &arg(&args, 1), 2, "move")?;
    let e = check_integer(lua, &arg(&args, 2), 3, "move")?;
    let t = check_integer(lua, &arg(&args, 3), 4, "move")?;
    let given = !matches!(arg(&args, 4), Value::Nil);
    let dest = if given {
        check_table(&args, 4, "move")?
    } else {
        a1.clone()
    };
    if e >= f {
        if !(f > 0 || e < i64::MAX + f) {
            return Err(bad_argument(3, "move", "too many elements to move"));
        }
        let n = e - f + 1;
        if t > i64::MAX - n + 1 {
            return Err(bad_argument(4, "move", "destination wrap around"));
        }
        if t > e || t <= f || (given && !a1.equals(&dest)?) {
            for i in 0..n {
                charge(lua)?;
                dest.set(t + i, a1.get::<Value>(f + i)?)?;
            }
        } else {
            for i in (0..n).rev() {
                charge(lua)?;
                dest.set(t + i, a1.get::<Value>(f + i)?)?;
            }
        }
    }
    Ok(dest)
}

/// Replaces the three functions of the `table` table.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let table: Table = lua.globals().raw_get("table")?;
    table.raw_set("insert", lua.create_function(insert)?)?;
    table.raw_set("remove", lua.create_function(remove)?)?;
    table.raw_set("move", lua.create_function(move_elements)?)?;
    Ok(())
}
