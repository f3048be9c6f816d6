//! The bounds-checked input cursor every decoder reads through.

use crate::{Decode, Error, ErrorKind};

/// Limits that keep hostile input from exhausting the stack or the CPU.
///
/// Bebop has no pointers, so every byte is read at most once while decoding; what remains for
/// an attacker is deep nesting (stack) and arrays of zero-sized elements (an array of four
/// billion empty structs fits in four bytes). Both are bounded here.
///
/// ```
/// use bebop_core::{Decode, Limits, Reader};
///
/// let limits = Limits { max_depth: 8, ..Limits::DEFAULT };
/// let mut reader = Reader::with_limits(&[5, 0, 0, 0, b'h', b'e', b'l', b'l', b'o', 0], limits);
/// assert_eq!(<&str>::decode(&mut reader), Ok("hello"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limits {
    /// How many messages, unions and arrays or maps of non-scalar elements may enclose one
    /// another. Each level costs a few hundred bytes of stack in generated decoders.
    pub max_depth: u32,
    /// How many zero-sized elements (empty structs, and fixed arrays of them) all the arrays
    /// and maps of one decode may declare in total.
    pub max_empty_elements: u64,
}

impl Limits {
    /// The default nesting limit: 64 levels (a message holding an array of messages uses two).
    pub const DEFAULT_MAX_DEPTH: u32 = 64;
    /// The default budget of zero-sized elements: 2^20.
    pub const DEFAULT_MAX_EMPTY_ELEMENTS: u64 = 1 << 20;

    /// The limits [`Decode::from_bytes`] applies.
    pub const DEFAULT: Limits = Limits {
        max_depth: Self::DEFAULT_MAX_DEPTH,
        max_empty_elements: Self::DEFAULT_MAX_EMPTY_ELEMENTS,
    };

    /// No limits at all. Views use this to re-read bytes that were already validated under
    /// the caller's limits; do not use it on untrusted input.
    pub const NONE: Limits = Limits {
        max_depth: u32::MAX,
        max_empty_elements: u64::MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A cursor over borrowed input.
///
/// Every read is bounds-checked and returns an [`Error`] carrying the absolute byte offset;
/// nothing here panics or allocates. Generated decoders are written against this type.
///
/// ```
/// use bebop_core::Reader;
///
/// let mut r = Reader::new(&[0x2a, 0, 0, 0, 7]);
/// assert_eq!(r.read::<i32>(), Ok(42));
/// assert_eq!(r.offset(), 4);
/// assert_eq!(r.read_u8(), Ok(7));
/// assert!(r.read_u8().is_err());
/// ```
///
/// # Reading a value in one pass
///
/// To read every field of a large recursive value once, read it with these methods rather
/// than decoding a view and walking it: a view decodes a message in an array again when the
/// walk reaches it, so a tree's nodes are read about three times. Fields come in the order
/// the encoder wrote them (tag order, from every encoder we know of). This sums the values
/// of a tree of `message Node { value(1): int32; children(2): Node[]; }`, checking bounds
/// and nesting depth as a generated decoder does:
///
/// ```
/// use bebop_core::{Error, ErrorKind, Reader};
///
/// fn sum(r: &mut Reader<'_>) -> Result<i64, Error> {
///     r.message(|r| {
///         let mut total = 0;
///         loop {
///             match r.read_tag()? {
///                 1 => total += i64::from(r.read::<i32>()?),
///                 2 => {
///                     // Every child takes at least its 4-byte length prefix.
///                     let count = r.read_length(4)?;
///                     // Recurse through a copy of the reader: one whose address goes to
///                     // an out-of-line call is kept in memory, and every read of this
///                     // loop would then store and load its position.
///                     let mut copy = r.clone();
///                     total += copy.nested(|c| (0..count).try_fold(0, |t, _| Ok(t + sum(c)?)))?;
///                     *r = copy;
///                 }
///                 _ => break, // 0 ends the message; an unknown tag ends what we know
///             }
///         }
///         Ok(total)
///     })
/// }
///
/// // Node { value: 1, children: [Node { value: 2 }] }
/// let bytes = [
///     21, 0, 0, 0, // the root's length
///     1, 1, 0, 0, 0, // value = 1
///     2, 1, 0, 0, 0, // children: 1 element
///     6, 0, 0, 0, 1, 2, 0, 0, 0, 0, // Node { value: 2 }
///     0, // the root's end
/// ];
/// let mut r = Reader::new(&bytes);
/// assert_eq!(sum(&mut r), Ok(3));
/// r.finish()?;
/// // Cut short, the same bytes fail with the position of what does not fit.
/// let err = sum(&mut Reader::new(&bytes[..20])).unwrap_err();
/// assert_eq!((err.kind(), err.offset()), (ErrorKind::LengthOutOfBounds, 0));
/// # Ok::<(), Error>(())
/// ```
///
/// `benches/workloads/src/one_pass.rs` in the repository reads trees, JSON values and
/// documents so, and its tests hold those readers to the generated views' verdict and
/// errors on hostile input.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    /// The unread bytes of the current scope (the whole input, or a message or union body).
    rest: &'a [u8],
    /// Absolute offset of the end of `rest`, so that `end - rest.len()` is the position.
    end: usize,
    depth_left: u32,
    empty_left: u64,
    /// True when the bytes were validated by an earlier decode (views re-reading their own
    /// bytes): element walks then hop over values with [`Decode::skip`] instead of checking
    /// them again.
    validated: bool,
    /// True while the current scope ends where the input ends (not at an enclosing message
    /// or union length): running out of bytes then means the input is incomplete, not
    /// corrupt.
    open_ended: bool,
}

/// Where a bounds error happened, for the error constructors: the reader's offset, how many
/// bytes its scope had left, and whether that scope ends where the input ends.
#[derive(Clone, Copy)]
struct Site {
    at: usize,
    have: usize,
    open_ended: bool,
}

impl Site {
    /// Marks a bounds error as incomplete input when the scope is open-ended.
    #[inline]
    fn short(self, err: Error, missing: Option<usize>) -> Error {
        if self.open_ended {
            err.incomplete(missing)
        } else {
            err
        }
    }
}

impl<'a> Reader<'a> {
    /// A reader over `bytes` with [`Limits::DEFAULT`].
    #[inline]
    pub const fn new(bytes: &'a [u8]) -> Self {
        Self::with_limits(bytes, Limits::DEFAULT)
    }

