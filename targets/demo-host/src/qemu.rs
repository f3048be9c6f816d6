//! QEMU running the firmware, with UART0 on a local TCP port and the console echoed.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::Args;

/// QEMU running the firmware (killed when dropped, so no early return or panic of the host,
/// such as a closed stdout, leaves it running), with its console (semihosting) output echoed and kept.
pub struct Qemu {
    child: Child,
    pub console: Arc<Mutex<Vec<String>>>,
    echoes: Vec<thread::JoinHandle<()>>,
}

impl Qemu {
    /// Binds a port, starts QEMU with UART0 connected to it, and accepts the connection.
    pub fn start(args: &Args, kernel: &PathBuf) -> Result<(Qemu, TcpStream), String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding a local port: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("local port: {e}"))?
            .port();
        let mut cmd = Command::new(&args.qemu);
        cmd.args(["-machine", &args.machine]);
        if args.machine == "lm3s6965evb" {
            cmd.args(["-cpu", "cortex-m3"]);
        }
        cmd.args([
            "-display",
            "none",
            "-monitor",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-serial",
            &format!("tcp:127.0.0.1:{port},nodelay=on"),
            "-kernel",
        ])
        .arg(kernel)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("starting {}: {e}", args.qemu))?;
        let console = Arc::new(Mutex::new(Vec::new()));
        let mut echoes = Vec::new();
        if let Some(out) = child.stdout.take() {
            echoes.push(echo(out, console.clone()));
        }
        if let Some(err) = child.stderr.take() {
            echoes.push(echo(err, console.clone()));
        }
        let mut qemu = Qemu {
            child,
            console,
            echoes,
        };
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("listener: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if let Ok(Some(status)) = qemu.child.try_wait() {
                        qemu.join_echoes();
                        return Err(format!("QEMU exited ({status}) before connecting its UART"));
                    }
                    if Instant::now() > deadline {
                        qemu.kill();
                        return Err("QEMU did not connect its UART within 10 s".into());
                    }
                    thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    qemu.kill();
                    return Err(format!("accepting QEMU's connection: {e}"));
                }
            }
        };
        stream
            .set_nonblocking(false)
            .map_err(|e| format!("socket: {e}"))?;
        println!(
            "QEMU {} is running {} with UART0 on 127.0.0.1:{port}",
            args.machine,
            kernel.display()
        );
        Ok((qemu, stream))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.join_echoes();
    }

    fn join_echoes(&mut self) {
        for handle in self.echoes.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for Qemu {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// Prints every line QEMU writes (the firmware's semihosting console) and keeps it.
fn echo(pipe: impl Read + Send + 'static, keep: Arc<Mutex<Vec<String>>>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            // QEMU's own remark when the Stellaris board's unused timers are reset.
            if line.starts_with("Timer with period zero") {
                continue;
            }
            println!("  firmware | {line}");
            if let Ok(mut lines) = keep.lock() {
                lines.push(line);
            }
        }
    })
}
