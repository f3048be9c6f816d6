//! The host side of the serial demo.
//!
//! Starts the demo firmware in QEMU (or connects to a QEMU already running), reads the
//! emulated UART0 as a stream of frames (`serial-link`: COBS of the 9-byte RPC frame header,
//! a Bebop payload and a CRC-32, each ending with `0x00`), decodes and prints every telemetry
//! record, reports the frames that arrive damaged or cut short and carries on with the next,
//! and after a few records sends a `DeviceConfig` back (a deliberately damaged copy first),
//! which the firmware applies and acknowledges.
//!
//! ```text
//! demo-host --kernel PATH [--machine lm3s6965evb|microbit] [--check] [--timeout SECS]
//! demo-host --connect 127.0.0.1:PORT [--check]
//! ```
//!
//! With `--check` the program verifies the whole exchange (what arrived, what was rejected,
//! the acknowledgement, the records under the new configuration, the firmware's exit status)
//! and exits non-zero on any failure: this is what `scripts/qemu` runs.
#![forbid(unsafe_code)]

mod schema;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use bebop::Decode;
use serial_link::{Deframer, Frame, FrameError, FrameFlags, cobs, encode_frame, max_wire_len};

use crate::schema::{
    CONFIG_STREAM, ConfigAck, DeviceConfig, StreamSummary, TELEMETRY_STREAM, Telemetry,
};

const USAGE: &str = "\
usage: demo-host --kernel FIRMWARE.elf [--machine lm3s6965evb|microbit] [--qemu PROGRAM]
                 [--check] [--timeout SECONDS] [--config-after SEQ]
       demo-host --connect HOST:PORT [--check] [--timeout SECONDS]

  --kernel        the demo firmware to run in QEMU (thumbv7m for lm3s6965evb, thumbv6m for microbit)
  --machine       QEMU machine (default lm3s6965evb)
  --connect       talk to a QEMU started by hand with -serial tcp:HOST:PORT,server=on
  --check         verify the exchange and exit non-zero on any failure
  --timeout       give up after this many seconds (default 60)
  --config-after  send the DeviceConfig once this telemetry record has arrived (default 8)";

/// The configuration the host sends.
fn new_config() -> DeviceConfig {
    DeviceConfig {
        version: Some(2),
        interval_ms: Some(40),
        label: Some("tuned-by-host".into()),
        temperature_offset_c: Some(-0.5),
    }
}

struct Args {
    kernel: Option<PathBuf>,
    machine: String,
    qemu: String,
    connect: Option<String>,
    check: bool,
    timeout: Duration,
    config_after: u32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        kernel: None,
        machine: "lm3s6965evb".into(),
        qemu: "qemu-system-arm".into(),
        connect: None,
        check: false,
        timeout: Duration::from_secs(60),
        config_after: 8,
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
            "--config-after" => {
                let v = value("--config-after")?;
                args.config_after = v.parse().map_err(|_| format!("bad --config-after {v:?}"))?;
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

/// QEMU running the firmware, with its console (semihosting) output echoed and kept.
struct Qemu {
    child: Child,
    console: Arc<Mutex<Vec<String>>>,
    echoes: Vec<thread::JoinHandle<()>>,
}

impl Qemu {
    /// Binds a port, starts QEMU with UART0 connected to it, and accepts the connection.
    fn start(args: &Args, kernel: &PathBuf) -> Result<(Qemu, TcpStream), String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding a local port: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("local port: {e}"))?
            .port();
        let mut cmd = Command::new(&args.qemu);
        cmd.args(["-machine", &args.machine]);
        if args.machine == "lm3s6965evb" {
            cmd.args(["-cpu", "cortex-m3"]);
        }
        cmd.args([
            "-display",
            "none",
            "-monitor",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-serial",
            &format!("tcp:127.0.0.1:{port}"),
            "-kernel",
        ])
        .arg(kernel)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("starting {}: {e}", args.qemu))?;
        let console = Arc::new(Mutex::new(Vec::new()));
        let mut echoes = Vec::new();
        if let Some(out) = child.stdout.take() {
            echoes.push(echo(out, console.clone()));
        }
        if let Some(err) = child.stderr.take() {
            echoes.push(echo(err, console.clone()));
        }
        let mut qemu = Qemu {
            child,
            console,
            echoes,
        };
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("listener: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if let Ok(Some(status)) = qemu.child.try_wait() {
                        qemu.join_echoes();
                        return Err(format!("QEMU exited ({status}) before connecting its UART"));
                    }
                    if Instant::now() > deadline {
                        qemu.kill();
                        return Err("QEMU did not connect its UART within 10 s".into());
                    }
                    thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    qemu.kill();
                    return Err(format!("accepting QEMU's connection: {e}"));
                }
            }
        };
        stream
            .set_nonblocking(false)
            .map_err(|e| format!("socket: {e}"))?;
        println!(
            "QEMU {} is running {} with UART0 on 127.0.0.1:{port}",
            args.machine,
            kernel.display()
        );
        Ok((qemu, stream))
    }

    /// Waits up to `limit` for QEMU to exit; kills it after that.
    fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.join_echoes();
                    return Some(status);
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                _ => {
                    self.kill();
                    return None;
                }
            }
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.join_echoes();
    }

    fn join_echoes(&mut self) {
        for handle in self.echoes.drain(..) {
            let _ = handle.join();
        }
    }
}

