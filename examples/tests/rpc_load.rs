//! `bebop-rpc` under load, on loopback only (127.0.0.1 and Unix sockets): a thousand
//! connections at once, a hundred thousand calls multiplexed over one connection, a client
//! process killed with SIGKILL in the middle of a stream, and a long stream broken near its
//! end and resumed by cursor. Every test is bounded in count and time and stops by itself.
//!
//! The tests of this file take a lock so that they run one at a time: they would otherwise
//! compete for the machine's cores, and the memory measurements (of the whole process) would
//! include the other tests' connections.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bebop_rpc::{CallOptions, Client};
use common::*;
use tokio::io::AsyncBufReadExt;

/// One load test at a time (see the module documentation).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

fn settings(count: u32, label: &str) -> Settings {
    Settings {
        interval_ms: Some(count),
        label: Some(label.into()),
    }
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn proc_status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn rss_mib() -> f64 {
    proc_status_kib("VmRSS") as f64 / 1024.0
}

/// Raises the soft limit of open files to the hard limit and returns how many connections
/// (each two descriptors in this process: the client's and the server's) fit in it, at most
/// `wanted`. Says so loudly when that is fewer than wanted.
fn connection_budget(wanted: usize) -> usize {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum;
    if limit.current != hard {
        match setrlimit(
            Resource::Nofile,
            Rlimit {
                current: hard,
                maximum: hard,
            },
        ) {
            Ok(()) => println!(
                "RLIMIT_NOFILE soft limit raised from {:?} to {hard:?}",
                limit.current
            ),
            Err(e) => println!(
                "could not raise RLIMIT_NOFILE from {:?} to {hard:?}: {e}",
                limit.current
            ),
        }
    }
    let now = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    // Descriptors the test binary and the runtime already use, with room to spare.
    let reserve = 128;
    let fit = usize::try_from(now.saturating_sub(reserve) / 2).unwrap_or(usize::MAX);
    if fit < wanted {
        // Straight to the process's stderr: the test harness captures `eprintln!`, and this
        // must show in every run.
        let bang = "!".repeat(78);
        let _ = writeln!(
            std::io::stderr(),
            "\n{bang}\n!!! RLIMIT_NOFILE is {now}: running {fit} connections instead of {wanted}\n{bang}\n"
        );
        assert!(
            fit >= 16,
            "RLIMIT_NOFILE {now} is too low for any load test"
        );
    }
    fit.min(wanted)
}

/// What one round of [`connections_round`] measured.
struct Round {
    connect_time: Duration,
    calls_time: Duration,
    /// Resident memory with every connection open, after the calls.
    loaded_mib: f64,
    /// Resident memory once the server closed every connection.
    after_mib: f64,
}

/// `connections` clients at once, each making `calls` unary calls in `lanes` concurrent
/// sequences; checks that every response is its request's unique text and arrives exactly
/// once, and that the server closes every connection afterwards.
async fn connections_round(
    running: &Running,
    connections: usize,
    calls: usize,
    lanes: usize,
) -> Round {
    let started = Instant::now();
    // Everyone connects and makes a first call, then waits at `connected`, so that all the
    // connections are open at once; then the other calls, then `done` before closing.
    let connected = Arc::new(tokio::sync::Barrier::new(connections + 1));
    let done = Arc::new(tokio::sync::Barrier::new(connections + 1));
    let seen: Arc<Vec<AtomicU8>> =
        Arc::new((0..connections * calls).map(|_| AtomicU8::new(0)).collect());
    let mut tasks = Vec::with_capacity(connections);
    for c in 0..connections {
        let endpoint = running.endpoint.clone();
        let (connected, done, seen) = (connected.clone(), done.clone(), seen.clone());
        tasks.push(tokio::spawn(async move {
            let client = endpoint.connect().await;
            let lab = Running::lab(&client);
            let call = |i: usize| {
                let (lab, seen) = (&lab, &seen);
                async move {
                    let text = format!("c{c}-{i}");
                    let reply = lab
                        .echo(&note(&text), CallOptions::new())
                        .await
                        .unwrap()
                        .into_inner();
                    assert_eq!(reply.text, text, "connection {c}, call {i}");
                    // Count the response by what it says, not by what was asked.
                    let (rc, ri) = reply.text[1..].split_once('-').unwrap();
                    let slot = rc.parse::<usize>().unwrap() * calls + ri.parse::<usize>().unwrap();
                    seen[slot].fetch_add(1, Ordering::Relaxed);
                }
            };
            call(0).await;
            connected.wait().await;
            let lanes = (0..lanes).map(|lane| async move {
                for i in (1..calls).filter(|i| i % lanes == lane) {
                    call(i).await;
                }
            });
            futures_util::future::join_all(lanes).await;
            done.wait().await;
            drop(lab);
            drop(client);
        }));
    }
    tokio::time::timeout(Duration::from_secs(60), connected.wait())
        .await
        .expect("every client connected and made its first call within a minute");
    let connect_time = started.elapsed();
    assert_eq!(running.server.connections(), connections);
    let calls_started = Instant::now();
    tokio::time::timeout(Duration::from_secs(120), done.wait())
        .await
        .expect("every client made its calls within two minutes");
    let calls_time = calls_started.elapsed();
    let loaded_mib = rss_mib();
    for t in tasks {
        t.await.unwrap();
    }
    eventually("the server closed every connection", || {
        running.server.connections() == 0
    })
    .await;
    let after_mib = rss_mib();
    let lost = seen
        .iter()
        .filter(|n| n.load(Ordering::Relaxed) == 0)
        .count();
    let duplicated = seen
        .iter()
        .filter(|n| n.load(Ordering::Relaxed) > 1)
        .count();
    assert_eq!((lost, duplicated), (0, 0), "lost and duplicated responses");
    Round {
        connect_time,
        calls_time,
        loaded_mib,
        after_mib,
    }
}

/// A thousand clients connected at once, each making a hundred unary calls (100,000 calls).
/// Every response is the request's own unique text, each arrives exactly once, the server's
/// connection count returns to 0, and nothing is left behind: the runtime's live tasks
/// return to what they were before (the server's accept loop), after this round and after a
/// second round of a thousand short connections.
///
/// A connection's calls run eight at a time: on a 2-core machine in debug the 99,000 calls
/// after the first ones then take ~9 s (~11,000 calls/s; ~20 s while another process loaded
/// the machine); one at a time they took 30 to 40 s (2,300 to 3,200 calls/s).
///
/// Memory: client and server both live in this process, so the numbers are their sum.
/// Measured on that machine: ~6 MiB before, ~155 MiB with the thousand connections open
/// (every connection has 64 KiB read and write buffers on each side), about the same after
/// they closed (the allocator keeps freed memory for reuse), ~220 MiB after the second
/// round. More rounds grow it less and less (+77, +41, +19, +9, +7 MiB over five more in
/// one experiment, the same with `MALLOC_ARENA_MAX=1`): fragmentation that converges, not
/// memory kept per connection, which would grow every round alike (and the live task count
/// would show it). The bound is generous: 600 MiB resident at each measurement.
#[test]
fn a_thousand_connections_of_a_hundred_calls_each() {
    const CALLS: usize = 100;
    const LANES: usize = 8;
    let _serial = serial();
    let connections = connection_budget(1000);
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Tcp, lab_server(&probe)).await;
        let metrics = tokio::runtime::Handle::current().metrics();
        let tasks_before = metrics.num_alive_tasks();
        let before = rss_mib();
        let first = connections_round(&running, connections, CALLS, LANES).await;
        eventually("every task of the first round ended", || metrics.num_alive_tasks() == tasks_before).await;
        let rest = connections * (CALLS - 1);
        println!(
            "{connections} connections x {CALLS} calls ({LANES} at a time per connection): connected and first call in {:?}, \
             {rest} more calls in {:?} ({:.0} calls/s); RSS {before:.1} MiB before, {:.1} MiB connected, {:.1} MiB after",
            first.connect_time,
            first.calls_time,
            rest as f64 / first.calls_time.as_secs_f64(),
            first.loaded_mib,
            first.after_mib,
        );
        assert_eq!(probe.calls.load(Ordering::SeqCst), connections * CALLS);
        let second = connections_round(&running, connections, 2, 1).await;
        eventually("every task of the second round ended", || metrics.num_alive_tasks() == tasks_before).await;
        let peak = proc_status_kib("VmHWM") as f64 / 1024.0;
        println!(
            "second round, {connections} connections x 2 calls in {:?}: {:.1} MiB connected, {:.1} MiB after; peak {peak:.1} MiB",
            second.connect_time + second.calls_time,
            second.loaded_mib,
            second.after_mib
        );
        for (what, mib) in [
            ("with the connections open", first.loaded_mib),
            ("after the connections closed", first.after_mib),
            ("with the second round's connections open", second.loaded_mib),
            ("after the second round", second.after_mib),
        ] {
            assert!(mib < 600.0, "{mib:.1} MiB resident {what}");
        }
        running.stop().await;
    });
}

