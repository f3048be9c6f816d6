//! A command-line client of `kv-server`, through the `AsyncClient` generated from
//! `schemas/kv.bop`.
//!
//! ```text
//! cargo run -p bebop-examples --bin kv-client -- --token s3cret put greeting hello
//! cargo run -p bebop-examples --bin kv-client -- get greeting
//! cargo run -p bebop-examples --bin kv-client -- watch --from 0 --count 10
//! printf 'a=1\nb=2\n' | cargo run -p bebop-examples --bin kv-client -- --token s3cret load
//! ```
//!
//! Options before the command: `--connect ADDR` (default `127.0.0.1:7700`) or `--unix PATH`,
//! `--token T`, `--timeout MS` (the call's deadline, default 5000; `watch` has none).
//! Commands: `get KEY`, `put KEY VALUE`, `delete KEY`, `load` (`key=value` lines from
//! standard input, streamed), `watch [--prefix P] [--from REVISION] [--count N]`.
//! A failed call prints its status and exits with 1.

use std::time::Duration;

use bebop_rpc::{CallOptions, Client, Status};
use futures_util::StreamExt;
use tokio::io::AsyncBufReadExt;

#[allow(dead_code)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::kv::key_value as svc;
use schema::owned::kv::{DeleteRequest, GetRequest, PutRequest, WatchRequest};

const USAGE: &str = "usage: kv-client [--connect ADDR | --unix PATH] [--token T] [--timeout MS] \
                     (get KEY | put KEY VALUE | delete KEY | load | watch [--prefix P] [--from REV] [--count N])";

async fn run(args: Vec<String>) -> Result<(), String> {
    let mut connect = "127.0.0.1:7700".to_string();
    let mut unix = None;
    let mut token = None;
    let mut timeout = Duration::from_millis(5000);
    let mut rest = args.into_iter().peekable();
    while let Some(flag) = rest.peek().filter(|a| a.starts_with("--")).cloned() {
        rest.next();
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--connect" => connect = value,
            "--unix" => unix = Some(value),
            "--token" => token = Some(value),
            "--timeout" => {
                timeout = Duration::from_millis(
                    value
                        .parse()
                        .map_err(|_| format!("bad --timeout {value}"))?,
                )
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let client = match &unix {
        Some(path) => Client::connect_unix(path).await,
        None => Client::connect_tcp(&connect).await,
    }
    .map_err(|e| {
        format!(
            "cannot connect to {}: {e}",
            unix.as_deref().unwrap_or(&connect)
        )
    })?;
    let kv = svc::AsyncClient::new(client);
    let options = || {
        let o = CallOptions::new();
        match &token {
            Some(t) => o.metadata("authorization", format!("Bearer {t}")),
            None => o,
        }
    };
    let status = |s: Status| s.to_string();
    let command = rest.next().ok_or(USAGE)?;
    let args: Vec<String> = rest.collect();
    match (command.as_str(), args.as_slice()) {
        ("get", [key]) => {
            let r = kv
                .get(&GetRequest { key: key.clone() }, options().timeout(timeout))
                .await
                .map_err(status)?;
            match r.into_inner().entry {
                Some(e) => println!("{} = {} (revision {})", e.key, e.value, e.revision),
                None => println!("{key} has no value"),
            }
        }
        ("put", [key, value]) => {
            let r = kv
                .put(
                    &PutRequest {
                        key: key.clone(),
                        value: value.clone(),
                    },
                    options().timeout(timeout),
                )
                .await
                .map_err(status)?;
            println!("revision {}", r.into_inner().revision);
        }
        ("delete", [key]) => {
            let r = kv
                .delete(
                    &DeleteRequest { key: key.clone() },
                    options().timeout(timeout),
                )
                .await
                .map_err(status)?;
            println!("revision {}", r.into_inner().revision);
        }
        ("load", []) => {
            let lines = tokio_stream::wrappers::LinesStream::new(
                tokio::io::BufReader::new(tokio::io::stdin()).lines(),
            );
            let puts = lines.filter_map(|line| async move {
                let line = line.ok()?;
                let (key, value) = line.split_once('=')?;
                Some(PutRequest {
                    key: key.trim().to_string(),
                    value: value.trim().to_string(),
                })
            });
            let r = kv
                .load(puts, options().timeout(timeout))
                .await
                .map_err(status)?;
            let w = r.into_inner();
            println!("loaded {} keys, revision {}", w.count, w.revision);
        }
        ("watch", flags) => {
            let (mut prefix, mut from, mut count) = (String::new(), 0u64, u64::MAX);
            let mut it = flags.iter();
            while let Some(flag) = it.next() {
                let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
                let number = || {
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("bad {flag} {value}"))
                };
                match flag.as_str() {
                    "--prefix" => prefix = value.clone(),
                    "--from" => from = number()?,
                    "--count" => count = number()?,
                    other => return Err(format!("unknown watch option {other}")),
                }
            }
            let mut events = kv
                .watch(&WatchRequest { prefix }, options().cursor(from))
                .await
                .map_err(status)?;
            let mut seen = 0;
            while seen < count {
                let Some((event, cursor)) = events.message_with_cursor().await.map_err(status)?
                else {
                    break;
                };
                let e = event.entry;
                println!(
                    "{:?} {} = {} (revision {})",
                    event.change,
                    e.key,
                    e.value,
                    cursor.unwrap_or(e.revision)
                );
                seen += 1;
            }
        }
        _ => return Err(USAGE.to_string()),
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()).await {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