    /// A reader over `bytes` with the given limits.
    #[inline]
    pub const fn with_limits(bytes: &'a [u8], limits: Limits) -> Self {
        Reader {
            rest: bytes,
            end: bytes.len(),
            depth_left: limits.max_depth,
            empty_left: limits.max_empty_elements,
            validated: false,
            open_ended: true,
        }
    }

    /// A reader over bytes that an earlier decode already validated (used by views).
    #[inline]
    pub(crate) const fn trusted(bytes: &'a [u8]) -> Self {
        let mut r = Self::with_limits(bytes, Limits::NONE);
        r.validated = true;
        r.open_ended = false;
        r
    }

    /// Runs `f` on a reader over the front of `bytes`, which an earlier decode validated,
    /// and moves `bytes` past what `f` read: how iterators of views read their next element.
    ///
    /// The reader is a local of the caller's frame, not kept in the iterator: the compiler
    /// then sees that it is validated (every check of that folds away) and keeps it in
    /// registers, where a reader stored in the iterator is loaded and stored around every
    /// field. Measured on TreeWide (benches/workloads): walking it took 165 instructions per
    /// node with the reader in the iterator, 127 with it here.
    #[inline(always)]
    pub(crate) fn read_trusted<R>(
        bytes: &mut &'a [u8],
        f: impl FnOnce(&mut Reader<'a>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut reader = Reader::trusted(bytes);
        let out = f(&mut reader);
        *bytes = reader.rest;
        out
    }

    /// True for a reader over bytes an earlier decode validated: a view re-reading its own
    /// bytes. Such readers find the end of nested arrays, maps and lazy values by hopping
    /// over their elements with [`Decode::skip`] rather than by checking them again.
    #[inline]
    pub const fn is_validated(&self) -> bool {
        self.validated
    }

    /// The absolute offset of the next byte to read.
    #[inline]
    pub const fn offset(&self) -> usize {
        self.end - self.rest.len()
    }

    /// How many bytes are left in the current scope.
    #[inline]
    pub const fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The unread bytes of the current scope, without consuming them.
    #[inline]
    pub const fn remaining_bytes(&self) -> &'a [u8] {
        self.rest
    }

