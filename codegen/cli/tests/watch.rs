//! `bebopc watch`, run as a child process in a scratch project whose `bebop.yml` runs the
//! built-in Rust generator (and `--desc_out`): a changed schema is rebuilt, a syntax error is
//! reported and watching goes on, fixing it rebuilds, a changed import rebuilds, a changed
//! configuration takes effect, and SIGTERM or SIGINT (Ctrl-C) stops it with exit status 0. Every wait is bounded
//! (10 s); the child is killed when the test ends, however it ends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Project;

/// The longest any one step may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A running `bebopc watch`; killed on drop.
struct Watch {
    child: Child,
    stderr: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    fn start(p: &Project, args: &[&str]) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bebopc"))
            .arg("watch")
            .args(args)
            .current_dir(p.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bebopc watch");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Watch {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stderr, from byte `from` on, contains `needle`; returns where that
    /// occurrence ends.
    fn wait_stderr(&mut self, from: usize, needle: &str) -> usize {
        self.wait(&format!("{needle:?} on stderr"), |w| {
            let s = w.stderr();
            s.get(from..)
                .and_then(|rest| rest.find(needle))
                .map(|at| from + at + needle.len())
        })
    }

    /// Polls `done` until it gives a value; fails after [`TIMEOUT`] or when the child exits.
    fn wait<T>(&mut self, what: &str, mut done: impl FnMut(&mut Watch) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = done(self) {
                return v;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "bebopc watch exited ({status}) while waiting for {what}\n--- stderr\n{}",
                    self.stderr()
                );
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "timed out waiting for {what}\n--- stderr\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

fn contains(path: &Path, needle: &str) -> bool {
    std::fs::read(path)
        .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

const CONFIG: &str = "sources: [\"schemas/*.bop\"]\ninclude: [\"shared\"]\nplugins:\n  rust: gen\n";

#[test]
fn rebuilds_on_changes_and_survives_errors() {
    let p = Project::new();
    p.write("bebop.yml", CONFIG)
        .write(
            "schemas/a.bop",
            "import \"common.bop\"\nstruct First { c: Common; }\n",
        )
        .write("shared/common.bop", "struct Common { x: int32; }\n");
    let generated = p.join("gen/schemas/a.rs");
    let desc = p.join("out.desc");
    let mut w = Watch::start(
        &p,
        &[
            "--debounce",
            "100",
            "--color",
            "never",
            "--desc_out=out.desc",
        ],
    );
    w.wait("the first build", |_| {
        contains(&generated, "First").then_some(())
    });
    let mut seen = w.wait_stderr(0, "watching");

    // A changed schema is rebuilt.
    p.write(
        "schemas/a.bop",
        "import \"common.bop\"\nstruct First { c: Common; }\nstruct Second {}\n",
    );
    w.wait("Second in the generated code", |_| {
        contains(&generated, "Second").then_some(())
    });
    seen = w.wait_stderr(seen, "watching");

    // A syntax error is reported, and watching goes on.
    p.write("schemas/a.bop", "struct Broken {\n    x int32;\n}\n");
    seen = w.wait_stderr(seen, "schemas/a.bop:2:7: error[E010]");
    seen = w.wait_stderr(seen, "watching");
    assert!(contains(&generated, "Second"), "the old output stays");

    // Fixing it rebuilds.
    p.write(
        "schemas/a.bop",
        "import \"common.bop\"\nstruct Third { c: Common; }\n",
    );
    w.wait("Third in the generated code", |_| {
        contains(&generated, "Third").then_some(())
    });
    seen = w.wait_stderr(seen, "watching");

    // A changed import is rebuilt (the descriptor set holds the imported schema).
    p.write(
        "shared/common.bop",
        "struct Common { x: int32; }\nstruct CommonTwo {}\n",
    );
    w.wait("CommonTwo in the descriptor set", |_| {
        contains(&desc, "CommonTwo").then_some(())
    });
    seen = w.wait_stderr(seen, "watching");

    // A changed configuration takes effect: another output directory.
    p.write("bebop.yml", &CONFIG.replace("rust: gen", "rust: gen2"));
    w.wait("output in gen2", |_| {
        contains(&p.join("gen2/schemas/a.rs"), "Third").then_some(())
    });
    w.wait_stderr(seen, "watching");
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_stop_it_cleanly() {
    for signal in ["-TERM", "-INT"] {
        let p = Project::new();
        p.write("bebop.yml", "sources: [\"schemas/*.bop\"]\n")
            .write("schemas/a.bop", "struct A {}\n");
        let mut w = Watch::start(&p, &["--desc_out=out.desc", "--color", "never"]);
        w.wait_stderr(0, "watching");
        let pid = w.child.id().to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(status.success());
        let start = Instant::now();
        let exit = loop {
            if let Some(status) = w.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "{signal}: bebopc watch did not stop"
            );
            std::thread::sleep(Duration::from_millis(25));
        };
        assert_eq!(exit.code(), Some(0), "{signal}: {}", w.stderr());
        if let Some(reader) = w.reader.take() {
            reader.join().unwrap();
        }
        assert!(
            w.stderr().ends_with("stopped watching\n"),
            "{signal}: {}",
            w.stderr()
        );
    }
}

#[test]
fn a_broken_configuration_is_reported_and_watched() {
    let p = Project::new();
    p.write("bebop.yml", "sources: [\"schemas/*.bop\"]\n")
        .write("schemas/a.bop", "struct A {}\n");
    p.write("bebop.yml", "sources: [schemas/*.bop\n");
    let mut w = Watch::start(&p, &["--desc_out=out.desc", "--color", "never"]);
    let seen = w.wait_stderr(0, "bebop.yml:");
    w.wait_stderr(seen, "watching");
    assert!(!p.join("out.desc").exists());
    p.write("bebop.yml", "sources: [\"schemas/*.bop\"]\n");
    w.wait("the build after the fix", |_| {
        contains(&p.join("out.desc"), "A").then_some(())
    });
}

#[test]
fn nothing_to_watch_is_a_usage_error() {
    let p = Project::bare();
    let out = p.run(&["watch", "--color", "never"]);
    common::assert_status(&out, 2);
    let err = common::stderr(&out);
    assert!(err.contains("no schemas to compile"), "{err}");
    assert!(err.contains("nothing to watch"), "{err}");
}
