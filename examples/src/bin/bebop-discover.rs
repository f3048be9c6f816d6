//! Lists what a Bebop RPC server serves, from its discovery response (method 0) alone: no
//! schema, no `bebopc`.
//!
//! ```text
//! cargo run -p bebop-examples --bin bebop-discover -- http://127.0.0.1:8080
//! cargo run -p bebop-examples --bin bebop-discover -- --http2 http://127.0.0.1:8080
//! cargo run -p bebop-examples --bin bebop-discover -- 127.0.0.1:7700
//! ```
//!
//! The argument is an HTTP base URL (`http://host:port`, with a path prefix if the service
//! is mounted under one; `GET`-able as `/_bebop/discovery`) or the `host:port` of the binary
//! transport over TCP. Options: `--http2` (h2c with prior knowledge), `--timeout MS` (the
//! call's deadline, default 5000). Prints one block per service:
//!
//! ```text
//! service Lab: 2 methods
//!   0x0c7a1e95  unary          Echo(type.bebop.sh/lab.Note) -> type.bebop.sh/lab.Note
//!   0x5b8d2f3a  server-stream  Samples(type.bebop.sh/lab.Settings) -> stream type.bebop.sh/lab.Sample
//! ```
//!
//! A failed call prints its status and exits with 1.

use std::time::Duration;

use bebop_rpc::{CallOptions, Client, RawMessage};
use bebop_runtime::Decode;
use bebop_runtime::rpc::{DiscoveryResponse, Empty, MethodType};

const USAGE: &str =
    "usage: bebop-discover [--http2] [--timeout MS] (http://HOST:PORT[/PREFIX] | HOST:PORT)";

fn kind_name(kind: MethodType) -> &'static str {
    match kind {
        MethodType::Unary => "unary",
        MethodType::ServerStream => "server-stream",
        MethodType::ClientStream => "client-stream",
        MethodType::DuplexStream => "duplex",
    }
}

/// The listing of `response`, as printed.
fn listing(response: &DiscoveryResponse<'_>) -> String {
    let mut out = String::new();
    if response.services.is_empty() {
        out.push_str("no services\n");
    }
    for service in response.services.iter() {
        let n = service.methods.len();
        out.push_str(&format!(
            "service {}: {n} method{}\n",
            service.name,
            if n == 1 { "" } else { "s" }
        ));
        for m in service.methods.iter() {
            let (stream_in, stream_out) = match m.method_type {
                MethodType::Unary => ("", ""),
                MethodType::ServerStream => ("", "stream "),
                MethodType::ClientStream => ("stream ", ""),
                MethodType::DuplexStream => ("stream ", "stream "),
            };
            out.push_str(&format!(
                "  {:#010x}  {:<13}  {}({stream_in}{}) -> {stream_out}{}\n",
                m.method_id,
                kind_name(m.method_type),
                m.name,
                m.request_type_url,
                m.response_type_url,
            ));
        }
    }
    out
}

async fn run(args: Vec<String>) -> Result<String, String> {
    let mut http2 = false;
    let mut timeout = Duration::from_millis(5000);
    let mut target = None;
    let mut rest = args.into_iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--http2" => http2 = true,
            "--timeout" => {
                let value = rest.next().ok_or("--timeout needs a value")?;
                let ms = value
                    .parse()
                    .map_err(|_| format!("bad --timeout {value}"))?;
                timeout = Duration::from_millis(ms);
            }
            "-h" | "--help" => return Ok(format!("{USAGE}\n")),
            other if other.starts_with("--") => {
                return Err(format!("unknown option {other}\n{USAGE}"));
            }
            other if target.is_none() => target = Some(other.to_owned()),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let target = target.ok_or(USAGE)?;
    let client = if target.starts_with("http://") || target.starts_with("https://") {
        let mut builder = bebop_rpc_http::HttpConnector::builder(&target);
        if http2 {
            builder = builder.http2_prior_knowledge();
        }
        Client::over(builder.build().map_err(|s| s.to_string())?)
    } else {
        Client::connect_tcp(&target)
            .await
            .map_err(|e| format!("connecting to {target}: {e}"))?
    };
    let raw = client
        .unary::<Empty, RawMessage>(0, &Empty {}, CallOptions::new().timeout(timeout))
        .await
        .map_err(|s| format!("discovery failed: {s}"))?
        .into_inner();
    let response = DiscoveryResponse::from_bytes(&raw.0)
        .map_err(|e| format!("the discovery response does not decode: {e}"))?;
    Ok(listing(&response))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    match run(std::env::args().skip(1).collect()).await {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("bebop-discover: {e}");
            std::process::exit(1);
        }
    }
}
