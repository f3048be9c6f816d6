//! Hand-written implementations of the spec's example types, written the way generated code
//! uses the core crate. They prove that [`bebop_core`]'s traits compose for every kind of
//! definition (struct, message, union, enum, recursion), and the tests, fuzz targets and
//! benchmarks of the workspace share them.
//!
//! Each type names the schema it implements.
#![no_std]

use bebop_core::{
    Array, Decode, Encode, Error, ErrorKind, FixedSize, Lazy, Map, Reader, Sink, Uuid, WireSize,
    bf16, field_size,
};

/// ```bebop
/// struct Point { x: float32; y: float32; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Point {
    /// `x: float32`
    pub x: f32,
    /// `y: float32`
    pub y: f32,
}

impl WireSize for Point {
    const FIXED_SIZE: Option<usize> = Some(8);
    const MIN_SIZE: usize = 8;
}

impl FixedSize for Point {
    const SIZE: usize = 8;
}

impl<'a> Decode<'a> for Point {
    const ALWAYS_VALID: bool = true;
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Point {
            x: r.read()?,
            y: r.read()?,
        })
    }
}

impl Encode for Point {
    fn encoded_size(&self) -> usize {
        8
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.x.encode(s)?;
        self.y.encode(s)
    }
}

/// ```bebop
/// message UserRequest { user_id(1): int32; include_profile(2): bool; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct UserRequest {
    /// `user_id(1): int32`
    pub user_id: Option<i32>,
    /// `include_profile(2): bool`
    pub include_profile: Option<bool>,
}

impl UserRequest {
    fn body_size(&self) -> usize {
        field_size(&self.user_id) + field_size(&self.include_profile) + 1
    }
}

impl WireSize for UserRequest {
    // The length prefix alone: a message body may be empty (no fields, no end marker).
    const MIN_SIZE: usize = 4;
}

impl<'a> Decode<'a> for UserRequest {
    /// Messages and unions are hopped over by their length prefix.
    fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
        r.skip_prefixed()
    }
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = UserRequest::default();
            loop {
                match r.read_tag()? {
                    1 => out.user_id = Some(r.read()?),
                    2 => out.include_profile = Some(r.read()?),
                    _ => break, // 0 = end; unknown = stop, the rest is skipped
                }
            }
            Ok(out)
        })
    }
}

impl Encode for UserRequest {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.user_id {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.include_profile {
                    s.write_field(2, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// The inline branch `Circle(1): { radius: float32; }` of [`Shape`].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Circle {
    /// `radius: float32`
    pub radius: f32,
}

/// The inline branch `Rectangle(2): { width: float32; height: float32; }` of [`Shape`].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Rectangle {
    /// `width: float32`
    pub width: f32,
    /// `height: float32`
    pub height: f32,
}

macro_rules! float_struct {
    ($name:ident, $size:expr, $($field:ident),+) => {
        impl WireSize for $name {
            const FIXED_SIZE: Option<usize> = Some($size);
            const MIN_SIZE: usize = $size;
        }
        impl<'a> Decode<'a> for $name {
            const ALWAYS_VALID: bool = true;
            fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
                Ok($name { $($field: r.read()?),+ })
            }
        }
        impl Encode for $name {
            fn encoded_size(&self) -> usize {
                $size
            }
            fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
                $(self.$field.encode(s)?;)+
                Ok(())
            }
        }
    };
}

float_struct!(Circle, 4, radius);
float_struct!(Rectangle, 8, width, height);

/// ```bebop
/// union Shape {
///     Circle(1): { radius: float32; };
///     Rectangle(2): { width: float32; height: float32; };
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Discriminator 1.
    Circle(Circle),
    /// Discriminator 2.
    Rectangle(Rectangle),
}

impl Shape {
    fn body_size(&self) -> usize {
        1 + match self {
            Shape::Circle(v) => v.encoded_size(),
            Shape::Rectangle(v) => v.encoded_size(),
        }
    }
}

impl WireSize for Shape {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for Shape {
    /// Messages and unions are hopped over by their length prefix.
    fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
        r.skip_prefixed()
    }
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.union(|r, d| match d {
            1 => Ok(Shape::Circle(r.read()?)),
            2 => Ok(Shape::Rectangle(r.read()?)),
            _ => Err(r.unknown_discriminator(d)),
        })
    }
}

impl Encode for Shape {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| match self {
                Shape::Circle(v) => s.write_field(1, v),
                Shape::Rectangle(v) => s.write_field(2, v),
            },
        )
    }
}

/// ```bebop
/// @forward_compatible
/// union Event {
///     Ping(1): { seq: uint32; };
///     Text(2): message { body(1): string; };
/// }
/// ```
/// An unknown discriminator is kept with its raw bytes and re-encodes unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// Discriminator 1: an inline struct.
    Ping {
        /// `seq: uint32`
        seq: u32,
    },
    /// Discriminator 2: an inline message.
    Text {
        /// `body(1): string`
        body: Option<&'a str>,
    },
    /// A branch this code does not know.
    Unknown {
        /// The discriminator read.
        discriminator: u8,
        /// The branch body, as sent.
        body: &'a [u8],
    },
}

