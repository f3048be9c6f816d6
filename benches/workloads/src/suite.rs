//! The formats, the operations measured on each, the workloads, and the checks that every
//! workload round-trips through every format.
//!
//! [`for_each_workload`] hands each workload to a [`WorkloadVisitor`]; [`Prepared::new`] makes
//! every form and encoding of one workload; [`Prepared::verify`] checks them; and
//! [`Prepared::cases`] hands a [`CaseSink`] one timing closure per format and operation, which
//! the report runner and the criterion bench both time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bebop_runtime::{Decode as _, Encode as _};
use bumpalo::Bump;
use prost::Message as _;
use rkyv::rancor;
use rkyv::util::AlignedVec;
use serde::Serialize;

use crate::data::Dataset;
use crate::shape::Shape;
use crate::walk::checksum;

/// A serialisation format, with the natural decoded form it is measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Format {
    /// Our generated code: views over the input (`from_bytes` validates everything up front);
    /// encode from a view into a caller's buffer.
    Bebop,
    /// Our generated owned types (`String`, `Vec`, `BTreeMap`), decoded straight from bytes:
    /// the approach of the earlier Rust plugin, shown for the cost the views avoid. Encode
    /// from the owned value into a reused `Vec`.
    BebopOwned,
    /// prost: owned messages.
    Prost,
    /// rkyv: validated zero-copy access (`rkyv::access`, bytecheck) to the archive.
    Rkyv,
    /// postcard (serde): owned values; encode into a caller's buffer.
    Postcard,
    /// bincode 2 (serde, standard config): owned values; encode into a caller's buffer.
    Bincode,
    /// rmp-serde (MessagePack, structs as maps with field names): owned values.
    MsgPack,
    /// serde_json: owned values.
    SerdeJson,
    /// simd-json (serde): owned values; decoding parses a mutable copy of the input, and the
    /// copy is part of the measured time.
    SimdJson,
}

impl Format {
    /// Every format, ours first.
    pub const ALL: [Format; 9] = [
        Format::Bebop,
        Format::BebopOwned,
        Format::Prost,
        Format::Rkyv,
        Format::Postcard,
        Format::Bincode,
        Format::MsgPack,
        Format::SerdeJson,
        Format::SimdJson,
    ];

    /// The peers (everything but our two forms).
    pub const PEERS: [Format; 7] = [
        Format::Prost,
        Format::Rkyv,
        Format::Postcard,
        Format::Bincode,
        Format::MsgPack,
        Format::SerdeJson,
        Format::SimdJson,
    ];

    /// A short name for tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Format::Bebop => "bebop",
            Format::BebopOwned => "bebop-owned",
            Format::Prost => "prost",
            Format::Rkyv => "rkyv",
            Format::Postcard => "postcard",
            Format::Bincode => "bincode",
            Format::MsgPack => "rmp-serde",
            Format::SerdeJson => "serde_json",
            Format::SimdJson => "simd-json",
        }
    }

    /// What "decode" produces for this format.
    pub fn decoded_form(self) -> &'static str {
        match self {
            Format::Bebop => "generated view, validated in one pass (strings, enums, nesting)",
            Format::BebopOwned => "generated owned type (String/Vec/BTreeMap)",
            Format::Prost => "prost message (owned)",
            Format::Rkyv => "archived value via rkyv::access (bytecheck validation)",
            Format::Postcard | Format::Bincode | Format::MsgPack | Format::SerdeJson => {
                "owned serde type"
            }
            Format::SimdJson => "owned serde type (input copied to a mutable buffer first)",
        }
    }

    /// Where "encode" writes.
    pub fn encode_target(self) -> &'static str {
        match self {
            Format::Bebop | Format::Postcard | Format::Bincode => "caller's byte slice",
            Format::Rkyv => "reused AlignedVec",
            _ => "reused Vec<u8>",
        }
    }

    /// The name of the encoding these bytes are in (Bebop's two forms share one).
    pub fn wire(self) -> &'static str {
        match self {
            Format::Bebop | Format::BebopOwned => "bebop",
            f => f.name(),
        }
    }
}

