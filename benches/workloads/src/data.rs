//! The workloads' data, built the way the reference harness builds it
//! (`lab/benchmark/c/src/harness.cpp` in the Bebop repository): the same shapes, string
//! lengths, counts, constants, random engine (64-bit Mersenne Twister seeded with 42) and
//! order of random draws.
//!
//! What differs, and why:
//! - **Values drawn through a C++ distribution** (ages, ids, prices, random strings, bfloat16
//!   and float vectors, the large LLM chunk's token ids and logprobs) use this module's own
//!   mapping from the engine's output to the range ([`Mt64::int_in`], [`Mt64::f64_in`],
//!   [`Mt64::f32_in`]), not the C++ standard library's (which differs between libc++ and
//!   libstdc++ anyway), so these values differ from the reference's. Raw engine draws (uuid
//!   bytes and the event payload, `rng() & 0xFF`; quantities, `rng() % 10 + 1`; the small LLM
//!   chunk's token ids, `rng() % 50000`) are the same expressions, but the engine's position
//!   differs wherever a distribution consumed more or fewer draws than the C++ one. Lengths,
//!   and so every uncompressed wire size of Bebop, do not depend on any of these values.
//! - **ChunkedText**: the reference reads "Alice's Adventures in Wonderland" from a file that
//!   is not available here. [`alice_like_text`] writes a deterministic stand-in of the same
//!   kind and size (about 150 KB of Markdown: `## Chapter` headings, other `##` headings and
//!   paragraphs), which the reference's span splitter, reimplemented in [`split_spans`], cuts
//!   into spans.
//! - **Text**: the harness's strings are ASCII but for its ChunkedText input, which has a
//!   few hundred multi-byte characters. Every text-bearing field here (names, titles, bodies,
//!   tokens, JSON string values, the ChunkedText source) is rewritten by
//!   [`crate::text::Texture`] at that rate, keeping every byte length; [`TextMode::Ascii`]
//!   builds the pure-ASCII text for the report's second rows.
//! - **Object key order**: the reference fills hash maps; here objects are `BTreeMap`s, so
//!   every format writes keys in ascending order.

use std::collections::BTreeMap;

use crate::model::*;
use crate::text::{TextMode, Texture};

/// The 64-bit Mersenne Twister (MT19937-64), the engine of the reference harness.
#[derive(Clone)]
pub struct Mt64 {
    state: [u64; 312],
    index: usize,
}

impl Mt64 {
    const N: usize = 312;
    const M: usize = 156;
    const UPPER: u64 = !0u64 << 31;
    const LOWER: u64 = (1u64 << 31) - 1;

    /// An engine seeded like `std::mt19937_64(seed)`.
    pub fn new(seed: u64) -> Self {
        let mut state = [0u64; 312];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Mt64 {
            state,
            index: Self::N,
        }
    }

    fn twist(&mut self) {
        for i in 0..Self::N {
            let x = (self.state[i] & Self::UPPER) | (self.state[(i + 1) % Self::N] & Self::LOWER);
            let mut xa = x >> 1;
            if x & 1 != 0 {
                xa ^= 0xB502_6F5A_A966_19E9;
            }
            self.state[i] = self.state[(i + Self::M) % Self::N] ^ xa;
        }
        self.index = 0;
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        if self.index >= Self::N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^= y >> 43;
        y
    }

    /// A uniform integer in `lo..=hi` (multiply-shift with rejection, so unbiased).
    pub fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        let range = (hi - lo) as u64 + 1;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(range);
            let low = product as u64;
            if low >= range.wrapping_neg() % range {
                return lo + (product >> 64) as i64;
            }
        }
    }

    /// A uniform `f64` in `lo..hi` from the top 53 bits of one draw.
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        lo + (hi - lo) * unit
    }

    /// A uniform `f32` in `lo..hi` from the top 24 bits of one draw.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
        lo + (hi - lo) * unit
    }
}

const CHARSET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn random_string(rng: &mut Mt64, len: usize) -> String {
    (0..len)
        .map(|_| char::from(CHARSET[rng.int_in(0, CHARSET.len() as i64 - 1) as usize]))
        .collect()
}

