//! The demo's schema as owned types (`String` instead of `&str`), for a std program. Same wire
//! format as the firmware's borrowed views in `target-schema`'s `telemetry` module; written in
//! the style of the generated owned types.

use bebop::{Decode, Encode, Error, ErrorKind, Reader, Sink, WireSize, field_size};

/// `enum SensorStatus : uint8 { Ok = 0; Warming = 1; Degraded = 2; }`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SensorStatus {
    /// 0
    #[default]
    Ok,
    /// 1
    Warming,
    /// 2
    Degraded,
}

impl WireSize for SensorStatus {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl<'a> Decode<'a> for SensorStatus {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        let at = r.offset();
        match r.read_u8()? {
            0 => Ok(SensorStatus::Ok),
            1 => Ok(SensorStatus::Warming),
            2 => Ok(SensorStatus::Degraded),
            v => Err(Error::new(ErrorKind::InvalidEnumValue, at).with_detail(u64::from(v))),
        }
    }
}

/// `struct Telemetry` (see the firmware for the field meanings).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Telemetry {
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
    pub label: String,
}

impl WireSize for Telemetry {
    const MIN_SIZE: usize = 4 + 4 + 4 + 4 + 6 + 2 + 1 + 4 + 5;
}

impl<'a> Decode<'a> for Telemetry {
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

/// `message DeviceConfig`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DeviceConfig {
    /// `version(1): uint32`
    pub version: Option<u32>,
    /// `interval_ms(2): uint32`
    pub interval_ms: Option<u32>,
    /// `label(3): string`
    pub label: Option<String>,
    /// `temperature_offset_c(4): float32`
    pub temperature_offset_c: Option<f32>,
}

impl DeviceConfig {
    fn body_size(&self) -> usize {
        field_size(&self.version)
            + field_size(&self.interval_ms)
            + field_size(&self.label)
            + field_size(&self.temperature_offset_c)
            + 1
    }
}

impl WireSize for DeviceConfig {
    const MIN_SIZE: usize = 5;
}

impl Encode for DeviceConfig {
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

/// `message ConfigAck`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConfigAck {
    /// `version(1): uint32`
    pub version: Option<u32>,
    /// `accepted(2): bool`
    pub accepted: Option<bool>,
    /// `detail(3): string`
    pub detail: Option<String>,
    /// `frames_received(4): uint32`
    pub frames_received: Option<u32>,
    /// `frames_rejected(5): uint32`
    pub frames_rejected: Option<u32>,
}

impl WireSize for ConfigAck {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for ConfigAck {
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

/// `message StreamSummary`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StreamSummary {
    /// `records_sent(1): uint32`
    pub records_sent: Option<u32>,
    /// `records_damaged(2): uint32`
    pub records_damaged: Option<u32>,
    /// `config_version(3): uint32`
    pub config_version: Option<u32>,
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

/// Stream id of telemetry and the final summary.
pub const TELEMETRY_STREAM: u32 = 1;
/// Stream id of configuration and its acknowledgement.
pub const CONFIG_STREAM: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use bebop::EncodeExt;

    #[test]
    fn owned_types_read_the_firmware_bytes() {
        // The bytes target-schema's test pins for its borrowed `Telemetry`.
        let bytes: &[u8] = &[
            1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0xff, 0xff, 0, 0, 0xe8, 0x03,
            0xe4, 0x0c, 1, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b', 0,
        ];
        let t = Telemetry::from_bytes(bytes).unwrap();
        assert_eq!(t.label, "ab");
        assert_eq!(t.accel_mg, [-1, 0, 1000]);
        assert_eq!(t.status, SensorStatus::Warming);
        let cfg = DeviceConfig {
            version: Some(2),
            label: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(
            cfg.encode_to_vec().unwrap(),
            [13, 0, 0, 0, 1, 2, 0, 0, 0, 3, 1, 0, 0, 0, b'x', 0, 0]
        );
    }
}