/// An operation timed on a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Op {
    /// Value to bytes.
    Encode,
    /// Bytes to the format's decoded form (see [`Format::decoded_form`]).
    Decode,
    /// Decode, then read every field ([`crate::walk`]).
    DecodeWalk,
    /// Encode, then decode what was written.
    RoundTrip,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 4] = [Op::Encode, Op::Decode, Op::DecodeWalk, Op::RoundTrip];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Encode => "encode",
            Op::Decode => "decode",
            Op::DecodeWalk => "decode+walk",
            Op::RoundTrip => "round trip",
        }
    }

    /// The name as an identifier: criterion's benchmark ids and `examples/profile.rs`.
    pub fn id(self) -> &'static str {
        match self {
            Op::Encode => "encode",
            Op::Decode => "decode",
            Op::DecodeWalk => "decode_walk",
            Op::RoundTrip => "round_trip",
        }
    }
}

/// A workload: its name as in the paper and the harness, and its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadInfo {
    /// The workload's name, e.g. `PersonSmall`.
    pub name: &'static str,
    /// Its group in the paper's tables.
    pub category: &'static str,
}

/// Receives each workload with its value, whatever its type.
pub trait WorkloadVisitor {
    /// Called once per workload, in the paper's order.
    fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S);
}

/// The workloads in the order of the paper's tables.
pub const WORKLOADS: [WorkloadInfo; 23] = {
    const fn w(name: &'static str, category: &'static str) -> WorkloadInfo {
        WorkloadInfo { name, category }
    }
    [
        w("Embedding384", "ML inference"),
        w("Embedding768", "ML inference"),
        w("Embedding1536", "ML inference"),
        w("EmbeddingF32_768", "ML inference"),
        w("EmbeddingBatch", "ML inference"),
        w("TensorShardSmall", "ML inference"),
        w("TensorShardLarge", "ML inference"),
        w("InferenceResponse", "ML inference"),
        w("LLMChunkSmall", "LLM streaming"),
        w("LLMChunkLarge", "LLM streaming"),
        w("ChunkedText", "LLM streaming"),
        w("EventSmall", "Event telemetry"),
        w("EventLarge", "Event telemetry"),
        w("PersonSmall", "API payloads"),
        w("PersonMedium", "API payloads"),
        w("OrderSmall", "API payloads"),
        w("OrderLarge", "API payloads"),
        w("DocumentSmall", "API payloads"),
        w("DocumentLarge", "API payloads"),
        w("TreeDeep", "Recursive"),
        w("TreeWide", "Recursive"),
        w("JsonSmall", "Recursive"),
        w("JsonLarge", "Recursive"),
    ]
};

/// Hands every workload of `data` to `v`, in the order of [`WORKLOADS`].
pub fn for_each_workload(data: &Dataset, v: &mut impl WorkloadVisitor) {
    let [
        e384,
        e768,
        e1536,
        ef32,
        batch,
        ts_small,
        ts_large,
        inference,
        llm_small,
        llm_large,
        chunked,
        ev_small,
        ev_large,
        p_small,
        p_medium,
        o_small,
        o_large,
        d_small,
        d_large,
        t_deep,
        t_wide,
        j_small,
        j_large,
    ] = WORKLOADS;
    v.visit(e384, &data.embedding_384);
    v.visit(e768, &data.embedding_768);
    v.visit(e1536, &data.embedding_1536);
    v.visit(ef32, &data.embedding_f32_768);
    v.visit(batch, &data.embedding_batch);
    v.visit(ts_small, &data.tensor_shard_small);
    v.visit(ts_large, &data.tensor_shard_large);
    v.visit(inference, &data.inference_response);
    v.visit(llm_small, &data.llm_chunk_small);
    v.visit(llm_large, &data.llm_chunk_large);
    v.visit(chunked, &data.chunked_text);
    v.visit(ev_small, &data.event_small);
    v.visit(ev_large, &data.event_large);
    v.visit(p_small, &data.person_small);
    v.visit(p_medium, &data.person_medium);
    v.visit(o_small, &data.order_small);
    v.visit(o_large, &data.order_large);
    v.visit(d_small, &data.document_small);
    v.visit(d_large, &data.document_large);
    v.visit(t_deep, &data.tree_deep);
    v.visit(t_wide, &data.tree_wide);
    v.visit(j_small, &data.json_small);
    v.visit(j_large, &data.json_large);
}