/// A hundred tasks sharing one multiplexed connection, each making a thousand unary calls
/// (100,000 calls on one connection), none lost or duplicated. On a 2-core machine in debug
/// this takes ~9 s (~11,000 calls/s), ~17 s while another process loaded the machine.
#[test]
fn a_hundred_thousand_calls_multiplexed_on_one_connection() {
    let _serial = serial();
    const TASKS: usize = 100;
    const CALLS: usize = 1000;
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Unix, lab_server(&probe)).await;
        let client = running.client().await;
        let seen: Arc<Vec<AtomicU8>> =
            Arc::new((0..TASKS * CALLS).map(|_| AtomicU8::new(0)).collect());
        let started = Instant::now();
        let mut tasks = Vec::with_capacity(TASKS);
        for t in 0..TASKS {
            let lab = Running::lab(&client);
            let seen = seen.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..CALLS {
                    let text = format!("t{t}-{i}");
                    let reply = lab
                        .echo(&note(&text), CallOptions::new())
                        .await
                        .unwrap()
                        .into_inner();
                    assert_eq!(reply.text, text, "task {t}, call {i}");
                    let (rt, ri) = reply.text[1..].split_once('-').unwrap();
                    let slot = rt.parse::<usize>().unwrap() * CALLS + ri.parse::<usize>().unwrap();
                    seen[slot].fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
        let all = futures_util::future::join_all(tasks);
        for r in tokio::time::timeout(Duration::from_secs(120), all)
            .await
            .expect("the calls finished within two minutes")
        {
            r.unwrap();
        }
        let elapsed = started.elapsed();
        println!(
            "{TASKS} tasks x {CALLS} calls on one connection: {elapsed:?} ({:.0} calls/s)",
            (TASKS * CALLS) as f64 / elapsed.as_secs_f64()
        );
        let lost = seen
            .iter()
            .filter(|n| n.load(Ordering::Relaxed) == 0)
            .count();
        let duplicated = seen
            .iter()
            .filter(|n| n.load(Ordering::Relaxed) > 1)
            .count();
        assert_eq!((lost, duplicated), (0, 0), "lost and duplicated responses");
        assert_eq!(probe.calls.load(Ordering::SeqCst), TASKS * CALLS);
        assert!(!client.is_closed());
        assert_eq!(running.server.connections(), 1);
        drop(client);
        eventually("the connection closed", || {
            running.server.connections() == 0
        })
        .await;
        running.stop().await;
    });
}

