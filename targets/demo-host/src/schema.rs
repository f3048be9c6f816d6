//! The demo's schema as owned types (`String` instead of `&str`), for a std program: the
//! owned forms generated from `schemas/telemetry.bop` (`target-schema` with its `owned`
//! feature), same wire format as the firmware's views.

pub use target_schema::telemetry::owned::{ConfigAck, DeviceConfig, StreamSummary, Telemetry};
pub use target_schema::telemetry::{CONFIG_STREAM, TELEMETRY_STREAM};

#[cfg(test)]
mod tests {
    use super::*;
    use bebop::{Decode, EncodeExt};
    use target_schema::telemetry as views;

    #[test]
    fn owned_types_read_what_the_firmware_writes() {
        let record = views::Telemetry {
            seq: 4,
            uptime_ms: 400,
            temperature_c: 21.5,
            humidity_pct: 40.0,
            accel_mg: [-9, 12, 1000],
            battery_mv: 3296,
            status: views::SensorStatus::Ok,
            config_version: 2,
            label: "tuned-by-host",
        };
        let bytes = record.encode_to_vec().unwrap();
        let t = Telemetry::from_bytes(&bytes).unwrap();
        assert_eq!(t.label, "tuned-by-host");
        assert_eq!(t.accel_mg, [-9, 12, 1000]);
        assert_eq!(t.status, views::SensorStatus::Ok);
        let ack = views::ConfigAck {
            version: Some(2),
            accepted: Some(true),
            detail: Some("applied"),
            frames_received: Some(1),
            frames_rejected: Some(1),
        };
        let ack = ConfigAck::from_bytes(&ack.encode_to_vec().unwrap()).unwrap();
        assert_eq!(ack.detail.as_deref(), Some("applied"));
        assert_eq!(ack.frames_rejected, Some(1));
    }

    #[test]
    fn the_firmware_reads_what_the_host_sends() {
        let cfg = DeviceConfig {
            version: Some(2),
            label: Some("x".into()),
            ..Default::default()
        };
        let bytes = cfg.encode_to_vec().unwrap();
        assert_eq!(
            bytes,
            [13, 0, 0, 0, 1, 2, 0, 0, 0, 3, 1, 0, 0, 0, b'x', 0, 0]
        );
        let view = views::DeviceConfig::from_bytes(&bytes).unwrap();
        assert_eq!(view.label, Some("x"));
        assert_eq!(view.interval_ms, None);
    }
}