/// The text-bearing workloads again, on pure-ASCII text ([`TextMode::Ascii`]): the second row
/// that shows what realistic text costs against the ASCII fast path. Same shapes, values and
/// wire sizes as the rows of [`WORKLOADS`] they are named after.
///
/// [`TextMode::Ascii`]: crate::text::TextMode::Ascii
pub const ASCII_WORKLOADS: [WorkloadInfo; 9] = {
    const fn w(name: &'static str, category: &'static str) -> WorkloadInfo {
        WorkloadInfo { name, category }
    }
    [
        w("LLMChunkSmall (ASCII)", "LLM streaming"),
        w("LLMChunkLarge (ASCII)", "LLM streaming"),
        w("ChunkedText (ASCII)", "LLM streaming"),
        w("PersonSmall (ASCII)", "API payloads"),
        w("PersonMedium (ASCII)", "API payloads"),
        w("DocumentSmall (ASCII)", "API payloads"),
        w("DocumentLarge (ASCII)", "API payloads"),
        w("JsonSmall (ASCII)", "Recursive"),
        w("JsonLarge (ASCII)", "Recursive"),
    ]
};

/// True for the name of an [`ASCII_WORKLOADS`] row.
pub fn is_ascii_row(workload: &str) -> bool {
    ASCII_WORKLOADS.iter().any(|w| w.name == workload)
}

/// The [`ASCII_WORKLOADS`] row of a workload, if it has one.
pub fn ascii_row_of(workload: &str) -> Option<&'static str> {
    ASCII_WORKLOADS
        .iter()
        .map(|w| w.name)
        .find(|name| name.strip_suffix(" (ASCII)") == Some(workload))
}

