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
            Ok(()) => println!("RLIMIT_NOFILE soft limit raised from {:?} to {hard:?}", limit.current),
            Err(e) => println!("could not raise RLIMIT_NOFILE from {:?} to {hard:?}: {e}", limit.current),
        }
    }
    let now = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    // Descriptors the test binary and the runtime already use, with room to spare.
    let reserve = 128;
    let fit = usize::try_from(now.saturating_sub(reserve) / 2).unwrap_or(usize::MAX);
    if fit < wanted {
        eprintln!();
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        eprintln!("!!! RLIMIT_NOFILE is {now}: running {fit} connections instead of {wanted}");
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        eprintln!();
        assert!(fit >= 16, "RLIMIT_NOFILE {now} is too low for any load test");
    }
    fit.min(wanted)
}

const CALLS_PER_CONNECTION: usize = 100;

/// A thousand clients connected at once, each making a hundred unary calls one after the
/// other (100,000 calls). Every response is the request's own unique text, each arrives
/// exactly once, every connection is gone afterwards and memory comes back down.
///
/// Memory (client and server both live in this process, so the numbers are their sum),
/// measured on a 2-core machine in debug: about 10 MiB before, about 150 MiB with the
/// thousand connections open (each connection has 64 KiB read and write buffers on each
/// side), about 30 to 150 MiB after they closed (the allocator keeps some freed memory). The
/// bounds below are four times that: 600 MiB while connected and 400 MiB of growth after.
#[test]
fn a_thousand_connections_of_a_hundred_calls_each() {
    let _serial = serial();
    let connections = connection_budget(1000);
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Tcp, lab_server(&probe)).await;
        let before = rss_mib();
        let started = Instant::now();
        // Everyone connects and makes a first call, then waits at `connected`, so that all
        // the connections are open at once; then the other 99 calls, then `done` before the
        // connections close.
        let connected = Arc::new(tokio::sync::Barrier::new(connections + 1));
        let done = Arc::new(tokio::sync::Barrier::new(connections + 1));
        let seen: Arc<Vec<AtomicU8>> =
            Arc::new((0..connections * CALLS_PER_CONNECTION).map(|_| AtomicU8::new(0)).collect());
        let mut tasks = Vec::with_capacity(connections);
        for c in 0..connections {
            let endpoint = running.endpoint.clone();
            let (connected, done, seen) = (connected.clone(), done.clone(), seen.clone());
            tasks.push(tokio::spawn(async move {
                let client = endpoint.connect().await;
                let lab = Running::lab(&client);
                for i in 0..CALLS_PER_CONNECTION {
                    if i == 1 {
                        connected.wait().await;
                    }
                    let text = format!("c{c}-{i}");
                    let reply = lab.echo(&note(&text), CallOptions::new()).await.unwrap().into_inner();
                    assert_eq!(reply.text, text, "connection {c}, call {i}");
                    // Count the response by what it says, not by what was asked.
                    let (rc, ri) = reply.text[1..].split_once('-').unwrap();
                    let slot = rc.parse::<usize>().unwrap() * CALLS_PER_CONNECTION + ri.parse::<usize>().unwrap();
                    seen[slot].fetch_add(1, Ordering::Relaxed);
                }
                done.wait().await;
                drop(lab);
                drop(client);
            }));
        }
        tokio::time::timeout(Duration::from_secs(60), connected.wait())
            .await
            .expect("every client connected and made its first call");
        let connect_time = started.elapsed();
        assert_eq!(running.server.connections(), connections);
        let calls_started = Instant::now();
        tokio::time::timeout(Duration::from_secs(120), done.wait())
            .await
            .expect("every client made its calls");
        let calls_time = calls_started.elapsed();
        let loaded = rss_mib();
        for t in tasks {
            t.await.unwrap();
        }
        eventually("the server closed every connection", || running.server.connections() == 0).await;
        let after = rss_mib();
        let peak = proc_status_kib("VmHWM") as f64 / 1024.0;
        let total = connections * CALLS_PER_CONNECTION;
        let calls_after_connecting = total - connections;
        println!(
            "{connections} connections x {CALLS_PER_CONNECTION} calls: connected and first call in {connect_time:?}, \
             {calls_after_connecting} more calls in {calls_time:?} ({:.0} calls/s); \
             RSS {before:.1} MiB before, {loaded:.1} MiB connected, {after:.1} MiB after, peak {peak:.1} MiB",
            calls_after_connecting as f64 / calls_time.as_secs_f64()
        );
        let lost = seen.iter().filter(|n| n.load(Ordering::Relaxed) == 0).count();
        let duplicated = seen.iter().filter(|n| n.load(Ordering::Relaxed) > 1).count();
        assert_eq!((lost, duplicated), (0, 0), "lost and duplicated responses");
        assert_eq!(probe.calls.load(Ordering::SeqCst), total);
        assert!(loaded < 600.0, "{loaded:.1} MiB resident with {connections} connections open");
        assert!(after - before < 400.0, "{:.1} MiB more resident after the connections closed", after - before);
        running.stop().await;
    });
}

