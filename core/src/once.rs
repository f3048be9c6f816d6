//! Reading a value in one pass: each part handed to a callback as it is read and validated.
//!
//! A view validates its whole input when it is made, and a walk over it then decodes each
//! nested message again as it reaches it: every node of a tree or a JSON value is read about
//! three times (docs/performance.md). Where every part of a large value is wanted once,
//! [`ReadOnce`] reads it in one pass instead. Its callback is handed the parts in wire order:
//! a struct's fields, a message's fields as they come (a repeated field twice, fields after
//! an unknown tag not at all, as a view would), a union's branch. Scalars, strings and
//! arrays of scalars arrive decoded, already validated. A nested struct, message or union
//! arrives as a [`Record`], arrays of them as [`Records`], maps onto them as [`Entries`]:
//! handles that read their value in one pass in turn ([`Record::read`]), decode it as a view
//! ([`Record::view`]) or leave it, in which case it is checked when the reading moves on.
//! Arrays of such arrays (`T[][]`) arrive as [`Lists`] and maps onto them (`map[K, T[]]`)
//! as [`ListEntries`], which hand out each array as [`Records`]; arrays of maps onto records
//! (`map[K, T][]`) as [`Maps`] and maps onto such maps (`map[K, map[K2, T]]`) as
//! [`MapEntries`], which hand out each map as [`Entries`]. (A field that a view holds
//! through `Lazy`, to break a cycle of values, is a [`Record`] like any other.)
//!
//! Whatever the callbacks do, the input is validated exactly as `Decode::from_bytes` would
//! validate it: the same checks (bounds, UTF-8, discriminators, nesting depth, the budget of
//! empty elements) at the same positions, so a one-pass read fails where and how decoding
//! fails, and succeeds where it succeeds. Parts are handed out as they are validated, so a
//! read that fails may have handed out some parts before the error: what a callback keeps
//! from a read that failed is its own business.
//!
//! A handle whose reading failed (or that a callback dropped half read, by swallowing an
//! error) is checked again from its start when the reading moves on, so the position after
//! it is always right. An error a callback swallows from a walk's `next` (a value before
//! the next one that fails its check, a map key that does not decode) comes back when the
//! reading moves on, too: a callback that ignores errors cannot make invalid input pass.
//!
//! A reader of a recursive type is fastest when it recurses on records: a function that
//! takes a value's [`Record`] and reads it, called for each value that [`Records::next`]
//! or [`Entries::next`] hands out, and through [`record`] for the value at the top (`sum`
//! below). A function out of line that takes a *part* instead (a union's branch, say)
//! makes the compiler keep the reader that the part's handle reads through, the union's
//! own, in memory for every value: the benchmark suite's JSON reader took 15% more
//! instructions and 21% more time that way (docs/decisions.md D47).
//!
//! Generated code implements [`ReadOnce`] for structs, messages and unions; the
//! implementations build on [`message`], [`union`] and slots that hold the handle of each
//! part until the callback returns (`RecordSlot`, `Slot`), and can be written by hand too:
//!
//! ```
//! use bebop_core::once::{self, Part, Parts, ReadOnce, Record, Records, Slot};
//! use bebop_core::{Array, Decode, Error, Reader, WireSize};
//!
//! // message Node { value(1): int32; children(2): Node[]; }, as generated code has it.
//! #[derive(Clone, Copy, Debug, Default)]
//! struct Node<'a> {
//!     value: Option<i32>,
//!     children: Option<Array<'a, Node<'a>>>,
//! }
//! # impl WireSize for Node<'_> {
//! #     const MIN_SIZE: usize = 4;
//! # }
//! # impl<'a> Decode<'a> for Node<'a> {
//! #     fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
//! #         r.message(|r| {
//! #             let mut out = Node::default();
//! #             loop {
//! #                 match r.read_tag()? {
//! #                     1 => out.value = Some(r.read()?),
//! #                     2 => out.children = Some(r.read()?),
//! #                     _ => break,
//! #                 }
//! #             }
//! #             Ok(out)
//! #         })
//! #     }
//! # }
//!
//! /// What reading a `Node` in one pass hands out.
//! enum NodePart<'a, 'r> {
//!     Value(i32),
//!     Children(Records<'a, 'r, Node<'a>>),
//! }
//! impl<'a, 'r> Parts<'a, 'r> for Node<'a> {
//!     type Part = NodePart<'a, 'r>;
//! }
//! impl<'a> ReadOnce<'a> for Node<'a> {
//!     fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
//!     where
//!         E: From<Error>,
//!         F: FnMut(Part<'a, '_, Self>) -> Result<(), E>,
//!     {
//!         once::message(reader, |reader, tag| {
//!             // One call of `f`, which the compiler then inlines here.
//!             let mut slot = Slot::new();
//!             let part = match tag {
//!                 1 => NodePart::Value(reader.read()?),
//!                 2 => NodePart::Children(slot.records(reader)?),
//!                 _ => return Ok(false),
//!             };
//!             f(part)?;
//!             slot.finish(reader)?;
//!             Ok(true)
//!         })
//!     }
//! }
//!
//! /// The sum of the values of a node and its subtrees, read once through its record.
//! fn sum<'a>(node: Record<'a, '_, Node<'a>>, total: &mut i64) -> Result<(), Error> {
//!     node.read(|part| {
//!         match part {
//!             NodePart::Value(v) => *total += i64::from(v),
//!             NodePart::Children(mut nodes) => {
//!                 while let Some(node) = nodes.next()? {
//!                     sum(node, total)?;
//!                 }
//!             }
//!         }
//!         Ok::<_, Error>(())
//!     })
//! }
//!
//! // Node { value: 1, children: [Node { value: 2 }] }
//! let bytes = [
//!     21, 0, 0, 0, 1, 1, 0, 0, 0, 2, 1, 0, 0, 0, // value 1, one child:
//!     6, 0, 0, 0, 1, 2, 0, 0, 0, 0, // value 2
//!     0,
//! ];
//! let mut total = 0;
//! let mut reader = Reader::new(&bytes);
//! once::record(&mut reader, |root| sum(root, &mut total))?;
//! reader.finish()?;
//! assert_eq!(total, 3);
//!
//! // Cut short, it fails where decoding fails.
//! let cut = &bytes[..20];
//! let err = once::read_once::<Node, Error>(cut, |_| Ok(())).unwrap_err();
//! assert_eq!(err, Node::from_bytes(cut).unwrap_err());
//! # Ok::<(), Error>(())
//! ```

