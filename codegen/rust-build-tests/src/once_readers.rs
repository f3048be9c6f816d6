//! Readers of `once.bop`'s `Shape` in one pass, for the tests of one-pass reading
//! (`tests/once.rs`) and its fuzz target (`fuzz/fuzz_targets/read_once.rs`): a reader that
//! reads every part traces what the view holds, and whatever a reader does (reads
//! everything, reads nothing, leaves or abandons some values, ignores the errors of walks)
//! its verdict on any input must be `from_bytes`'s, the same error at the same position
//! ([`agree`]).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use bebop_core::once::{self, Record};
use bebop_core::{Decode, Encode, Error, Reader};

use crate::once::style::{FancyPart, PlainPart};
use crate::once::{
    self as schema, ChainPart, FlaggedPart, LabelPart, LinkPart, PointPartPart, PointReadOncePart,
    ShapePart, StylePart,
};

/// What a reader does with the `i`-th record it is handed (records that are not elements
/// or entries are numbered by the length of the trace so far).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Reads every record whole.
    All,
    /// Reads one in three, leaves one, and gives up on one after its first part (with an
    /// error of its own, which it ignores).
    Skim,
    /// Skims, and ignores the errors of walks too: a walk whose `next` fails is given up
    /// quietly, and the callback goes on as if it had ended.
    Careless,
}

/// A walk's next handle; a careless reader takes an error for the end of the walk.
fn step<T>(m: Mode, next: Result<Option<T>, Error>) -> Result<Option<T>, Error> {
    match (m, next) {
        (Mode::Careless, Err(_)) => Ok(None),
        (_, next) => next,
    }
}

/// The caller's own error.
#[derive(Debug)]
struct Enough;
impl From<Error> for Enough {
    fn from(_: Error) -> Self {
        Enough
    }
}

/// A reader's trace: the leaf values it saw, in the order it saw them.
pub type Trace = Vec<String>;

/// Hands `record` to `whole`, or (skimming) leaves or abandons it.
fn visit<'a, T: once::ReadOnce<'a>>(
    mode: Mode,
    i: usize,
    record: Record<'a, '_, T>,
    whole: impl FnOnce(Record<'a, '_, T>) -> Result<(), Error>,
) -> Result<(), Error> {
    match (mode, i % 3) {
        (Mode::All, _) | (Mode::Skim, 0) => whole(record),
        // A careless reader's record failing is no reason to stop either.
        (Mode::Careless, 0) => {
            let _ = whole(record);
            Ok(())
        }
        (_, 1) => Ok(()),
        _ => {
            let _ = record.read(|_| Err(Enough));
            Ok(())
        }
    }
}

fn point(r: Record<'_, '_, schema::Point>, t: &mut Trace) -> Result<(), Error> {
    r.read(|part| {
        t.push(match part {
            PointReadOncePart::X(x) => format!("x{x}"),
            PointReadOncePart::Y(y) => format!("y{y}"),
        });
        Ok::<_, Error>(())
    })
}

fn label<'a>(r: Record<'a, '_, schema::Label<'a>>, m: Mode, t: &mut Trace) -> Result<(), Error> {
    r.read(|part| {
        match part {
            LabelPart::Text(s) => t.push(format!("text {s}")),
            LabelPart::Color(c) => t.push(format!("color {c:?}")),
            LabelPart::At(p) => visit(m, t.len(), p, |p| point(p, t))?,
        }
        Ok::<_, Error>(())
    })
}

