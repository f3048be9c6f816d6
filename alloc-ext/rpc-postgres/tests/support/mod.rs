//! A real PostgreSQL server for the tests and the benchmark, in a temporary directory: the
//! Debian package's binaries (`/usr/lib/postgresql/*/bin`, or `initdb` on the PATH;
//! `scripts/test-services` installs them), `initdb`, then `postgres` listening only on a
//! Unix socket in that directory (no TCP port: nothing to collide with). As root, the
//! server runs as the `postgres` user (it refuses root), through `setpriv` or `runuser`.
//!
//! [`TempPostgres`] stops the server (`pg_ctl stop -m immediate`) and deletes the directory
//! when dropped, a failing test included. Should the test process die without unwinding,
//! the server still stops: it runs under a small shell that holds a pipe from the test
//! process and shuts the server down when that pipe closes.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A PostgreSQL server of its own.
pub struct TempPostgres {
    dir: PathBuf,
    bin: PathBuf,
    run_as: Vec<String>,
    server: Option<Child>,
}

static STARTED: AtomicUsize = AtomicUsize::new(0);

fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let out = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    Path::new(path.trim()).parent().map(Path::to_path_buf)
}

/// The command prefix that runs a program as the `postgres` user, when running as root.
fn run_as_postgres() -> Result<Vec<String>, String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("id -u: {e}"))?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Ok(Vec::new());
    }
    let has = |p: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if has("setpriv") {
        Ok([
            "setpriv",
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--",
        ]
        .map(String::from)
        .to_vec())
    } else if has("runuser") {
        Ok(["runuser", "-u", "postgres", "--"]
            .map(String::from)
            .to_vec())
    } else {
        Err("running as root without setpriv or runuser to run PostgreSQL as postgres".into())
    }
}

/// Deletes the directories of test processes that died without unwinding (their servers
/// stopped with them).
fn remove_stale_directories() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("bebop-pg-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl TempPostgres {
    /// Starts a server, or `None` (after saying why) when PostgreSQL is not installed and
    /// the `CI` variable is not set. With `CI` set, a missing PostgreSQL is an error.
    pub async fn start() -> Result<Option<TempPostgres>, String> {
        let Some(bin) = find_bin() else {
            if std::env::var_os("CI").is_some() {
                return Err(
                    "PostgreSQL is not installed (scripts/test-services installs it) \
                            and CI is set"
                        .into(),
                );
            }
            eprintln!(
                "note: PostgreSQL is not installed (scripts/test-services installs it): \
                 skipping the PostgreSQL tests; set CI to make this an error"
            );
            return Ok(None);
        };
        let run_as = run_as_postgres()?;
        remove_stale_directories();
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let nonce: u32 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("bebop-pg-{}-{n}-{nonce:x}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut pg = TempPostgres {
            dir,
            bin,
            run_as,
            server: None,
        };
        pg.boot().await?;
        Ok(Some(pg))
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match self.run_as.split_first() {
            None => Command::new(exe),
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(exe);
                c
            }
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    async fn boot(&mut self) -> Result<(), String> {
        if !self.run_as.is_empty() {
            let status = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&self.dir)
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !status.success() {
                return Err(format!("chown postgres {} failed", self.dir.display()));
            }
        }
        let out = self
            .command("initdb")
            .arg("-D")
            .arg(self.data())
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // The server under a shell that stops it when our end of its stdin closes.
        let mut postgres = vec![self.bin.join("postgres").to_string_lossy().into_owned()];
        postgres.splice(0..0, self.run_as.iter().cloned());
        let script = r#"
            log="$1"; shift
            "$@" >"$log" 2>&1 &
            pg=$!
            read _ignored
            kill -QUIT "$pg" 2>/dev/null
            wait "$pg"
        "#;
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(self.dir.join("server.log"))
            .args(&postgres)
            .arg("-D")
            .arg(self.data())
            .arg("-k")
            .arg(&self.dir)
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting postgres: {e}"))?;
        self.server = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.config("postgres").connect(tokio_postgres::NoTls).await {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() > deadline => {
                    return Err(format!(
                        "PostgreSQL did not start: {e}\n{}",
                        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// The configuration of a connection to database `dbname`.
    pub fn config(&self, dbname: &str) -> tokio_postgres::Config {
        let mut c = tokio_postgres::Config::new();
        c.host_path(&self.dir)
            .port(5432)
            .user("postgres")
            .dbname(dbname);
        c
    }

    /// Runs SQL as the superuser on database `dbname`.
    pub async fn execute(&self, dbname: &str, sql: &str) -> Result<(), tokio_postgres::Error> {
        let (client, connection) = self.config(dbname).connect(tokio_postgres::NoTls).await?;
        let driver = tokio::spawn(connection);
        let r = client.batch_execute(sql).await;
        drop(client);
        let _ = driver.await;
        r
    }

    /// A new database.
    pub async fn create_database(&self, name: &str) -> Result<tokio_postgres::Config, String> {
        self.execute("postgres", &format!("CREATE DATABASE {name}"))
            .await
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        Ok(self.config(name))
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("stop")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "-t", "20"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(mut shell) = self.server.take() {
            // Closing its stdin ends the shell (and the server, were it still running).
            if let Some(mut stdin) = shell.stdin.take() {
                let _ = stdin.write_all(b"\n");
            }
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = shell.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = shell.kill();
            let _ = shell.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