/// Hands `v` the [`ASCII_WORKLOADS`] of `ascii` whose value differs from the same workload of
/// `mixed` (a short string may have drawn no multi-byte character, and then has no second
/// row).
pub fn for_each_ascii_workload(mixed: &Dataset, ascii: &Dataset, v: &mut impl WorkloadVisitor) {
    let [
        llm_small,
        llm_large,
        chunked,
        p_small,
        p_medium,
        d_small,
        d_large,
        j_small,
        j_large,
    ] = ASCII_WORKLOADS;
    fn visit<S: Shape>(v: &mut impl WorkloadVisitor, info: WorkloadInfo, mixed: &S, ascii: &S) {
        if mixed != ascii {
            v.visit(info, ascii);
        }
    }
    visit(v, llm_small, &mixed.llm_chunk_small, &ascii.llm_chunk_small);
    visit(v, llm_large, &mixed.llm_chunk_large, &ascii.llm_chunk_large);
    visit(v, chunked, &mixed.chunked_text, &ascii.chunked_text);
    visit(v, p_small, &mixed.person_small, &ascii.person_small);
    visit(v, p_medium, &mixed.person_medium, &ascii.person_medium);
    visit(v, d_small, &mixed.document_small, &ascii.document_small);
    visit(v, d_large, &mixed.document_large, &ascii.document_large);
    visit(v, j_small, &mixed.json_small, &ascii.json_small);
    visit(v, j_large, &mixed.json_large, &ascii.json_large);
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes `p` in `format` into a new buffer (not timed; for sizes and checks).
fn encode_once<S: Shape>(
    format: Format,
    model: &S,
    owned: &S::Owned,
    pb: &S::Pb,
    view: &S::View<'_>,
) -> Result<Vec<u8>, String> {
    let err = |e: &dyn std::fmt::Display| format!("{} encode failed: {e}", format.name());
    match format {
        Format::Bebop => bebop_runtime::EncodeExt::encode_to_vec(view).map_err(|e| err(&e)),
        Format::BebopOwned => bebop_runtime::EncodeExt::encode_to_vec(owned).map_err(|e| err(&e)),
        Format::Prost => Ok(pb.encode_to_vec()),
        Format::Rkyv => rkyv::to_bytes::<rancor::Error>(model)
            .map(|v| v.to_vec())
            .map_err(|e| err(&e)),
        Format::Postcard => postcard::to_allocvec(model).map_err(|e| err(&e)),
        Format::Bincode => {
            bincode::serde::encode_to_vec(model, bincode_config()).map_err(|e| err(&e))
        }
        Format::MsgPack => rmp_serde::to_vec_named(model).map_err(|e| err(&e)),
        Format::SerdeJson => serde_json::to_vec(model).map_err(|e| err(&e)),
        Format::SimdJson => simd_json::serde::to_vec(model).map_err(|e| err(&e)),
    }
}

/// One workload ready to measure: every form of the value and its encoding in every format.
pub struct Prepared<'a, S: Shape> {
    /// The workload.
    pub info: WorkloadInfo,
    /// The original value (the serde peers' and rkyv's form).
    pub model: &'a S,
    /// The Bebop owned form.
    pub owned: S::Owned,
    /// The prost form.
    pub pb: S::Pb,
    /// A Bebop view of the value, with element storage in an arena.
    pub view: S::View<'a>,
    /// The encoding in each format, in the order of [`Format::ALL`].
    pub encoded: Vec<Vec<u8>>,
    /// The rkyv encoding again, aligned as `rkyv::access` needs.
    pub rkyv: AlignedVec,
}

/// A failed check, with what failed.
pub type CheckResult = Result<(), String>;

impl<'a, S: Shape> Prepared<'a, S> {
    /// Makes every form and encoding of `model`.
    pub fn new(info: WorkloadInfo, model: &'a S, arena: &'a Bump) -> Result<Self, String> {
        let owned = model.to_owned_bebop();
        let pb = model.to_pb();
        let view = model.view(arena);
        let encoded = Format::ALL
            .iter()
            .map(|&f| encode_once(f, model, &owned, &pb, &view))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: {e}", info.name))?;
        let rkyv = rkyv::to_bytes::<rancor::Error>(model)
            .map_err(|e| format!("{}: rkyv encode failed: {e}", info.name))?;
        Ok(Prepared {
            info,
            model,
            owned,
            pb,
            view,
            encoded,
            rkyv,
        })
    }

    /// The bytes of `format`.
    pub fn bytes(&self, format: Format) -> &[u8] {
        let i = Format::ALL.iter().position(|&f| f == format).unwrap_or(0);
        &self.encoded[i]
    }

