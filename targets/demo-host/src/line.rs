//! The host's end of the serial line: QEMU's UART0 as a TCP socket, with a switch that
//! "pulls the cable" for a while, and raw access for sending damaged packets.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The serial line to the device. Implements `embedded_io::{Read, Write, ReadReady}` for
/// `bebop_core::rpc::link::PacketChannel`.
pub struct Line {
    stream: TcpStream,
    /// While set and in the future, everything the device sends is lost and everything the
    /// host writes too; the first read after it fails with `TimedOut`, as a read on a dead
    /// link would.
    cut_until: Option<Instant>,
    /// How long a read waits before giving up (the link is considered lost).
    read_timeout: Duration,
    /// Bytes lost to cuts.
    pub lost: u64,
    /// Written and not yet flushed: a packet goes to the socket in one piece.
    pending: Vec<u8>,
}

impl Line {
    /// A line over QEMU's socket.
    pub fn new(stream: TcpStream, read_timeout: Duration) -> std::io::Result<Self> {
        stream.set_read_timeout(Some(read_timeout))?;
        stream.set_nodelay(true)?;
        Ok(Line {
            stream,
            cut_until: None,
            read_timeout,
            lost: 0,
            pending: Vec::new(),
        })
    }

    /// How long a read waits before the link is considered lost.
    pub fn set_read_timeout(&mut self, timeout: Duration) -> std::io::Result<()> {
        self.read_timeout = timeout;
        self.stream.set_read_timeout(Some(timeout))
    }

    /// Loses everything in both directions for `how_long`, starting now.
    pub fn cut(&mut self, how_long: Duration) {
        self.cut_until = Some(Instant::now() + how_long);
    }

    /// Writes bytes as they are (a damaged packet, say).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads and drops what arrives until the cut ends.
    fn sit_out_cut(&mut self, until: Instant) -> std::io::Result<()> {
        let mut sink = [0u8; 512];
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.stream.set_read_timeout(Some(left))?;
            match self.stream.read(&mut sink) {
                Ok(0) => break,
                Ok(n) => self.lost += n as u64,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.stream.set_read_timeout(Some(self.read_timeout))
    }
}

impl embedded_io::ErrorType for Line {
    type Error = std::io::Error;
}

impl embedded_io::Read for Line {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        if let Some(until) = self.cut_until.take() {
            self.sit_out_cut(until)?;
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                "the link was cut: nothing arrived",
            ));
        }
        loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                other => {
                    if std::env::var_os("DEMO_TRACE").is_some() {
                        match &other {
                            Ok(n) => eprintln!("<< {:02x?}", &buf[..*n]),
                            Err(e) => eprintln!("<< error {e}"),
                        }
                    }
                    return other;
                }
            }
        }
    }
}

impl embedded_io::ReadReady for Line {
    fn read_ready(&mut self) -> Result<bool, Self::Error> {
        self.stream.set_nonblocking(true)?;
        let mut one = [0u8; 1];
        let ready = match self.stream.peek(&mut one) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        };
        self.stream.set_nonblocking(false)?;
        ready
    }
}

impl embedded_io::Write for Line {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        if self.cut_until.is_some_and(|t| Instant::now() < t) {
            self.lost += buf.len() as u64;
            return Ok(buf.len());
        }
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        if std::env::var_os("DEMO_TRACE").is_some() {
            eprintln!(">> {:02x?}", self.pending);
        }
        self.stream.write_all(&self.pending)?;
        self.pending.clear();
        self.stream.flush()
    }
}