use core::marker::PhantomData;

use crate::{Array, Decode, Error, Map, Reader};

/// What [`ReadOnce::read_once`] hands its callback for a value of `Self` read from input
/// borrowed for `'a`, while the callback borrows the reader for `'r`: an enum of the fields
/// of a struct or message, or of the branches of a union.
///
/// A trait of its own rather than an associated type with a lifetime parameter: its default
/// `Bound` makes every `for<'r>` over it imply `'a: 'r`, which a generic associated type's
/// `where Self: 'r` does not (callbacks over such a type would need `'static` input).
pub trait Parts<'a, 'r, Bound = &'r &'a ()> {
    /// The part.
    type Part;
}

/// The [part](Parts) of `T`, read from input borrowed for `'a`, handed out while the reader
/// is borrowed for `'r`.
pub type Part<'a, 'r, T> = <T as Parts<'a, 'r>>::Part;

/// A type that can be read in one pass: each part handed to a callback as it is read and
/// validated (see the [module documentation](self)).
pub trait ReadOnce<'a>: Decode<'a> + for<'r> Parts<'a, 'r> {
    /// Reads one value from `reader`, validating it as [`Decode::decode`] does, and hands
    /// `f` each of its parts in wire order. The first error, the callback's own or the
    /// input's, ends the read.
    fn read_once<E, F>(reader: &mut Reader<'a>, f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'a, '_, Self>) -> Result<(), E>;
}

/// Reads all of `bytes` as one `T` in one pass (with [`Limits::DEFAULT`](crate::Limits)),
/// handing `f` its parts: fails as [`Decode::from_bytes`] does, bytes left over included.
#[inline]
pub fn read_once<'a, T, E>(
    bytes: &'a [u8],
    f: impl FnMut(Part<'a, '_, T>) -> Result<(), E>,
) -> Result<(), E>
where
    T: ReadOnce<'a>,
    E: From<Error>,
{
    let mut reader = Reader::new(bytes);
    T::read_once(&mut reader, f)?;
    reader.finish()?;
    Ok(())
}

/// Reads the next value of `reader`, a `T`, through a [`Record`] handed to `f`: the handle
/// for the value at the top of a reader that recurses on records (see the
/// [module documentation](self)). What `f` leaves unread is checked before this returns, so
/// `reader` is then past the value, or the error is the one decoding meets. The module
/// documentation's example reads a tree with it.
#[inline]
pub fn record<'a, T, R, E>(
    reader: &mut Reader<'a>,
    f: impl FnOnce(Record<'a, '_, T>) -> Result<R, E>,
) -> Result<R, E>
where
    T: ReadOnce<'a>,
    E: From<Error>,
{
    let mut slot = RecordSlot::new();
    let out = f(slot.record(reader))?;
    slot.finish(reader)?;
    Ok(out)
}

/// Whether a handed-out value was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Read to its end (or never handed out).
    Read,
    /// Handed out and not read to its end: checked when the reading moves on. A handle
    /// reads through a copy of its reader and moves the reader only once the value is read
    /// whole, so a value whose reading failed part way is checked from its start.
    Unread,
}

/// Checks one value (a type's `Decode::check`).
type Check<'a> = fn(&mut Reader<'a>) -> Result<(), Error>;

/// Moves past `n` values, checking them.
type Rest<'a> = fn(&mut Reader<'a>, usize) -> Result<(), Error>;

/// Brings `reader` to the end of a value handed out in `state`: nothing to do when it was
/// read, a check from its start when it was not.
#[inline(always)]
fn settle<'a>(reader: &mut Reader<'a>, state: &mut State, check: Check<'a>) -> Result<(), Error> {
    match *state {
        State::Read => Ok(()),
        State::Unread => settle_unread(reader, state, check),
    }
}