impl Event<'_> {
    fn text_body_size(body: &Option<&str>) -> usize {
        field_size(body) + 1
    }
    fn body_size(&self) -> usize {
        1 + match self {
            Event::Ping { .. } => 4,
            Event::Text { body } => 4 + Self::text_body_size(body),
            Event::Unknown { body, .. } => body.len(),
        }
    }
}

impl WireSize for Event<'_> {
    const MIN_SIZE: usize = 5;
}

impl<'a> Decode<'a> for Event<'a> {
    /// Messages and unions are hopped over by their length prefix.
    fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
        r.skip_prefixed()
    }
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.union(|r, d| match d {
            1 => Ok(Event::Ping { seq: r.read()? }),
            2 => r.message(|r| {
                let mut body = None;
                // Tag 1 is the only field; 0 ends the message and unknown tags stop reading.
                while r.read_tag()? == 1 {
                    body = Some(r.read()?);
                }
                Ok(Event::Text { body })
            }),
            _ => Ok(Event::Unknown {
                discriminator: d,
                body: r.take_rest(),
            }),
        })
    }
}

impl Encode for Event<'_> {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| match self {
                Event::Ping { seq } => s.write_field(1, seq),
                Event::Text { body } => {
                    s.write(&[2])?;
                    s.write_prefixed(
                        || Self::text_body_size(body),
                        |s| {
                            if let Some(v) = body {
                                s.write_field(1, v)?;
                            }
                            s.write(&[0])
                        },
                    )
                }
                Event::Unknown {
                    discriminator,
                    body,
                } => {
                    s.write(&[*discriminator])?;
                    s.write(body)
                }
            },
        )
    }
}

/// ```bebop
/// message TreeNode { value(1): int32; children(2): TreeNode[]; }
/// ```
/// Recursive through an array: the view needs no heap.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TreeNode<'a> {
    /// `value(1): int32`
    pub value: Option<i32>,
    /// `children(2): TreeNode[]`
    pub children: Option<Array<'a, TreeNode<'a>>>,
}

impl TreeNode<'_> {
    fn body_size(&self) -> usize {
        field_size(&self.value) + field_size(&self.children) + 1
    }

    /// Counts the nodes of the tree by reading every one of them.
    pub fn count_nodes(&self) -> usize {
        1 + self
            .children
            .iter()
            .flat_map(|c| c.iter())
            .map(|c| c.count_nodes())
            .sum::<usize>()
    }

    /// Sums the values of every node.
    pub fn sum_values(&self) -> i64 {
        i64::from(self.value.unwrap_or(0))
            + self
                .children
                .iter()
                .flat_map(|c| c.iter())
                .map(|c| c.sum_values())
                .sum::<i64>()
    }
}

impl WireSize for TreeNode<'_> {
    const MIN_SIZE: usize = 4;
}

impl<'a> Decode<'a> for TreeNode<'a> {
    /// Messages and unions are hopped over by their length prefix.
    fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
        r.skip_prefixed()
    }
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = TreeNode::default();
            loop {
                match r.read_tag()? {
                    1 => out.value = Some(r.read()?),
                    2 => out.children = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(out)
        })
    }
}

impl Encode for TreeNode<'_> {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.value {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.children {
                    s.write_field(2, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// ```bebop
/// message Chain { value(1): int32; next(2): Chain; }
/// ```
/// Directly self-referential: the view holds the next link as a [`Lazy`].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Chain<'a> {
    /// `value(1): int32`
    pub value: Option<i32>,
    /// `next(2): Chain`
    pub next: Option<Lazy<'a, Chain<'a>>>,
}

impl Chain<'_> {
    fn body_size(&self) -> usize {
        field_size(&self.value) + field_size(&self.next) + 1
    }

    /// The number of links, following `next` (iteratively, so long chains need no stack).
    pub fn link_count(&self) -> usize {
        let mut n = 1;
        let mut cur = *self;
        while let Some(next) = cur.next {
            cur = next.get();
            n += 1;
        }
        n
    }
}

impl WireSize for Chain<'_> {
    const MIN_SIZE: usize = 4;
}

impl<'a> Decode<'a> for Chain<'a> {
    /// Messages and unions are hopped over by their length prefix.
    fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
        r.skip_prefixed()
    }
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        r.message(|r| {
            let mut out = Chain::default();
            loop {
                match r.read_tag()? {
                    1 => out.value = Some(r.read()?),
                    2 => out.next = Some(r.read()?),
                    _ => break,
                }
            }
            Ok(out)
        })
    }
}

impl Encode for Chain<'_> {
    fn encoded_size(&self) -> usize {
        4 + self.body_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write_prefixed(
            || self.body_size(),
            |s| {
                if let Some(v) = &self.value {
                    s.write_field(1, v)?;
                }
                if let Some(v) = &self.next {
                    s.write_field(2, v)?;
                }
                s.write(&[0])
            },
        )
    }
}

