//! The host side of the serial demo: a Bebop RPC client talking to the device firmware over
//! its UART.
//!
//! Starts the demo firmware in QEMU (or connects to a QEMU already running) and calls its
//! `Device` service through the client generated from `schemas/device.bop`, over
//! `bebop_core::rpc::link::PacketChannel` (COBS packets with a CRC-32). It discovers the
//! service, calls every method, pulls the cable in the middle of `StreamTelemetry` and
//! resumes from the last cursor, and sends what a bad line or a bad client sends: a call whose
//! deadline has passed, an unknown method, a damaged packet, frames larger than the device's
//! buffer. Then it times `Echo` round trips.
//!
//! ```text
//! demo-host --kernel PATH [--machine lm3s6965evb|microbit] [--check] [--timeout SECS]
//! demo-host --connect 127.0.0.1:PORT [--check]
//! ```
//!
//! With `--check` every step is verified and the program exits non-zero on any failure:
//! `scripts/qemu` runs it so on both machines. `DEMO_TRACE=1` prints every byte written to
//! and read from the line.
#![forbid(unsafe_code)]

mod line;
mod qemu;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bebop_runtime::rpc::link::{PacketChannel, encode_packet, max_packet_len};
use bebop_runtime::rpc::{
    CallHeader, CallOptions, Channel, ClientError, DiscoveryResponse, Empty, Expect, FrameFlags,
    MethodType, RpcError, Status, StatusCode, encode_call_header, encode_frame, parse_frame_exact,
};
use bebop_runtime::{SystemClock, rpc::Clock};
use target_schema::device::bebop::Empty as DeviceEmpty;
use target_schema::device::device::{
    Blob, Config, SensorStatus, Telemetry, TelemetryRequest, device as svc,
};

use crate::line::Line;
use crate::qemu::Qemu;

const USAGE: &str = "\
usage: demo-host --kernel FIRMWARE.elf [--machine lm3s6965evb|microbit] [--qemu PROGRAM]
                 [--check] [--timeout SECONDS] [--echo-calls N]
       demo-host --connect HOST:PORT [--check] [--timeout SECONDS] [--echo-calls N]

  --kernel      the demo firmware to run in QEMU (thumbv7m for lm3s6965evb, thumbv6m for microbit)
  --machine     QEMU machine (default lm3s6965evb)
  --connect     talk to a QEMU started by hand with -serial tcp:HOST:PORT,server=on
  --check       verify every step and exit non-zero on any failure
  --timeout     give up after this many seconds (default 120)
  --echo-calls  Echo round trips timed per payload size (default 200)";

/// The host's buffers: larger than the device's, so that the host can send what the device
/// must refuse.
const HOST_BUF: usize = 4400;
/// Records the telemetry stream is asked for.
const RECORDS: u32 = 30;
/// The record after which the cable is pulled.
const CUT_AFTER: u32 = 10;