/// Set in the environment of the child process of
/// [`a_client_process_killed_mid_stream_leaves_the_server_serving`]: the address of the
/// server it calls.
const CHILD_ADDR: &str = "BEBOP_RPC_LOAD_CHILD_ADDR";
const CHILD_READY: &str = "CHILD-RECEIVING";

/// The child's part: open an endless server stream, say so once items flow, and keep reading
/// until killed (or, should nobody kill it, for at most a minute).
fn child_client(addr: &str) {
    rt().block_on(async {
        let client = Client::connect_tcp(addr).await.unwrap();
        let lab = Running::lab(&client);
        let mut stream = lab
            .samples(&settings(u32::MAX, ""), CallOptions::new())
            .await
            .unwrap();
        let started = Instant::now();
        let mut n = 0u64;
        while started.elapsed() < Duration::from_secs(60) {
            match stream.message().await {
                Ok(Some(_)) => n += 1,
                other => panic!("the stream ended after {n} items: {other:?}"),
            }
            if n == 1000 {
                println!("{CHILD_READY}");
            }
        }
    });
}

/// Kills the child when dropped (a failing test must not leave it running).
struct KillOnDrop(Option<tokio::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.start_kill();
        }
    }
}

/// A real client process (this test binary again, in child mode) is killed with SIGKILL
/// while it receives a server stream: its handler is cancelled, its connection goes away,
/// and the other clients, one in the middle of a stream of its own, are served throughout.
#[test]
fn a_client_process_killed_mid_stream_leaves_the_server_serving() {
    if let Ok(addr) = std::env::var(CHILD_ADDR) {
        return child_client(&addr);
    }
    let _serial = serial();
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Tcp, lab_server(&probe)).await;
        let Endpoint::Tcp(addr) = running.endpoint.clone() else {
            unreachable!()
        };
        // Another client, in the middle of a slow stream when the child dies.
        let other = running.client().await;
        let other_lab = Running::lab(&other);
        let mut other_stream = other_lab
            .samples(&settings(100, "slow:10"), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(other_stream.message().await.unwrap().unwrap().seq, 1);

        let exe = std::env::current_exe().unwrap();
        let mut child = tokio::process::Command::new(exe)
            .args([
                "--exact",
                "a_client_process_killed_mid_stream_leaves_the_server_serving",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ADDR, addr.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut child = KillOnDrop(Some(child));
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                // The harness's `test NAME ... ` has no newline yet: the marker ends its line.
                if line.ends_with(CHILD_READY) {
                    return;
                }
            }
            panic!("the child exited before receiving");
        })
        .await
        .expect("the child received its first items within 30 s");
        assert_eq!(running.server.connections(), 2);
        let sent_before = probe.sent.load(Ordering::SeqCst);
        // Items still flow to the child: it is killed while receiving.
        eventually("the child is still receiving", || probe.sent.load(Ordering::SeqCst) > sent_before).await;
        let killed_at = Instant::now();
        let mut process = child.0.take().unwrap();
        process.start_kill().unwrap();
        let status = process.wait().await.unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");

        eventually("the child's handler was cancelled", || probe.dropped.load(Ordering::SeqCst) == 1).await;
        eventually("the child's connection closed", || running.server.connections() == 1).await;
        let cancelled_after = killed_at.elapsed();
        println!(
            "the server had sent the child {} items when it was killed; its handler was cancelled {cancelled_after:?} after the kill",
            probe.sent.load(Ordering::SeqCst)
        );
        // The other client's stream carries on to its end, and new calls are served.
        let fresh = running.client().await;
        let fresh_lab = Running::lab(&fresh);
        assert_eq!(fresh_lab.echo(&note("after"), CallOptions::new()).await.unwrap().into_inner().text, "after");
        assert_eq!(other_lab.echo(&note("still"), CallOptions::new()).await.unwrap().into_inner().text, "still");
        let mut next = 2;
        while let Some(item) = other_stream.message().await.unwrap() {
            assert_eq!(item.seq, next);
            next += 1;
        }
        assert_eq!(next, 101);
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 1, "only the child's handler was cancelled");
        running.stop().await;
    });
}