/// [`settle`] for a value not read: checked, through a copy of `reader` that it catches
/// up with only once the check passed. A check that fails leaves `reader` at the value's
/// start, so a callback that swallows the error and goes on gets the same error again
/// where the reading moves on (from the value's start, as `from_bytes` meets it), not a
/// check from the middle of the value, which may well pass.
#[inline(never)]
fn settle_unread<'a>(
    reader: &mut Reader<'a>,
    state: &mut State,
    check: Check<'a>,
) -> Result<(), Error> {
    let mut local = reader.working_copy();
    check(&mut local)?;
    reader.catch_up(&local);
    *state = State::Read;
    Ok(())
}

/// Checks one `T` by reading it in one pass with a callback that takes nothing. (Not
/// through `T::check`: a second caller of the generated decoders' `check` made the compiler
/// stop inlining them into one another, and JsonLarge's view decode took 18.5% more
/// instructions in a program that also read JSON in one pass.)
#[inline(never)]
fn check_one<'a, T: ReadOnce<'a>>(reader: &mut Reader<'a>) -> Result<(), Error> {
    T::read_once(reader, |_| Ok::<(), Error>(()))
}

/// Checks `n` values with `check`, one after another.
#[inline(always)]
fn check_n<'a>(
    reader: &mut Reader<'a>,
    n: usize,
    check: impl Fn(&mut Reader<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    (0..n).try_for_each(|_| check(reader))
}

/// Checks `n` map entries: each key decoded, each value checked with `check`.
#[inline(always)]
fn check_n_entries<'a, K: Decode<'a>>(
    reader: &mut Reader<'a>,
    n: usize,
    check: impl Fn(&mut Reader<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    check_n(reader, n, |reader| {
        K::decode(reader)?;
        check(reader)
    })
}

/// Checks `n` elements of `T`, one by one.
fn check_each<'a, T: ReadOnce<'a>>(reader: &mut Reader<'a>, n: usize) -> Result<(), Error> {
    check_n(reader, n, check_one::<T>)
}

/// Moves past `n` elements of `T`, a fixed size whose every bit pattern is valid, whose
/// bytes were measured.
fn take_each<'a, T: Decode<'a>>(reader: &mut Reader<'a>, n: usize) -> Result<(), Error> {
    reader.take(T::FIXED_SIZE.unwrap_or(0) * n).map(drop)
}

/// Checks `n` entries of a map.
fn check_entries<'a, K: Decode<'a>, V: ReadOnce<'a>>(
    reader: &mut Reader<'a>,
    n: usize,
) -> Result<(), Error> {
    check_n_entries::<K>(reader, n, check_one::<V>)
}

/// Checks one array of `T` as decoding checks it (the walk of [`Records`] left alone).
#[inline(never)]
fn check_list<'a, T: ReadOnce<'a>>(reader: &mut Reader<'a>) -> Result<(), Error> {
    let mut slot = None;
    Walk::open_array::<T>(&mut slot, reader, check_one::<T>, check_each::<T>)?.finish(reader)
}

/// Checks `n` arrays of `T`.
fn check_lists<'a, T: ReadOnce<'a>>(reader: &mut Reader<'a>, n: usize) -> Result<(), Error> {
    check_n(reader, n, check_list::<T>)
}

/// Checks `n` entries of a map onto arrays of `T`.
fn check_list_entries<'a, K: Decode<'a>, T: ReadOnce<'a>>(
    reader: &mut Reader<'a>,
    n: usize,
) -> Result<(), Error> {
    check_n_entries::<K>(reader, n, check_list::<T>)
}

/// Checks one map onto `V` as decoding checks it (the walk of [`Entries`] left alone).
#[inline(never)]
fn check_map<'a, K: Decode<'a>, V: ReadOnce<'a>>(reader: &mut Reader<'a>) -> Result<(), Error> {
    let mut slot = None;
    Walk::open_map::<K, V>(&mut slot, reader, check_one::<V>, check_entries::<K, V>)?.finish(reader)
}

/// Checks `n` maps onto `V`.
fn check_maps<'a, K: Decode<'a>, V: ReadOnce<'a>>(
    reader: &mut Reader<'a>,
    n: usize,
) -> Result<(), Error> {
    check_n(reader, n, check_map::<K, V>)
}

/// Checks `n` entries of a map onto maps onto `V`.
fn check_map_entries<'a, K: Decode<'a>, K2: Decode<'a>, V: ReadOnce<'a>>(
    reader: &mut Reader<'a>,
    n: usize,
) -> Result<(), Error> {
    check_n_entries::<K>(reader, n, check_map::<K2, V>)
}

