//! The serial demo's firmware (both machines).
//!
//! Streams `Telemetry` records over UART0, one frame each (see `serial-link` for the
//! framing), on stream 1. Record 3 goes out with one byte damaged and record 6 cut in half, on
//! purpose, so the host can show that it notices and recovers. Frames from the host arrive
//! through the UART receive interrupt into a `SharedLink`; a `DeviceConfig` on stream 2 is
//! applied (interval, label, temperature offset) and answered with a `ConfigAck`. Once the
//! new configuration has been in force for [`RECORDS_AFTER_CONFIG`] records, a
//! `StreamSummary` frame with `END_STREAM` closes the stream and the firmware exits with
//! status 0. Without a configuration after [`MAX_RECORDS`] records it exits with status 1.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

mod schema {
    //! The types of the demo's schema, generated from `schemas/telemetry.bop` (see
    //! `target-schema`'s `telemetry` module).
    pub use target_schema::telemetry::{
        CONFIG_STREAM, ConfigAck, DeviceConfig, SensorStatus, StreamSummary, TELEMETRY_STREAM,
        Telemetry,
    };
}

use cortex_m_rt::entry;
use embedded_io::Write;
use qemu_board::clock;
use qemu_board::semihosting::hprintln;
use qemu_board::uart::{Uart, UartTx};
use serial_link::{FrameFlags, SharedLink, cobs, encode_frame, max_wire_len};

use crate::schema::{
    CONFIG_STREAM, ConfigAck, DeviceConfig, SensorStatus, StreamSummary, TELEMETRY_STREAM,
    Telemetry,
};

/// The record sent with a damaged byte.
const CORRUPT_SEQ: u32 = 3;
/// The record sent cut in half.
const TRUNCATE_SEQ: u32 = 6;
/// Records to send under a received configuration before ending the stream.
const RECORDS_AFTER_CONFIG: u32 = 6;
/// Give up when no configuration arrived after this many records.
const MAX_RECORDS: u32 = 200;
/// The longest label a configuration may set.
const LABEL_CAP: usize = 24;
const RX_FRAME: usize = 128;
const WIRE: usize = max_wire_len(96);

/// Frames from the host: fed byte by byte by the UART0 receive interrupt, drained here.
static LINK: SharedLink<RX_FRAME, 4> = SharedLink::new();

fn on_rx_byte(byte: u8) {
    LINK.feed(byte);
}

/// The settings a `DeviceConfig` changes.
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

    /// Applies `cfg` when every present field is acceptable; otherwise changes nothing and
    /// says why.
    fn apply(&mut self, cfg: &DeviceConfig<'_>) -> Result<(), &'static str> {
        if let Some(ms) = cfg.interval_ms {
            if !(10..=5000).contains(&ms) {
                return Err("interval_ms must be 10..=5000");
            }
        }
        if let Some(label) = cfg.label {
            if label.len() > LABEL_CAP {
                return Err("label longer than 24 bytes");
            }
        }
        if let Some(offset) = cfg.temperature_offset_c {
            if !(-50.0..=50.0).contains(&offset) {
                return Err("temperature_offset_c must be within 50 degrees");
            }
        }
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
        Ok(())
    }
}

/// A made-up but plausible sensor reading for record `seq`.
fn reading<'s>(seq: u32, settings: &'s Settings) -> Telemetry<'s> {
    let wobble = (seq % 8) as f32 * 0.125;
    Telemetry {
        seq,
        uptime_ms: clock::millis(),
        temperature_c: 21.5 + wobble + settings.temperature_offset_c,
        humidity_pct: 40.0 + (seq % 5) as f32,
        accel_mg: [(seq % 7) as i16 * 3 - 9, 12 - (seq % 5) as i16 * 6, 1000],
        battery_mv: 3300u16.saturating_sub(seq as u16),
        status: if seq <= 2 {
            SensorStatus::Warming
        } else {
            SensorStatus::Ok
        },
        config_version: settings.version,
        label: settings.label(),
    }
}

fn send(tx: &mut UartTx, wire: &[u8]) {
    // UartTx's error type is Infallible.
    let _ = tx.write_all(wire);
}