/// A TCP relay between a client and the server that breaks the connection (closes both of
/// its sockets) right after passing the server frame carrying cursor `cut_at` to the client.
/// The client then receives exactly the items up to that cursor, whatever the socket buffers
/// held.
async fn cutting_relay(upstream: std::net::SocketAddr, cut_at: u64) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (down, _) = listener.accept().await.unwrap();
        let up = tokio::net::TcpStream::connect(upstream).await.unwrap();
        let (mut down_rd, mut down_wr) = down.into_split();
        let (mut up_rd, mut up_wr) = up.into_split();
        let requests = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut down_rd, &mut up_wr).await;
        });
        let mut pending = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        'relay: loop {
            let n = match up_rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            let mut used = 0;
            while let Ok((frame, len)) =
                bebop_runtime::rpc::parse_frame(&pending[used..], usize::MAX)
            {
                let cursor = frame.cursor;
                down_wr.write_all(&pending[used..used + len]).await.unwrap();
                used += len;
                if cursor == Some(cut_at) {
                    break 'relay;
                }
            }
            pending.drain(..used);
        }
        requests.abort();
        // Dropping the halves closes both connections.
    });
    addr
}

/// A stream of 10,000 items whose connection breaks right after item 9,500 is resumed by
/// cursor on a new connection: every item arrives exactly once, in order.
#[test]
fn a_long_stream_broken_near_its_end_resumes_by_cursor() {
    let _serial = serial();
    const ITEMS: u32 = 10_000;
    const BREAK_AT: u32 = 9_500;
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Tcp, lab_server(&probe)).await;
        let Endpoint::Tcp(addr) = running.endpoint.clone() else {
            unreachable!()
        };
        let relay = cutting_relay(addr, u64::from(BREAK_AT)).await;
        let first = Client::connect_tcp(relay).await.unwrap();
        let lab = Running::lab(&first);
        let mut stream = lab.samples(&settings(ITEMS, ""), CallOptions::new()).await.unwrap();
        let mut seen = Vec::with_capacity(ITEMS as usize);
        while seen.len() < BREAK_AT as usize {
            let (item, cursor) = stream.message_with_cursor().await.unwrap().unwrap();
            assert_eq!(cursor, Some(u64::from(item.seq)));
            seen.push(item.seq);
        }
        // The relay broke the connection after item 9,500: the stream reports the break,
        // and the client is dropped.
        let error = stream.message_with_cursor().await.unwrap_err();
        assert_eq!(error.code(), bebop_rpc::StatusCode::Unavailable, "{error}");
        assert_eq!(stream.cursor(), u64::from(BREAK_AT));
        drop(lab);
        drop(first);
        // The server notices and cancels the broken call's handler, unless the handler had
        // already handed everything to the relay.
        let sent_at_break = probe.sent.load(Ordering::SeqCst);
        eventually("the broken call's handler stopped", || {
            probe.dropped.load(Ordering::SeqCst) == 1 || probe.sent.load(Ordering::SeqCst) == ITEMS as usize
        })
        .await;
        eventually("the broken connection closed", || running.server.connections() == 0).await;
        let second = running.client().await;
        let mut resumed = stream.resume(&second).await.unwrap();
        while let Some((item, cursor)) = resumed.message_with_cursor().await.unwrap() {
            assert_eq!(cursor, Some(u64::from(item.seq)));
            seen.push(item.seq);
        }
        println!(
            "broken after item {BREAK_AT} (the server had sent {} by then); resumed from cursor {BREAK_AT}",
            sent_at_break
        );
        assert_eq!(seen.len(), ITEMS as usize, "every item exactly once");
        assert!(seen.iter().copied().eq(1..=ITEMS), "in order, none missing or repeated");
        let distinct: HashSet<u32> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), ITEMS as usize);
        running.stop().await;
    });
}