/// One struct, message or union not read yet: [read](Self::read) it in one pass, decode it
/// as a [view](Self::view), or leave it (it is checked when the reading moves on).
#[must_use = "a record left alone is only checked; read it or view it to see it"]
pub struct Record<'a, 'r, T> {
    reader: &'r mut Reader<'a>,
    state: &'r mut State,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T: Decode<'a>> Record<'a, '_, T> {
    /// Where the value starts in the input.
    pub fn offset(&self) -> usize {
        self.reader.offset()
    }

    /// Reads the value in one pass, handing `f` its parts.
    #[inline]
    pub fn read<E, F>(self, f: F) -> Result<(), E>
    where
        T: ReadOnce<'a>,
        E: From<Error>,
        F: FnMut(Part<'a, '_, T>) -> Result<(), E>,
    {
        // Through a copy of the reader, stored back once the value is read: the handle's
        // reader lives in its walk or slot, in memory, and reading through it directly
        // stored and reloaded the position at every step. A failed read leaves the reader
        // at the value's start, to be checked from there.
        let mut local = self.reader.working_copy();
        T::read_once(&mut local, f)?;
        self.reader.catch_up(&local);
        *self.state = State::Read;
        Ok(())
    }

    /// Decodes the value as a view (validated whole, as `Decode::decode` does).
    #[inline]
    pub fn view(self) -> Result<T, Error> {
        let mut local = self.reader.working_copy();
        let value = local.read()?;
        self.reader.catch_up(&local);
        *self.state = State::Read;
        Ok(value)
    }
}

/// Where a [`ReadOnce`] implementation keeps the state of the [`Record`] it hands out for
/// one part until the callback returns, and then [finishes](Self::finish) it: checks the
/// record if the callback did not read it, or again from its start if its reading stopped
/// part way. The record reads through the implementation's own reader (a message's or
/// union's body, whose address the callback has anyway).
#[doc(hidden)]
pub struct RecordSlot<'a>(Option<One<'a>>);

/// A record handed out: its state and how to check it.
struct One<'a> {
    state: State,
    check: Check<'a>,
}

impl Default for RecordSlot<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> RecordSlot<'a> {
    /// An empty slot.
    #[inline(always)]
    pub const fn new() -> Self {
        RecordSlot(None)
    }

    /// The next value, a struct, message or union, as a [`Record`].
    #[inline(always)]
    pub fn record<'s, T: ReadOnce<'a>>(
        &'s mut self,
        reader: &'s mut Reader<'a>,
    ) -> Record<'a, 's, T> {
        let one = self.0.insert(One {
            state: State::Unread,
            check: check_one::<T>,
        });
        Record {
            reader,
            state: &mut one.state,
            _type: PhantomData,
        }
    }

    /// Moves `reader` past the record handed out, checking it if the callback did not
    /// read it; nothing if none was handed out.
    #[inline(always)]
    pub fn finish(&mut self, reader: &mut Reader<'a>) -> Result<(), Error> {
        match &mut self.0 {
            Some(one) => settle(reader, &mut one.state, one.check),
            None => Ok(()),
        }
    }
}

/// Where a [`ReadOnce`] implementation keeps the handle it hands out for one part, a
/// [`Records`] or [`Entries`], until the callback returns, and then
/// [finishes](Self::finish) it: moves past whatever the callback did not read, checking it.
///
/// The handle reads through a reader of its own, a copy of the implementation's: the
/// implementation's reader does not escape into the callback and can stay in registers.
#[doc(hidden)]
pub struct Slot<'a>(Option<Walk<'a>>);

/// The state of a handed-out handle.
struct Walk<'a> {
    /// The handle's reader.
    own: Reader<'a>,
    /// Elements or entries not handed out yet.
    left: usize,
    /// The state of the value handed out last.
    state: State,
    /// Checks one value of its type.
    check: Check<'a>,
    /// Moves past elements or entries not handed out.
    rest: Rest<'a>,
}

