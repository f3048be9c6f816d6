//! The serial demo's firmware (both machines): a Bebop RPC server on UART0, without a heap.
//!
//! It serves the `Device` service of `schemas/device.bop` (generated at build time into
//! `target-schema`) with `bebop_core::rpc::Server` over a
//! `bebop_core::rpc::link::PacketChannel`: every call header and frame in its own COBS packet
//! with a CRC-32. The UART receive interrupt fills a lock-free ring that the channel reads;
//! the deadline clock and the link counters are shared through `critical-section`. The device
//! serves until QEMU is stopped; a panic exits with status 1.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

use core::cell::Cell;

use bebop_core::Timestamp;
use bebop_core::rpc::link::{LinkCounters, PacketChannel};
use bebop_core::rpc::{
    CallContext, CallOutcome, CancelFlag, ChannelError, Clock, HEADER_SIZE, Server, ServerStream,
    Status, StatusCode, status_name,
};
use cortex_m_rt::entry;
use critical_section::Mutex;
use qemu_board::clock;
use qemu_board::semihosting::hprintln;
use qemu_board::uart::{self, SerialLine, Uart};
use target_schema::device::bebop::Empty;
use target_schema::device::device::{
    Blob, Config, DeviceInfo, SensorStatus, Telemetry, TelemetryRequest, device,
};

/// The largest frame payload accepted: a 1 KiB `Echo` and its length prefix, with room.
const MAX_PAYLOAD: usize = 1088;
/// The largest element (frame header, payload, cursor) either way.
const MAX_ELEMENT: usize = HEADER_SIZE + MAX_PAYLOAD + 8;
/// The largest call header (its metadata included).
const MAX_CALL_HEADER: usize = 192;
/// The longest label a configuration may set.
const LABEL_CAP: usize = 24;

/// Unix milliseconds at `clock::millis() == 0`, set by `SetConfig`'s `unix_time_ms`.
static CLOCK_BASE_MS: Mutex<Cell<i64>> = Mutex::new(Cell::new(0));
/// What the link had counted when the last call ended (`GetInfo` reports it).
static LINK: Mutex<Cell<LinkCounters>> = Mutex::new(Cell::new(LinkCounters {
    packets: 0,
    damaged: 0,
    too_large: 0,
    sent: 0,
}));
/// Raised to end a stream early; the server also raises it when the client sends something
/// during a stream.
static CANCEL: CancelFlag = CancelFlag::new();

/// The device's clock: the host's wall clock as of the last `SetConfig`, advanced by SysTick.
struct DeviceClock;

impl Clock for DeviceClock {
    fn now(&self) -> Timestamp {
        let base = critical_section::with(|cs| CLOCK_BASE_MS.borrow(cs).get());
        Timestamp::from_unix_millis(base + i64::from(clock::millis()))
    }
}

/// The settings `SetConfig` changes.
struct Settings {
    version: u32,
    interval_ms: u32,
    label: [u8; LABEL_CAP],
    label_len: usize,
    temperature_offset_c: f32,
}

impl Settings {
    fn label(&self) -> &str {
        core::str::from_utf8(&self.label[..self.label_len]).unwrap_or("?")
    }

    /// Checks every present field; changes nothing unless all are acceptable.
    fn apply(&mut self, cfg: &Config<'_>) -> Result<(), Status> {
        let invalid = |why: &str| Status::new(StatusCode::InvalidArgument, why);
        if let Some(ms) = cfg.interval_ms
            && !(1..=5000).contains(&ms)
        {
            return Err(Status::format(
                StatusCode::InvalidArgument,
                format_args!("interval_ms must be 1..=5000, not {ms}"),
            ));
        }
        if let Some(label) = cfg.label
            && label.len() > LABEL_CAP
        {
            return Err(invalid("label longer than 24 bytes"));
        }
        if let Some(offset) = cfg.temperature_offset_c
            && !(-50.0..=50.0).contains(&offset)
        {
            return Err(invalid("temperature_offset_c must be within 50 degrees"));
        }
        let clock_base = match cfg.unix_time_ms {
            Some(ms) => Some(
                i64::try_from(ms)
                    .ok()
                    .and_then(|ms| ms.checked_sub(i64::from(clock::millis())))
                    .ok_or_else(|| invalid("unix_time_ms out of range"))?,
            ),
            None => None,
        };
        if let Some(v) = cfg.version {
            self.version = v;
        }
        if let Some(ms) = cfg.interval_ms {
            self.interval_ms = ms;
        }
        if let Some(label) = cfg.label {
            self.label[..label.len()].copy_from_slice(label.as_bytes());
            self.label_len = label.len();
        }
        if let Some(offset) = cfg.temperature_offset_c {
            self.temperature_offset_c = offset;
        }
        if let Some(base) = clock_base {
            critical_section::with(|cs| CLOCK_BASE_MS.borrow(cs).set(base));
        }
        Ok(())
    }
}

/// The `Device` service.
struct DeviceHandler {
    settings: Settings,
    calls: u32,
}

/// A made-up but plausible sensor reading for record `seq`: the same whenever it is sent
/// (but for the uptime), so a resumed stream can be checked.
fn reading<'s>(seq: u32, settings: &'s Settings) -> Telemetry<'s> {
    let wobble = (seq % 8) as f32 * 0.125;
    Telemetry {
        seq,
        uptime_ms: clock::millis(),
        temperature_c: 21.5 + wobble + settings.temperature_offset_c,
        humidity_pct: 40.0 + (seq % 5) as f32,
        accel_mg: [(seq % 7) as i16 * 3 - 9, 12 - (seq % 5) as i16 * 6, 1000],
        battery_mv: 3300u16.saturating_sub((seq % 1000) as u16),
        status: if seq <= 2 {
            SensorStatus::Warming
        } else {
            SensorStatus::Ok
        },
        config_version: settings.version,
        label: settings.label(),
    }
}