pub(crate) struct Args {
    kernel: Option<PathBuf>,
    machine: String,
    qemu: String,
    connect: Option<String>,
    check: bool,
    timeout: Duration,
    echo_calls: u32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        kernel: None,
        machine: "lm3s6965evb".into(),
        qemu: "qemu-system-arm".into(),
        connect: None,
        check: false,
        timeout: Duration::from_secs(120),
        echo_calls: 200,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--kernel" => args.kernel = Some(value("--kernel")?.into()),
            "--machine" => args.machine = value("--machine")?,
            "--qemu" => args.qemu = value("--qemu")?,
            "--connect" => args.connect = Some(value("--connect")?),
            "--check" => args.check = true,
            "--timeout" => {
                let v = value("--timeout")?;
                let secs: u64 = v.parse().map_err(|_| format!("bad --timeout {v:?}"))?;
                args.timeout = Duration::from_secs(secs);
            }
            "--echo-calls" => {
                let v = value("--echo-calls")?;
                args.echo_calls = v.parse().map_err(|_| format!("bad --echo-calls {v:?}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.kernel.is_none() == args.connect.is_none() {
        return Err("give either --kernel or --connect".into());
    }
    if !matches!(args.machine.as_str(), "lm3s6965evb" | "microbit") {
        return Err(format!("unknown machine {:?}", args.machine));
    }
    Ok(args)
}

type DeviceClient = svc::Client<PacketChannel<Line, HOST_BUF>, Vec<u8>>;

/// The checks of one run: each passes or fails with what was seen.
#[derive(Default)]
struct Checks {
    passed: u32,
    failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, name: &str, ok: bool, seen: impl std::fmt::Display) {
        if ok {
            self.passed += 1;
            println!("  ok    {name}");
        } else {
            println!("  FAIL  {name}: {seen}");
            self.failed.push(name.to_string());
        }
    }
}

/// The status a call failed with, or a description of how else it ended.
fn outcome<T: std::fmt::Debug>(result: &Result<T, ClientError>) -> String {
    match result {
        Ok(v) => format!("succeeded: {v:?}"),
        Err(ClientError::Status(s)) => format!("{s}"),
        Err(e) => format!("{e}"),
    }
}

fn code_of<T>(result: &Result<T, ClientError>) -> Option<StatusCode> {
    result
        .as_ref()
        .err()
        .and_then(|e| e.status())
        .map(Status::code)
}

fn now_ms() -> u64 {
    u64::try_from(SystemClock.now().unix_millis()).unwrap_or(0)
}

/// Whether `t` is exactly what the firmware sends as record `t.seq` under configuration
/// version `version`, `label` and temperature offset `offset` (its uptime aside): the
/// firmware's formula, in the same `f32` arithmetic, so equal to the bit.
fn is_expected_record(t: &Telemetry<'_>, version: u32, label: &str, offset: f32) -> bool {
    let seq = t.seq;
    let wobble = (seq % 8) as f32 * 0.125;
    let status = if seq <= 2 {
        SensorStatus::Warming
    } else {
        SensorStatus::Ok
    };
    t.temperature_c == 21.5 + wobble + offset
        && t.humidity_pct == 40.0 + (seq % 5) as f32
        && t.accel_mg == [(seq % 7) as i16 * 3 - 9, 12 - (seq % 5) as i16 * 6, 1000]
        && t.battery_mv == 3300u16.saturating_sub((seq % 1000) as u16)
        && t.status == status
        && t.config_version == version
        && t.label == label
}

/// Calls `Echo` with `data` and checks that the same bytes come back.
fn check_echo(
    k: &mut Checks,
    c: &mut DeviceClient,
    name: &str,
    data: &[u8],
    options: &CallOptions<'_>,
) {
    let back = c.echo(&Blob { data }, options).map(|b| b.data.to_vec());
    k.check(name, back.as_deref() == Ok(data), outcome(&back));
}

/// Sends a call by hand, element by element as raw packets (some damaged on purpose), and
/// returns the status the device answers on `stream_id`.
fn raw_call(c: &mut DeviceClient, packets: &[Vec<u8>], stream_id: u32) -> Result<Status, String> {
    let channel = c.0.channel_mut();
    for p in packets {
        channel
            .get_mut()
            .write_raw(p)
            .map_err(|e| format!("writing: {e}"))?;
    }
    let mut buf = vec![0u8; HOST_BUF];
    loop {
        let n = channel
            .recv(Expect::Frame, &mut buf)
            .map_err(|e| format!("no answer: {e}"))?;
        let frame = parse_frame_exact(&buf[..n], n).map_err(|e| format!("bad frame: {e}"))?;
        if frame.stream_id() != stream_id {
            continue;
        }
        if !frame.flags().contains(FrameFlags::ERROR) {
            return Err("the device answered without an error".into());
        }
        let error: RpcError<'_> = frame.decode().map_err(|e| format!("bad error: {e}"))?;
        return Ok(Status::from_rpc_error(&error));
    }
}

fn packet(element: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; max_packet_len(element.len())];
    let n = encode_packet(element, &mut out).unwrap_or(0);
    out.truncate(n);
    out
}

fn call_header_bytes(method_id: u32) -> Vec<u8> {
    let header = CallHeader {
        method_id: Some(method_id),
        deadline: None,
        metadata: None,
        cursor: None,
    };
    let mut out = vec![0u8; 64];
    let n = encode_call_header(&mut out, &header).unwrap_or(0);
    out.truncate(n);
    out
}

