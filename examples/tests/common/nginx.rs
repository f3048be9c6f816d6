//! A real nginx on loopback as a reverse proxy in front of a test server: started in a
//! temporary directory with its own configuration, stopped (killed) on drop.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::TempDir;

/// An nginx process proxying `127.0.0.1:<port>` to an upstream.
pub struct Nginx {
    child: Child,
    /// Where nginx listens.
    pub addr: SocketAddr,
    dir: TempDir,
}

/// The nginx binary, if the machine has one (scripts/test-services installs it).
pub fn nginx_binary() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// The nginx binary, or `None` with a notice when it is missing and CI is not set (with CI
/// set, a missing nginx fails the test).
pub fn nginx_or_skip(test: &str) -> Option<PathBuf> {
    match nginx_binary() {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("{test}: nginx is missing and CI is set (scripts/test-services installs it)")
        }
        None => {
            eprintln!("note: {test} skipped: nginx is not installed (scripts/test-services)");
            None
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

fn config(dir: &Path, port: u16, upstream: SocketAddr) -> String {
    let d = dir.display();
    format!(
        r#"daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    client_max_body_size 16m;
    upstream bebop {{
        server {upstream};
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://bebop;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # Stream responses and requests through as they come: a server stream must
            # reach the client frame by frame.
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 30s;
        }}
    }}
}}
"#
    )
}

impl Nginx {
    /// Starts nginx in front of `upstream` (an HTTP/1.1 server on loopback) and waits until
    /// it accepts connections.
    pub fn start(binary: &Path, upstream: SocketAddr) -> Nginx {
        let mut last_error = String::new();
        for _ in 0..5 {
            let dir = TempDir::new();
            let port = free_port();
            let conf = dir.0.join("nginx.conf");
            std::fs::write(&conf, config(&dir.0, port, upstream)).unwrap();
            let mut child = Command::new(binary)
                .arg("-p")
                .arg(&dir.0)
                .arg("-c")
                .arg(&conf)
                .arg("-e")
                .arg(dir.0.join("error.log"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
                    return Nginx { child, addr, dir };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            last_error = std::fs::read_to_string(dir.0.join("error.log")).unwrap_or_default();
        }
        panic!("nginx did not start: {last_error}");
    }

    /// What nginx logged (errors and warnings).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.0.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