/// Takes the frames the interrupt handler queued; applies configurations and acknowledges
/// them. Returns true when a configuration was applied.
fn serve_host(tx: &mut UartTx, settings: &mut Settings) -> bool {
    let mut applied = false;
    let mut buf = [0u8; RX_FRAME];
    while let Some(frame) = LINK.pop_into(&mut buf) {
        if frame.header.stream_id != CONFIG_STREAM {
            hprintln!("[fw] ignoring a frame on stream {}", frame.header.stream_id);
            continue;
        }
        let stats = LINK.stats();
        let ack = match frame.decode::<DeviceConfig<'_>>() {
            Ok(cfg) => match settings.apply(&cfg) {
                Ok(()) => {
                    applied = true;
                    hprintln!(
                        "[fw] applied DeviceConfig v{}: interval {} ms, label \"{}\", offset {} C",
                        settings.version,
                        settings.interval_ms,
                        settings.label(),
                        settings.temperature_offset_c
                    );
                    ConfigAck {
                        version: Some(settings.version),
                        accepted: Some(true),
                        detail: Some("applied"),
                        frames_received: Some(stats.frames),
                        frames_rejected: Some(stats.rejected()),
                    }
                }
                Err(why) => ConfigAck {
                    version: cfg.version,
                    accepted: Some(false),
                    detail: Some(why),
                    frames_received: Some(stats.frames),
                    frames_rejected: Some(stats.rejected()),
                },
            },
            Err(_) => ConfigAck {
                version: None,
                accepted: Some(false),
                detail: Some("payload is not a DeviceConfig"),
                frames_received: Some(stats.frames),
                frames_rejected: Some(stats.rejected()),
            },
        };
        let mut wire = [0u8; WIRE];
        match encode_frame(FrameFlags::END_STREAM, CONFIG_STREAM, &ack, None, &mut wire) {
            Ok(n) => send(tx, &wire[..n]),
            Err(_) => hprintln!("[fw] ConfigAck does not fit its buffer"),
        }
    }
    applied
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
    let (mut tx, rx) = uart.split();
    rx.listen(on_rx_byte);
    hprintln!(
        "[fw] demo firmware on {} ({}): telemetry on UART0, stream {}",
        qemu_board::MACHINE,
        qemu_board::CPU,
        TELEMETRY_STREAM
    );
    // A lone zero ends whatever a receiver may have collected before we started.
    send(&mut tx, &[0]);

    let mut settings = Settings {
        version: 1,
        interval_ms: 100,
        label: [0; LABEL_CAP],
        label_len: 0,
        temperature_offset_c: 0.0,
    };
    settings.label[..7].copy_from_slice(b"factory");
    settings.label_len = 7;

    let mut damaged = 0;
    let mut after_config: Option<u32> = None;
    let mut seq = 0;
    let success = loop {
        seq += 1;
        let record = reading(seq, &settings);
        let mut wire = [0u8; WIRE];
        let n = match encode_frame(FrameFlags::NONE, TELEMETRY_STREAM, &record, None, &mut wire) {
            Ok(n) => n,
            Err(_) => {
                hprintln!("[fw] record {} does not fit its buffer", seq);
                break false;
            }
        };
        if seq == CORRUPT_SEQ {
            // Flip bits of one content byte in the middle of the payload, past the header.
            if let Some(i) = cobs::data_byte_at_or_after(&wire[..n - 1], n / 2) {
                wire[i] ^= if wire[i] == 0x5A { 0xA5 } else { 0x5A };
            }
            damaged += 1;
            hprintln!("[fw] record {}: sending it with one byte damaged", seq);
            send(&mut tx, &wire[..n]);
        } else if seq == TRUNCATE_SEQ {
            damaged += 1;
            hprintln!(
                "[fw] record {}: sending only its first {} of {} bytes",
                seq,
                n / 2,
                n
            );
            send(&mut tx, &wire[..n / 2]);
            send(&mut tx, &[0]);
        } else {
            send(&mut tx, &wire[..n]);
        }

        if serve_host(&mut tx, &mut settings) {
            after_config = Some(0);
        }
        if let Some(count) = after_config.as_mut() {
            *count += 1;
            if *count > RECORDS_AFTER_CONFIG {
                break true;
            }
        }
        if seq >= MAX_RECORDS {
            hprintln!("[fw] no configuration after {} records: giving up", seq);
            break false;
        }
        clock::delay_ms(settings.interval_ms);
    };

    let summary = StreamSummary {
        records_sent: Some(seq),
        records_damaged: Some(damaged),
        config_version: Some(settings.version),
    };
    let mut wire = [0u8; WIRE];
    if let Ok(n) = encode_frame(
        FrameFlags::END_STREAM,
        TELEMETRY_STREAM,
        &summary,
        None,
        &mut wire,
    ) {
        send(&mut tx, &wire[..n]);
    }
    let stats = LINK.stats();
    hprintln!(
        "[fw] done: {} records sent ({} damaged on purpose); received {} bytes, {} good frames, {} rejected",
        seq,
        damaged,
        stats.bytes,
        stats.frames,
        stats.rejected()
    );
    // Give QEMU a moment to push the last bytes out of its socket.
    clock::delay_ms(50);
    qemu_board::exit(success)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("[fw] panic: {}", info);
    qemu_board::exit(false)
}