/// Calls per second of `Echo` with `size`-byte payloads over `calls` round trips; checks
/// every answer.
fn time_echo(c: &mut DeviceClient, size: usize, calls: u32) -> Result<f64, String> {
    let data: Vec<u8> = (0..size).map(|i| (i * 7 + 1) as u8).collect();
    let none = CallOptions::new();
    let start = Instant::now();
    for i in 0..calls {
        let back = c
            .echo(&Blob { data: &data }, &none)
            .map_err(|e| format!("echo {i}: {e}"))?;
        if back.data != data.as_slice() {
            return Err(format!("echo {i}: different bytes came back"));
        }
    }
    Ok(f64::from(calls) / start.elapsed().as_secs_f64())
}

/// The whole exchange; returns the checks and the Echo rates.
fn exercise(c: &mut DeviceClient, args: &Args) -> Result<(Checks, Vec<(usize, f64)>), String> {
    let mut k = Checks::default();
    let none = CallOptions::new();

    // The device may still be starting: ask until it answers.
    c.0.channel_mut()
        .get_mut()
        .set_read_timeout(Duration::from_millis(500))
        .map_err(|e| format!("socket: {e}"))?;
    let mut attempts = 0;
    loop {
        attempts += 1;
        match c.get_info(&DeviceEmpty {}, &none) {
            Ok(_) => break,
            Err(ClientError::Channel(_)) if attempts < 20 => continue,
            Err(e) => return Err(format!("the device does not answer: {e}")),
        }
    }
    println!("  the device answered (attempt {attempts})");
    c.0.channel_mut()
        .get_mut()
        .set_read_timeout(Duration::from_secs(5))
        .map_err(|e| format!("socket: {e}"))?;

    println!("\n-- discovery (method 0)");
    let discovery: Result<DiscoveryResponse<'_>, _> = c.0.unary(0, &Empty {}, &none);
    let methods: Vec<(String, u32, MethodType)> = match &discovery {
        Ok(d) => d
            .services
            .iter()
            .flat_map(|s| {
                println!("  service {}", s.name);
                s.methods
                    .iter()
                    .map(|m| {
                        println!(
                            "    {:<16} id {:#010x}  {:?}  {} -> {}",
                            m.name,
                            m.method_id,
                            m.method_type,
                            m.request_type_url,
                            m.response_type_url
                        );
                        (m.name.to_string(), m.method_id, m.method_type)
                    })
                    .collect::<Vec<_>>()
            })
            .collect(),
        Err(e) => return Err(format!("discovery failed: {e}")),
    };
    let want = [
        ("GetInfo", svc::GET_INFO.id, MethodType::Unary),
        ("SetConfig", svc::SET_CONFIG.id, MethodType::Unary),
        (
            "StreamTelemetry",
            svc::STREAM_TELEMETRY.id,
            MethodType::ServerStream,
        ),
        ("Echo", svc::ECHO.id, MethodType::Unary),
    ];
    k.check(
        "discovery lists the Device service's four methods with their ids and kinds",
        methods
            .iter()
            .map(|(n, id, t)| (n.as_str(), *id, *t))
            .eq(want.iter().copied()),
        format!("{methods:?}"),
    );

    println!("\n-- GetInfo");
    match c.get_info(&DeviceEmpty {}, &none) {
        Ok(info) => {
            println!(
                "  {} {} on {} ({}), up {} ms, config v{}, max payload {} B",
                info.model,
                info.firmware,
                info.machine,
                info.cpu,
                info.uptime_ms,
                info.config_version,
                info.max_payload
            );
            k.check(
                "GetInfo names the machine QEMU runs",
                info.machine == args.machine,
                info.machine,
            );
        }
        Err(e) => k.check("GetInfo", false, e),
    }

    println!("\n-- SetConfig");
    let label = "bench-7";
    let cfg = Config {
        version: Some(2),
        interval_ms: Some(20),
        label: Some(label),
        temperature_offset_c: Some(-0.5),
        unix_time_ms: Some(now_ms()),
    };
    let applied = c.set_config(&cfg, &none).map(|b| {
        (
            b.version,
            b.interval_ms,
            b.label.map(str::to_owned),
            b.temperature_offset_c,
            b.unix_time_ms,
        )
    });
    k.check(
        "SetConfig applies version 2, 20 ms, the label and the offset, and sets the device clock",
        applied.as_ref().is_ok_and(|(v, ms, l, off, t)| {
            *v == Some(2)
                && *ms == Some(20)
                && l.as_deref() == Some(label)
                && *off == Some(-0.5)
                && t.is_some_and(|t| t.abs_diff(now_ms()) < 5_000)
        }),
        outcome(&applied),
    );
    let bad = Config {
        version: Some(3),
        interval_ms: Some(0),
        label: None,
        temperature_offset_c: None,
        unix_time_ms: None,
    };
    let refused = c.set_config(&bad, &none).map(|_| ());
    k.check(
        "SetConfig with interval_ms 0 is INVALID_ARGUMENT, with the reason",
        code_of(&refused) == Some(StatusCode::InvalidArgument)
            && outcome(&refused).contains("interval_ms must be 1..=5000, not 0"),
        outcome(&refused),
    );
    let version = c.get_info(&DeviceEmpty {}, &none).map(|i| i.config_version);
    k.check(
        "a refused configuration changes nothing (still version 2)",
        version == Ok(2),
        outcome(&version),
    );

    println!("\n-- Echo");
    check_echo(
        &mut k,
        c,
        "Echo returns its 16 bytes",
        b"sixteen bytes!!!",
        &none,
    );

    println!(
        "\n-- StreamTelemetry: {RECORDS} records, cable pulled after record {CUT_AFTER}, resumed by cursor"
    );
    let request = TelemetryRequest {
        count: Some(RECORDS),
    };
    let mut got: Vec<(u32, Option<u64>, bool)> = Vec::new();
    let mut link_lost = None;
    {
        let mut stream = c
            .stream_telemetry(&request, &none)
            .map_err(|e| format!("StreamTelemetry: {e}"))?;
        while let Some(item) = stream.next::<Telemetry<'_>>() {
            match item {
                Ok(item) => {
                    let t = item.value;
                    let same = is_expected_record(&t, 2, label, -0.5);
                    println!(
                        "  record {:>2} (cursor {:?}): {:.3} C, {:.1} %, accel {:?} mg, {} mV, {:?}",
                        t.seq,
                        item.cursor,
                        t.temperature_c,
                        t.humidity_pct,
                        t.accel_mg,
                        t.battery_mv,
                        t.status
                    );
                    got.push((t.seq, item.cursor, same));
                    if t.seq == CUT_AFTER {
                        println!("  ... pulling the cable for 400 ms");
                        stream_line(&mut stream).cut(Duration::from_millis(400));
                    }
                }
                Err(e) => {
                    println!("  link lost: {e}");
                    link_lost = Some(e);
                    break;
                }
            }
        }
    }
    let lost = c.0.channel_mut().get_mut().lost;
    k.check(
        "the cut loses bytes and the client notices the link is gone",
        matches!(link_lost, Some(ClientError::Channel(_))) && lost > 0,
        format!("{link_lost:?}, {lost} bytes lost"),
    );
    let last = got.last().and_then(|(_, cursor, _)| *cursor).unwrap_or(0);
    println!("  resuming after cursor {last}");
    {
        let mut stream = c
            .stream_telemetry(&request, &CallOptions::new().cursor(last))
            .map_err(|e| format!("StreamTelemetry (resumed): {e}"))?;
        while let Some(item) = stream.next::<Telemetry<'_>>() {
            let item = item.map_err(|e| format!("resumed stream: {e}"))?;
            let t = item.value;
            let same = is_expected_record(&t, 2, label, -0.5);
            if u64::from(t.seq) <= last + 2 || t.seq == RECORDS {
                println!("  record {:>2} (cursor {:?})", t.seq, item.cursor);
            }
            got.push((t.seq, item.cursor, same));
        }
    }
    let seqs: Vec<u32> = got.iter().map(|g| g.0).collect();
    k.check(
        &format!("every record 1..={RECORDS} arrived exactly once, in order, across the cut"),
        seqs == (1..=RECORDS).collect::<Vec<_>>(),
        format!("{seqs:?}"),
    );
    k.check(
        "every record carries its sequence number as cursor and the expected readings",
        got.iter()
            .all(|(s, c, same)| *c == Some(u64::from(*s)) && *same),
        format!("{got:?}"),
    );

    println!("\n-- what a bad client or a bad line sends");
    let past = bebop_runtime::Timestamp::from_unix_millis(SystemClock.now().unix_millis() - 1_000);
    let late = c
        .echo(&Blob { data: b"late" }, &CallOptions::new().deadline(past))
        .map(|_| ());
    k.check(
        "a call whose deadline passed a second ago is DEADLINE_EXCEEDED",
        code_of(&late) == Some(StatusCode::DeadlineExceeded),
        outcome(&late),
    );
    let future =
        bebop_runtime::Timestamp::from_unix_millis(SystemClock.now().unix_millis() + 10_000);
    check_echo(
        &mut k,
        c,
        "the same call with a deadline 10 s ahead succeeds",
        b"in time",
        &CallOptions::new().deadline(future),
    );
    let unknown =
        c.0.unary::<Empty, _>(0x1234_5678, &Empty {}, &none)
            .map(|_| ());
    k.check(
        "an unknown method id is NOT_FOUND",
        code_of(&unknown) == Some(StatusCode::NotFound),
        outcome(&unknown),
    );
    for reserved in [1u32, 2, 3, 4] {
        let r =
            c.0.unary::<Empty, _>(reserved, &Empty {}, &none)
                .map(|_| ());
        k.check(
            &format!("reserved method {reserved} is UNIMPLEMENTED"),
            code_of(&r) == Some(StatusCode::Unimplemented),
            outcome(&r),
        );
    }

    // A call whose call header packet is damaged on the line: the device drops it and
    // answers the orphaned request frame on its stream.
    let mut header = packet(&call_header_bytes(svc::ECHO.id));
    let mid = header.len() / 2;
    header[mid] ^= 0x5A;
    if header[mid] == 0 {
        header[mid] = 0x33;
    }
    let mut frame = vec![0u8; 64];
    let n = encode_frame(
        &mut frame,
        FrameFlags::END_STREAM,
        1001,
        &Blob { data: b"x" },
        None,
    )
    .map_err(|e| e.to_string())?;
    let status = raw_call(c, &[header, packet(&frame[..n])], 1001);
    k.check(
        "a damaged call header packet is dropped; its request frame is answered UNAVAILABLE",
        status
            .as_ref()
            .is_ok_and(|s| s.code() == StatusCode::Unavailable),
        format!("{status:?}"),
    );
    // Noise on the line between calls.
    let noise =
        c.0.channel_mut()
            .get_mut()
            .write_raw(&[0x13, 0x37, 0xFF, 0x00, 0x42, 0x00]);
    k.check(
        "noise on the line is written",
        noise.is_ok(),
        format!("{noise:?}"),
    );

    // A frame header that declares 4 GiB, in a small packet.
    let mut liar = vec![0xFF, 0xFF, 0xFF, 0xFF, 0x01];
    liar.extend_from_slice(&1003u32.to_le_bytes());
    liar.extend_from_slice(b"tiny");
    let status = raw_call(
        c,
        &[packet(&call_header_bytes(svc::ECHO.id)), packet(&liar)],
        1003,
    );
    k.check(
        "a frame declaring a 4 GiB payload is RESOURCE_EXHAUSTED",
        status
            .as_ref()
            .is_ok_and(|s| s.code() == StatusCode::ResourceExhausted),
        format!("{status:?}"),
    );
    let big = vec![0xA5u8; 2048];
    let too_big = c.echo(&Blob { data: &big }, &none).map(|_| ());
    k.check(
        "an Echo of 2 KiB, over the device's buffer, is RESOURCE_EXHAUSTED",
        code_of(&too_big) == Some(StatusCode::ResourceExhausted),
        outcome(&too_big),
    );

    println!("\n-- Echo round trips ({} calls each)", args.echo_calls);
    let mut rates = Vec::new();
    for size in [16usize, 1024] {
        match time_echo(c, size, args.echo_calls) {
            Ok(rate) => {
                println!(
                    "  {size:>5} B payload: {rate:>8.0} calls/s ({:.0} us per call)",
                    1e6 / rate
                );
                rates.push((size, rate));
                k.check(
                    &format!(
                        "{} Echo calls of {size} B, every byte back",
                        args.echo_calls
                    ),
                    true,
                    "",
                );
            }
            Err(e) => k.check(&format!("Echo calls of {size} B"), false, e),
        }
    }
    println!("\n-- the device keeps serving");
    check_echo(
        &mut k,
        c,
        "Echo works after all of it",
        b"still here",
        &none,
    );
    match c.get_info(&DeviceEmpty {}, &none) {
        Ok(info) => {
            println!(
                "  link: {} packets received, {} damaged, {} refused as too large; {} UART overruns; {} calls",
                info.packets_received,
                info.packets_damaged,
                info.packets_refused,
                info.rx_overruns,
                info.calls
            );
            k.check(
                "the device counted the damaged packets and the refused one",
                info.packets_damaged >= 2 && info.packets_refused >= 1,
                format!(
                    "{} damaged, {} refused",
                    info.packets_damaged, info.packets_refused
                ),
            );
            k.check(
                "no byte was lost in the device's receive ring",
                info.rx_overruns == 0,
                info.rx_overruns,
            );
        }
        Err(e) => k.check("GetInfo at the end", false, e),
    }

    Ok((k, rates))
}