/// Prints every line QEMU writes (the firmware's semihosting console) and keeps it.
fn echo(pipe: impl Read + Send + 'static, keep: Arc<Mutex<Vec<String>>>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            // QEMU's own remark when the Stellaris board's unused timers are reset.
            if line.starts_with("Timer with period zero") {
                continue;
            }
            println!("  firmware | {line}");
            if let Ok(mut lines) = keep.lock() {
                lines.push(line);
            }
        }
    })
}

/// What the host saw.
#[derive(Default)]
struct Report {
    records: Vec<Telemetry>,
    missing: Vec<u32>,
    corrupted: u32,
    truncated: u32,
    other_frame_errors: u32,
    payload_errors: u32,
    config_sent_after: Option<u32>,
    ack: Option<ConfigAck>,
    /// Index into `records` of the first record after the acknowledgement.
    first_record_after_ack: Option<usize>,
    summary: Option<StreamSummary>,
    end_of_stream: bool,
    timed_out: bool,
    io_error: Option<String>,
}

struct Session<'s> {
    stream: &'s mut TcpStream,
    config_after: u32,
    report: Report,
    /// Bytes of the frame being received, for the messages.
    frame_bytes: usize,
}

impl Session<'_> {
    fn run(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let _ = self
            .stream
            .set_read_timeout(Some(Duration::from_millis(100)));
        let mut deframer = Deframer::<1024>::new();
        let mut buf = [0u8; 512];
        while !self.report.end_of_stream {
            if Instant::now() > deadline {
                self.report.timed_out = true;
                println!(
                    "!! no end of stream after {} s: giving up",
                    timeout.as_secs()
                );
                return;
            }
            let n = match self.stream.read(&mut buf) {
                Ok(0) => {
                    println!("-- the firmware closed the serial line");
                    return;
                }
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue;
                }
                Err(e) => {
                    self.report.io_error = Some(e.to_string());
                    println!("!! serial line error: {e}");
                    return;
                }
            };
            for &byte in &buf[..n] {
                self.frame_bytes += 1;
                if let Some(result) = deframer.push(byte) {
                    let wire = self.frame_bytes;
                    self.frame_bytes = 0;
                    match result {
                        Ok(frame) => self.on_frame(&frame, wire),
                        Err(e) => self.on_bad_frame(&e, wire),
                    }
                } else if byte == 0 {
                    self.frame_bytes = 0;
                }
            }
        }
    }

    fn on_bad_frame(&mut self, e: &FrameError, wire: usize) {
        match e {
            FrameError::Corrupted { .. } => self.report.corrupted += 1,
            FrameError::Truncated { .. } => self.report.truncated += 1,
            _ => self.report.other_frame_errors += 1,
        }
        println!("✗  frame rejected ({wire} bytes on the wire): {e}");
        println!("   ↳ skipped; reading resumes after its 0x00 delimiter");
    }

    fn on_frame(&mut self, frame: &Frame<'_>, wire: usize) {
        match frame.header.stream_id {
            TELEMETRY_STREAM if frame.header.flags.contains(FrameFlags::END_STREAM) => {
                match StreamSummary::from_bytes(frame.payload) {
                    Ok(s) => {
                        println!(
                            "←  end of stream: the device sent {} records ({} damaged on purpose), config v{} in force",
                            opt(s.records_sent),
                            opt(s.records_damaged),
                            opt(s.config_version)
                        );
                        self.report.summary = Some(s);
                    }
                    Err(e) => self.on_payload_error("StreamSummary", &e),
                }
                self.report.end_of_stream = true;
            }
            TELEMETRY_STREAM => match Telemetry::from_bytes(frame.payload) {
                Ok(t) => self.on_telemetry(t, wire),
                Err(e) => self.on_payload_error("Telemetry", &e),
            },
            CONFIG_STREAM => match ConfigAck::from_bytes(frame.payload) {
                Ok(ack) => {
                    println!(
                        "←  ConfigAck: version {} {} ({:?}); the device had received {} good frame(s) and rejected {}",
                        opt(ack.version),
                        if ack.accepted == Some(true) {
                            "ACCEPTED"
                        } else {
                            "REFUSED"
                        },
                        ack.detail.as_deref().unwrap_or(""),
                        opt(ack.frames_received),
                        opt(ack.frames_rejected)
                    );
                    self.report.ack = Some(ack);
                    self.report.first_record_after_ack = Some(self.report.records.len());
                }
                Err(e) => self.on_payload_error("ConfigAck", &e),
            },
            other => println!(
                "?  frame on unknown stream {other} ({} payload bytes), ignored",
                frame.payload.len()
            ),
        }
    }

    fn on_payload_error(&mut self, what: &str, e: &bebop::Error) {
        self.report.payload_errors += 1;
        println!("✗  frame arrived intact but its payload is not a valid {what}: {e}");
    }

    fn on_telemetry(&mut self, t: Telemetry, wire: usize) {
        let expected = self.report.records.last().map_or(1, |r| r.seq + 1);
        if t.seq > expected {
            let gap: Vec<u32> = (expected..t.seq).collect();
            println!(
                "!  record{} {} missing: lost with the rejected frame{} above",
                if gap.len() > 1 { "s" } else { "" },
                gap.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if gap.len() > 1 { "s" } else { "" }
            );
            self.report.missing.extend(gap);
        }
        println!(
            "←  #{:<3} t={:>5} ms  {:>6.2} °C  {:>4.1} %RH  accel [{:>4}, {:>4}, {:>5}] mg  {} mV  {:<8} config v{} {:?}  ({} B)",
            t.seq,
            t.uptime_ms,
            t.temperature_c,
            t.humidity_pct,
            t.accel_mg[0],
            t.accel_mg[1],
            t.accel_mg[2],
            t.battery_mv,
            format!("{:?}", t.status),
            t.config_version,
            t.label,
            wire
        );
        let seq = t.seq;
        self.report.records.push(t);
        if seq >= self.config_after && self.report.config_sent_after.is_none() {
            self.send_config(seq);
        }
    }

    fn send_config(&mut self, after: u32) {
        self.report.config_sent_after = Some(after);
        let cfg = new_config();
        let mut wire = vec![0u8; max_wire_len(64)];
        let n = match encode_frame(FrameFlags::END_STREAM, CONFIG_STREAM, &cfg, None, &mut wire) {
            Ok(n) => n,
            Err(e) => {
                println!("!! cannot frame the DeviceConfig: {e}");
                return;
            }
        };
        let good = &wire[..n];
        // A damaged copy first: one content byte changed, framing intact.
        let mut damaged = good.to_vec();
        if let Some(i) = cobs::data_byte_at_or_after(&damaged[..n - 1], n / 2) {
            damaged[i] ^= if damaged[i] == 0x5A { 0xA5 } else { 0x5A };
        }
        println!("→  DeviceConfig, damaged on purpose ({n} bytes): the device must reject it");
        println!(
            "→  DeviceConfig {{ version: 2, interval_ms: 40, label: {:?}, temperature_offset_c: -0.5 }} ({n} bytes, stream {CONFIG_STREAM})",
            cfg.label.as_deref().unwrap_or("")
        );
        let sent = self
            .stream
            .write_all(&damaged)
            .and_then(|()| self.stream.write_all(good))
            .and_then(|()| self.stream.flush());
        if let Err(e) = sent {
            self.report.io_error = Some(e.to_string());
            println!("!! sending the configuration failed: {e}");
        }
    }
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "?".into(), |v| v.to_string())
}