    /// Decodes `bytes` as `format` and converts the result back to the model form, also
    /// returning the walk checksum of the decoded form.
    pub fn decode_to_model(format: Format, bytes: &[u8]) -> Result<(S, u64), String> {
        let err = |e: &dyn std::fmt::Display| format!("{} decode failed: {e}", format.name());
        match format {
            Format::Bebop => {
                let v = <S::View<'_>>::from_bytes(bytes).map_err(|e| err(&e))?;
                Ok((S::from_owned_bebop(&S::view_to_owned(v)), checksum(&v)))
            }
            Format::BebopOwned => {
                let o = S::Owned::from_bytes(bytes).map_err(|e| err(&e))?;
                Ok((S::from_owned_bebop(&o), checksum(&o)))
            }
            Format::Prost => {
                let p = S::Pb::decode(bytes).map_err(|e| err(&e))?;
                Ok((S::from_pb(&p), checksum(&p)))
            }
            Format::Rkyv => {
                let mut aligned = AlignedVec::<16>::with_capacity(bytes.len());
                aligned.extend_from_slice(bytes);
                let archived =
                    rkyv::access::<S::Archived, rancor::Error>(&aligned).map_err(|e| err(&e))?;
                let sum = checksum(archived);
                let value = rkyv::deserialize::<S, rancor::Error>(archived).map_err(|e| err(&e))?;
                Ok((value, sum))
            }
            Format::Postcard => {
                let v: S = postcard::from_bytes(bytes).map_err(|e| err(&e))?;
                let sum = checksum(&v);
                Ok((v, sum))
            }
            Format::Bincode => {
                let (v, used): (S, usize) =
                    bincode::serde::decode_from_slice(bytes, bincode_config())
                        .map_err(|e| err(&e))?;
                if used != bytes.len() {
                    return Err(format!(
                        "bincode decode used {used} of {} bytes",
                        bytes.len()
                    ));
                }
                let sum = checksum(&v);
                Ok((v, sum))
            }
            Format::MsgPack => {
                let v: S = rmp_serde::from_slice(bytes).map_err(|e| err(&e))?;
                let sum = checksum(&v);
                Ok((v, sum))
            }
            Format::SerdeJson => {
                let v: S = serde_json::from_slice(bytes).map_err(|e| err(&e))?;
                let sum = checksum(&v);
                Ok((v, sum))
            }
            Format::SimdJson => {
                let mut copy = bytes.to_vec();
                let v: S = simd_json::serde::from_slice(&mut copy).map_err(|e| err(&e))?;
                let sum = checksum(&v);
                Ok((v, sum))
            }
        }
    }

    /// Checks that every format round-trips: what each encodes decodes to a value equal to the
    /// original, whose walk reads the same as the original's; Bebop's view and owned forms
    /// encode the same bytes; and the view's owned copy equals the owned decode.
    pub fn verify(&self) -> CheckResult {
        let name = self.info.name;
        let expected = checksum(self.model);
        for &format in &Format::ALL {
            let bytes = self.bytes(format);
            let (decoded, sum) =
                Self::decode_to_model(format, bytes).map_err(|e| format!("{name}: {e}"))?;
            if &decoded != self.model {
                return Err(format!(
                    "{name}: {} round trip changed the value",
                    format.name()
                ));
            }
            if sum != expected {
                return Err(format!(
                    "{name}: walking the {} decoded form read {sum:#x}, the original reads {expected:#x}",
                    format.name()
                ));
            }
        }
        if self.bytes(Format::Bebop) != self.bytes(Format::BebopOwned) {
            return Err(format!(
                "{name}: the Bebop view and owned forms encode different bytes"
            ));
        }
        if self.bytes(Format::Rkyv) != &self.rkyv[..] {
            return Err(format!("{name}: rkyv encodings differ between runs"));
        }
        let bytes = self.bytes(Format::Bebop);
        let view = <S::View<'_>>::from_bytes(bytes).map_err(|e| format!("{name}: {e}"))?;
        let owned = S::Owned::from_bytes(bytes).map_err(|e| format!("{name}: {e}"))?;
        if S::from_owned_bebop(&S::view_to_owned(view)) != S::from_owned_bebop(&owned) {
            return Err(format!(
                "{name}: the view's owned copy differs from the owned decode"
            ));
        }
        if view.encoded_size() != bytes.len() {
            return Err(format!(
                "{name}: a decoded view reports {} bytes, the encoding has {}",
                view.encoded_size(),
                bytes.len()
            ));
        }
        Ok(())
    }