/// ```bebop
/// struct Person { id: int32; name: string; email: string; age: int32; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Person<'a> {
    /// `id: int32`
    pub id: i32,
    /// `name: string`
    pub name: &'a str,
    /// `email: string`
    pub email: &'a str,
    /// `age: int32`
    pub age: i32,
}

impl WireSize for Person<'_> {
    const MIN_SIZE: usize = 4 + 5 + 5 + 4;
}

impl<'a> Decode<'a> for Person<'a> {
    #[inline]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Person {
            id: r.read()?,
            name: r.read()?,
            email: r.read()?,
            age: r.read()?,
        })
    }
}

impl Encode for Person<'_> {
    #[inline]
    fn encoded_size(&self) -> usize {
        4 + self.name.encoded_size() + self.email.encoded_size() + 4
    }
    #[inline]
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.id.encode(s)?;
        self.name.encode(s)?;
        self.email.encode(s)?;
        self.age.encode(s)
    }
}

/// ```bebop
/// mut struct EmbeddingBF16 { id: uuid; vector: bfloat16[]; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Embedding<'a> {
    /// `id: uuid`
    pub id: Uuid,
    /// `vector: bfloat16[]`
    pub vector: Array<'a, bf16>,
}

impl WireSize for Embedding<'_> {
    const MIN_SIZE: usize = 16 + 4;
}

impl<'a> Decode<'a> for Embedding<'a> {
    #[inline]
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Embedding {
            id: r.read()?,
            vector: r.read()?,
        })
    }
}

impl Encode for Embedding<'_> {
    #[inline]
    fn encoded_size(&self) -> usize {
        16 + self.vector.encoded_size()
    }
    #[inline]
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.id.encode(s)?;
        self.vector.encode(s)
    }
}

/// ```bebop
/// enum Level : uint8 { Debug = 0; Info = 1; Warn = 2; Error = 3; }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Level {
    /// 0
    #[default]
    Debug = 0,
    /// 1
    Info = 1,
    /// 2
    Warn = 2,
    /// 3
    Error = 3,
}

impl TryFrom<u8> for Level {
    type Error = u8;
    fn try_from(v: u8) -> Result<Self, u8> {
        match v {
            0 => Ok(Level::Debug),
            1 => Ok(Level::Info),
            2 => Ok(Level::Warn),
            3 => Ok(Level::Error),
            other => Err(other),
        }
    }
}

impl WireSize for Level {
    const FIXED_SIZE: Option<usize> = Some(1);
    const MIN_SIZE: usize = 1;
}

impl<'a> Decode<'a> for Level {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        let at = r.offset();
        let raw = r.read_u8()?;
        Level::try_from(raw)
            .map_err(|v| Error::new(ErrorKind::InvalidEnumValue, at).with_detail(u64::from(v)))
    }
}

impl Encode for Level {
    fn encoded_size(&self) -> usize {
        1
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        s.write(&[*self as u8])
    }
}

/// ```bebop
/// struct Empty {}
/// ```
/// Zero bytes on the wire: arrays of it are charged to the decode budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Empty;

impl WireSize for Empty {
    const FIXED_SIZE: Option<usize> = Some(0);
    const MIN_SIZE: usize = 0;
}

impl<'a> Decode<'a> for Empty {
    const ALWAYS_VALID: bool = true;
    fn decode(_: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Empty)
    }
}

impl Encode for Empty {
    fn encoded_size(&self) -> usize {
        0
    }
    fn encode<S: Sink>(&self, _: &mut S) -> Result<(), S::Error> {
        Ok(())
    }
}

/// ```bebop
/// struct Log { level: Level; tags: map[string, string]; lines: string[]; grid: int32[][3]; }
/// ```
/// A struct mixing enums, maps, string arrays and a fixed array of arrays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Log<'a> {
    /// `level: Level`
    pub level: Level,
    /// `tags: map[string, string]`
    pub tags: Map<'a, &'a str, &'a str>,
    /// `lines: string[]`
    pub lines: Array<'a, &'a str>,
    /// `grid: int32[][3]`
    pub grid: bebop_core::FixedArray<'a, Array<'a, i32>, 3>,
}

impl WireSize for Log<'_> {
    const MIN_SIZE: usize = 1 + 4 + 4 + 3 * 4;
}

impl<'a> Decode<'a> for Log<'a> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Log {
            level: r.read()?,
            tags: r.read()?,
            lines: r.read()?,
            grid: r.read()?,
        })
    }
}

impl Encode for Log<'_> {
    fn encoded_size(&self) -> usize {
        1 + self.tags.encoded_size() + self.lines.encoded_size() + self.grid.encoded_size()
    }
    fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
        self.level.encode(s)?;
        self.tags.encode(s)?;
        self.lines.encode(s)?;
        self.grid.encode(s)
    }
}

pub mod exercise;