/// A hundred tasks sharing one multiplexed connection, each making a thousand unary calls
/// (100,000 calls on one connection), none lost or duplicated. On a 2-core machine in debug
/// this takes about 10 to 15 s (7,000 to 10,000 calls/s).
#[test]
fn a_hundred_thousand_calls_multiplexed_on_one_connection() {
    let _serial = serial();
    const TASKS: usize = 100;
    const CALLS: usize = 1000;
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Unix, lab_server(&probe)).await;
        let client = running.client().await;
        let seen: Arc<Vec<AtomicU8>> = Arc::new((0..TASKS * CALLS).map(|_| AtomicU8::new(0)).collect());
        let started = Instant::now();
        let mut tasks = Vec::with_capacity(TASKS);
        for t in 0..TASKS {
            let lab = Running::lab(&client);
            let seen = seen.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..CALLS {
                    let text = format!("t{t}-{i}");
                    let reply = lab.echo(&note(&text), CallOptions::new()).await.unwrap().into_inner();
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
        let lost = seen.iter().filter(|n| n.load(Ordering::Relaxed) == 0).count();
        let duplicated = seen.iter().filter(|n| n.load(Ordering::Relaxed) > 1).count();
        assert_eq!((lost, duplicated), (0, 0), "lost and duplicated responses");
        assert_eq!(probe.calls.load(Ordering::SeqCst), TASKS * CALLS);
        assert!(!client.is_closed());
        assert_eq!(running.server.connections(), 1);
        drop(client);
        eventually("the connection closed", || running.server.connections() == 0).await;
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
        let mut stream = lab.samples(&settings(u32::MAX, ""), CallOptions::new()).await.unwrap();
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
                if line.trim() == CHILD_READY {
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
            "the child got {} items before SIGKILL; its handler was cancelled {cancelled_after:?} after the kill",
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

/// A TCP relay between a client and the server that can be cut: both of its sockets close
/// at once, as when a network path goes away.
struct Relay {
    addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(upstream: std::net::SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let (mut down, _) = listener.accept().await.unwrap();
            let mut up = tokio::net::TcpStream::connect(upstream).await.unwrap();
            let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
        });
        Relay { addr, task }
    }

    fn cut(self) {
        self.task.abort();
    }
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
        let relay = Relay::start(addr).await;
        let first = Client::connect_tcp(relay.addr).await.unwrap();
        let lab = Running::lab(&first);
        let mut stream = lab.samples(&settings(ITEMS, ""), CallOptions::new()).await.unwrap();
        let mut seen = Vec::with_capacity(ITEMS as usize);
        while seen.len() < BREAK_AT as usize {
            let (item, cursor) = stream.message_with_cursor().await.unwrap().unwrap();
            assert_eq!(cursor, Some(u64::from(item.seq)));
            seen.push(item.seq);
        }
        // The connection goes away under the client.
        relay.cut();
        drop(lab);
        drop(first);
        // What was already on its way still arrives, then the stream reports the break.
        let error = loop {
            match stream.message_with_cursor().await {
                Ok(Some((item, _))) => seen.push(item.seq),
                Ok(None) => panic!("the broken stream ended cleanly after {} items", seen.len()),
                Err(e) => break e,
            }
        };
        let in_flight = seen.len() - BREAK_AT as usize;
        assert_eq!(error.code(), bebop_rpc::StatusCode::Unavailable, "{error}");
        assert_eq!(stream.cursor(), u64::from(*seen.last().unwrap()));
        // The server notices and cancels the broken call's handler (unless it had already
        // sent everything).
        if seen.len() < ITEMS as usize {
            eventually("the broken call's handler stopped", || {
                probe.dropped.load(Ordering::SeqCst) == 1 || probe.sent.load(Ordering::SeqCst) == ITEMS as usize
            })
            .await;
        }
        let second = running.client().await;
        let mut resumed = stream.resume(&second).await.unwrap();
        while let Some((item, cursor)) = resumed.message_with_cursor().await.unwrap() {
            assert_eq!(cursor, Some(u64::from(item.seq)));
            seen.push(item.seq);
        }
        println!(
            "{in_flight} items arrived after the break at {BREAK_AT}; resumed from cursor {}",
            BREAK_AT as usize + in_flight
        );
        assert_eq!(seen.len(), ITEMS as usize, "every item exactly once");
        assert!(seen.iter().copied().eq(1..=ITEMS), "in order, none missing or repeated");
        let distinct: HashSet<u32> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), ITEMS as usize);
        running.stop().await;
    });
}
