//! `std` glue for the blocking RPC of [`bebop_core::rpc`]: the system clock for deadlines
//! and an adapter that lets a `StreamChannel` run over any `std::io` stream (a `TcpStream`,
//! a `UnixStream`, a child process's pipes).

use std::time::SystemTime;

use bebop_core::Timestamp;
use bebop_core::rpc::{Clock, StreamChannel};

/// The system clock as a deadline [`Clock`].
///
/// ```
/// use bebop::rpc::Clock;
/// let now = bebop::SystemClock.now();
/// assert!(now.seconds() > 1_700_000_000);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        crate::system_time_to_timestamp(SystemTime::now()).unwrap_or_default()
    }
}

/// A `std::io::Read + Write` stream seen as an `embedded_io` one.
#[derive(Debug)]
pub struct StdIo<T>(pub T);

impl<T> embedded_io::ErrorType for StdIo<T> {
    type Error = std::io::Error;
}

impl<T: std::io::Read> embedded_io::Read for StdIo<T> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }
}

impl<T: std::io::Write> embedded_io::Write for StdIo<T> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.flush()
    }
}

/// A [`StreamChannel`] over a `std::io` stream, holding elements of up to `N` bytes.
///
/// ```
/// use bebop::rpc::{Channel, Expect, encode_frame, FrameFlags};
/// use std::os::unix::net::UnixStream;
///
/// let (a, b) = UnixStream::pair()?;
/// let mut sender = bebop::std_channel::<_, 64>(a);
/// let mut receiver = bebop::std_channel::<_, 64>(b);
/// let mut frame = [0u8; 32];
/// let n = encode_frame(&mut frame, FrameFlags::END_STREAM, 1, "hi", None)?;
/// sender.send(&frame[..n])?;
/// let mut buf = [0u8; 64];
/// assert_eq!(receiver.recv(Expect::Frame, &mut buf)?, n);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn std_channel<T: std::io::Read + std::io::Write, const N: usize>(
    stream: T,
) -> StreamChannel<StdIo<T>, N> {
    StreamChannel::new(StdIo(stream))
}
