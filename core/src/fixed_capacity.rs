//! `heapless` containers (feature `heapless`): owned values with a capacity fixed at compile
//! time, for firmware that wants to keep decoded data past the input buffer's lifetime.

use heapless::{String, Vec};

use crate::{Decode, Encode, Error, ErrorKind, Reader, Sink, WireSize};

fn capacity_error(offset: usize, needed: usize) -> Error {
    Error::new(ErrorKind::CapacityExceeded, offset).with_detail(needed as u64)
}

impl<const N: usize> WireSize for String<N> {
    const MIN_SIZE: usize = 5;
}

/// Copies a string; fails with [`ErrorKind::CapacityExceeded`] when it is longer than `N`.
impl<'a, const N: usize> Decode<'a> for String<N> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let at = reader.offset();
        let s = <&str>::decode(reader)?;
        copy_str(s).map_err(|e| capacity_error(at, e.needed().unwrap_or(0)))
    }
}

impl<const N: usize> Encode for String<N> {
    fn encoded_size(&self) -> usize {
        self.as_str().encoded_size()
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.as_str().encode(sink)
    }
    #[inline]
    fn encode_field<S: Sink>(&self, tag: u8, sink: &mut S) -> Result<(), S::Error> {
        self.as_str().encode_field(tag, sink)
    }
}

impl<T, const N: usize> WireSize for Vec<T, N> {
    const MIN_SIZE: usize = 4;
}

/// Decodes a dynamic array into a `heapless::Vec`; fails with
/// [`ErrorKind::CapacityExceeded`] when it has more than `N` elements.
impl<'a, T: Decode<'a>, const N: usize> Decode<'a> for Vec<T, N> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let at = reader.offset();
        let len = reader.read_length(T::MIN_SIZE)?;
        if len > N {
            return Err(capacity_error(at, len));
        }
        if T::FIXED_SIZE == Some(0) {
            reader.charge_empty(len)?;
        }
        let mut out = Vec::new();
        reader.nested(|r| {
            for _ in 0..len {
                let item = T::decode(r)?;
                out.push(item).map_err(|_| capacity_error(at, len))?;
            }
            Ok(())
        })?;
        Ok(out)
    }
}

impl<T: Encode, const N: usize> Encode for Vec<T, N> {
    fn encoded_size(&self) -> usize {
        self.as_slice().encoded_size()
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.as_slice().encode(sink)
    }
}

/// Copies a string into a `heapless::String<N>`.
///
/// ```
/// use bebop_core::{copy_str, ErrorKind};
///
/// let s: heapless::String<8> = copy_str("sensor")?;
/// assert_eq!(s, "sensor");
/// let err = copy_str::<4>("sensor").unwrap_err();
/// assert_eq!((err.kind(), err.needed()), (ErrorKind::CapacityExceeded, Some(6)));
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub fn copy_str<const N: usize>(s: &str) -> Result<String<N>, Error> {
    let mut out = String::new();
    out.push_str(s).map_err(|_| capacity_error(0, s.len()))?;
    Ok(out)
}

impl<'a, T: Decode<'a> + Clone> crate::Array<'a, T> {
    /// Copies the elements into a `heapless::Vec<T, N>`; fails with
    /// [`ErrorKind::CapacityExceeded`] when there are more than `N`.
    ///
    /// ```
    /// use bebop_core::{Array, Decode};
    ///
    /// let arr = Array::<u8>::from_bytes(&[3, 0, 0, 0, 1, 2, 3])?;
    /// let v: heapless::Vec<u8, 4> = arr.to_heapless()?;
    /// assert_eq!(v, [1, 2, 3]);
    /// assert!(arr.to_heapless::<2>().is_err());
    /// # Ok::<(), bebop_core::Error>(())
    /// ```
    pub fn to_heapless<const N: usize>(&self) -> Result<Vec<T, N>, Error> {
        if self.len() > N {
            return Err(capacity_error(0, self.len()));
        }
        let mut out = Vec::new();
        for item in self.iter() {
            out.push(item).map_err(|_| capacity_error(0, self.len()))?;
        }
        Ok(out)
    }
}
