//! The key-value example as its users run it: the real `kv-server` and `kv-client`
//! binaries as processes, talking over TCP loopback and a Unix socket.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct ServerProcess {
    child: Child,
    target: Vec<String>,
}

impl ServerProcess {
    fn start(extra: &[&str]) -> ServerProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kv-server"))
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kv-server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the address");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        let target = match addr.strip_prefix("unix:") {
            Some(path) => vec!["--unix".to_string(), path.to_string()],
            None => vec!["--connect".to_string(), addr],
        };
        ServerProcess { child, target }
    }

    fn client(&self, args: &[&str]) -> Output {
        self.client_with_input(args, None)
    }

    fn client_with_input(&self, args: &[&str], input: Option<&str>) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kv-client"))
            .args(&self.target)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kv-client");
        let mut stdin = child.stdin.take().expect("stdin");
        if let Some(input) = input {
            stdin.write_all(input.as_bytes()).expect("write input");
        }
        drop(stdin);
        child.wait_with_output().expect("kv-client ran")
    }

    /// Sends SIGTERM and waits for a clean exit.
    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "kv-server exited with {status}");
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "kv-server did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "kv-client failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn failed(out: Output) -> String {
    assert!(!out.status.success(), "kv-client should have failed");
    String::from_utf8(out.stderr).unwrap()
}

fn session(server: &ServerProcess) {
    let w = ["--token", "w"];
    let r = ["--token", "r"];
    assert_eq!(
        ok(server.client(&[&w[..], &["put", "greeting", "hello"]].concat())),
        "revision 1\n"
    );
    assert_eq!(
        ok(server.client(&[&r[..], &["get", "greeting"]].concat())),
        "greeting = hello (revision 1)\n"
    );
    assert_eq!(
        ok(server.client(&[&r[..], &["get", "nothing"]].concat())),
        "nothing has no value\n"
    );
    assert!(failed(server.client(&["get", "greeting"])).starts_with("UNAUTHENTICATED"));
    assert!(
        failed(server.client(&[&r[..], &["put", "k", "v"]].concat()))
            .starts_with("PERMISSION_DENIED: Put needs the write token")
    );
    let loaded = ok(server.client_with_input(
        &[&w[..], &["load"]].concat(),
        Some("a=1\nb=2\nnot a pair\nc=3\n"),
    ));
    assert_eq!(loaded, "loaded 3 keys, revision 4\n");
    assert_eq!(
        ok(server.client(&[&w[..], &["delete", "b"]].concat())),
        "revision 5\n"
    );
    assert!(failed(server.client(&[&w[..], &["delete", "b"]].concat())).starts_with("NOT_FOUND"));
    // The whole history, then resumed from a cursor.
    let all = ok(server.client(&[&r[..], &["watch", "--count", "5"]].concat()));
    assert_eq!(
        all,
        "Put greeting = hello (revision 1)\nPut a = 1 (revision 2)\nPut b = 2 (revision 3)\n\
         Put c = 3 (revision 4)\nDelete b = 2 (revision 5)\n"
    );
    let tail = ok(server.client(&[&r[..], &["watch", "--from", "3", "--count", "2"]].concat()));
    assert_eq!(tail, "Put c = 3 (revision 4)\nDelete b = 2 (revision 5)\n");
    let prefixed =
        ok(server.client(&[&r[..], &["watch", "--prefix", "gr", "--count", "1"]].concat()));
    assert_eq!(prefixed, "Put greeting = hello (revision 1)\n");
}

#[test]
fn kv_example_over_tcp() {
    let server = ServerProcess::start(&[
        "--listen",
        "127.0.0.1:0",
        "--token",
        "w",
        "--read-token",
        "r",
    ]);
    session(&server);
    server.terminate();
}

#[test]
fn kv_example_over_a_unix_socket() {
    let dir = std::env::temp_dir().join(format!("bebop-kv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kv.sock");
    let server = ServerProcess::start(&[
        "--unix",
        path.to_str().unwrap(),
        "--token",
        "w",
        "--read-token",
        "r",
    ]);
    session(&server);
    server.terminate();
    assert!(!path.exists(), "the socket file is removed on shutdown");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_watcher_sees_live_changes() {
    let server = ServerProcess::start(&["--listen", "127.0.0.1:0", "--grace", "1"]);
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_kv-client"))
        .args(&server.target)
        .args(["watch", "--count", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    ok(server.client(&["put", "x", "1"]));
    ok(server.client(&["put", "x", "2"]));
    let out = watcher.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Put x = 1 (revision 1)\nPut x = 2 (revision 2)\n"
    );
    // The server still has the watcher's connection count right and stops cleanly.
    watcher = Command::new(env!("CARGO_BIN_EXE_kv-client"))
        .args(&server.target)
        .args(["watch"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // A watch that never ends does not hold the shutdown beyond its grace period.
    server.terminate();
    let _ = watcher.wait();
}