/// The line under a server-stream call's client.
fn stream_line<'s>(
    stream: &'s mut bebop_runtime::rpc::ServerStreamCall<
        '_,
        PacketChannel<Line, HOST_BUF>,
        Vec<u8>,
    >,
) -> &'s mut Line {
    stream.channel_mut().get_mut()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("demo-host: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (mut qemu, stream) = match (&args.kernel, &args.connect) {
        (Some(kernel), _) => match Qemu::start(&args, kernel) {
            Ok((q, s)) => (Some(q), s),
            Err(e) => {
                eprintln!("demo-host: {e}");
                return ExitCode::FAILURE;
            }
        },
        (None, Some(addr)) => match TcpStream::connect(addr) {
            Ok(s) => (None, s),
            Err(e) => {
                eprintln!("demo-host: connecting to {addr}: {e}");
                return ExitCode::FAILURE;
            }
        },
        (None, None) => return ExitCode::from(2),
    };
    let started = Instant::now();
    // A watchdog: a device that stops answering cannot hang the run. It closes the line, so
    // the client's next read fails and the run ends normally (QEMU is killed on the way
    // out); exiting outright is only the last resort.
    let limit = args.timeout;
    let line_handle = stream.try_clone().ok();
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        eprintln!(
            "demo-host: no result after {} s: giving up",
            limit.as_secs()
        );
        if let Some(s) = line_handle {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        std::thread::sleep(Duration::from_secs(15));
        std::process::exit(1);
    });
    let result = Line::new(stream, Duration::from_secs(5))
        .map_err(|e| format!("socket: {e}"))
        .and_then(|line| {
            let mut client: DeviceClient = svc::Client::new(
                PacketChannel::new(line),
                vec![0; HOST_BUF],
                vec![0; HOST_BUF],
            );
            exercise(&mut client, &args)
        });
    let console = match qemu.as_mut() {
        Some(q) => {
            q.kill();
            q.console.lock().map(|l| l.clone()).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let (mut checks, rates) = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("demo-host: {e}");
            return ExitCode::FAILURE;
        }
    };
    if qemu.is_some() {
        let panicked = console.iter().find(|l| l.contains("panic"));
        checks.check(
            "the firmware did not panic",
            panicked.is_none(),
            panicked.cloned().unwrap_or_default(),
        );
    }
    println!(
        "\n{} passed, {} failed ({:.1} s)",
        checks.passed,
        checks.failed.len(),
        started.elapsed().as_secs_f64()
    );
    for (size, rate) in &rates {
        println!("echo-rate {} {size} {rate:.0}", args.machine);
    }
    if args.check && !checks.failed.is_empty() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
