//! The generated telemetry types: bytes pinned by hand, absent fields, invalid enum values,
//! and the owned forms (feature `owned`) reading what the views write.

use bebop_core::{Decode, Encode, ErrorKind};
use target_schema::telemetry::{
    CONFIG_STREAM, ConfigAck, DeviceConfig, SensorStatus, StreamSummary, TELEMETRY_STREAM,
    Telemetry,
};

/// `Telemetry { 1, 2, 1.0, 2.0, [-1, 0, 1000], 3300, Warming, 1, "ab" }`, field by field.
const TELEMETRY_BYTES: &[u8] = &[
    1, 0, 0, 0, // seq
    2, 0, 0, 0, // uptime_ms
    0, 0, 0x80, 0x3f, // temperature_c
    0, 0, 0, 0x40, // humidity_pct
    0xff, 0xff, 0, 0, 0xe8, 0x03, // accel_mg
    0xe4, 0x0c, // battery_mv
    1,    // status
    1, 0, 0, 0, // config_version
    2, 0, 0, 0, b'a', b'b', 0, // label
];

fn telemetry() -> Telemetry<'static> {
    Telemetry {
        seq: 1,
        uptime_ms: 2,
        temperature_c: 1.0,
        humidity_pct: 2.0,
        accel_mg: [-1, 0, 1000],
        battery_mv: 3300,
        status: SensorStatus::Warming,
        config_version: 1,
        label: "ab",
    }
}

#[test]
fn stream_ids() {
    assert_eq!((TELEMETRY_STREAM, CONFIG_STREAM), (1, 2));
}

#[test]
fn telemetry_bytes_and_roundtrip() {
    let t = telemetry();
    let mut buf = [0u8; 64];
    let n = t.encode_into(&mut buf).unwrap();
    assert_eq!(&buf[..n], TELEMETRY_BYTES);
    assert_eq!(t.encoded_size(), TELEMETRY_BYTES.len());
    assert_eq!(Telemetry::from_bytes(TELEMETRY_BYTES), Ok(t));
}

#[test]
fn invalid_status_is_an_error_at_its_offset() {
    let mut bad = TELEMETRY_BYTES.to_vec();
    bad[24] = 9;
    let err = Telemetry::from_bytes(&bad).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::InvalidEnumValue, 24)
    );
    assert_eq!(SensorStatus::try_from(2u8), Ok(SensorStatus::Degraded));
    assert_eq!(SensorStatus::try_from(3u8), Err(3));
    assert_eq!(u8::from(SensorStatus::Warming), 1);
    assert_eq!(SensorStatus::default(), SensorStatus::Ok);
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
    assert_eq!(ConfigAck::from_bytes(&buf[..n]), Ok(ack));
    let s = StreamSummary {
        records_sent: Some(3),
        ..Default::default()
    };
    let n = s.encode_into(&mut buf).unwrap();
    assert_eq!(&buf[..n], &[6, 0, 0, 0, 1, 3, 0, 0, 0, 0]);
    assert_eq!(StreamSummary::from_bytes(&buf[..n]), Ok(s));
}

#[test]
fn a_field_from_a_newer_schema_ends_the_message() {
    // version 7, then a tag 9 this schema does not know: the rest of the body is skipped.
    let bytes = [11, 0, 0, 0, 1, 7, 0, 0, 0, 9, 0xaa, 0xbb, 0xcc, 0xdd, 0];
    assert_eq!(
        ConfigAck::from_bytes(&bytes),
        Ok(ConfigAck {
            version: Some(7),
            ..Default::default()
        })
    );
}

/// The owned forms (what the demo's host program uses) read and write the same bytes.
#[cfg(feature = "owned")]
#[test]
fn owned_types_match_the_views() {
    use bebop_runtime::EncodeExt;
    use target_schema::telemetry::owned;

    let t = owned::Telemetry::from_bytes(TELEMETRY_BYTES).unwrap();
    assert_eq!(t.label, "ab");
    assert_eq!(t.accel_mg, [-1, 0, 1000]);
    assert_eq!(t.status, SensorStatus::Warming);
    assert_eq!(t, telemetry().to_owned_value());
    assert_eq!(t.encode_to_vec().unwrap(), TELEMETRY_BYTES);
    let cfg = owned::DeviceConfig {
        version: Some(2),
        label: Some("x".into()),
        ..Default::default()
    };
    let bytes = cfg.encode_to_vec().unwrap();
    assert_eq!(
        bytes,
        [13, 0, 0, 0, 1, 2, 0, 0, 0, 3, 1, 0, 0, 0, b'x', 0, 0]
    );
    assert_eq!(
        DeviceConfig::from_bytes(&bytes).unwrap().to_owned_value(),
        cfg
    );
    assert_eq!(cfg.as_view().encode_to_vec().unwrap(), bytes);
}
