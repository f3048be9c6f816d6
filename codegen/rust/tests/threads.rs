//! Big schemas are formatted on several threads: the output is the same, byte for byte, as
//! on one thread, for every kind of definition, in packages and with owned types.

mod common;

use bebop_codegen_rust::Generator;

/// A schema of `n` definitions of every kind, in two packages' worth of names.
fn schema(n: usize) -> String {
    let mut out = String::from("edition = \"2026\"\npackage big.scale\n\n");
    for i in 0..n {
        match i % 6 {
            0 => out.push_str(&format!(
                "/// Enum {i}.\nenum E{i} : uint16 {{ Z = 0; A = 1; B = 2; }}\n"
            )),
            1 => out.push_str(&format!(
                "/// Struct {i}.\nstruct S{i} {{ a: int32; b: string; c: float64[4]; d: E{}; }}\n",
                i - 1
            )),
            2 => out.push_str(&format!(
                "message M{i} {{ a(1): S{}; b(2): map[string, uint64]; c(3): uuid[]; }}\n",
                i - 1
            )),
            3 => out.push_str(&format!(
                "union U{i} {{ A(1): {{ x: M{}; }}; B(2): {{ y: string; }}; }}\n",
                i - 1
            )),
            4 => out.push_str(&format!(
                "service Svc{i} {{ Get(M{}): S{}; Watch(S{}): stream U{}; }}\n",
                i - 2,
                i - 3,
                i - 3,
                i - 1
            )),
            _ => out.push_str(&format!("const int64 K{i} = {i};\n")),
        }
    }
    out
}

#[test]
fn the_output_does_not_depend_on_the_number_of_threads() {
    let text = schema(240);
    let request = common::request_for("big.bop", &text);
    let generate = |threads: usize| {
        let code = Generator::new()
            .owned_types(true)
            .async_rpc("::bebop_rpc", None::<&str>)
            .rustfmt(false)
            .threads(threads)
            .generate_request(&request)
            .expect("generates");
        code.files[0].content.clone()
    };
    let one = generate(1);
    assert!(one.lines().count() > 20_000, "a big file");
    assert!(generate(3) == one, "three threads differ from one");
}
