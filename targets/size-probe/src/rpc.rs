//! The `rpc` variant: the demo's `Device` service (generated from `device.bop`) served by
//! `bebop_core::rpc::Server` over a `PacketChannel`, as the demo firmware serves it, but on
//! an in-memory line and without console logging, so the image is the runtime plus the RPC
//! server. Measures the stack of one whole call (receive, decode, dispatch, encode, send) for
//! `Echo` (16 bytes), `GetInfo` and a three-record `StreamTelemetry`, each checked.

use core::hint::black_box;

use bebop_core::Timestamp;
use bebop_core::rpc::link::{PacketChannel, encode_packet};
use bebop_core::rpc::{
    CallContext, CallHeader, CallOutcome, CancelFlag, Clock, FrameFlags, HEADER_SIZE, Server,
    ServerStream, Status, StatusCode, encode_call_header, encode_frame,
};
use qemu_board::{print, print_u32, stack};
use target_schema::device::bebop::Empty;
use target_schema::device::device::{
    Blob, Config, DeviceInfo, SensorStatus, Telemetry, TelemetryRequest, device,
};

const MAX_ELEMENT: usize = HEADER_SIZE + 1088 + 8;

/// A line in memory: reads what was put in, counts what is written.
struct MemLine {
    rx: [u8; 160],
    len: usize,
    at: usize,
    written: usize,
}

impl embedded_io::ErrorType for MemLine {
    type Error = core::convert::Infallible;
}
impl embedded_io::Read for MemLine {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.len - self.at);
        buf[..n].copy_from_slice(&self.rx[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
impl embedded_io::ReadReady for MemLine {
    fn read_ready(&mut self) -> Result<bool, Self::Error> {
        Ok(self.at < self.len)
    }
}
impl embedded_io::Write for MemLine {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl MemLine {
    /// Puts one call (call header and request frame, each in a packet) on the line.
    fn load<T: bebop_core::Encode + ?Sized>(&mut self, method_id: u32, request: &T) -> bool {
        let header = CallHeader {
            method_id: Some(method_id),
            deadline: None,
            metadata: None,
            cursor: None,
        };
        let mut element = [0u8; 64];
        let mut len = 0;
        let Ok(n) = encode_call_header(&mut element, &header) else {
            return false;
        };
        let Ok(m) = encode_packet(&element[..n], &mut self.rx) else {
            return false;
        };
        len += m;
        let Ok(n) = encode_frame(&mut element, FrameFlags::END_STREAM, 1, request, None) else {
            return false;
        };
        let Ok(m) = encode_packet(&element[..n], &mut self.rx[len..]) else {
            return false;
        };
        len += m;
        self.len = len;
        self.at = 0;
        self.written = 0;
        true
    }
}

struct NoClock;
impl Clock for NoClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(0)
    }
}

struct Probe {
    version: u32,
}

impl device::Handler for Probe {
    fn get_info<'a>(&'a mut self, _: &CallContext<'_>, _: Empty) -> Result<DeviceInfo<'a>, Status> {
        Ok(DeviceInfo {
            model: "probe",
            firmware: "0",
            machine: qemu_board::MACHINE,
            cpu: "",
            uptime_ms: 0,
            config_version: self.version,
            max_payload: 1088,
            packets_received: 0,
            packets_damaged: 0,
            packets_refused: 0,
            rx_overruns: 0,
            calls: 0,
        })
    }

    fn set_config<'a>(
        &'a mut self,
        _: &CallContext<'_>,
        request: Config<'a>,
    ) -> Result<Config<'a>, Status> {
        if request.interval_ms == Some(0) {
            return Err(Status::new(StatusCode::InvalidArgument, "interval_ms is 0"));
        }
        self.version = request.version.unwrap_or(self.version);
        Ok(request)
    }

    fn stream_telemetry(
        &mut self,
        ctx: &CallContext<'_>,
        request: TelemetryRequest,
        responses: &mut ServerStream<'_>,
    ) -> Result<(), Status> {
        let after = u32::try_from(ctx.cursor()).unwrap_or(u32::MAX);
        for seq in after.saturating_add(1)..=request.count.unwrap_or(0) {
            let t = Telemetry {
                seq,
                uptime_ms: 0,
                temperature_c: 21.5,
                humidity_pct: 40.0,
                accel_mg: [0, 0, 1000],
                battery_mv: 3300,
                status: SensorStatus::Ok,
                config_version: self.version,
                label: "probe",
            };
            responses.send_with_cursor(&t, u64::from(seq))?;
        }
        Ok(())
    }

    fn echo<'a>(&'a mut self, _: &CallContext<'_>, request: Blob<'a>) -> Result<Blob<'a>, Status> {
        Ok(request)
    }
}

/// Serves one call of `method_id` with `request`; returns whether it succeeded, the bytes
/// the server wrote and the stack the call used.
fn one_call<T: bebop_core::Encode + ?Sized>(
    server: &mut Server<'_>,
    channel: &mut PacketChannel<MemLine, MAX_ELEMENT>,
    service: &mut device::Server<Probe>,
    method_id: u32,
    request: &T,
) -> (bool, usize, usize) {
    if !channel.get_mut().load(method_id, request) {
        return (false, 0, 0);
    }
    let (outcome, used) = stack::measure(|| server.serve_one(black_box(&mut *channel), service));
    let ok = matches!(outcome, Ok(CallOutcome::Ok { .. }));
    (ok, channel.get_mut().written, used)
}

fn report(name: &str, (ok, written, used): (bool, usize, usize)) -> bool {
    print(" ");
    print(name);
    print("_stack=");
    print_u32(used as u32);
    print(" ");
    print(name);
    print("_sent=");
    print_u32(written as u32);
    ok && written > 0
}

/// Runs the three calls and prints `size-probe rpc: ...`; returns whether all succeeded.
pub fn run() -> bool {
    static CANCEL: CancelFlag = CancelFlag::new();
    let mut channel = PacketChannel::<_, MAX_ELEMENT>::new(MemLine {
        rx: [0; 160],
        len: 0,
        at: 0,
        written: 0,
    });
    let mut call = [0u8; 192];
    let mut rx = [0u8; MAX_ELEMENT];
    let mut tx = [0u8; MAX_ELEMENT];
    let mut server = Server::new(&NoClock, &CANCEL, &mut call, &mut rx, &mut tx);
    let mut service = device::Server(Probe { version: 1 });
    let echo = one_call(
        &mut server,
        &mut channel,
        &mut service,
        device::ECHO.id,
        &Blob {
            data: b"sixteen bytes!!!",
        },
    );
    let info = one_call(
        &mut server,
        &mut channel,
        &mut service,
        device::GET_INFO.id,
        &Empty {},
    );
    let stream = one_call(
        &mut server,
        &mut channel,
        &mut service,
        device::STREAM_TELEMETRY.id,
        &TelemetryRequest { count: Some(3) },
    );
    print("size-probe rpc:");
    let mut ok = report("echo", echo);
    ok &= report("info", info);
    ok &= report("stream", stream);
    print(if ok { " calls=ok\n" } else { " calls=FAIL\n" });
    ok
}
