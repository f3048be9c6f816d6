//! How the generator scales: compiles a schema of `N` definitions of every kind (made by a
//! seeded generator, so every run sees the same schema), generates Rust for it without
//! rustfmt, and prints the time of each step and the peak memory of the process.
//!
//! ```text
//! cargo run --release -p bebop-codegen-rust --example scale -- [N] [SEED]
//! ```
//!
//! With `BEBOP_SCALE_OUT=FILE` the generated code is also written to `FILE` (to compare the
//! output of two versions of the generator).

use std::time::Instant;

use bebop_codegen_rust::Generator;

/// A small xorshift generator: the schema depends on the seed only.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `n` definitions: enums, structs, messages, unions, services, consts, each field of a
/// scalar, string, array, map or an earlier definition.
fn schema(n: usize, seed: u64) -> String {
    let mut rng = Rng(seed | 1);
    let mut out = String::from("edition = \"2026\"\npackage scale\n\n");
    let mut records: Vec<String> = Vec::new();
    let mut enums: Vec<String> = Vec::new();
    let scalars = [
        "int32",
        "uint64",
        "float32",
        "bool",
        "string",
        "uuid",
        "timestamp",
        "bfloat16",
    ];
    for i in 0..n {
        let ty = |rng: &mut Rng| -> String {
            match rng.below(6) {
                0 if !records.is_empty() => records[rng.below(records.len())].clone(),
                1 if !enums.is_empty() => enums[rng.below(enums.len())].clone(),
                2 => format!("{}[]", scalars[rng.below(scalars.len())]),
                3 => format!("map[string, {}]", scalars[rng.below(4)]),
                _ => scalars[rng.below(scalars.len())].to_string(),
            }
        };
        match i % 6 {
            0 => {
                out.push_str(&format!(
                    "/// Enum {i}.\nenum E{i} : uint16 {{ Z = 0; A = 1; B = 2; }}\n"
                ));
                enums.push(format!("E{i}"));
            }
            1 => {
                let fields: String = (0..1 + rng.below(6))
                    .map(|f| format!(" f{f}: {};", ty(&mut rng)))
                    .collect();
                out.push_str(&format!("/// Struct {i}.\nstruct S{i} {{{fields} }}\n"));
                records.push(format!("S{i}"));
            }
            2 => {
                let fields: String = (0..1 + rng.below(6))
                    .map(|f| format!(" f{f}({}): {};", f + 1, ty(&mut rng)))
                    .collect();
                out.push_str(&format!("/// Message {i}.\nmessage M{i} {{{fields} }}\n"));
                records.push(format!("M{i}"));
            }
            3 => {
                out.push_str(&format!(
                    "union U{i} {{ A(1): {{ x: {}; }}; B(2): {{ y: string; }}; }}\n",
                    ty(&mut rng)
                ));
                records.push(format!("U{i}"));
            }
            4 if records.len() >= 2 => {
                let a = records[rng.below(records.len())].clone();
                let b = records[rng.below(records.len())].clone();
                out.push_str(&format!(
                    "service Svc{i} {{ Get(M{}): {b}; Watch({a}): stream {b}; }}\n",
                    i - 2
                ));
            }
            _ => out.push_str(&format!("const int64 K{i} = {};\n", rng.below(1000))),
        }
    }
    out
}

/// The process's peak resident memory, from `/proc/self/status` (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(42);
    let text = schema(n, seed);
    let t = Instant::now();
    let compiled = bebopc::Compiler::new().compile_source("scale.bop", &text);
    let request = compiled
        .code_generator_request(&Default::default(), None, &[])
        .unwrap_or_else(|| {
            for d in compiled.diagnostics.iter().take(5) {
                eprintln!("{}", d.render(&compiled.sources, false));
            }
            panic!("the generated schema does not compile")
        });
    let compile = t.elapsed();
    let after_compile = peak_rss_mib();
    let t = Instant::now();
    let code = Generator::new()
        .owned_types(true)
        .rustfmt(false)
        .generate_request(&request)
        .expect("generates");
    let generate = t.elapsed();
    let lines: usize = code.files.iter().map(|f| f.content.lines().count()).sum();
    if let Some(out) = std::env::var_os("BEBOP_SCALE_OUT") {
        let text: String = code.files.iter().map(|f| f.content.as_str()).collect();
        if let Err(e) = std::fs::write(&out, text) {
            eprintln!("cannot write {}: {e}", std::path::Path::new(&out).display());
        }
    }
    println!(
        "{n} definitions (seed {seed}, {} KiB of schema): compile {:.1} ms, generate {:.1} ms, {lines} lines of Rust; peak memory {:.1} MiB after compiling, {:.1} MiB after generating",
        text.len() / 1024,
        compile.as_secs_f64() * 1e3,
        generate.as_secs_f64() * 1e3,
        after_compile.unwrap_or(f64::NAN),
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}
