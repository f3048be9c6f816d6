//! The serial demo's schema:
//!
//! ```bebop
//! enum SensorStatus : uint8 { Ok = 0; Warming = 1; Degraded = 2; }
//!
//! struct Telemetry {
//!     seq: uint32;            // 1, 2, 3, ...: gaps show lost records
//!     uptime_ms: uint32;
//!     temperature_c: float32;
//!     humidity_pct: float32;
//!     accel_mg: int16[3];
//!     battery_mv: uint16;
//!     status: SensorStatus;
//!     config_version: uint32; // the DeviceConfig in force
//!     label: string;          // set by DeviceConfig
//! }
//!
//! message DeviceConfig {
//!     version(1): uint32;
//!     interval_ms(2): uint32;
//!     label(3): string;
//!     temperature_offset_c(4): float32;
//! }
//!
//! message ConfigAck {
//!     version(1): uint32;
//!     accepted(2): bool;
//!     detail(3): string;
//!     frames_received(4): uint32;  // good frames the device's receiver took
//!     frames_rejected(5): uint32;  // frames it rejected (damaged, truncated, ...)
//! }
//!
//! message StreamSummary {
//!     records_sent(1): uint32;
//!     records_damaged(2): uint32;  // sent damaged on purpose
//!     config_version(3): uint32;
//! }
//! ```
//!
//! Streams: telemetry flows on [`TELEMETRY_STREAM`] and ends with a `StreamSummary` frame
//! flagged `END_STREAM`; configuration goes to the device on [`CONFIG_STREAM`] and is answered
//! there by a `ConfigAck`.

use bebop_core::{Decode, Encode, Error, ErrorKind, FixedSize, Reader, Sink, WireSize, field_size};

/// Stream id of telemetry records (device to host) and the final `StreamSummary`.
pub const TELEMETRY_STREAM: u32 = 1;
/// Stream id of `DeviceConfig` (host to device) and `ConfigAck` (device to host).
pub const CONFIG_STREAM: u32 = 2;

/// ```bebop
/// enum SensorStatus : uint8 { Ok = 0; Warming = 1; Degraded = 2; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum SensorStatus {
    /// 0
    #[default]
    Ok = 0,
    /// 1
    Warming = 1,
    /// 2
    Degraded = 2,
}

impl TryFrom<u8> for SensorStatus {
    type Error = u8;
    fn try_from(v: u8) -> Result<Self, u8> {
        match v {
            0 => Ok(SensorStatus::Ok),
            1 => Ok(SensorStatus::Warming),
            2 => Ok(SensorStatus::Degraded),
            other => Err(other),
        }
    }
}

impl WireSize for SensorStatus {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl FixedSize for SensorStatus {
    const SIZE: usize = 1;
}

impl<'a> Decode<'a> for SensorStatus {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        let at = r.offset();
        let raw = r.read_u8()?;
        SensorStatus::try_from(raw)
            .map_err(|v| Error::new(ErrorKind::InvalidEnumValue, at).with_detail(u64::from(v)))
    }
}

impl Encode for SensorStatus {
    fn encoded_size(&self) -> usize {
        1
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write(&[*self as u8])
    }
}

/// `struct Telemetry`: one sensor reading.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Telemetry<'a> {
    /// `seq: uint32`
    pub seq: u32,
    /// `uptime_ms: uint32`
    pub uptime_ms: u32,
    /// `temperature_c: float32`
    pub temperature_c: f32,
    /// `humidity_pct: float32`
    pub humidity_pct: f32,
    /// `accel_mg: int16[3]`
    pub accel_mg: [i16; 3],
    /// `battery_mv: uint16`
    pub battery_mv: u16,
    /// `status: SensorStatus`
    pub status: SensorStatus,
    /// `config_version: uint32`
    pub config_version: u32,
    /// `label: string`
    pub label: &'a str,
}

impl WireSize for Telemetry<'_> {
    const MIN_SIZE: usize = 4 + 4 + 4 + 4 + 6 + 2 + 1 + 4 + 5;
}

impl<'a> Decode<'a> for Telemetry<'a> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Telemetry {
            seq: r.read()?,
            uptime_ms: r.read()?,
            temperature_c: r.read()?,
            humidity_pct: r.read()?,
            accel_mg: r.read()?,
            battery_mv: r.read()?,
            status: r.read()?,
            config_version: r.read()?,
            label: r.read()?,
        })
    }
}

impl Encode for Telemetry<'_> {
    fn encoded_size(&self) -> usize {
        4 + 4 + 4 + 4 + 6 + 2 + 1 + 4 + self.label.encoded_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.seq.encode(s)?;
        self.uptime_ms.encode(s)?;
        self.temperature_c.encode(s)?;
        self.humidity_pct.encode(s)?;
        self.accel_mg.encode(s)?;
        self.battery_mv.encode(s)?;
        self.status.encode(s)?;
        self.config_version.encode(s)?;
        self.label.encode(s)
    }
}

/// `message DeviceConfig`: settings the host sends; absent fields keep their current value.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeviceConfig<'a> {
    /// `version(1): uint32`
    pub version: Option<u32>,
    /// `interval_ms(2): uint32`
    pub interval_ms: Option<u32>,
    /// `label(3): string`
    pub label: Option<&'a str>,
    /// `temperature_offset_c(4): float32`
    pub temperature_offset_c: Option<f32>,
}

