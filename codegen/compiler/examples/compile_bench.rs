//! Measures compiling a generated schema with 2,000 definitions of every kind end to end:
//! parsing, resolution, validation, lowering to a DescriptorSet and encoding it.
//!
//! ```text
//! cargo run --release -p bebopc --example compile_bench [DEFINITIONS] [ITERATIONS]
//! cargo run --release -p bebopc --example compile_bench -- --write schema.bop
//! ```
//!
//! Prints the time per compilation (minimum, median) and the process's peak resident memory
//! (`VmHWM` from `/proc/self/status`, Linux only).

use std::time::{Duration, Instant};

use bebopc::Compiler;
use bebopc::descriptor::DescriptorOptions;

/// A schema of `n` top-level definitions cycling through every kind, each using earlier
/// ones, with doc comments, decorators, nested and inline definitions.
fn schema(n: usize) -> String {
    let mut s = String::from(
        "edition = \"2026\"\npackage bench;\nimport \"bebop/decorators.bop\"\n\n\
         #decorator(tag) {\n    targets = FIELD | STRUCT\n    param name!: string\n}\n\n",
    );
    // The decorator definition above is one of the `n`.
    for i in 0..n.saturating_sub(1) {
        let doc = format!("/// Definition number {i}.\n");
        match i % 8 {
            0 => s.push_str(&format!(
                "@flags\n{doc}enum E{i} : uint32 {{ NONE = 0; A = 1; B = 2; C = 4; AB = A | B; }}\n"
            )),
            1 => s.push_str(&format!(
                "@tag(name: \"s{i}\")\n{doc}struct S{i} {{ a: int32; b: E{}; c: float64[4]; d: uuid; e: timestamp; }}\n",
                i - 1
            )),
            2 => s.push_str(&format!(
                "{doc}message M{i} {{ s(1): S{}; m(2): map[string, int64]; @deprecated l(3): string[]; n(4): M{i}; }}\n",
                i - 1
            )),
            3 => s.push_str(&format!(
                "{doc}union U{i} {{ A(1): S{}; B(2): {{ x: string; y: byte[]; }}; C(3): message {{ z(1): duration; }}; }}\n",
                i - 2
            )),
            4 => s.push_str(&format!(
                "{doc}service Svc{i} {{ Get(M{}): S{}; Watch(M{}): stream U{}; Upload(stream S{}): M{}; }}\n",
                i - 2,
                i - 3,
                i - 2,
                i - 1,
                i - 3,
                i - 2
            )),
            5 => s.push_str(&format!("{doc}const int64 K{i} = {i};\n")),
            6 => s.push_str(&format!(
                "mut struct N{i} {{ e: E{}[]; s: S{}; }}\n",
                i - 6,
                i - 5
            )),
            _ => s.push_str(&format!(
                "{doc}message Outer{i} {{ struct Inner {{ v: int16; }} inner(1): Inner; text(2): string; }}\n"
            )),
        }
    }
    s
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--write") {
        let path = args.get(1).map(String::as_str).unwrap_or("bench.bop");
        let n = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2000);
        if let Err(e) = std::fs::write(path, schema(n)) {
            eprintln!("cannot write {path}: {e}");
            std::process::exit(1);
        }
        return;
    }
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let iterations: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let text = schema(n);
    let before = peak_rss_kib();
    let mut times: Vec<Duration> = Vec::with_capacity(iterations);
    let mut bytes = 0;
    let mut definitions = 0;
    let mut top_level = 0;
    for _ in 0..iterations {
        let start = Instant::now();
        let result = Compiler::new().compile_source("bench.bop", &text);
        let Some(set) = result.descriptor_set(&DescriptorOptions::default()) else {
            eprintln!("{}", result.render_terminal(false));
            std::process::exit(1);
        };
        let encoded = match set.to_vec() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("encoding failed: {e}");
                std::process::exit(1);
            }
        };
        times.push(start.elapsed());
        bytes = encoded.len();
        definitions = result.model.as_ref().map_or(0, |m| m.definitions.len());
        top_level = result
            .model
            .as_ref()
            .and_then(|m| m.schemas.first())
            .map_or(0, |s| s.definitions.len());
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "schema: {top_level} top-level definitions ({definitions} with nested and inline ones), \
         {} bytes of text",
        text.len()
    );
    println!("descriptor set: {bytes} bytes");
    println!(
        "compile + lower + encode: min {:.2} ms, median {:.2} ms over {iterations} runs",
        times[0].as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    );
    match (before, peak_rss_kib()) {
        (Some(b), Some(a)) => println!("peak resident memory: {a} KiB (before compiling: {b} KiB)"),
        _ => println!("peak resident memory: unavailable on this system"),
    }
}