/// Waits `ms` milliseconds, ending early (with the stream's status) when the client gives
/// up, the cancel flag is raised or the deadline passes.
fn pause(ms: u32, responses: &mut ServerStream<'_>) -> Result<(), Status> {
    let from = clock::millis();
    loop {
        responses.check()?;
        if clock::millis().wrapping_sub(from) >= ms {
            return Ok(());
        }
        cortex_m::asm::wfi();
    }
}

impl device::Handler for DeviceHandler {
    fn get_info<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        _request: Empty,
    ) -> Result<DeviceInfo<'a>, Status> {
        let link = critical_section::with(|cs| LINK.borrow(cs).get());
        Ok(DeviceInfo {
            model: "bebop-demo-sensor",
            firmware: env!("CARGO_PKG_VERSION"),
            machine: qemu_board::MACHINE,
            cpu: qemu_board::CPU,
            uptime_ms: clock::millis(),
            config_version: self.settings.version,
            max_payload: MAX_PAYLOAD as u32,
            packets_received: link.packets,
            packets_damaged: link.damaged,
            packets_refused: link.too_large,
            rx_overruns: uart::rx_overruns(),
            calls: self.calls,
        })
    }

    fn set_config<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        request: Config<'a>,
    ) -> Result<Config<'a>, Status> {
        self.settings.apply(&request)?;
        hprintln!(
            "[fw] config v{}: interval {} ms, label \"{}\", offset {} C",
            self.settings.version,
            self.settings.interval_ms,
            self.settings.label(),
            self.settings.temperature_offset_c
        );
        let s = &self.settings;
        Ok(Config {
            version: Some(s.version),
            interval_ms: Some(s.interval_ms),
            label: Some(s.label()),
            temperature_offset_c: Some(s.temperature_offset_c),
            unix_time_ms: u64::try_from(DeviceClock.now().unix_millis()).ok(),
        })
    }

    fn stream_telemetry(
        &mut self,
        ctx: &CallContext<'_>,
        request: TelemetryRequest,
        responses: &mut ServerStream<'_>,
    ) -> Result<(), Status> {
        let count = request.count.unwrap_or(0);
        if !(1..=100_000).contains(&count) {
            return Err(Status::format(
                StatusCode::InvalidArgument,
                format_args!("count must be 1..=100000, not {count}"),
            ));
        }
        let after = u32::try_from(ctx.cursor()).unwrap_or(u32::MAX);
        hprintln!(
            "[fw] telemetry: records {}..={}",
            after.saturating_add(1),
            count
        );
        for seq in after.saturating_add(1)..=count {
            pause(self.settings.interval_ms, responses)?;
            responses.send_with_cursor(&reading(seq, &self.settings), u64::from(seq))?;
        }
        Ok(())
    }

    fn echo<'a>(
        &'a mut self,
        _ctx: &CallContext<'_>,
        request: Blob<'a>,
    ) -> Result<Blob<'a>, Status> {
        Ok(request)
    }
}

#[entry]
fn main() -> ! {
    let Some(cp) = cortex_m::Peripherals::take() else {
        qemu_board::exit(false)
    };
    clock::start(cp.SYST);
    let Some(uart) = Uart::take() else {
        qemu_board::exit(false)
    };
    hprintln!(
        "[fw] Device service on {} ({}), UART0, packets up to {} bytes",
        qemu_board::MACHINE,
        qemu_board::CPU,
        MAX_ELEMENT
    );
    let mut channel = PacketChannel::<_, MAX_ELEMENT>::new(SerialLine::new(uart));
    let mut call = [0u8; MAX_CALL_HEADER];
    let mut rx = [0u8; MAX_ELEMENT];
    let mut tx = [0u8; MAX_ELEMENT];
    let mut server = Server::new(&DeviceClock, &CANCEL, &mut call, &mut rx, &mut tx);
    let mut settings = Settings {
        version: 1,
        interval_ms: 50,
        label: [0; LABEL_CAP],
        label_len: 7,
        temperature_offset_c: 0.0,
    };
    settings.label[..7].copy_from_slice(b"factory");
    let mut service = device::Server(DeviceHandler { settings, calls: 0 });
    loop {
        let outcome = server.serve_one(&mut channel, &mut service);
        service.0.calls = service.0.calls.wrapping_add(1);
        let counters = channel.counters();
        critical_section::with(|cs| LINK.borrow(cs).set(counters));
        match outcome {
            // Echo is the round-trip benchmark: not logged.
            Ok(CallOutcome::Ok { method_id }) if method_id == device::ECHO.id => {}
            Ok(CallOutcome::Ok { method_id }) => hprintln!("[fw] call {:#010x}: ok", method_id),
            Ok(CallOutcome::Failed { method_id, code }) => {
                hprintln!("[fw] call {:#010x}: {}", method_id, status_name(code))
            }
            Ok(CallOutcome::Cancelled { method_id }) => {
                hprintln!("[fw] call {:#010x}: cancelled by the client", method_id)
            }
            Ok(CallOutcome::Refused(e)) => hprintln!("[fw] refused: {}", e),
            Ok(CallOutcome::Damaged) => hprintln!("[fw] dropped a damaged packet"),
            Err(ChannelError::Closed | ChannelError::Io) => {
                hprintln!("[fw] the line is gone");
                qemu_board::exit(false)
            }
            Err(e) => hprintln!("[fw] link: {}", e),
        }
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("[fw] panic: {}", info);
    qemu_board::exit(false)
}
