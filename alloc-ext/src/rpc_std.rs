//! `std` glue for the blocking RPC of [`bebop_core::rpc`]: the system clock for deadlines
//! and an adapter that lets a `StreamChannel` or a `PacketChannel` run over any `std::io`
//! stream (a `TcpStream`, a `UnixStream`, a serial port's file, a child process's pipes).

use std::time::SystemTime;

use bebop_core::Timestamp;
use bebop_core::rpc::link::PacketChannel;
use bebop_core::rpc::{Clock, StreamChannel};

/// The system clock as a deadline [`Clock`].
///
/// ```
/// use bebop_runtime::rpc::Clock;
/// let now = bebop_runtime::SystemClock.now();
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
/// use bebop_runtime::rpc::{Channel, Expect, encode_frame, FrameFlags};
/// use std::os::unix::net::UnixStream;
///
/// let (a, b) = UnixStream::pair()?;
/// let mut sender = bebop_runtime::std_channel::<_, 64>(a);
/// let mut receiver = bebop_runtime::std_channel::<_, 64>(b);
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

/// Whether a socket has bytes waiting, without blocking: a non-blocking `peek`.
fn socket_ready(
    set_nonblocking: impl Fn(bool) -> std::io::Result<()>,
    peek: impl Fn(&mut [u8]) -> std::io::Result<usize>,
) -> std::io::Result<bool> {
    set_nonblocking(true)?;
    let mut one = [0u8; 1];
    let result = match peek(&mut one) {
        // A closed connection is "ready": the next read says so.
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    };
    set_nonblocking(false)?;
    result
}

impl embedded_io::ReadReady for StdIo<std::net::TcpStream> {
    fn read_ready(&mut self) -> Result<bool, Self::Error> {
        socket_ready(|on| self.0.set_nonblocking(on), |b| self.0.peek(b))
    }
}

/// A [`PacketChannel`] (the serial link layer: COBS packets with a CRC-32) over a `std::io`
/// stream, holding elements of up to `N` bytes: a host talking to a device over a serial
/// port, a pty, or a socket standing in for one (QEMU's `-serial tcp:`).
///
/// ```
/// use bebop_runtime::rpc::{Channel, Expect, encode_frame, FrameFlags};
/// use std::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("127.0.0.1:0")?;
/// let mut device = bebop_runtime::packet_channel::<_, 64>(TcpStream::connect(listener.local_addr()?)?);
/// let mut host = bebop_runtime::packet_channel::<_, 64>(listener.accept()?.0);
/// let mut frame = [0u8; 32];
/// let n = encode_frame(&mut frame, FrameFlags::END_STREAM, 1, "hi", None)?;
/// device.send(&frame[..n])?;
/// let mut buf = [0u8; 64];
/// assert_eq!(host.recv(Expect::Frame, &mut buf)?, n);
/// assert!(!host.has_incoming());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn packet_channel<T: std::io::Read + std::io::Write, const N: usize>(
    stream: T,
) -> PacketChannel<StdIo<T>, N> {
    PacketChannel::new(StdIo(stream))
}