impl DeviceConfig<'_> {
    fn body_size(&self) -> usize {
        field_size(&self.version)
            + field_size(&self.interval_ms)
            + field_size(&self.label)
            + field_size(&self.temperature_offset_c)
            + 1
    }
}

impl WireSize for DeviceConfig<'_> {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for DeviceConfig<'a> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = DeviceConfig::default();
            loop {
                match r.read_tag()? {
                    1 => out.version = Some(r.read()?),
                    2 => out.interval_ms = Some(r.read()?),
                    3 => out.label = Some(r.read()?),
                    4 => out.temperature_offset_c = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(out)
        })
    }
}

impl Encode for DeviceConfig<'_> {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.version {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.interval_ms {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.label {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.temperature_offset_c {
                    s.write_field(4, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `message ConfigAck`: the device's answer to a `DeviceConfig`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ConfigAck<'a> {
    /// `version(1): uint32`
    pub version: Option<u32>,
    /// `accepted(2): bool`
    pub accepted: Option<bool>,
    /// `detail(3): string`
    pub detail: Option<&'a str>,
    /// `frames_received(4): uint32`
    pub frames_received: Option<u32>,
    /// `frames_rejected(5): uint32`
    pub frames_rejected: Option<u32>,
}

impl ConfigAck<'_> {
    fn body_size(&self) -> usize {
        field_size(&self.version)
            + field_size(&self.accepted)
            + field_size(&self.detail)
            + field_size(&self.frames_received)
            + field_size(&self.frames_rejected)
            + 1
    }
}

impl WireSize for ConfigAck<'_> {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for ConfigAck<'a> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = ConfigAck::default();
            loop {
                match r.read_tag()? {
                    1 => out.version = Some(r.read()?),
                    2 => out.accepted = Some(r.read()?),
                    3 => out.detail = Some(r.read()?),
                    4 => out.frames_received = Some(r.read()?),
                    5 => out.frames_rejected = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(out)
        })
    }
}

impl Encode for ConfigAck<'_> {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.version {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.accepted {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.detail {
                    s.write_field(3, v)?;
                }
                if let Some(v) = &self.frames_received {
                    s.write_field(4, v)?;
                }
                if let Some(v) = &self.frames_rejected {
                    s.write_field(5, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// `message StreamSummary`: the last frame of the telemetry stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StreamSummary {
    /// `records_sent(1): uint32`
    pub records_sent: Option<u32>,
    /// `records_damaged(2): uint32`
    pub records_damaged: Option<u32>,
    /// `config_version(3): uint32`
    pub config_version: Option<u32>,
}

impl StreamSummary {
    fn body_size(&self) -> usize {
        field_size(&self.records_sent)
            + field_size(&self.records_damaged)
            + field_size(&self.config_version)
            + 1
    }
}

impl WireSize for StreamSummary {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for StreamSummary {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = StreamSummary::default();
            loop {
                match r.read_tag()? {
                    1 => out.records_sent = Some(r.read()?),
                    2 => out.records_damaged = Some(r.read()?),
                    3 => out.config_version = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(out)
        })
    }
}

impl Encode for StreamSummary {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.records_sent {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.records_damaged {
                    s.write_field(2, v)?;
                }
                if let Some(v) = &self.config_version {
                    s.write_field(3, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_bytes_and_roundtrip() {
        let t = Telemetry {
            seq: 1,
            uptime_ms: 2,
            temperature_c: 1.0,
            humidity_pct: 2.0,
            accel_mg: [-1, 0, 1000],
            battery_mv: 3300,
            status: SensorStatus::Warming,
            config_version: 1,
            label: "ab",
        };
        let mut buf = [0u8; 64];
        let n = t.encode_into(&mut buf).unwrap();
        let expected: &[u8] = &[
            1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0xff, 0xff, 0, 0, 0xe8, 0x03,
            0xe4, 0x0c, 1, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0,
        ];
        assert_eq!(&buf[..n], expected);
        assert_eq!(Telemetry::from_bytes(expected), Ok(t));
        let mut bad = [0u8; 64];
        bad[..n].copy_from_slice(expected);
        bad[24] = 9;
        let err = Telemetry::from_bytes(&bad[..n]).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (ErrorKind::InvalidEnumValue, 24)
        );
    }

    #[test]
    fn messages_with_absent_fields() {
        let cfg = DeviceConfig {
            version: Some(2),
            label: Some("x"),
            ..Default::default()
        };
        let mut buf = [0u8; 32];
        let n = cfg.encode_into(&mut buf).unwrap();
        assert_eq!(
            &buf[..n],
            &[13, 0, 0, 0, 1, 2, 0, 0, 0, 3, 1, 0, 0, 0, b'x', 0, 0]
        );
        assert_eq!(DeviceConfig::from_bytes(&buf[..n]), Ok(cfg));
        let ack = ConfigAck::default();
        let n = ack.encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[1, 0, 0, 0, 0]);
        let s = StreamSummary {
            records_sent: Some(3),
            ..Default::default()
        };
        let n = s.encode_into(&mut buf).unwrap();
        assert_eq!(StreamSummary::from_bytes(&buf[..n]), Ok(s));
    }
}