    /// Hands `sink` a timing closure for every format and operation. Each closure runs its
    /// operation `iters` times and returns the elapsed time.
    pub fn cases(&self, sink: &mut dyn CaseSink) {
        for &format in &Format::ALL {
            for &op in &Op::ALL {
                let bytes = self.bytes(format);
                let mut run = self.runner(format, op);
                sink.case(self.info, format, op, bytes.len(), &mut *run);
            }
        }
    }

    /// The timing closure for one format and operation.
    pub fn runner(&self, format: Format, op: Op) -> Box<dyn FnMut(u64) -> Duration + '_> {
        let bytes = self.bytes(format);
        let len = bytes.len();
        match (format, op) {
            (Format::Bebop, Op::Encode) => {
                let mut buf = vec![0u8; len];
                timed(move || self.view.encode_into(black_box(&mut buf)).unwrap_or(0))
            }
            (Format::Bebop, Op::Decode) => {
                timed(move || black_box(<S::View<'_>>::from_bytes(black_box(bytes))).is_ok())
            }
            (Format::Bebop, Op::DecodeWalk) => timed(move || {
                <S::View<'_>>::from_bytes(black_box(bytes)).map_or(0, |v| checksum(&v))
            }),
            (Format::Bebop, Op::RoundTrip) => {
                let mut buf = vec![0u8; len];
                timed(move || {
                    let n = self.view.encode_into(black_box(&mut buf)).unwrap_or(0);
                    black_box(<S::View<'_>>::from_bytes(black_box(&buf[..n]))).is_ok()
                })
            }
            (Format::BebopOwned, Op::Encode) => {
                let mut out = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    black_box(&self.owned).encode(&mut out).is_ok()
                })
            }
            (Format::BebopOwned, Op::Decode) => {
                timed(move || black_box(S::Owned::from_bytes(black_box(bytes))).is_ok())
            }
            (Format::BebopOwned, Op::DecodeWalk) => {
                timed(move || S::Owned::from_bytes(black_box(bytes)).map_or(0, |v| checksum(&v)))
            }
            (Format::BebopOwned, Op::RoundTrip) => {
                let mut out = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    let _ = black_box(&self.owned).encode(&mut out);
                    black_box(S::Owned::from_bytes(black_box(&out))).is_ok()
                })
            }
            (Format::Prost, Op::Encode) => {
                let mut out = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    black_box(&self.pb).encode(&mut out).is_ok()
                })
            }
            (Format::Prost, Op::Decode) => {
                timed(move || black_box(S::Pb::decode(black_box(bytes))).is_ok())
            }
            (Format::Prost, Op::DecodeWalk) => {
                timed(move || S::Pb::decode(black_box(bytes)).map_or(0, |v| checksum(&v)))
            }
            (Format::Prost, Op::RoundTrip) => {
                let mut out = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    let _ = black_box(&self.pb).encode(&mut out);
                    black_box(S::Pb::decode(black_box(&out[..]))).is_ok()
                })
            }
            (Format::Rkyv, Op::Encode) => {
                let mut out = AlignedVec::<16>::with_capacity(len);
                timed(move || {
                    out.clear();
                    let taken = std::mem::take(&mut out);
                    match rkyv::api::high::to_bytes_in::<_, rancor::Error>(
                        black_box(self.model),
                        taken,
                    ) {
                        Ok(v) => {
                            out = v;
                            true
                        }
                        Err(_) => false,
                    }
                })
            }
            (Format::Rkyv, Op::Decode) => {
                let aligned = &self.rkyv;
                timed(move || {
                    black_box(rkyv::access::<S::Archived, rancor::Error>(black_box(
                        aligned,
                    )))
                    .is_ok()
                })
            }
            (Format::Rkyv, Op::DecodeWalk) => {
                let aligned = &self.rkyv;
                timed(move || {
                    rkyv::access::<S::Archived, rancor::Error>(black_box(aligned))
                        .map_or(0, checksum)
                })
            }
            (Format::Rkyv, Op::RoundTrip) => {
                let mut out = AlignedVec::<16>::with_capacity(len);
                timed(move || {
                    out.clear();
                    let taken = std::mem::take(&mut out);
                    if let Ok(v) = rkyv::api::high::to_bytes_in::<_, rancor::Error>(
                        black_box(self.model),
                        taken,
                    ) {
                        out = v;
                    }
                    black_box(rkyv::access::<S::Archived, rancor::Error>(black_box(&out))).is_ok()
                })
            }
            (Format::Postcard, Op::Encode) => {
                let mut buf = vec![0u8; len];
                timed(move || {
                    postcard::to_slice(black_box(self.model), &mut buf).map_or(0, |s| s.len())
                })
            }
            (Format::Bincode, Op::Encode) => {
                let mut buf = vec![0u8; len];
                timed(move || {
                    bincode::serde::encode_into_slice(
                        black_box(self.model),
                        &mut buf,
                        bincode_config(),
                    )
                    .unwrap_or(0)
                })
            }
            (Format::Postcard, Op::RoundTrip) => {
                let mut buf = vec![0u8; len];
                timed(move || {
                    let n =
                        postcard::to_slice(black_box(self.model), &mut buf).map_or(0, |s| s.len());
                    black_box(postcard::from_bytes::<S>(black_box(&buf[..n]))).is_ok()
                })
            }
            (Format::Bincode, Op::RoundTrip) => {
                let mut buf = vec![0u8; len];
                timed(move || {
                    let n = bincode::serde::encode_into_slice(
                        black_box(self.model),
                        &mut buf,
                        bincode_config(),
                    )
                    .unwrap_or(0);
                    black_box(bincode::serde::decode_from_slice::<S, _>(
                        black_box(&buf[..n]),
                        bincode_config(),
                    ))
                    .is_ok()
                })
            }
            (Format::MsgPack | Format::SerdeJson | Format::SimdJson, Op::Encode) => {
                let mut out = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    serde_encode(format, black_box(self.model), &mut out)
                })
            }
            (Format::MsgPack | Format::SerdeJson | Format::SimdJson, Op::RoundTrip) => {
                let mut out = Vec::with_capacity(len);
                let mut scratch = Vec::with_capacity(len);
                timed(move || {
                    out.clear();
                    serde_encode(format, black_box(self.model), &mut out);
                    black_box(serde_decode::<S>(format, black_box(&out), &mut scratch)).is_some()
                })
            }
            (_, Op::Decode) => {
                let mut scratch = Vec::with_capacity(len);
                timed(move || {
                    black_box(serde_decode::<S>(format, black_box(bytes), &mut scratch)).is_some()
                })
            }
            (_, Op::DecodeWalk) => {
                let mut scratch = Vec::with_capacity(len);
                timed(move || {
                    serde_decode::<S>(format, black_box(bytes), &mut scratch)
                        .map_or(0, |v| checksum(&v))
                })
            }
        }
    }
}

