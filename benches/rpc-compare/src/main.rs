//! `rpc-compare`: bebop-rpc (over binary TCP, HTTP/1.1, h2c and WebSocket) against tonic
//! on loopback, side by side.
//!
//! ```text
//! cargo run --release -p bebop-rpc-compare            # the full run, about 2 min
//! cargo run -p bebop-rpc-compare -- --quick           # a smoke run of everything
//! ```

use std::process::ExitCode;

use bebop_rpc_compare::{NOTES, Payloads, Settings, run};

fn main() -> ExitCode {
    let mut quick = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--only" => match args.next() {
                Some(text) => only = Some(text),
                None => {
                    eprintln!("rpc-compare: --only needs a text to match");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!(
                    "usage: rpc-compare [--quick] [--only TEXT]\n\n\
                     Benchmarks bebop-rpc (over binary TCP, HTTP/1.1, h2c and WebSocket) against\n\
                     tonic on 127.0.0.1, all in this process.\n\
                     --quick        a few calls of everything, every response checked (smoke test)\n\
                     --only TEXT    only the measurements whose name contains TEXT\n\
                     \x20              (latency, calls/s, stream, PersonSmall, blob, batch)"
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("rpc-compare: unknown argument {other:?} (try --help)");
                return ExitCode::from(2);
            }
        }
    }
    let mut settings = if quick {
        Settings::quick()
    } else {
        Settings::full()
    };
    settings.only = only;
    if !quick && cfg!(debug_assertions) {
        eprintln!(
            "rpc-compare: this is a debug build; for real numbers run \
             `cargo run --release -p bebop-rpc-compare`"
        );
    }
    let (bp, bb, pp, pbb) = Payloads::new().encoded_sizes();
    println!(
        "# bebop-rpc (TCP, HTTP/1.1, h2c, WebSocket) vs tonic on 127.0.0.1 ({} mode, {} build)\n",
        if quick { "quick" } else { "full" },
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!(
        "One tokio multi-thread runtime (2 workers) runs every server and client. Encoded \
         payloads: PersonSmall {bp} B (Bebop) / {pp} B (protobuf), blob {bb} B / {pbb} B. {} \
         rounds per row, the systems' order alternating (A B C D E, E D C B A, ...), each \
         warmed up first.\n\n{NOTES}\n",
        settings.rounds
    );
    let report = run(&settings, &mut |what| eprintln!("measuring {what} ..."));
    match report {
        Ok(report) => {
            print!("{}", report.table());
            println!(
                "\n{} calls and stream items checked in {:.1} s.",
                report.checked,
                report.elapsed.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rpc-compare: {e}");
            ExitCode::FAILURE
        }
    }
}