impl<'a> Walk<'a> {
    /// Starts in `slot` a walk over the next value of `reader`, an array of `E`, checked as
    /// decoding checks it: its count against the bytes left, zero-sized elements against
    /// the budget, and one more nesting level for elements that are read one by one
    /// (`check` checks one, `each` a number of them; fixed-size elements that are always
    /// valid are only counted). Built in place: a walk built apart and then moved into its
    /// slot was copied through the stack (TreeDeep took 8% more instructions).
    #[inline(always)]
    fn open_array<'s, E: Decode<'a>>(
        slot: &'s mut Option<Self>,
        reader: &mut Reader<'a>,
        check: Check<'a>,
        each: Rest<'a>,
    ) -> Result<&'s mut Self, Error> {
        let count = reader.read_length(E::MIN_SIZE)?;
        let nested = reader.element_prelude::<E>(count)?;
        let mut own = reader.working_copy();
        let rest: Rest<'a> = if nested {
            own.descend()?;
            each
        } else {
            take_each::<E>
        };
        Ok(slot.insert(Walk {
            own,
            left: count,
            state: State::Read,
            check,
            rest,
        }))
    }

    /// Starts in `slot` a walk over the next value of `reader`, a map whose entries are a
    /// `K` and a `V`, checked as decoding checks it: its count against the bytes left,
    /// zero-sized entries against the budget, and one more nesting level for its entries
    /// (`check` checks one value, `entries` a number of entries).
    #[inline(always)]
    fn open_map<'s, K: Decode<'a>, V: Decode<'a>>(
        slot: &'s mut Option<Self>,
        reader: &mut Reader<'a>,
        check: Check<'a>,
        entries: Rest<'a>,
    ) -> Result<&'s mut Self, Error> {
        let count = crate::map::read_count::<K, V>(reader)?;
        let mut own = reader.working_copy();
        own.descend()?;
        Ok(slot.insert(Walk {
            own,
            left: count,
            state: State::Read,
            check,
            rest: entries,
        }))
    }

    /// Moves `reader`, the reader the walk was copied from, past the whole walk: the value
    /// handed out last and those not handed out are checked.
    #[inline(always)]
    fn finish(&mut self, reader: &mut Reader<'a>) -> Result<(), Error> {
        settle(&mut self.own, &mut self.state, self.check)?;
        if self.left > 0 {
            (self.rest)(&mut self.own, self.left)?;
        }
        reader.catch_up(&self.own);
        Ok(())
    }

    /// Moves past the value handed out last (checking it if it was not read) and counts
    /// the next one out; false when none is left.
    #[inline(always)]
    fn advance(&mut self) -> Result<bool, Error> {
        settle(&mut self.own, &mut self.state, self.check)?;
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        Ok(true)
    }

    /// The key of the entry counted out last, decoded through a copy of the walk's reader
    /// that the walk catches up with only once the key is whole: a key that fails to decode
    /// leaves the walk at its start, with its entry still to be counted out and checked, to
    /// fail again there when the reading moves on. (Keeping the error in the walk's state
    /// instead cost no instruction here, but made the state 40 bytes, and trees read
    /// through handles took 6% longer. Decoding through the walk's own reader, in memory,
    /// and going back on failure cost JsonLarge 87 instructions more.)
    #[inline(always)]
    fn key<K: Decode<'a>>(&mut self) -> Result<K, Error> {
        let mut local = self.own.working_copy();
        match K::decode(&mut local) {
            Ok(key) => {
                self.own.catch_up(&local);
                Ok(key)
            }
            Err(e) => {
                self.left += 1;
                Err(e)
            }
        }
    }

    /// The next value, not read yet, as a [`Record`].
    #[inline(always)]
    fn record<T>(&mut self) -> Record<'a, '_, T> {
        self.state = State::Unread;
        Record {
            reader: &mut self.own,
            state: &mut self.state,
            _type: PhantomData,
        }
    }
}

impl Default for Slot<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Slot<'a> {
    /// An empty slot.
    #[inline(always)]
    pub const fn new() -> Self {
        Slot(None)
    }

    /// The next value, an array of structs, messages or unions, as [`Records`]. The array
    /// is checked as decoding checks it: its count against the bytes left, zero-sized
    /// elements against the budget, and one more nesting level for its elements.
    #[inline(always)]
    pub fn records<T: ReadOnce<'a>>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<Records<'a, '_, T>, Error> {
        let walk = Walk::open_array::<T>(&mut self.0, reader, check_one::<T>, check_each::<T>)?;
        Ok(Records {
            walk,
            _type: PhantomData,
        })
    }

    /// The next value, an array of arrays of structs, messages or unions (`T[][]`), as
    /// [`Lists`]: checked as decoding checks it, like [`records`](Self::records).
    #[inline(always)]
    pub fn lists<T: ReadOnce<'a> + 'a>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<Lists<'a, '_, T>, Error> {
        let walk = Walk::open_array::<Array<'a, T>>(
            &mut self.0,
            reader,
            check_list::<T>,
            check_lists::<T>,
        )?;
        Ok(Lists {
            nest: Nest::new(walk),
            _type: PhantomData,
        })
    }

    /// The next value, a map onto structs, messages or unions, as [`Entries`]. The map is
    /// checked as decoding checks it: its count against the bytes left, zero-sized entries
    /// against the budget, and one more nesting level for its entries.
    #[inline(always)]
    pub fn entries<K: Decode<'a>, V: ReadOnce<'a>>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<Entries<'a, '_, K, V>, Error> {
        let walk =
            Walk::open_map::<K, V>(&mut self.0, reader, check_one::<V>, check_entries::<K, V>)?;
        Ok(Entries {
            walk,
            _types: PhantomData,
        })
    }

    /// The next value, a map onto arrays of structs, messages or unions (`map[K, T[]]`),
    /// as [`ListEntries`]: checked as decoding checks it, like [`entries`](Self::entries).
    #[inline(always)]
    pub fn list_entries<K: Decode<'a>, T: ReadOnce<'a> + 'a>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<ListEntries<'a, '_, K, T>, Error> {
        let walk = Walk::open_map::<K, Array<'a, T>>(
            &mut self.0,
            reader,
            check_list::<T>,
            check_list_entries::<K, T>,
        )?;
        Ok(ListEntries {
            nest: Nest::new(walk),
            _types: PhantomData,
        })
    }

    /// The next value, an array of maps onto structs, messages or unions (`map[K, V][]`),
    /// as [`Maps`]: checked as decoding checks it, like [`records`](Self::records).
    #[inline(always)]
    pub fn maps<K: Decode<'a> + 'a, V: ReadOnce<'a> + 'a>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<Maps<'a, '_, K, V>, Error> {
        let walk = Walk::open_array::<Map<'a, K, V>>(
            &mut self.0,
            reader,
            check_map::<K, V>,
            check_maps::<K, V>,
        )?;
        Ok(Maps {
            nest: Nest::new(walk),
            _types: PhantomData,
        })
    }

    /// The next value, a map onto maps onto structs, messages or unions
    /// (`map[K, map[K2, V]]`), as [`MapEntries`]: checked as decoding checks it, like
    /// [`entries`](Self::entries).
    #[inline(always)]
    pub fn map_entries<K: Decode<'a>, K2: Decode<'a> + 'a, V: ReadOnce<'a> + 'a>(
        &mut self,
        reader: &mut Reader<'a>,
    ) -> Result<MapEntries<'a, '_, K, K2, V>, Error> {
        let walk = Walk::open_map::<K, Map<'a, K2, V>>(
            &mut self.0,
            reader,
            check_map::<K2, V>,
            check_map_entries::<K, K2, V>,
        )?;
        Ok(MapEntries {
            nest: Nest::new(walk),
            _key: PhantomData,
            _maps: PhantomData,
        })
    }

    /// Moves `reader` past the value whose handle was handed out, checking what the
    /// callback did not read; nothing if none was.
    #[inline(always)]
    pub fn finish(&mut self, reader: &mut Reader<'a>) -> Result<(), Error> {
        match &mut self.0 {
            Some(walk) => walk.finish(reader),
            None => Ok(()),
        }
    }
}

