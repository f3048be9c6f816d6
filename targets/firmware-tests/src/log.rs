//! Logging decoded values with defmt (feature `defmt`): the types' `defmt::Format` impls come
//! from bebop-core's `defmt` feature and the generated code (`target-schema`'s `defmt`).
//! Without the feature these are no-ops. `defmt::println!` is used (not `info!`) so the
//! output does not depend on the `DEFMT_LOG` filter at build time.

use crate::schema::{JsonValue, Order, Telemetry};

#[cfg(feature = "defmt")]
pub fn order(order: &Order<'_>) {
    defmt::println!("decoded OrderLarge: {}", order);
}

#[cfg(not(feature = "defmt"))]
pub fn order(_: &Order<'_>) {}

#[cfg(feature = "defmt")]
pub fn json(value: &JsonValue<'_>) {
    defmt::println!("decoded JsonSmall: {}", value);
}

#[cfg(not(feature = "defmt"))]
pub fn json(_: &JsonValue<'_>) {}

#[cfg(feature = "defmt")]
pub fn telemetry(t: &Telemetry<'_>) {
    defmt::println!("decoded {}", t);
}

#[cfg(not(feature = "defmt"))]
pub fn telemetry(_: &Telemetry<'_>) {}

#[cfg(feature = "defmt")]
pub fn error(what: &str, e: &bebop_core::Error) {
    defmt::println!("{=str} rejected: {}", what, e);
}

#[cfg(not(feature = "defmt"))]
pub fn error(_: &str, _: &bebop_core::Error) {}

#[cfg(feature = "defmt")]
pub fn stats(s: &serial_link::StatsSnapshot) {
    defmt::println!("link stats {}", s);
}

#[cfg(not(feature = "defmt"))]
pub fn stats(_: &serial_link::StatsSnapshot) {}

/// Says whether the defmt log went out (it is binary, next to this text).
pub fn banner() {
    #[cfg(feature = "defmt")]
    qemu_board::semihosting::hprintln!(
        "defmt: values were logged through bebop-core's defmt impls"
    );
}