fn style<'a>(r: Record<'a, '_, schema::Style<'a>>, m: Mode, t: &mut Trace) -> Result<(), Error> {
    r.read(|part| {
        match part {
            StylePart::Plain(p) => visit(m, t.len(), p, |p| {
                p.read(|PlainPart::Width(w)| {
                    t.push(format!("width {w}"));
                    Ok::<_, Error>(())
                })
            })?,
            StylePart::Fancy(f) => f.read(|part| {
                match part {
                    FancyPart::Label(l) => visit(m, t.len(), l, |l| label(l, m, t))?,
                    FancyPart::Shapes(mut shapes) => {
                        t.push(format!("shapes {}", shapes.len()));
                        let mut i = 0;
                        while let Some(s) = step(m, shapes.next())? {
                            visit(m, i, s, |s| shape(s, m, t))?;
                            i += 1;
                        }
                    }
                }
                Ok::<_, Error>(())
            })?,
            StylePart::Blank(b) => {
                b.read(|part| match part {})?;
                t.push("blank".into());
            }
            StylePart::Unknown {
                discriminator,
                body,
            } => t.push(format!("unknown {discriminator} {body:?}")),
        }
        Ok::<_, Error>(())
    })
}

/// Reads a `Shape` (every part, or skimming), tracing what a view trace holds.
fn shape<'a>(r: Record<'a, '_, schema::Shape<'a>>, m: Mode, t: &mut Trace) -> Result<(), Error> {
    r.read(|part| {
        match part {
            ShapePart::Name(s) => t.push(format!("name {s}")),
            ShapePart::Points(mut points) => {
                t.push(format!("points {}", points.len()));
                let mut i = 0;
                while let Some(p) = step(m, points.next())? {
                    visit(m, i, p, |p| point(p, t))?;
                    i += 1;
                }
            }
            ShapePart::Flags(mut flags) => {
                while let Some(f) = step(m, flags.next())? {
                    f.read(|part| {
                        t.push(match part {
                            FlaggedPart::On(b) => format!("on {b}"),
                            FlaggedPart::N(n) => format!("n {n}"),
                        });
                        Ok::<_, Error>(())
                    })?;
                }
            }
            ShapePart::Labels(mut labels) => {
                t.push(format!("labels {}", labels.len()));
                let mut i = 0;
                while let Some((key, l)) = step(m, labels.next())? {
                    t.push(format!("key {key}"));
                    visit(m, i, l, |l| label(l, m, t))?;
                    i += 1;
                }
            }
            ShapePart::Children(mut children) => {
                t.push(format!("children {}", children.len()));
                let mut i = 0;
                while let Some(c) = step(m, children.next())? {
                    visit(m, i, c, |c| shape(c, m, t))?;
                    i += 1;
                }
            }
            ShapePart::Anchor(p) => {
                t.push("anchor".into());
                visit(m, t.len(), p, |p| point(p, t))?;
            }
            ShapePart::Style(s) => visit(m, t.len(), s, |s| style(s, m, t))?,
            ShapePart::Tags(tags) => t.push(format!("tags {}", tags.len())),
            ShapePart::Grid(mut grid) => {
                t.push(format!("grid {}", grid.len()));
                let mut row_at = 0;
                while let Some(mut row) = step(m, grid.next())? {
                    t.push(format!("row {}", row.len()));
                    // A careless reader abandons every other row part way.
                    let mut i = 0;
                    while let Some(p) = step(m, row.next())? {
                        visit(m, i, p, |p| point(p, t))?;
                        i += 1;
                        if m == Mode::Careless && row_at % 2 == 1 {
                            break;
                        }
                    }
                    row_at += 1;
                }
            }
            ShapePart::Lookup(mut lookup) => {
                t.push(format!("lookup {}", lookup.len()));
                let mut i = 0;
                while let Some((key, s)) = step(m, lookup.next())? {
                    t.push(format!("key {key}"));
                    visit(m, i, s, |s| shape(s, m, t))?;
                    i += 1;
                }
            }
            ShapePart::Empty(e) => {
                e.read(|part| match part {})?;
                t.push("empty".into());
            }
            ShapePart::Nothing(mut nothing) => {
                t.push(format!("nothing {}", nothing.len()));
                while let Some(n) = step(m, nothing.next())? {
                    n.read(|part| match part {})?;
                }
            }
            ShapePart::Other(o) => o.read(|PointPartPart::Z(z)| {
                t.push(format!("z{z}"));
                Ok::<_, Error>(())
            })?,
            ShapePart::Link(l) => link(l, m, t)?,
            ShapePart::Groups(mut groups) => {
                t.push(format!("groups {}", groups.len()));
                let mut i = 0;
                while let Some((key, mut shapes)) = step(m, groups.next())? {
                    t.push(format!("key {key}"));
                    if m != Mode::All && i % 3 == 1 {
                        // Left alone: checked whole.
                        i += 1;
                        continue;
                    }
                    t.push(format!("row {}", shapes.len()));
                    let mut j = 0;
                    while let Some(s) = step(m, shapes.next())? {
                        visit(m, j, s, |s| shape(s, m, t))?;
                        j += 1;
                    }
                    i += 1;
                }
            }
            ShapePart::Layers(mut layers) => {
                t.push(format!("layers {}", layers.len()));
                let mut i = 0;
                while let Some(mut layer) = step(m, layers.next())? {
                    if m != Mode::All && i % 3 == 1 {
                        // Left alone: checked whole.
                        i += 1;
                        continue;
                    }
                    t.push(format!("layer {}", layer.len()));
                    let mut j = 0;
                    while let Some((key, l)) = step(m, layer.next())? {
                        t.push(format!("key {key}"));
                        visit(m, j, l, |l| label(l, m, t))?;
                        j += 1;
                        // A careless reader abandons every other map part way.
                        if m == Mode::Careless && i % 2 == 1 {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            ShapePart::Atlas(mut atlas) => {
                t.push(format!("atlas {}", atlas.len()));
                let mut i = 0;
                while let Some((key, mut entries)) = step(m, atlas.next())? {
                    t.push(format!("key {key}"));
                    if m != Mode::All && i % 3 == 1 {
                        // Left alone: checked whole.
                        i += 1;
                        continue;
                    }
                    t.push(format!("map {}", entries.len()));
                    let mut j = 0;
                    while let Some((key, l)) = step(m, entries.next())? {
                        t.push(format!("key {key}"));
                        visit(m, j, l, |l| label(l, m, t))?;
                        j += 1;
                        if m == Mode::Careless && i % 2 == 0 {
                            break;
                        }
                    }
                    i += 1;
                }
            }
        }
        Ok::<_, Error>(())
    })
}

/// Reads a `Link` and the chain it holds, by value, down to its end.
fn link<'a>(r: Record<'a, '_, schema::Link<'a>>, m: Mode, t: &mut Trace) -> Result<(), Error> {
    r.read(|part| {
        match part {
            LinkPart::Id(id) => t.push(format!("link {id}")),
            LinkPart::Chain(c) => visit(m, t.len(), c, |c| {
                c.read(|ChainPart::Next(l)| link(l, m, t))?;
                t.push("end".into());
                Ok(())
            })?,
        }
        Ok::<_, Error>(())
    })
}

/// Reads all of `bytes` as a `Shape` in one pass.
pub fn read_shape(bytes: &[u8], m: Mode) -> Result<Trace, Error> {
    let (mut r, mut slot) = (Reader::new(bytes), once::RecordSlot::new());
    let mut t = Trace::new();
    shape(slot.record(&mut r), m, &mut t)?;
    slot.finish(&mut r)?;
    r.finish()?;
    Ok(t)
}

fn trace_point(p: &schema::Point, t: &mut Trace) {
    t.push(format!("x{}", p.x));
    t.push(format!("y{}", p.y));
}

fn trace_label(l: &schema::Label<'_>, t: &mut Trace) {
    t.push(format!("text {}", l.text));
    t.push(format!("color {:?}", l.color));
    trace_point(&l.at, t);
}

/// The trace of a view, for input whose fields are in tag order.
pub fn trace_view(s: &schema::Shape<'_>, t: &mut Trace) {
    if let Some(name) = s.name {
        t.push(format!("name {name}"));
    }
    if let Some(points) = s.points {
        t.push(format!("points {}", points.len()));
        points.iter().for_each(|p| trace_point(&p, t));
    }
    if let Some(flags) = s.flags {
        for f in flags.iter() {
            t.push(format!("on {}", f.on));
            t.push(format!("n {}", f.n));
        }
    }
    if let Some(labels) = s.labels {
        t.push(format!("labels {}", labels.len()));
        for (k, l) in labels.iter() {
            t.push(format!("key {k}"));
            trace_label(&l, t);
        }
    }
    if let Some(children) = s.children {
        t.push(format!("children {}", children.len()));
        children.iter().for_each(|c| trace_view(&c, t));
    }
    if let Some(anchor) = s.anchor {
        t.push("anchor".into());
        trace_point(&anchor, t);
    }
    match s.style {
        Some(schema::Style::Plain(p)) => t.push(format!("width {}", p.width)),
        Some(schema::Style::Fancy(f)) => {
            if let Some(l) = f.label {
                trace_label(&l, t);
            }
            if let Some(shapes) = f.shapes {
                t.push(format!("shapes {}", shapes.len()));
                shapes.iter().for_each(|c| trace_view(&c, t));
            }
        }
        Some(schema::Style::Blank(_)) => t.push("blank".into()),
        Some(schema::Style::Unknown {
            discriminator,
            body,
        }) => t.push(format!("unknown {discriminator} {body:?}")),
        None => {}
    }
    if let Some(tags) = s.tags {
        t.push(format!("tags {}", tags.len()));
    }
    if let Some(grid) = s.grid {
        t.push(format!("grid {}", grid.len()));
        for row in grid.iter() {
            t.push(format!("row {}", row.len()));
            row.iter().for_each(|p| trace_point(&p, t));
        }
    }
    if let Some(lookup) = s.lookup {
        t.push(format!("lookup {}", lookup.len()));
        for (k, c) in lookup.iter() {
            t.push(format!("key {k}"));
            trace_view(&c, t);
        }
    }
    if s.empty.is_some() {
        t.push("empty".into());
    }
    if let Some(nothing) = s.nothing {
        t.push(format!("nothing {}", nothing.len()));
    }
    if let Some(link) = s.link {
        trace_link(&link, t);
    }
    if let Some(other) = s.other {
        t.push(format!("z{}", other.z));
    }
    if let Some(groups) = s.groups {
        t.push(format!("groups {}", groups.len()));
        for (k, shapes) in groups.iter() {
            t.push(format!("key {k}"));
            t.push(format!("row {}", shapes.len()));
            shapes.iter().for_each(|c| trace_view(&c, t));
        }
    }
    if let Some(layers) = s.layers {
        t.push(format!("layers {}", layers.len()));
        for layer in layers.iter() {
            t.push(format!("layer {}", layer.len()));
            for (k, l) in layer.iter() {
                t.push(format!("key {k}"));
                trace_label(&l, t);
            }
        }
    }
    if let Some(atlas) = s.atlas {
        t.push(format!("atlas {}", atlas.len()));
        for (k, entries) in atlas.iter() {
            t.push(format!("key {k}"));
            t.push(format!("map {}", entries.len()));
            for (k, l) in entries.iter() {
                t.push(format!("key {k}"));
                trace_label(&l, t);
            }
        }
    }
}

/// The trace of a link and its chain. A `Lazy` that fails to decode (it cannot, in a view
/// `from_bytes` accepted) is traced as its error, which no one-pass reader's trace matches.
fn trace_link(link: &schema::Link<'_>, t: &mut Trace) {
    t.push(format!("link {}", link.id));
    match link.chain.try_get() {
        Ok(chain) => {
            if let Some(next) = chain.next {
                match next.try_get() {
                    Ok(next) => trace_link(&next, t),
                    Err(e) => t.push(format!("lazy link: {e}")),
                }
            }
        }
        Err(e) => t.push(format!("lazy chain: {e}")),
    }
    t.push("end".into());
}

/// A shape with every field set, nesting `depth` levels of children.
pub fn sample(depth: u32) -> schema::owned::Shape {
    let leaf = |n: u32| schema::owned::Shape {
        name: Some(format!("leaf{n}")),
        anchor: Some(schema::Point { x: -1, y: n as i32 }),
        ..Default::default()
    };
    let children = (0..2)
        .map(|i| {
            if depth == 0 {
                leaf(i)
            } else {
                sample(depth - 1)
            }
        })
        .collect();
    let label = |s: &str| schema::owned::Label {
        text: s.into(),
        color: schema::Color::Green,
        at: schema::Point { x: 3, y: 4 },
    };
    schema::owned::Shape {
        name: Some(format!("shape{depth} é")),
        points: Some(vec![
            schema::Point { x: 1, y: 2 },
            schema::Point { x: -5, y: 7 },
        ]),
        flags: Some(vec![schema::Flagged { on: true, n: 9 }]),
        labels: Some([("a".into(), label("α")), ("b".into(), label("b"))].into()),
        children: Some(children),
        anchor: Some(schema::Point { x: 8, y: 9 }),
        style: Some(if depth % 2 == 0 {
            schema::owned::Style::Fancy(schema::owned::style::Fancy {
                label: Some(label("fancy")),
                shapes: Some(vec![leaf(7)]),
            })
        } else {
            schema::owned::Style::Plain(schema::style::Plain { width: 1.5 })
        }),
        tags: Some(vec!["t1".into(), "t2".into()]),
        grid: Some(vec![
            vec![schema::Point { x: 0, y: 0 }],
            vec![],
            vec![schema::Point { x: 1, y: 1 }, schema::Point { x: 2, y: 2 }],
            vec![schema::Point { x: 3, y: 3 }, schema::Point { x: 4, y: 4 }],
        ]),
        lookup: Some([(5, leaf(5))].into()),
        empty: Some(schema::Empty {}),
        nothing: Some(vec![schema::Nothing {}; 3]),
        link: Some(schema::owned::Link {
            id: 77,
            chain: Box::new(schema::owned::Chain {
                next: Some(Box::new(schema::owned::Link {
                    id: 78,
                    chain: Box::new(schema::owned::Chain { next: None }),
                })),
            }),
        }),
        other: Some(schema::PointPart { z: 5 }),
        groups: Some(
            [
                ("g".into(), vec![leaf(8), leaf(9)]),
                ("h".into(), vec![]),
                ("i".into(), vec![leaf(10)]),
                ("j".into(), vec![leaf(11)]),
            ]
            .into(),
        ),
        layers: Some(vec![
            [("l".into(), label("λ")), ("m".into(), label("m"))].into(),
            [].into(),
            [("n".into(), label("n"))].into(),
            [("o".into(), label("o")), ("p".into(), label("p"))].into(),
        ]),
        atlas: Some(
            [
                ("q".into(), [(1, label("q1")), (2, label("q2"))].into()),
                ("r".into(), [(3, label("r"))].into()),
                ("s".into(), [].into()),
                ("t".into(), [(4, label("t4")), (5, label("t5"))].into()),
            ]
            .into(),
        ),
    }
}

/// The bytes of `shape`.
pub fn encode(shape: &schema::owned::Shape) -> Vec<u8> {
    let mut bytes = vec![0; shape.encoded_size()];
    let n = shape.encode_into(&mut bytes).expect("encodes");
    bytes.truncate(n);
    bytes
}

/// Every reader's verdict on `bytes` against `from_bytes`'s: `Err` describing the first
/// disagreement.
pub fn agree(bytes: &[u8]) -> Result<(), String> {
    let view = schema::Shape::from_bytes(bytes).map(drop);
    let noop = once::read_once::<schema::Shape, Error>(bytes, |_| Ok(()));
    let all = read_shape(bytes, Mode::All).map(drop);
    let skim = read_shape(bytes, Mode::Skim).map(drop);
    let careless = read_shape(bytes, Mode::Careless).map(drop);
    for (name, got) in [
        ("nothing read", noop),
        ("all read", all),
        ("skimmed", skim),
        ("careless", careless),
    ] {
        if got != view {
            return Err(format!(
                "{name}: {got:?}, from_bytes {view:?} on {} bytes {bytes:02x?}",
                bytes.len()
            ));
        }
    }
    Ok(())
}