/// The elements of an array of structs, messages or unions, handed out one by one
/// ([`next`](Self::next)); those a callback leaves are checked when the reading moves on.
#[must_use = "elements left alone are only checked"]
pub struct Records<'a, 'r, T> {
    walk: &'r mut Walk<'a>,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T: Decode<'a>> Records<'a, '_, T> {
    /// How many elements are left to hand out (all of them, before the first
    /// [`next`](Self::next)).
    pub fn len(&self) -> usize {
        self.walk.left
    }

    /// True when no element is left to hand out.
    pub fn is_empty(&self) -> bool {
        self.walk.left == 0
    }

    /// The next element, once the one before it is read or checked; `None` after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each element borrows the walk
    pub fn next(&mut self) -> Result<Option<Record<'a, '_, T>>, Error> {
        if !self.walk.advance()? {
            return Ok(None);
        }
        Ok(Some(self.walk.record()))
    }
}

/// The entries of a map whose values are structs, messages or unions, handed out one by
/// one ([`next`](Self::next)): each key decoded, each value a [`Record`].
#[must_use = "entries left alone are only checked"]
pub struct Entries<'a, 'r, K, V> {
    walk: &'r mut Walk<'a>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<'a, K: Decode<'a>, V: Decode<'a>> Entries<'a, '_, K, V> {
    /// How many entries are left to hand out.
    pub fn len(&self) -> usize {
        self.walk.left
    }

    /// True when no entry is left to hand out.
    pub fn is_empty(&self) -> bool {
        self.walk.left == 0
    }

    /// The next entry's key and value, once the value before it is read or checked; `None`
    /// after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each value borrows the walk
    pub fn next(&mut self) -> Result<Option<(K, Record<'a, '_, V>)>, Error> {
        if !self.walk.advance()? {
            return Ok(None);
        }
        let key = self.walk.key()?;
        Ok(Some((key, self.walk.record())))
    }
}

/// `len` and `is_empty` of a walk whose values are walks of their own (`Lists`,
/// `ListEntries`, `Maps`, `MapEntries`): what its outer walk has left to hand out.
macro_rules! outer_len {
    ($many:literal, $one:literal) => {
        #[doc = concat!("How many ", $many, " are left to hand out.")]
        pub fn len(&self) -> usize {
            self.nest.outer.left
        }

        #[doc = concat!("True when no ", $one, " is left to hand out.")]
        pub fn is_empty(&self) -> bool {
            self.nest.outer.left == 0
        }
    };
}

/// A walk whose values are themselves arrays of records or maps onto records, each handed
/// out as a walk of its own ([`Records`], [`Entries`]), for [`Lists`], [`ListEntries`],
/// [`Maps`] and [`MapEntries`].
struct Nest<'a, 'r> {
    /// The walk over the arrays (or entries).
    outer: &'r mut Walk<'a>,
    /// The walk over the array handed out last, on a copy of `outer`'s reader.
    inner: Option<Walk<'a>>,
}

impl<'a, 'r> Nest<'a, 'r> {
    #[inline(always)]
    fn new(outer: &'r mut Walk<'a>) -> Self {
        Nest { outer, inner: None }
    }

    /// Moves past the array handed out last, checking what was not read of it, and counts
    /// the next one out; false when none is left.
    ///
    /// While an array is handed out, its value in the outer walk stays unread: should its
    /// walk fail, or the handle be dropped with the walk half done, the outer walk checks
    /// the array again, whole, from its start.
    #[inline]
    fn advance(&mut self) -> Result<bool, Error> {
        if let Some(mut inner) = self.inner.take() {
            inner.finish(&mut self.outer.own)?;
            self.outer.state = State::Read;
        }
        self.outer.advance()
    }