fn random_uuid(rng: &mut Mt64) -> [u8; 16] {
    let mut id = [0u8; 16];
    for b in &mut id {
        *b = (rng.next_u64() & 0xFF) as u8;
    }
    id[6] = (id[6] & 0x0F) | 0x40;
    id[8] = (id[8] & 0x3F) | 0x80;
    id
}

/// Rounds a float to the nearest bfloat16 (ties to even), as the reference does.
pub fn f32_to_bf16(f: f32) -> u16 {
    let bits = f.to_bits();
    (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

/// `dim` bfloat16 values uniform in [-1, 1).
pub fn random_bf16_vector(rng: &mut Mt64, dim: usize) -> Vec<u16> {
    (0..dim)
        .map(|_| f32_to_bf16(rng.f32_in(-1.0, 1.0)))
        .collect()
}

fn random_f32_vector(rng: &mut Mt64, dim: usize) -> Vec<f32> {
    (0..dim).map(|_| rng.f32_in(-1.0, 1.0)).collect()
}

fn number(n: f64) -> JsonValue {
    JsonValue::Number(n)
}

fn string(s: impl Into<String>) -> JsonValue {
    JsonValue::String(s.into())
}

fn object<const N: usize>(entries: [(&str, JsonValue); N]) -> JsonValue {
    JsonValue::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// The seed of the [`Texture`] of [`TextMode::Mixed`] data.
const TEXTURE_SEED: u64 = 2026;

/// Rewrites the string values (not the keys) of a JSON value.
fn texture_json(value: &mut JsonValue, apply: &mut impl FnMut(&mut String)) {
    match value {
        JsonValue::String(s) => apply(s),
        JsonValue::List(items) => items.iter_mut().for_each(|v| texture_json(v, apply)),
        JsonValue::Object(fields) => fields.values_mut().for_each(|v| texture_json(v, apply)),
        _ => {}
    }
}

/// Every workload's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// PersonSmall.
    pub person_small: Person,
    /// PersonMedium.
    pub person_medium: Person,
    /// OrderSmall (3 items).
    pub order_small: Order,
    /// OrderLarge (100 items).
    pub order_large: Order,
    /// EventSmall (4-byte payload).
    pub event_small: Event,
    /// EventLarge (4 KiB random payload).
    pub event_large: Event,
    /// TreeWide: a root with 100 leaf children.
    pub tree_wide: TreeNode,
    /// TreeDeep: a full binary tree of depth 10 (1023 nodes).
    pub tree_deep: TreeNode,
    /// JsonSmall: an object of 3 scalars.
    pub json_small: JsonValue,
    /// JsonLarge: an object with a list of 20 item objects.
    pub json_large: JsonValue,
    /// DocumentSmall: title and body.
    pub document_small: Document,
    /// DocumentLarge: a 2000-byte body and 3 metadata entries.
    pub document_large: Document,
    /// ChunkedText: about 150 KB of text and its spans.
    pub chunked_text: ChunkedText,
    /// Embedding384.
    pub embedding_384: EmbeddingBf16,
    /// Embedding768.
    pub embedding_768: EmbeddingBf16,
    /// Embedding1536.
    pub embedding_1536: EmbeddingBf16,
    /// EmbeddingF32_768.
    pub embedding_f32_768: EmbeddingF32,
    /// EmbeddingBatch: 8 vectors of 1536.
    pub embedding_batch: EmbeddingBatch,
    /// LLMChunkSmall: 3 tokens with one alternative each.
    pub llm_chunk_small: LlmStreamChunk,
    /// LLMChunkLarge: 32 tokens with 5 alternatives each.
    pub llm_chunk_large: LlmStreamChunk,
    /// TensorShardSmall: 1024 bfloat16 values.
    pub tensor_shard_small: TensorShard,
    /// TensorShardLarge: 32768 bfloat16 values (64 KiB).
    pub tensor_shard_large: TensorShard,
    /// InferenceResponse: 4 embeddings of 768.
    pub inference_response: InferenceResponse,
}

const TIMESTAMP: i64 = 1_704_067_200_000;

impl Dataset {
    /// Builds every workload, in the reference's order of random draws, with realistic text
    /// ([`TextMode::Mixed`]).
    pub fn build() -> Dataset {
        Dataset::build_with(TextMode::Mixed)
    }

    /// Builds every workload with the given kind of text. Both kinds have the same values,
    /// lengths and wire sizes; only the characters of the text-bearing fields differ.
    pub fn build_with(text: TextMode) -> Dataset {
        let ascii = Dataset::build_ascii();
        match text {
            TextMode::Ascii => ascii,
            TextMode::Mixed => ascii.textured(&mut Texture::new(TEXTURE_SEED)),
        }
    }

    /// The text-bearing fields (names, titles, bodies, tokens, JSON string values, the
    /// ChunkedText source) rewritten by `texture`, in a fixed order. Identifiers (event types,
    /// tensor names and dtypes, model names, JSON keys, emails) stay ASCII, as they are in
    /// real data.
    fn textured(mut self, texture: &mut Texture) -> Dataset {
        let mut apply = |s: &mut String| *s = texture.apply(s);
        apply(&mut self.person_small.name);
        apply(&mut self.person_medium.name);
        texture_json(&mut self.json_small, &mut apply);
        texture_json(&mut self.json_large, &mut apply);
        for doc in [&mut self.document_small, &mut self.document_large] {
            apply(&mut doc.title);
            apply(&mut doc.body);
            for value in doc.metadata.values_mut() {
                texture_json(value, &mut apply);
            }
        }
        for chunk in [&mut self.llm_chunk_small, &mut self.llm_chunk_large] {
            for token in &mut chunk.tokens {
                apply(token);
            }
            for alt in &mut chunk.logprobs {
                for top in &mut alt.top_tokens {
                    apply(&mut top.token);
                }
            }
        }
        apply(&mut self.chunked_text.source);
        // Byte lengths and line structure are kept, so the spans are the same.
        self.chunked_text.spans = split_spans(&self.chunked_text.source);
        self
    }

    /// Builds every workload with pure-ASCII text, in the reference's order of random draws.
    fn build_ascii() -> Dataset {
        let mut rng = Mt64::new(42);
        let id = |rng: &mut Mt64| rng.int_in(1, 1_000_000);
        let price = |rng: &mut Mt64| rng.f64_in(10.0, 10_000.0);

        let person_small = Person {
            id: 12345,
            name: "John".into(),
            email: "j@x.co".into(),
            age: 30,
        };
        let person_medium = Person {
            id: 987_654_321,
            name: "Alexander Maximilian Henderson-Worthington III".into(),
            email: "alexander.henderson.worthington@enterprise-corporation.example.com".into(),
            age: rng.int_in(18, 80) as i32,
        };

        let order_small = Order {
            order_id: id(&mut rng),
            customer_id: id(&mut rng),
            item_ids: vec![101, 102, 103],
            quantities: vec![1, 2, 1],
            total: price(&mut rng),
            timestamp: TIMESTAMP,
        };
        let mut order_large = Order {
            order_id: id(&mut rng),
            customer_id: id(&mut rng),
            item_ids: Vec::with_capacity(100),
            quantities: Vec::with_capacity(100),
            total: 0.0,
            timestamp: TIMESTAMP,
        };
        for _ in 0..100 {
            order_large.item_ids.push(id(&mut rng));
            let qty = (rng.next_u64() % 10 + 1) as i32;
            order_large.quantities.push(qty);
            order_large.total += price(&mut rng) * f64::from(qty);
        }

        let event_small = Event {
            id: id(&mut rng),
            r#type: "click".into(),
            source: "web".into(),
            timestamp: TIMESTAMP,
            payload: vec![1, 2, 3, 4],
        };
        let event_large_id = id(&mut rng);
        let event_large = Event {
            id: event_large_id,
            r#type: "data_transfer".into(),
            source: "backend_service_cluster_node_42".into(),
            timestamp: TIMESTAMP,
            payload: (0..4096).map(|_| (rng.next_u64() & 0xFF) as u8).collect(),
        };

        let tree_wide = TreeNode {
            value: 999,
            children: (0..100)
                .map(|i| TreeNode {
                    value: i,
                    children: Vec::new(),
                })
                .collect(),
        };
        let tree_deep = deep_tree(0, 0);

        let json_small = object([
            ("name", string("John Doe")),
            ("age", number(30.0)),
            ("active", JsonValue::Bool(true)),
        ]);
        let items = (0..20)
            .map(|i| {
                let name = random_string(&mut rng, 20);
                let p = price(&mut rng);
                object([
                    ("id", number(f64::from(i + 1000))),
                    ("name", string(name)),
                    ("price", number(p)),
                    ("in_stock", JsonValue::Bool(i % 3 != 0)),
                ])
            })
            .collect();
        let json_large = object([
            ("status", string("success")),
            ("total_count", number(20.0)),
            ("items", JsonValue::List(items)),
            (
                "pagination",
                object([
                    ("page", number(1.0)),
                    ("per_page", number(20.0)),
                    ("has_more", JsonValue::Bool(true)),
                ]),
            ),
        ]);

        let document_small = Document {
            title: "Hello World".into(),
            body: "This is a test document.".into(),
            metadata: BTreeMap::new(),
        };
        let document_large = Document {
            title: "API Design Notes v2".into(),
            body: (0..2000u32)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect(),
            metadata: [
                ("author".to_owned(), string("Engineering Team")),
                ("version".to_owned(), number(2.5)),
                (
                    "tags".to_owned(),
                    JsonValue::List(vec![string("spec"), string("tech"), string("api")]),
                ),
            ]
            .into_iter()
            .collect(),
        };

        let source = alice_like_text();
        let chunked_text = ChunkedText {
            spans: split_spans(&source),
            source,
        };

        let embedding = |rng: &mut Mt64, dim| EmbeddingBf16 {
            id: random_uuid(rng),
            vector: random_bf16_vector(rng, dim),
        };
        let embedding_384 = embedding(&mut rng, 384);
        let embedding_768 = embedding(&mut rng, 768);
        let embedding_1536 = embedding(&mut rng, 1536);
        let embedding_f32_768 = EmbeddingF32 {
            id: random_uuid(&mut rng),
            vector: random_f32_vector(&mut rng, 768),
        };
        let embedding_batch = EmbeddingBatch {
            model: "text-embedding-3-small".into(),
            embeddings: (0..8).map(|_| embedding(&mut rng, 1536)).collect(),
            usage_tokens: 256,
        };

        let small_tokens = ["Hello", ",", " world"];
        let llm_chunk_small = LlmStreamChunk {
            chunk_id: 1,
            tokens: small_tokens.iter().map(|t| (*t).to_owned()).collect(),
            logprobs: small_tokens
                .iter()
                .map(|t| TokenAlternatives {
                    top_tokens: vec![TokenLogprob {
                        token: (*t).to_owned(),
                        token_id: (rng.next_u64() % 50_000) as u32,
                        logprob: -0.1,
                    }],
                })
                .collect(),
            finish_reason: String::new(),
        };
        let mut llm_chunk_large = LlmStreamChunk {
            chunk_id: 42,
            tokens: Vec::with_capacity(32),
            logprobs: Vec::with_capacity(32),
            finish_reason: "stop".into(),
        };
        for _ in 0..32 {
            llm_chunk_large.tokens.push(random_string(&mut rng, 4));
            let top_tokens = (0..5)
                .map(|_| {
                    let token = random_string(&mut rng, 4);
                    let token_id = rng.int_in(0, 50_000) as u32;
                    let logprob = rng.f32_in(-5.0, 0.0);
                    TokenLogprob {
                        token,
                        token_id,
                        logprob,
                    }
                })
                .collect();
            llm_chunk_large
                .logprobs
                .push(TokenAlternatives { top_tokens });
        }

        let tensor_shard_small = TensorShard {
            name: "model.layers.0.attention.wq.weight".into(),
            shape: vec![4096, 4096],
            dtype: "bfloat16".into(),
            data: random_bf16_vector(&mut rng, 1024),
            offset: 0,
            total_elements: 4096 * 4096,
        };
        let tensor_shard_large = TensorShard {
            name: "model.layers.31.feed_forward.w1.weight".into(),
            shape: vec![4096, 11008],
            dtype: "bfloat16".into(),
            data: random_bf16_vector(&mut rng, 32768),
            offset: 1024 * 1024,
            total_elements: 4096 * 11008,
        };

        let request_id = random_uuid(&mut rng);
        let inference_response = InferenceResponse {
            request_id,
            embeddings: (0..4).map(|_| embedding(&mut rng, 768)).collect(),
            timing: InferenceTiming {
                queue_time: Duration {
                    seconds: 0,
                    nanos: 1_500_000,
                },
                inference_time: Duration {
                    seconds: 0,
                    nanos: 45_000_000,
                },
                tokens_per_second: 2847.5,
            },
        };

        Dataset {
            person_small,
            person_medium,
            order_small,
            order_large,
            event_small,
            event_large,
            tree_wide,
            tree_deep,
            json_small,
            json_large,
            document_small,
            document_large,
            chunked_text,
            embedding_384,
            embedding_768,
            embedding_1536,
            embedding_f32_768,
            embedding_batch,
            llm_chunk_small,
            llm_chunk_large,
            tensor_shard_small,
            tensor_shard_large,
            inference_response,
        }
    }
}

fn deep_tree(depth: i32, index: i32) -> TreeNode {
    TreeNode {
        value: depth * 100 + index,
        children: if depth < 9 {
            vec![
                deep_tree(depth + 1, index * 2),
                deep_tree(depth + 1, index * 2 + 1),
            ]
        } else {
            Vec::new()
        },
    }
}

/// A tensor shard whose data is `bytes / 2` random bfloat16 values, for the bandwidth runs.
pub fn tensor_shard_of_size(bytes: usize) -> TensorShard {
    let mut rng = Mt64::new(7);
    TensorShard {
        name: "bandwidth.probe".into(),
        shape: vec![(bytes / 2) as u32],
        dtype: "bfloat16".into(),
        data: random_bf16_vector(&mut rng, bytes / 2),
        offset: 0,
        total_elements: (bytes / 2) as u64,
    }
}

/// An embedding of `dim` random bfloat16 values, for the O(1)-decode runs.
pub fn embedding_of_dim(dim: usize) -> EmbeddingBf16 {
    let mut rng = Mt64::new(9);
    EmbeddingBf16 {
        id: random_uuid(&mut rng),
        vector: random_bf16_vector(&mut rng, dim),
    }
}

const WORDS: &[&str] = &[
    "the",
    "and",
    "she",
    "said",
    "to",
    "it",
    "was",
    "of",
    "a",
    "in",
    "you",
    "that",
    "her",
    "as",
    "at",
    "on",
    "with",
    "all",
    "had",
    "but",
    "for",
    "so",
    "be",
    "not",
    "very",
    "what",
    "this",
    "little",
    "they",
    "he",
    "out",
    "is",
    "down",
    "one",
    "up",
    "his",
    "about",
    "if",
    "then",
    "no",
    "know",
    "like",
    "were",
    "again",
    "herself",
    "would",
    "went",
    "could",
    "when",
    "thought",
    "queen",
    "time",
    "see",
    "king",
    "turtle",
    "began",
    "hatter",
    "mock",
    "quite",
    "gryphon",
    "way",
    "don't",
    "think",
    "much",
    "head",
    "voice",
    "rabbit",
    "looked",
    "never",
    "round",
    "mouse",
    "duchess",
    "tone",
    "dormouse",
    "great",
    "large",
    "first",
    "cat",
    "after",
    "eyes",
    "garden",
    "door",
    "curious",
    "tea",
    "table",
    "moment",
    "remark",
    "replied",
    "nothing",
    "everything",
    "perhaps",
    "suddenly",
    "Alice",
    "March",
    "Hare",
    "Caterpillar",
    "Cheshire",
];

/// A deterministic stand-in for the reference's "Alice's Adventures in Wonderland.md" fixture:
/// about 150 KB of Markdown in twelve chapters (`## Chapter ...` lines), a few other `##`
/// headings, and paragraphs of sentences separated by blank lines.
pub fn alice_like_text() -> String {
    const TARGET: usize = 150_000;
    const CHAPTERS: usize = 12;
    let mut rng = Mt64::new(1865);
    let mut out = String::with_capacity(TARGET + 4096);
    out.push_str("# Alice's Adventures in Wonderland\n\n## Contents\n\n");
    for c in 1..=CHAPTERS {
        out.push_str(&format!("Chapter {c}\n"));
    }
    for c in 1..=CHAPTERS {
        out.push_str(&format!("\n## Chapter {c}\n\n"));
        let chapter_end = TARGET * c / CHAPTERS;
        let mut paragraph = 0;
        while out.len() < chapter_end {
            if paragraph > 0 && paragraph % 25 == 0 {
                out.push_str(&format!("## Part {}\n\n", paragraph / 25));
            }
            let sentences = rng.int_in(1, 6);
            for s in 0..sentences {
                if s > 0 {
                    out.push(' ');
                }
                let words = rng.int_in(4, 22);
                for w in 0..words {
                    let word = WORDS[rng.int_in(0, WORDS.len() as i64 - 1) as usize];
                    if w == 0 {
                        let mut chars = word.chars();
                        if let Some(first) = chars.next() {
                            out.extend(first.to_uppercase());
                            out.push_str(chars.as_str());
                        }
                    } else {
                        out.push(' ');
                        out.push_str(word);
                    }
                    if w + 1 < words && rng.next_u64() % 9 == 0 {
                        out.push(',');
                    }
                }
                out.push(if rng.next_u64() % 7 == 0 { '!' } else { '.' });
                if rng.next_u64() % 5 == 0 {
                    out.push('\n');
                }
            }
            out.push_str("\n\n");
            paragraph += 1;
        }
    }
    out
}

/// The reference harness's span splitter: skips blank lines; a line starting with `## ` is a
/// `Chapter` span when its text starts with "Chapter", else a `Heading`; anything else runs to
/// the next blank line as a `Paragraph`.
pub fn split_spans(src: &str) -> Vec<TextSpan> {
    let s = src.as_bytes();
    let len = s.len();
    let mut pos = 0;
    let mut spans = Vec::new();
    while pos < len {
        while pos < len && (s[pos] == b'\n' || s[pos] == b'\r') {
            pos += 1;
        }
        if pos >= len {
            break;
        }
        let start = pos;
        let kind;
        if pos + 2 < len && s[pos] == b'#' && s[pos + 1] == b'#' && s[pos + 2] == b' ' {
            let line_end = s[pos..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(len, |i| pos + i);
            kind = if s[pos + 3..line_end].starts_with(b"Chapter") {
                ChunkKind::Chapter
            } else {
                ChunkKind::Heading
            };
            pos = line_end;
        } else {
            kind = ChunkKind::Paragraph;
            while pos < len {
                if s[pos] == b'\n'
                    && ((pos + 1 < len && s[pos + 1] == b'\n')
                        || (pos + 2 < len && s[pos + 1] == b'\r' && s[pos + 2] == b'\n'))
                {
                    break;
                }
                pos += 1;
            }
        }
        if pos > start {
            spans.push(TextSpan {
                start: start as u32,
                len: (pos - start) as u32,
                kind,
            });
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt64_matches_the_standard_engine() {
        // The C++ standard requires the 10000th output of a default-seeded mt19937_64 to be
        // 9981545732273789042.
        let mut rng = Mt64::new(5489);
        let mut last = 0;
        for _ in 0..10_000 {
            last = rng.next_u64();
        }
        assert_eq!(last, 9_981_545_732_273_789_042);
    }

    #[test]
    fn distributions_stay_in_range() {
        let mut rng = Mt64::new(1);
        for _ in 0..10_000 {
            let i = rng.int_in(18, 80);
            assert!((18..=80).contains(&i));
            let f = rng.f32_in(-1.0, 1.0);
            assert!((-1.0..1.0).contains(&f));
            let d = rng.f64_in(10.0, 10_000.0);
            assert!((10.0..10_000.0).contains(&d));
        }
    }

    #[test]
    fn bf16_rounding_is_to_nearest_even() {
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        // 1 + 2^-8 lies halfway between two bfloat16 values: ties go to the even one.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8000)), 0x3F80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F81_8000)), 0x3F82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8001)), 0x3F81);
    }

    #[test]
    fn shapes_match_the_reference() {
        let d = Dataset::build();
        assert_eq!(d.order_large.item_ids.len(), 100);
        assert!(
            d.order_large
                .quantities
                .iter()
                .all(|q| (1..=10).contains(q))
        );
        assert_eq!(d.event_large.payload.len(), 4096);
        assert_eq!(d.tree_wide.children.len(), 100);
        fn count(t: &TreeNode) -> usize {
            1 + t.children.iter().map(count).sum::<usize>()
        }
        assert_eq!(count(&d.tree_deep), 1023);
        assert_eq!(d.document_large.body.len(), 2000);
        assert_eq!(d.embedding_batch.embeddings.len(), 8);
        assert!(
            d.embedding_batch
                .embeddings
                .iter()
                .all(|e| e.vector.len() == 1536)
        );
        assert_eq!(d.llm_chunk_large.logprobs.len(), 32);
        assert!(d.llm_chunk_large.tokens.iter().all(|t| t.len() == 4));
        assert_eq!(d.tensor_shard_large.data.len() * 2, 64 * 1024);
        assert_eq!(d.inference_response.embeddings.len(), 4);
        for id in [d.embedding_384.id, d.inference_response.request_id] {
            assert_eq!(id[6] >> 4, 4, "uuid version 4");
            assert_eq!(id[8] >> 6, 2, "RFC 4122 variant");
        }
        let JsonValue::Object(large) = &d.json_large else {
            panic!("JsonLarge is an object")
        };
        let Some(JsonValue::List(items)) = large.get("items") else {
            panic!("JsonLarge has items")
        };
        assert_eq!(items.len(), 20);
    }

    #[test]
    fn the_alice_stand_in_splits_like_the_fixture() {
        let text = alice_like_text();
        assert!((145_000..160_000).contains(&text.len()), "{}", text.len());
        let spans = split_spans(&text);
        let chapters = spans
            .iter()
            .filter(|s| s.kind == ChunkKind::Chapter)
            .count();
        let headings = spans
            .iter()
            .filter(|s| s.kind == ChunkKind::Heading)
            .count();
        assert_eq!(chapters, 12);
        assert!(headings > 12, "{headings}");
        assert!(spans.len() > 500, "{}", spans.len());
        for s in &spans {
            let piece = &text[s.start as usize..(s.start + s.len) as usize];
            assert!(!piece.starts_with('\n') && !piece.ends_with("\n\n"));
        }
        assert_eq!(Dataset::build(), Dataset::build(), "deterministic");
    }

    #[test]
    fn mixed_text_keeps_every_length_and_span_and_has_the_reference_rate() {
        let (mixed, ascii) = (Dataset::build(), Dataset::build_with(TextMode::Ascii));
        assert_ne!(mixed, ascii);
        let (m, a) = (&mixed.chunked_text, &ascii.chunked_text);
        assert_eq!(m.source.len(), a.source.len());
        assert_eq!(m.spans, a.spans, "the same spans");
        let chars = m.source.chars().count();
        let rate = crate::text::non_ascii_chars(&m.source) as f64 / chars as f64;
        assert!((0.003..0.007).contains(&rate), "{rate}");
        assert_eq!(mixed.document_large.body.len(), 2000);
        assert!(!mixed.document_large.body.is_ascii());
        assert!(mixed.llm_chunk_large.tokens.iter().all(|t| t.len() == 4));
        // Identifiers stay ASCII; values that are not text are the same.
        assert_eq!(mixed.tensor_shard_large, ascii.tensor_shard_large);
        assert_eq!(mixed.event_large, ascii.event_large);
        assert_eq!(mixed.person_small.email, ascii.person_small.email);
    }

    #[test]
    fn the_splitter_handles_headings_and_paragraphs() {
        let spans = split_spans("## Chapter 1\n\nOne\ntwo.\n\n## Notes\nlast");
        let got: Vec<_> = spans.iter().map(|s| (s.start, s.len, s.kind)).collect();
        assert_eq!(
            got,
            [
                (0, 12, ChunkKind::Chapter),
                (14, 8, ChunkKind::Paragraph),
                (24, 8, ChunkKind::Heading),
                (33, 4, ChunkKind::Paragraph),
            ]
        );
    }
}