/// Encodes with one of the serde formats that write into a `Vec` (rmp-serde, serde_json,
/// simd-json).
#[inline]
fn serde_encode<S: Shape>(format: Format, value: &S, out: &mut Vec<u8>) -> bool {
    match format {
        Format::MsgPack => rmp_serde::encode::write_named(out, value).is_ok(),
        Format::SerdeJson => serde_json::to_writer(&mut *out, value).is_ok(),
        _ => simd_json::serde::to_writer(&mut *out, value).is_ok(),
    }
}

/// Decodes with one of the serde formats; simd-json parses a copy made in `scratch`.
#[inline]
fn serde_decode<S: Shape>(format: Format, bytes: &[u8], scratch: &mut Vec<u8>) -> Option<S> {
    match format {
        Format::Postcard => postcard::from_bytes(bytes).ok(),
        Format::Bincode => bincode::serde::decode_from_slice(bytes, bincode_config())
            .ok()
            .map(|(v, _)| v),
        Format::MsgPack => rmp_serde::from_slice(bytes).ok(),
        Format::SerdeJson => serde_json::from_slice(bytes).ok(),
        _ => {
            scratch.clear();
            scratch.extend_from_slice(bytes);
            simd_json::serde::from_slice(scratch).ok()
        }
    }
}