    /// The array at the outer walk's position, as [`Records`] (the outer walk stays at its
    /// start until the array's walk is finished).
    /// A reader at the value at the outer walk's position, for the walk of that value,
    /// which stays unread in the outer walk until its own walk is finished.
    #[inline(always)]
    fn inner_start(&mut self) -> Reader<'a> {
        self.outer.state = State::Unread;
        self.outer.own.working_copy()
    }

    #[inline]
    fn records<T: ReadOnce<'a>>(&mut self) -> Result<Records<'a, '_, T>, Error> {
        let mut at = self.inner_start();
        let walk =
            Walk::open_array::<T>(&mut self.inner, &mut at, check_one::<T>, check_each::<T>)?;
        Ok(Records {
            walk,
            _type: PhantomData,
        })
    }

    /// The map at the outer walk's position, as [`Entries`] (the outer walk stays at its
    /// start until the map's walk is finished).
    #[inline]
    fn entries<K: Decode<'a>, V: ReadOnce<'a>>(&mut self) -> Result<Entries<'a, '_, K, V>, Error> {
        let mut at = self.inner_start();
        let walk = Walk::open_map::<K, V>(
            &mut self.inner,
            &mut at,
            check_one::<V>,
            check_entries::<K, V>,
        )?;
        Ok(Entries {
            walk,
            _types: PhantomData,
        })
    }
}

/// The arrays of an array of arrays of structs, messages or unions (`T[][]`), handed out
/// one by one ([`next`](Self::next)) as [`Records`]; what a callback leaves is checked when
/// the reading moves on.
///
/// ```
/// use bebop_core::once::{Lists, Parts, ReadOnce, Slot};
/// use bebop_core::{Decode, Error, Reader, WireSize};
///
/// // struct Cell { v: byte; }, as generated code has it.
/// #[derive(Clone, Copy)]
/// struct Cell {
///     v: u8,
/// }
/// # impl WireSize for Cell {
/// #     const FIXED_SIZE: Option<usize> = Some(1);
/// #     const MIN_SIZE: usize = 1;
/// # }
/// # impl<'a> Decode<'a> for Cell {
/// #     fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
/// #         Ok(Cell { v: r.read()? })
/// #     }
/// # }
/// enum CellPart {
///     V(u8),
/// }
/// impl<'a, 'r> Parts<'a, 'r> for Cell {
///     type Part = CellPart;
/// }
/// impl<'a> ReadOnce<'a> for Cell {
///     fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
///     where
///         E: From<Error>,
///         F: FnMut(CellPart) -> Result<(), E>,
///     {
///         f(CellPart::V(reader.read()?))
///     }
/// }
///
/// // Cell[][] = [[1, 2], [], [3]]: each array its count, then its cells.
/// let bytes = [3, 0, 0, 0, 2, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 3];
/// let mut reader = Reader::new(&bytes);
/// let mut slot = Slot::new();
/// let mut rows: Lists<'_, '_, Cell> = slot.lists(&mut reader)?;
/// let mut sums = Vec::new();
/// while let Some(mut row) = rows.next()? {
///     let mut sum = 0;
///     while let Some(cell) = row.next()? {
///         cell.read(|CellPart::V(v)| {
///             sum += v;
///             Ok::<_, Error>(())
///         })?;
///     }
///     sums.push(sum);
/// }
/// slot.finish(&mut reader)?;
/// reader.finish()?;
/// assert_eq!(sums, [3, 0, 3]);
/// # Ok::<(), Error>(())
/// ```
#[must_use = "arrays left alone are only checked"]
pub struct Lists<'a, 'r, T> {
    nest: Nest<'a, 'r>,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T: ReadOnce<'a>> Lists<'a, '_, T> {
    outer_len!("arrays", "array");

    /// The next array, once the one before it is read or checked; `None` after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each array borrows the walk
    pub fn next(&mut self) -> Result<Option<Records<'a, '_, T>>, Error> {
        if !self.nest.advance()? {
            return Ok(None);
        }
        self.nest.records().map(Some)
    }
}

/// The entries of a map onto arrays of structs, messages or unions (`map[K, T[]]`), handed
/// out one by one ([`next`](Self::next)): each key decoded, each value as [`Records`].
#[must_use = "entries left alone are only checked"]
pub struct ListEntries<'a, 'r, K, T> {
    nest: Nest<'a, 'r>,
    _types: PhantomData<fn() -> (K, T)>,
}

impl<'a, K: Decode<'a>, T: ReadOnce<'a>> ListEntries<'a, '_, K, T> {
    outer_len!("entries", "entry");

    /// The next entry's key and array, once the array before it is read or checked;
    /// `None` after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each array borrows the walk
    pub fn next(&mut self) -> Result<Option<(K, Records<'a, '_, T>)>, Error> {
        if !self.nest.advance()? {
            return Ok(None);
        }
        let key = self.nest.outer.key()?;
        Ok(Some((key, self.nest.records()?)))
    }
}

