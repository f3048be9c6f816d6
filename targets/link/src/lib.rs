//! # serial-link
//!
//! Bebop records on a byte stream that can lose or damage bytes, such as a UART. `no_std`,
//! no allocator; the firmware and the host program share it.
//!
//! ## The framing
//!
//! One frame on the wire is
//!
//! ```text
//! COBS( FrameHeader (9 bytes) | payload (length bytes) | [cursor (8 bytes)] | CRC-32 (4 bytes) ) 0x00
//! ```
//!
//! - `FrameHeader` is the frame header of Bebop RPC (`docs/rpc.md`, "Frames"): `length: uint32`
//!   (payload bytes), `flags: byte` ([`FrameFlags`]: `END_STREAM` 0x01, `ERROR` 0x02,
//!   `COMPRESSED` 0x04, `TRAILER` 0x08, `CURSOR` 0x10), `stream_id: uint32`, little-endian.
//!   The payload is one Bebop-encoded value. With `CURSOR`, 8 bytes of little-endian `u64`
//!   follow the payload, not counted in `length`, exactly as in RPC.
//! - What a byte stream needs on top of RPC frames: a **CRC-32** (IEEE, as in zlib and
//!   Ethernet; little-endian) over header, payload and cursor, so that damaged bytes are
//!   detected, and **COBS** (Consistent Overhead Byte Stuffing), which rewrites the frame
//!   without any `0x00` byte (one extra byte per 254), so that a single `0x00` can end every
//!   frame.
//! - **Resynchronisation**: a receiver collects bytes up to the next `0x00`, whatever happened
//!   before. A frame with a flipped bit fails its CRC ([`FrameError::Corrupted`]); a frame cut
//!   short ends at the next zero on the line and fails as [`FrameError::Truncated`] (COBS blocks cut off, or fewer bytes than the header
//!   announces). Either way exactly one frame is lost and the next one is read normally. A
//!   receiver joining mid-stream loses at most the frame in flight; a sender may put a `0x00`
//!   before its first frame to flush whatever a receiver had collected.
//! - Checks, in order: COBS well-formed, at least 13 bytes, CRC, `length` agrees with the
//!   bytes, and the flag rules of `docs/rpc.md` ("Frame flags": `ERROR`/`TRAILER` need
//!   `END_STREAM`, not both). Reserved flag bits are ignored.
//!
//! Stream ids and payload types are the application's business (the serial demo's are in
//! `target-schema`'s `telemetry` module).
//!
//! ## Pieces
//!
//! - [`encode_frame`]: a value straight into a wire frame (no intermediate buffer).
//! - [`Deframer`]: bytes in, checked [`Frame`]s or [`FrameError`]s out, in a fixed buffer.
//! - [`SharedLink`]: a deframer and frame queue shared between an interrupt handler and the
//!   main loop (critical-section mutex, portable-atomic counters).
//! - [`cobs`], [`crc32`], [`FrameHeader`]: the building blocks.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

mod frame;
mod shared;

/// COBS, from `bebop_core::rpc::link` (where RPC's serial link layer uses it too).
pub use bebop_core::rpc::link::cobs;
pub use bebop_core::rpc::link::{Crc32, crc32};
pub use bebop_core::rpc::{FrameFlags, FrameHeader, HEADER_SIZE};
pub use frame::{
    CURSOR_SIZE, Deframer, Frame, FrameError, OVERHEAD, encode_frame, max_wire_len, parse_frame,
};
pub use shared::{LinkStats, SharedLink, StatsSnapshot};