    /// An error of `kind` at the current offset.
    #[inline]
    pub const fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.offset())
    }

    /// What the cold error constructors need to know of the reader, by value: taking
    /// `&self` there would let the reader's address escape, and LLVM keeps a reader that is
    /// a local (the one `read_trusted` makes for each element of a view) in registers only
    /// when its address never escapes.
    #[inline(always)]
    fn site(&self) -> Site {
        Site {
            at: self.offset(),
            have: self.rest.len(),
            open_ended: self.open_ended,
        }
    }

    #[cold]
    fn end_error(site: Site, wanted: usize) -> Error {
        let missing = wanted - site.have;
        site.short(
            Error::new(ErrorKind::UnexpectedEnd, site.at).with_detail(missing as u64),
            Some(missing),
        )
    }

    /// A [`ErrorKind::LengthOutOfBounds`] error at `at` for a prefix or count `len` whose
    /// values need `bytes` bytes (`None` when that overflows).
    #[cold]
    fn out_of_bounds(site: Site, at: usize, len: u64, bytes: Option<usize>) -> Error {
        let missing = bytes.map(|b| b.saturating_sub(site.have));
        site.short(
            Error::new(ErrorKind::LengthOutOfBounds, at).with_detail(len),
            missing,
        )
    }

    /// Reads one byte.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, Error> {
        match self.rest.split_first() {
            Some((&b, rest)) => {
                self.rest = rest;
                Ok(b)
            }
            None => Err(Self::end_error(self.site(), 1)),
        }
    }

    /// Reads `N` bytes as an array reference (zero-copy).
    #[inline]
    pub fn read_array<const N: usize>(&mut self) -> Result<&'a [u8; N], Error> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.rest = rest;
                Ok(head)
            }
            None => Err(Self::end_error(self.site(), N)),
        }
    }

    /// Reads a little-endian `u32` (the type of every length and count prefix).
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, Error> {
        self.read_bytes_as(u32::from_le_bytes)
    }

    /// Reads `N` bytes and converts them with `f`: how length prefixes and uuids are read.
    ///
    /// Not through [`read_array`](Self::read_array): its `Result<&[u8; N], Error>` puts the
    /// reference where the error keeps 32-bit fields, and LLVM then carried every position
    /// read that way as two 32-bit halves joined again at each use (5 instructions per
    /// element of an array of messages; TreeWide decode took 4,670 instructions so and
    /// 4,270 without). The other scalars keep `read_array`: this way added 3 instructions
    /// to TensorShard decode (docs/decisions.md D40).
    #[inline(always)]
    pub(crate) fn read_bytes_as<const N: usize, T>(
        &mut self,
        f: impl FnOnce([u8; N]) -> T,
    ) -> Result<T, Error> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.rest = rest;
                Ok(f(*head))
            }
            None => Err(Self::end_error(self.site(), N)),
        }
    }

    /// Takes the next `len` bytes (zero-copy).
    #[inline]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], Error> {
        if len > self.rest.len() {
            return Err(Self::end_error(self.site(), len));
        }
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }

    /// Takes the next `n` bytes, a run of consecutive fixed-size fields, as a reader of
    /// exactly their size, or `None` (taking nothing) when fewer are left: how generated
    /// structs read such a run with one bounds check. Reading fields of integers, floats or
    /// uuids from a reader of exactly their size cannot fail, and the compiler drops those
    /// checks; when the run does not fit, the fields are read from this reader one by one,
    /// which fails as it always did, at the first field that does not fit.
    ///
    /// ```
    /// use bebop_core::{ErrorKind, Reader};
    ///
    /// let mut r = Reader::new(&[1, 0, 0, 0, 2, 0]);
    /// let mut run = r.take_run(6).unwrap();
    /// assert_eq!((run.read::<u32>()?, run.read::<u16>()?), (1, 2));
    /// // Six bytes do not hold a `u32` and an `i64`.
    /// assert!(Reader::new(&[1, 0, 0, 0, 2, 0]).take_run(12).is_none());
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    #[doc(hidden)]
    #[inline(always)]
    pub fn take_run(&mut self, n: usize) -> Option<Reader<'a>> {
        let (head, rest) = self.rest.split_at_checked(n)?;
        let run = Reader {
            rest: head,
            end: self.offset() + n,
            open_ended: false,
            ..self.working_copy()
        };
        self.rest = rest;
        Some(run)
    }

    /// Reads a `u32` length prefix and checks that at least `len * unit` more bytes remain;
    /// the error points at the prefix. Returns the length.
    ///
    /// This is the check that stops a short input from claiming a huge array.
    #[inline]
    pub fn read_length(&mut self, unit: usize) -> Result<usize, Error> {
        let at = self.offset();
        let len = self.read_u32()?;
        let n = len as usize;
        match n.checked_mul(unit) {
            Some(bytes) if bytes <= self.rest.len() => Ok(n),
            bytes => Err(Self::out_of_bounds(self.site(), at, len as u64, bytes)),
        }
    }

    /// Takes every remaining byte of the current scope.
    #[inline]
    pub fn take_rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.rest)
    }

    /// Decodes one `T`.
    #[inline]
    pub fn read<T: Decode<'a>>(&mut self) -> Result<T, Error> {
        T::decode(self)
    }

    /// Validates the next value as the type of the message field `field` selects (an
    /// `Option<T>`; the function is never called, it only names the type): how generated
    /// messages implement [`Decode::check`].
    #[doc(hidden)]
    #[inline(always)]
    pub fn check_field<S, T: Decode<'a>>(
        &mut self,
        _field: fn(&S) -> &Option<T>,
    ) -> Result<(), Error> {
        T::check(self)
    }

    /// Validates the next value as the type `branch` wraps (a union variant's constructor,
    /// never called): how generated unions implement [`Decode::check`].
    #[doc(hidden)]
    #[inline(always)]
    pub fn check_branch<S, T: Decode<'a>>(&mut self, _branch: fn(T) -> S) -> Result<(), Error> {
        T::check(self)
    }

    /// Fails with [`ErrorKind::TrailingBytes`] unless the input is used up.
    #[inline]
    pub fn finish(&self) -> Result<(), Error> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(self.trailing_bytes())
        }
    }

    #[cold]
    fn trailing_bytes(&self) -> Error {
        self.error(ErrorKind::TrailingBytes)
            .with_detail(self.rest.len() as u64)
    }

    /// Runs `f` one nesting level deeper, failing with [`ErrorKind::TooDeep`] when the depth
    /// limit is used up. Generated code does not need this directly: messages, unions and
    /// element walks call it.
    #[inline]
    pub fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Error>) -> Result<T, Error> {
        self.descend()?;
        let out = f(self);
        self.depth_left += 1;
        out
    }

    /// Charges `count` zero-sized elements against the budget.
    #[inline]
    pub fn charge_empty(&mut self, count: usize) -> Result<(), Error> {
        let count = count as u64;
        if count > self.empty_left {
            return Err(self.error(ErrorKind::BudgetExhausted).with_detail(count));
        }
        self.empty_left -= count;
        Ok(())
    }

    /// Runs `f` on the next `len` bytes as a scope of their own, then continues after them
    /// whatever `f` read. `len_at` is where the prefix was, for the error.
    #[inline(always)]
    fn scoped<T, E: From<Error>>(
        &mut self,
        len_at: usize,
        len: u32,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let n = len as usize;
        if n > self.rest.len() {
            return Err(Self::out_of_bounds(self.site(), len_at, len as u64, Some(n)).into());
        }
        if self.depth_left == 0 {
            return Err(Error::new(ErrorKind::TooDeep, len_at).into());
        }
        let (body, after) = self.rest.split_at(n);
        // The body is read through a reader of its own, local to this call, rather than
        // through this one narrowed and widened again: when `f` calls out of line (a
        // nested message's check), only the local reader's address leaves, this reader
        // stays in registers, and entering and leaving the scope stores nothing.
        let mut inner = Reader {
            rest: body,
            end: self.offset() + n,
            depth_left: self.depth_left - 1,
            open_ended: false,
            ..self.working_copy()
        };
        let out = f(&mut inner);
        self.empty_left = inner.empty_left;
        self.rest = after;
        out
    }

    /// Decodes a message body: reads its `u32` length, runs `f` on the body (which reads
    /// `(tag, value)` pairs with [`read_tag`](Self::read_tag) until tag 0 or an unknown tag),
    /// then continues after the body, skipping whatever `f` did not read.
    ///
    /// ```
    /// use bebop_core::Reader;
    ///
    /// // message { id(1): int32; } holding id = 42, then an unknown field 9 and padding.
    /// let bytes = [9, 0, 0, 0, 1, 42, 0, 0, 0, 9, 0xff, 0xff, 0xff];
    /// let mut r = Reader::new(&bytes);
    /// let id = r.message(|r| {
    ///     let mut id = None;
    ///     loop {
    ///         match r.read_tag()? {
    ///             1 => id = Some(r.read::<i32>()?),
    ///             _ => break, // 0 ends the message; unknown tags end what we can read
    ///         }
    ///     }
    ///     Ok(id)
    /// });
    /// assert_eq!(id, Ok(Some(42)));
    /// assert_eq!(r.remaining(), 0);
    /// ```
    #[inline]
    pub fn message<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.message_with(f)
    }

    /// [`message`](Self::message) for a body whose reading fails with the caller's error
    /// type (one-pass reading, whose callbacks return theirs).
    #[inline(always)]
    pub(crate) fn message_with<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let at = self.offset();
        let len = self.read_u32()?;
        self.scoped(at, len, f)
    }

    /// Reads a message field tag: 0 marks the end of the message, and so does the end of
    /// its declared length. A message whose length runs out before an end marker (length 0
    /// included) ends there, whether or not its type has fields (as the reference decoder
    /// does); a field cut off by the length is still an error.
    ///
    /// ```
    /// use bebop_core::Reader;
    /// // message { id(1): int32; } = { id: 42 } without its end marker, then an empty one.
    /// let mut r = Reader::new(&[5, 0, 0, 0, 1, 42, 0, 0, 0, 0, 0, 0, 0]);
    /// let tags = r.message(|r| Ok((r.read_tag()?, r.read::<i32>()?, r.read_tag()?)))?;
    /// assert_eq!(tags, (1, 42, 0));
    /// assert_eq!(r.message(|r| r.read_tag())?, 0);
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    #[inline]
    pub fn read_tag(&mut self) -> Result<u8, Error> {
        if self.rest.is_empty() {
            return Ok(0);
        }
        self.read_u8()
    }

    /// Moves past a message or union without reading its body: its `u32` length prefix, then
    /// as many bytes as it counts. This is [`Decode::skip`] for messages and unions.
    ///
    /// ```
    /// use bebop_core::Reader;
    ///
    /// // A message of 3 body bytes, then one more byte.
    /// let mut r = Reader::new(&[3, 0, 0, 0, 1, 7, 0, 0xAA]);
    /// r.skip_prefixed()?;
    /// assert_eq!(r.read_u8()?, 0xAA);
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    #[inline]
    pub fn skip_prefixed(&mut self) -> Result<(), Error> {
        let at = self.offset();
        let len = self.read_u32()?;
        let n = len as usize;
        if n > self.rest.len() {
            return Err(Self::out_of_bounds(self.site(), at, len as u64, Some(n)));
        }
        self.rest = &self.rest[n..];
        Ok(())
    }

    /// Decodes a union: reads its `u32` length and discriminator, runs `f` on the branch body
    /// with the discriminator, then continues after the union, skipping what `f` did not read.
    ///
    /// `f` returns [`Reader::unknown_discriminator`] for a discriminator it does not know
    /// (or, for a `@forward_compatible` union, keeps [`take_rest`](Self::take_rest)).
    #[inline]
    pub fn union<T>(
        &mut self,
        f: impl FnOnce(&mut Self, u8) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.union_with(f)
    }

    /// [`union`](Self::union) for a branch whose reading fails with the caller's error type.
    #[inline(always)]
    pub(crate) fn union_with<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut Self, u8) -> Result<T, E>,
    ) -> Result<T, E> {
        let at = self.offset();
        let len = self.read_u32()?;
        self.scoped(at, len, |r| {
            let d = r.read_u8()?;
            f(r, d)
        })
    }

    /// The error for an unknown union discriminator `d` just read.
    #[cold]
    pub fn unknown_discriminator(&self, d: u8) -> Error {
        Error::new(ErrorKind::InvalidDiscriminator, self.offset() - 1).with_detail(d as u64)
    }

    /// Validates `count` consecutive elements of `T` and returns their bytes.
    ///
    /// An input that cannot hold `count` elements of `T`'s minimum size fails at once, before
    /// any element is read; zero-sized elements are charged to the budget; elements whose
    /// every bit pattern is valid are not visited at all, so this is O(1) for them.
    ///
    /// On a [validated](Self::is_validated) reader the elements are not checked again:
    /// fixed-size ones are taken in one step and the others hopped over with
    /// [`Decode::skip`].
    #[inline]
    pub fn elements<T: Decode<'a>>(&mut self, count: usize) -> Result<&'a [u8], Error> {
        // The common case, small enough to inline into every generated decoder: elements of
        // a fixed size whose every bit pattern is valid (scalar arrays) and that fit. Taking
        // them is what both paths below would do; anything else, errors included, is left
        // to them.
        if let (Some(size @ 1..), true) = (T::FIXED_SIZE, T::ALWAYS_VALID) {
            if let Some(total) = size.checked_mul(count) {
                if let Some((head, rest)) = self.rest.split_at_checked(total) {
                    self.rest = rest;
                    return Ok(head);
                }
            }
        }
        // A view re-reading its own bytes hops over messages and unions here, inline: one
        // length read per element, where the call cost more than the hop.
        if T::OWN_CHECK && self.validated {
            return self.skip_elements::<T>(count);
        }
        // The out-of-line walk gets a copy of this reader and only the fields it changes
        // come back. Were this reader's address passed, the call could change any field as
        // far as LLVM knows, `validated` included: a reader local to a view's iterator then
        // stays in memory and its every "validated" test stays in the code.
        // The walks return no slice; what they read is measured here, once. (The call's
        // exit then writes less: TreeDeep decode took 91,557 instructions with the slice
        // returned, 86,452 without; docs/decisions.md D40.)
        let start = self.rest;
        self.through_copy(|copy| {
            if T::OWN_CHECK {
                copy.check_elements::<T>(count)
            } else {
                copy.check_elements_inline::<T>(count)
            }
        })?;
        let used = start.len() - self.rest.len();
        Ok(start.get(..used).unwrap_or_default())
    }

    /// A copy of this reader built field by field, for a walk that should keep its reader
    /// in registers (see [`elements`](Self::elements)); [`catch_up`](Self::catch_up) takes
    /// back what the walk changed. (A copy in wide moves of fields just stored one by one
    /// stalls store forwarding, which made TreeDeep decode 14% slower.)
    #[inline(always)]
    pub(crate) fn working_copy(&self) -> Self {
        Reader {
            rest: self.rest,
            end: self.end,
            depth_left: self.depth_left,
            empty_left: self.empty_left,
            validated: self.validated,
            open_ended: self.open_ended,
        }
    }

    /// Goes one nesting level deeper, failing with [`ErrorKind::TooDeep`] when the depth
    /// limit is used up: for [`nested`](Self::nested), and for good on a reader of a walk's
    /// own (one-pass reading).
    #[inline(always)]
    pub(crate) fn descend(&mut self) -> Result<(), Error> {
        if self.depth_left == 0 {
            return Err(self.error(ErrorKind::TooDeep));
        }
        self.depth_left -= 1;
        Ok(())
    }

    /// Takes over from a [`working_copy`](Self::working_copy) of this reader the fields a
    /// walk over values changes: where it stopped and the empty-element budget left. (The
    /// depth is back where it was once a walk returns; the rest does not change.)
    #[inline(always)]
    pub(crate) fn catch_up(&mut self, copy: &Self) {
        self.rest = copy.rest;
        self.empty_left = copy.empty_left;
    }

    /// Runs `f` on a [`working_copy`](Self::working_copy) of this reader and takes back what
    /// it read ([`catch_up`](Self::catch_up)), even when it fails: for a check called out of
    /// line, which given this reader's address could change any field as far as LLVM knows,
    /// so that this reader, and the scope it reads, would stay in memory (D39, D49).
    #[inline(always)]
    pub(crate) fn through_copy<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let mut copy = self.working_copy();
        let out = f(&mut copy);
        self.catch_up(&copy);
        out
    }

    /// [`elements`](Self::elements) beyond its inlined fast path, out of line: for messages
    /// and unions, which may hold themselves (trees, JSON values), and whose walks cost more
    /// inlined into every enclosing one (TreeDeep decode + walk took 31% more instructions).
    #[inline(never)]
    fn check_elements<T: Decode<'a>>(&mut self, count: usize) -> Result<(), Error> {
        self.check_elements_inline::<T>(count)
    }

    /// [`elements`](Self::elements) beyond its inlined fast path, inlined: for strings,
    /// structs and nested arrays, whose arrays are often short and nested in one another, so
    /// that a call per array cost more than its elements (LLMChunkSmall, three short arrays of
    /// one struct of a string each: decode took 675 instructions with the call, 424 without).
    #[inline(always)]
    fn check_elements_inline<T: Decode<'a>>(&mut self, count: usize) -> Result<(), Error> {
        if self.validated {
            return self.skip_elements::<T>(count).map(drop);
        }
        if !self.element_prelude::<T>(count)? {
            return self.take(T::FIXED_SIZE.unwrap_or(0) * count).map(drop);
        }
        if let Some(size @ 1..) = T::FIXED_SIZE {
            return self.check_fixed_elements::<T>(size, size * count);
        }
        // The elements are walked with a local copy of this reader: `self` is an address
        // handed in, so every scope entered and left would be stored through it.
        let mut walk = self.working_copy();
        let out = walk.nested(|r| {
            for _ in 0..count {
                // Elements without a `check` of their own are decoded here rather than
                // through the default `check`: the same work, but the compiler keeps the
                // reader in registers through this loop only so (an array of 8 small
                // structs: 274 instructions against 412).
                if T::OWN_CHECK {
                    T::check(r)?;
                } else {
                    T::decode(r)?;
                }
            }
            Ok(())
        });
        self.catch_up(&walk);
        out
    }

    /// What an array of `count` elements of `T` is checked for before any element is read:
    /// that the scope can hold them (exactly, for a fixed size; at their minimum size
    /// otherwise), and zero-sized ones are charged to the budget. `Ok(false)` when that is
    /// all their bytes need (a fixed size whose every bit pattern is valid), `Ok(true)` when
    /// each element is still to be read, one nesting level deeper. (After `Ok`, `count`
    /// times a fixed size cannot overflow.)
    #[inline(always)]
    pub(crate) fn element_prelude<T: Decode<'a>>(&mut self, count: usize) -> Result<bool, Error> {
        let unit = match T::FIXED_SIZE {
            Some(0) => 0,
            Some(size) => size,
            None => T::MIN_SIZE,
        };
        if unit == 0 {
            self.charge_empty(count)?;
        } else {
            match count.checked_mul(unit) {
                Some(bytes) if bytes <= self.rest.len() => {}
                bytes => {
                    return Err(Self::out_of_bounds(
                        self.site(),
                        self.offset(),
                        count as u64,
                        bytes,
                    ));
                }
            }
        }
        Ok(!(T::FIXED_SIZE.is_some() && T::ALWAYS_VALID))
    }

    /// Checks the `total / size` elements of fixed size `size` (not 0) that start the rest
    /// of the scope (`total` is at most what is left), each by decoding it from a reader
    /// over exactly its own `size` bytes: that reader lives in registers and every bounds
    /// test inside the element folds away. Errors and their positions are those of decoding
    /// the elements one after another (the element reader's offsets are absolute, and it is
    /// closed, as every element lies inside the scope). An array of 631 structs of two
    /// `uint32` and an enum took 27 instructions per element through the scope's reader.
    fn check_fixed_elements<T: Decode<'a>>(
        &mut self,
        size: usize,
        total: usize,
    ) -> Result<(), Error> {
        let (block, after) = self
            .rest
            .split_at_checked(total)
            .unwrap_or((self.rest, &[]));
        let base = self.offset();
        self.nested(|r| {
            let mut end = base;
            for element in block.chunks_exact(size) {
                end += size;
                let mut reader = Reader {
                    rest: element,
                    end,
                    validated: false,
                    open_ended: false,
                    ..r.working_copy()
                };
                T::decode(&mut reader)?;
                r.empty_left = reader.empty_left;
            }
            Ok(())
        })?;
        self.rest = after;
        Ok(())
    }

    /// Moves past `count` elements of `T` in validated bytes and returns their bytes.
    #[inline]
    fn skip_elements<T: Decode<'a>>(&mut self, count: usize) -> Result<&'a [u8], Error> {
        let start = self.rest;
        match T::FIXED_SIZE {
            Some(size) => match size.checked_mul(count) {
                Some(total) => self.take(total),
                None => Err(self
                    .error(ErrorKind::LengthOutOfBounds)
                    .with_detail(count as u64)),
            },
            None => {
                for _ in 0..count {
                    T::skip(self)?;
                }
                let used = start.len() - self.rest.len();
                Ok(&start[..used])
            }
        }
    }

    /// The bytes of the next `T`: decoded (so validated) and dropped, or on a
    /// [validated](Self::is_validated) reader hopped over with [`Decode::skip`].
    pub(crate) fn span<T: Decode<'a>>(&mut self) -> Result<&'a [u8], Error> {
        let start = self.rest;
        if self.validated {
            T::skip(self)?;
        } else {
            T::check(self)?;
        }
        let used = start.len() - self.rest.len();
        Ok(&start[..used])
    }

    /// Decodes one `T` and returns it with the bytes it was read from.
    pub fn read_with_bytes<T: Decode<'a>>(&mut self) -> Result<(T, &'a [u8]), Error> {
        let start = self.rest;
        let v = T::decode(self)?;
        let used = start.len() - self.rest.len();
        Ok((v, &start[..used]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_absolute_inside_scopes() {
        // message of length 3 holding an incomplete int32 field.
        let bytes = [0xAA, 3, 0, 0, 0, 1, 2, 3];
        let mut r = Reader::new(&bytes);
        r.read_u8().unwrap();
        let err = r
            .message(|r| {
                assert_eq!(r.offset(), 5);
                assert_eq!(r.read_tag()?, 1);
                r.read::<i32>()
            })
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEnd);
        assert_eq!(err.offset(), 6);
        assert_eq!(err.detail(), 2);
    }

    #[test]
    fn message_length_past_end_points_at_prefix() {
        let bytes = [0, 0xff, 0xff, 0xff, 0xff, 0];
        let mut r = Reader::new(&bytes);
        r.read_u8().unwrap();
        let err = r.message(|_| Ok(())).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
        assert_eq!(err.offset(), 1);
        assert_eq!(err.detail(), u32::MAX as u64);
    }

    #[test]
    fn depth_limit_applies_to_scopes() {
        let limits = Limits {
            max_depth: 2,
            ..Limits::DEFAULT
        };
        // three nested messages: 11 = 4+1 + (4+1+1) ...
        let bytes = [11, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        let mut r = Reader::with_limits(&bytes, limits);
        let err = r
            .message(|r| r.message(|r| r.message(|r| r.read_tag())))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooDeep);
        assert_eq!(err.offset(), 8);
        // With one more level allowed it decodes.
        let mut r = Reader::with_limits(
            &bytes,
            Limits {
                max_depth: 3,
                ..limits
            },
        );
        assert_eq!(
            r.message(|r| r.message(|r| r.message(|r| r.read_tag()))),
            Ok(0)
        );
    }

    #[test]
    fn budget_is_shared_across_the_decode() {
        let mut r = Reader::with_limits(
            &[],
            Limits {
                max_empty_elements: 10,
                ..Limits::DEFAULT
            },
        );
        assert!(r.charge_empty(6).is_ok());
        assert!(r.charge_empty(4).is_ok());
        assert_eq!(
            r.charge_empty(1).unwrap_err().kind(),
            ErrorKind::BudgetExhausted
        );
        // What message bodies spend (each read through a reader of its own) is spent for
        // the messages after them and for the enclosing scope.
        let two_messages = [0, 0, 0, 0, 0, 0, 0, 0];
        let mut r = Reader::with_limits(
            &two_messages,
            Limits {
                max_empty_elements: 10,
                ..Limits::DEFAULT
            },
        );
        assert_eq!(r.message(|r| r.charge_empty(6)), Ok(()));
        let err = r.message(|r| r.charge_empty(6)).unwrap_err();
        assert_eq!((err.kind(), err.offset()), (ErrorKind::BudgetExhausted, 8));
        assert!(r.charge_empty(4).is_ok());
        assert!(r.charge_empty(1).is_err());
    }

    #[test]
    fn read_length_rejects_counts_the_input_cannot_hold() {
        let mut r = Reader::new(&[3, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let err = r.clone().read_length(4).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
        assert_eq!(r.read_length(2), Ok(3));
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff]);
        assert!(r.read_length(usize::MAX).is_err());
    }

    /// A fixed-size element that needs checking, like a generated struct holding an enum:
    /// a `u16`, then a kind below 3. `Liar` claims 2 bytes and reads 3.
    #[derive(Debug, PartialEq)]
    struct Tagged(u16, u8);
    struct Liar;

    impl crate::WireSize for Tagged {
        const FIXED_SIZE: Option<usize> = Some(3);
        const MIN_SIZE: usize = 3;
    }
    impl<'a> Decode<'a> for Tagged {
        fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
            let n = r.read::<u16>()?;
            let at = r.offset();
            match r.read::<u8>()? {
                k @ 0..3 => Ok(Tagged(n, k)),
                k => Err(Error::new(ErrorKind::InvalidEnumValue, at).with_detail(k.into())),
            }
        }
    }
    impl crate::WireSize for Liar {
        const FIXED_SIZE: Option<usize> = Some(2);
        const MIN_SIZE: usize = 2;
    }
    impl<'a> Decode<'a> for Liar {
        fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
            r.read::<[u8; 3]>().map(|_| Liar)
        }
    }

    /// Element checks one element after another on the scope's reader, as arrays of
    /// fixed-size elements were checked before they got a reader each: the reference.
    fn one_by_one<'a, T: Decode<'a>>(r: &mut Reader<'a>, count: usize) -> Result<(), Error> {
        r.nested(|r| (0..count).try_for_each(|_| T::decode(r).map(drop)))
    }

    #[test]
    fn fixed_size_elements_are_checked_in_place_with_absolute_positions() {
        // A message (at offset 1) holding three `Tagged` then a byte.
        let body = [1, 0, 2, 2, 0, 1, 3, 0, 0, 0xEE];
        let mut bytes = [0xAA, body.len() as u8, 0, 0, 0].to_vec();
        bytes.extend_from_slice(&body);
        let mut r = Reader::new(&bytes);
        r.read_u8().unwrap();
        let (elements, next) = r
            .message(|r| Ok((r.elements::<Tagged>(3)?, r.read_u8()?)))
            .unwrap();
        assert_eq!((elements, next), (&body[..9], 0xEE));
        // A bad kind in any element: the error and position of checking one by one.
        for at in [7, 10, 13] {
            let mut bad = bytes.clone();
            bad[at] = 9;
            let checked = Reader::new(&bad[5..]).elements::<Tagged>(3).unwrap_err();
            let reference = one_by_one::<Tagged>(&mut Reader::new(&bad[5..]), 3).unwrap_err();
            assert_eq!(checked, reference);
            assert_eq!(
                (checked.kind(), checked.offset(), checked.detail()),
                (ErrorKind::InvalidEnumValue, at - 5, 9)
            );
            let mut r = Reader::new(&bad);
            r.read_u8().unwrap();
            let err = r.message(|r| r.elements::<Tagged>(3)).unwrap_err();
            assert_eq!(
                (err.kind(), err.offset()),
                (ErrorKind::InvalidEnumValue, at)
            );
        }
        // Too few bytes for the count, and no depth left: refused before any element.
        assert_eq!(
            Reader::new(&body[..8])
                .elements::<Tagged>(3)
                .unwrap_err()
                .kind(),
            ErrorKind::LengthOutOfBounds
        );
        let no_depth = Limits {
            max_depth: 0,
            ..Limits::DEFAULT
        };
        let err = Reader::with_limits(&body, no_depth)
            .elements::<Tagged>(3)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooDeep);
        // A type reading past its declared size gets an error, not a panic.
        let err = Reader::new(&[1, 2, 3, 4]).elements::<Liar>(2).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEnd);
    }

    #[test]
    fn finish_reports_trailing_bytes() {
        let r = Reader::new(&[1, 2]);
        let err = r.finish().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TrailingBytes);
        assert_eq!(err.detail(), 2);
    }
}