/// The maps of an array of maps onto structs, messages or unions (`map[K, V][]`), handed
/// out one by one ([`next`](Self::next)) as [`Entries`]; what a callback leaves is checked
/// when the reading moves on.
///
/// ```
/// use bebop_core::once::{Maps, Parts, ReadOnce, Slot};
/// use bebop_core::{Decode, Error, Reader, WireSize};
///
/// // struct Cell { v: byte; }, as generated code has it.
/// #[derive(Clone, Copy)]
/// struct Cell {
///     v: u8,
/// }
/// # impl WireSize for Cell {
/// #     const FIXED_SIZE: Option<usize> = Some(1);
/// #     const MIN_SIZE: usize = 1;
/// # }
/// # impl<'a> Decode<'a> for Cell {
/// #     fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
/// #         Ok(Cell { v: r.read()? })
/// #     }
/// # }
/// enum CellPart {
///     V(u8),
/// }
/// impl<'a, 'r> Parts<'a, 'r> for Cell {
///     type Part = CellPart;
/// }
/// impl<'a> ReadOnce<'a> for Cell {
///     fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
///     where
///         E: From<Error>,
///         F: FnMut(CellPart) -> Result<(), E>,
///     {
///         f(CellPart::V(reader.read()?))
///     }
/// }
///
/// // map[byte, Cell][] = [{1: 10, 2: 20}, {}]: each map its count, then its keys and cells.
/// let bytes = [2, 0, 0, 0, 2, 0, 0, 0, 1, 10, 2, 20, 0, 0, 0, 0];
/// let mut reader = Reader::new(&bytes);
/// let mut slot = Slot::new();
/// let mut maps: Maps<'_, '_, u8, Cell> = slot.maps(&mut reader)?;
/// let mut seen = Vec::new();
/// while let Some(mut map) = maps.next()? {
///     while let Some((key, cell)) = map.next()? {
///         cell.read(|CellPart::V(v)| {
///             seen.push((key, v));
///             Ok::<_, Error>(())
///         })?;
///     }
/// }
/// slot.finish(&mut reader)?;
/// reader.finish()?;
/// assert_eq!(seen, [(1, 10), (2, 20)]);
/// # Ok::<(), Error>(())
/// ```
#[must_use = "maps left alone are only checked"]
pub struct Maps<'a, 'r, K, V> {
    nest: Nest<'a, 'r>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<'a, K: Decode<'a>, V: ReadOnce<'a>> Maps<'a, '_, K, V> {
    outer_len!("maps", "map");

    /// The next map, once the one before it is read or checked; `None` after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each map borrows the walk
    pub fn next(&mut self) -> Result<Option<Entries<'a, '_, K, V>>, Error> {
        if !self.nest.advance()? {
            return Ok(None);
        }
        self.nest.entries().map(Some)
    }
}

/// The entries of a map onto maps onto structs, messages or unions (`map[K, map[K2, V]]`),
/// handed out one by one ([`next`](Self::next)): each key decoded, each value as
/// [`Entries`].
#[must_use = "entries left alone are only checked"]
pub struct MapEntries<'a, 'r, K, K2, V> {
    nest: Nest<'a, 'r>,
    _key: PhantomData<fn() -> K>,
    _maps: PhantomData<fn() -> (K2, V)>,
}

impl<'a, K: Decode<'a>, K2: Decode<'a>, V: ReadOnce<'a>> MapEntries<'a, '_, K, K2, V> {
    outer_len!("entries", "entry");

    /// The next entry's key and map, once the map before it is read or checked; `None`
    /// after the last.
    #[inline]
    #[allow(clippy::should_implement_trait)] // each map borrows the walk
    #[allow(clippy::type_complexity)] // a key and the walk of its map, as `ListEntries` has
    pub fn next(&mut self) -> Result<Option<(K, Entries<'a, '_, K2, V>)>, Error> {
        if !self.nest.advance()? {
            return Ok(None);
        }
        let key = self.nest.outer.key()?;
        Ok(Some((key, self.nest.entries()?)))
    }
}

/// Reads a message body in one pass, for [`ReadOnce`] implementations: its length, then
/// `field(reader, tag)` for each tag until the end marker, the end of the body or a tag
/// `field` does not know (it returns `false`; the rest of the body is skipped, as decoding
/// skips it).
#[inline]
pub fn message<'a, E: From<Error>>(
    reader: &mut Reader<'a>,
    mut field: impl FnMut(&mut Reader<'a>, u8) -> Result<bool, E>,
) -> Result<(), E> {
    reader.message_with(|r| {
        loop {
            let tag = r.read_tag()?;
            if !field(r, tag)? {
                return Ok(());
            }
        }
    })
}

/// Reads a union in one pass, for [`ReadOnce`] implementations: its length and
/// discriminator, then `branch(reader, discriminator)`, which returns
/// [`Reader::unknown_discriminator`] for one it does not know.
#[inline]
pub fn union<'a, E: From<Error>>(
    reader: &mut Reader<'a>,
    branch: impl FnOnce(&mut Reader<'a>, u8) -> Result<(), E>,
) -> Result<(), E> {
    reader.union_with(branch)
}