/// Checks of the whole exchange; returns (passed, failed).
fn check(report: &Report, exit: Option<ExitStatus>, console: &[String]) -> (u32, u32) {
    let mut passed = 0;
    let mut failed = 0;
    let mut expect = |name: &str, ok: bool, detail: String| {
        if ok {
            passed += 1;
            println!("  ok    {name}");
        } else {
            failed += 1;
            println!("  FAIL  {name}: {detail}");
        }
    };
    expect(
        "the firmware exited with status 0",
        exit.is_some_and(|s| s.success()),
        format!("{exit:?}"),
    );
    expect(
        "the stream ended with END_STREAM",
        report.end_of_stream && !report.timed_out,
        format!(
            "timed out: {}, io error: {:?}",
            report.timed_out, report.io_error
        ),
    );
    expect(
        "at least 10 telemetry records decoded",
        report.records.len() >= 10,
        format!("{}", report.records.len()),
    );
    expect(
        "exactly one corrupted frame reported",
        report.corrupted == 1,
        format!("{}", report.corrupted),
    );
    expect(
        "exactly one truncated frame reported",
        report.truncated == 1,
        format!("{}", report.truncated),
    );
    expect(
        "no other frame or payload error",
        report.other_frame_errors == 0 && report.payload_errors == 0,
        format!(
            "{} frame, {} payload errors",
            report.other_frame_errors, report.payload_errors
        ),
    );
    expect(
        "exactly records 3 and 6 missing",
        report.missing == [3, 6],
        format!("{:?}", report.missing),
    );
    let ack = report.ack.as_ref();
    expect(
        "the configuration was acknowledged as accepted, version 2",
        ack.is_some_and(|a| a.accepted == Some(true) && a.version == Some(2)),
        format!("{ack:?}"),
    );
    expect(
        "the device rejected exactly the damaged configuration frame",
        ack.is_some_and(|a| a.frames_rejected == Some(1) && a.frames_received == Some(1)),
        format!("{ack:?}"),
    );
    let after: &[Telemetry] = report
        .first_record_after_ack
        .and_then(|i| report.records.get(i..))
        .unwrap_or(&[]);
    expect(
        "records after the acknowledgement carry config v2 and its label",
        after.len() >= 3
            && after
                .iter()
                .all(|t| t.config_version == 2 && t.label == "tuned-by-host"),
        format!("{} records after the ack", after.len()),
    );
    let last_seq = report.records.last().map_or(0, |t| t.seq);
    let summary = report.summary.as_ref();
    expect(
        "the summary counts every record and the two damaged ones",
        summary.is_some_and(|s| {
            s.records_sent == Some(last_seq)
                && s.records_damaged == Some(2)
                && s.config_version == Some(2)
        }),
        format!("{summary:?}, last record {last_seq}"),
    );
    expect(
        "the firmware logged applying the configuration",
        console
            .iter()
            .any(|l| l.contains("applied DeviceConfig v2")),
        "no such line on its console".into(),
    );
    (passed, failed)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("error: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    println!("Bebop serial demo: firmware under QEMU <-> this host over an emulated UART");
    println!(
        "framing: COBS( 9-byte RPC frame header | Bebop payload | CRC-32 ) then 0x00 (targets/README.md)"
    );
    let (mut qemu, mut stream) = match (&args.kernel, &args.connect) {
        (Some(kernel), _) => match Qemu::start(&args, kernel) {
            Ok(pair) => (Some(pair.0), pair.1),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        (None, Some(addr)) => match TcpStream::connect(addr) {
            Ok(s) => (None, s),
            Err(e) => {
                eprintln!("error: connecting to {addr}: {e}");
                return ExitCode::FAILURE;
            }
        },
        (None, None) => return ExitCode::from(2),
    };
    let started = Instant::now();
    let mut session = Session {
        stream: &mut stream,
        config_after: args.config_after,
        report: Report::default(),
        frame_bytes: 0,
    };
    session.run(args.timeout);
    let report = session.report;
    let exit = qemu.as_mut().and_then(|q| q.wait(Duration::from_secs(10)));
    let console = qemu
        .as_ref()
        .and_then(|q| q.console.lock().ok().map(|l| l.clone()))
        .unwrap_or_default();
    println!(
        "\nsummary: {} records decoded, {} corrupted and {} truncated frames rejected (records {:?} lost), configuration {} -- {:.1} s",
        report.records.len(),
        report.corrupted,
        report.truncated,
        report.missing,
        match &report.ack {
            Some(a) if a.accepted == Some(true) => "applied and acknowledged",
            Some(_) => "refused",
            None => "not acknowledged",
        },
        started.elapsed().as_secs_f32()
    );
    if let Some(status) = exit {
        println!("QEMU exited: {status}");
    } else if qemu.is_some() {
        println!("QEMU did not exit in time and was stopped");
    }
    if !args.check {
        return ExitCode::SUCCESS;
    }
    println!("\ndemo check:");
    let (passed, failed) = check(
        &report,
        exit.or(qemu.is_none().then(ExitStatus::default)),
        &console,
    );
    println!(
        "demo check on {}: {passed} passed, {failed} failed",
        args.machine
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