/// Wraps one operation as a closure that runs it `iters` times and returns the elapsed time.
pub(crate) fn timed<'a, R>(mut op: impl FnMut() -> R + 'a) -> Box<dyn FnMut(u64) -> Duration + 'a> {
    Box::new(move |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(op());
        }
        start.elapsed()
    })
}

/// Receives timing closures.
pub trait CaseSink {
    /// One format and operation on one workload; `run(iters)` runs it `iters` times and
    /// returns the elapsed time. `wire_bytes` is the size of the format's encoding.
    fn case(
        &mut self,
        workload: WorkloadInfo,
        format: Format,
        op: Op,
        wire_bytes: usize,
        run: &mut dyn FnMut(u64) -> Duration,
    );
}

/// A case's timed closure ([`CaseSink::case`]): runs the operation `iters` times and returns
/// the elapsed time.
pub type TimedRun<'a> = dyn FnMut(u64) -> Duration + 'a;

/// True when a workload named `name` is among those `only` asks for: every workload when
/// `only` is empty, else those whose name contains one of its entries (`--only`).
pub fn is_chosen(name: &str, only: &[String]) -> bool {
    only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
}

/// Builds the workloads, prepares and verifies `workload`, and hands `run` the size of its
/// encoding and the timed closure of the case `format` · `op` (named as [`Format::name`]
/// and [`Op::id`] name them). `Ok(false)` when there is no such case: an unknown name, or an
/// ASCII row whose text drew no multi-byte character. For running one case alone
/// (`examples/profile.rs`, `instr-report`).
pub fn with_case(
    workload: &str,
    format: &str,
    op: &str,
    run: &mut dyn FnMut(usize, &mut TimedRun<'_>),
) -> Result<bool, String> {
    struct Target<'n, 'r> {
        workload: &'n str,
        format: &'n str,
        op: &'n str,
        run: &'r mut dyn FnMut(usize, &mut TimedRun<'_>),
        outcome: Result<bool, String>,
    }
    impl CaseSink for Target<'_, '_> {
        fn case(
            &mut self,
            _workload: WorkloadInfo,
            format: Format,
            op: Op,
            wire_bytes: usize,
            run: &mut dyn FnMut(u64) -> Duration,
        ) {
            if format.name() == self.format && op.id() == self.op {
                (self.run)(wire_bytes, run);
                self.outcome = Ok(true);
            }
        }
    }
    impl WorkloadVisitor for Target<'_, '_> {
        fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
            if info.name != self.workload {
                return;
            }
            let arena = Bump::new();
            match Prepared::new(info, value, &arena).and_then(|p| p.verify().map(|()| p)) {
                Ok(prepared) => prepared.cases(self),
                Err(e) => self.outcome = Err(e),
            }
        }
    }
    let mut target = Target {
        workload,
        format,
        op,
        run,
        outcome: Ok(false),
    };
    let data = Dataset::build();
    if is_ascii_row(workload) {
        let ascii = Dataset::build_with(crate::text::TextMode::Ascii);
        for_each_ascii_workload(&data, &ascii, &mut target);
    } else {
        for_each_workload(&data, &mut target);
    }
    target.outcome
}

/// Prepares and verifies every workload, failing on the first that does not round-trip.
pub fn verify_all(data: &Dataset) -> CheckResult {
    struct V(CheckResult);
    impl WorkloadVisitor for V {
        fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
            if self.0.is_err() {
                return;
            }
            let arena = Bump::new();
            self.0 = Prepared::new(info, value, &arena).and_then(|p| p.verify());
        }
    }
    let mut v = V(Ok(()));
    for_each_workload(data, &mut v);
    v.0
}
