//! The conformance suite of [`FutureStore`] implementations (feature `conformance`): one list
//! of cases, [`CASES`], that every store passes (the memory, SQLite and PostgreSQL stores of
//! this project run it in their tests). A store's test gives a [`StoreFactory`] to
//! [`run_all`] and checks the [`Report`].
//!
//! The cases return their failures (nothing here panics), run on a tokio runtime with
//! timers (they spawn tasks: a multi-threaded runtime runs the concurrency cases in
//! parallel), and take a few seconds in all for the memory store.
//!
//! ```
//! use std::sync::Arc;
//! use bebop_rpc::futures::conformance::{self, StoreFactory};
//! use bebop_rpc::futures::{BoxFuture, FutureStore, MemoryStore, StoreConfig, StoreError};
//!
//! /// Every name is a new store; opening it again gives a handle on the same futures.
//! #[derive(Default)]
//! struct Memory(std::sync::Mutex<Vec<MemoryStore>>);
//!
//! impl StoreFactory for Memory {
//!     fn create(&self) -> BoxFuture<'_, Result<String, StoreError>> {
//!         let mut stores = self.0.lock().unwrap();
//!         stores.push(MemoryStore::new());
//!         let name = (stores.len() - 1).to_string();
//!         Box::pin(async move { Ok(name) })
//!     }
//!     fn open<'a>(&'a self, name: &'a str, config: StoreConfig)
//!         -> BoxFuture<'a, Result<Arc<dyn FutureStore>, StoreError>> {
//!         let stores = self.0.lock().unwrap();
//!         let store = stores[name.parse::<usize>().unwrap()].handle(config);
//!         Box::pin(async move { Ok(Arc::new(store) as Arc<dyn FutureStore>) })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let report = conformance::run(&Memory::default(), |name| name.starts_with("idempotent")).await;
//! assert!(report.passed(), "{report}");
//! # }
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bebop_runtime::Uuid;
use bebop_runtime::rpc::StatusCode;
use futures_util::StreamExt;

use super::{
    BoxFuture, Cancellation, Event, EventStream, FutureId, FutureState, FutureStore, Insertion,
    Metadata, NewFuture, Outcome, RESTARTED_DETAIL, Retention, StoreConfig, StoreError,
};

/// What the suite runs against: named storage locations (a database, a file, a table) and
/// stores opened on them.
pub trait StoreFactory: Send + Sync {
    /// A new, empty storage location; returns its name.
    fn create(&self) -> BoxFuture<'_, Result<String, StoreError>>;

    /// A store on location `name` (from [`create`](Self::create)) with `config`. Opened
    /// more than once, it gives several stores on the same futures, as several server
    /// processes sharing a database have, or as one server has after a restart (the earlier
    /// store dropped first); their events reach each other's subscribers.
    fn open<'a>(
        &'a self,
        name: &'a str,
        config: StoreConfig,
    ) -> BoxFuture<'a, Result<Arc<dyn FutureStore>, StoreError>>;
}

/// One case of the suite.
pub struct Case {
    /// Its name.
    pub name: &'static str,
    /// Runs it: `Err` describes the first check that failed.
    pub run: for<'a> fn(&'a dyn StoreFactory) -> BoxFuture<'a, Result<(), String>>,
}

/// What [`run`] found.
#[derive(Debug, Default)]
pub struct Report {
    /// Each case run: its name, how long it took and its failure.
    pub cases: Vec<(&'static str, Duration, Result<(), String>)>,
}

impl Report {
    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|(_, _, r)| r.is_ok())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = self.cases.iter().filter(|(_, _, r)| r.is_err()).count();
        for (name, took, result) in &self.cases {
            match result {
                Ok(()) => writeln!(f, "  ok    {name} ({took:.2?})")?,
                Err(e) => writeln!(f, "  FAIL  {name} ({took:.2?}): {e}")?,
            }
        }
        write!(
            f,
            "conformance: {} passed, {failed} failed",
            self.cases.len() - failed
        )
    }
}

/// Runs every case of [`CASES`], one after the other.
pub async fn run_all(factory: &dyn StoreFactory) -> Report {
    run(factory, |_| true).await
}

/// Runs the cases whose name `filter` accepts, one after the other.
pub async fn run(factory: &dyn StoreFactory, filter: impl Fn(&str) -> bool) -> Report {
    let mut report = Report::default();
    for case in CASES.iter().filter(|c| filter(c.name)) {
        let start = Instant::now();
        let result = (case.run)(factory).await;
        report.cases.push((case.name, start.elapsed(), result));
    }
    report
}

macro_rules! fail {
    ($($fmt:tt)+) => {
        return Err(format!("line {}: {}", line!(), format!($($fmt)+)))
    };
}

macro_rules! check {
    ($cond:expr) => {
        if !$cond {
            fail!("{}", stringify!($cond));
        }
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            fail!($($fmt)+);
        }
    };
}

macro_rules! check_eq {
    ($a:expr, $b:expr) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            fail!(
                "{} == {}: {:?} != {:?}",
                stringify!($a),
                stringify!($b),
                a,
                b
            );
        }
    }};
}

macro_rules! ok {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => fail!("{}: {}", stringify!($e), e),
        }
    };
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        /// Every case, in the order [`run`] runs them.
        pub const CASES: &[Case] = &[
            $(Case {
                name: stringify!($name),
                run: |factory| Box::pin($name(factory)),
            },)*
        ];
    };
}

cases! {
    insert_and_get,
    ids_are_random_v4_and_unique,
    idempotent_retry_returns_the_same_future,
    key_of_another_owner_is_refused,
    cancel_releases_the_key,
    discard_keeps_the_key,
    delete_releases_the_key,
    complete_only_once,
    outcomes_round_trip,
    fetch_completed_is_owner_scoped,
    completed_pages_cover_an_owner,
    cancel_answers,
    events_of_completion_and_cancel,
    stores_on_one_location_see_each_others_events,
    eviction_by_age_and_count,
    pending_limit,
    results_beyond_the_limit_are_refused,
    owners_beyond_the_limit_are_refused,
    unknown_and_malformed_ids,
    restart_fails_the_runners_pending_futures,
    same_key_concurrently_gives_one_future,
    completion_events_arrive_once_under_load,
    large_results_take_several_queries,
    a_million_ids_fetch_in_bounded_time,
}

/// How long the suite waits for an event that should come.
const EVENT_WAIT: Duration = Duration::from_secs(10);

fn config(runner: &str) -> StoreConfig {
    StoreConfig::new(runner)
}

async fn fresh(
    factory: &dyn StoreFactory,
    config: StoreConfig,
) -> Result<(String, Arc<dyn FutureStore>), String> {
    let name = ok!(factory.create().await);
    let store = ok!(factory.open(&name, config).await);
    Ok((name, store))
}

async fn inserted(store: &dyn FutureStore, new: NewFuture) -> Result<FutureId, String> {
    match ok!(store.insert(new).await) {
        Insertion::Inserted(id) => Ok(id),
        other => fail!("expected Inserted, got {other:?}"),
    }
}

async fn state(store: &dyn FutureStore, id: FutureId) -> Result<FutureState, String> {
    match ok!(store.get(id).await) {
        Some(r) => Ok(r.state),
        None => fail!("{id} is not in the store"),
    }
}

async fn fetch(
    store: &dyn FutureStore,
    owner: &str,
    ids: &[FutureId],
) -> Result<Vec<FutureId>, String> {
    let mut out = Vec::new();
    let mut stream = store.fetch_completed(owner, ids);
    while let Some(r) = stream.next().await {
        let record = ok!(r);
        check_eq!(record.owner, owner);
        out.push(record.id);
    }
    Ok(out)
}

/// The next event, skipping those `skip` accepts.
async fn next_event(
    events: &mut EventStream,
    skip: impl Fn(&Event) -> bool,
) -> Result<Event, String> {
    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => fail!("no event within {EVENT_WAIT:?}"),
            Ok(None) => fail!("the event stream ended"),
            Ok(Some(e)) if skip(&e) => continue,
            Ok(Some(e)) => return Ok(e),
        }
    }
}

/// Checks that no event comes within a short while.
async fn no_event(events: &mut EventStream) -> Result<(), String> {
    match tokio::time::timeout(Duration::from_millis(150), events.next()).await {
        Err(_) => Ok(()),
        Ok(e) => fail!("unexpected event {e:?}"),
    }
}

fn key(n: u128) -> Uuid {
    Uuid::from_u128(0x0000_0000_0000_4000_8000_0000_0000_0000 | n)
}

async fn insert_and_get(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("runner-a")).await?;
    let before = std::time::SystemTime::now() - Duration::from_secs(5);
    let id = inserted(
        &*store,
        NewFuture::new("alice", 0xdead_beef)
            .with_key(key(1))
            .with_discard_result(true),
    )
    .await?;
    let plain = inserted(&*store, NewFuture::new("bob", 1)).await?;
    check!(id != plain);
    let r = ok!(store.get(id).await).ok_or("missing")?;
    check_eq!(r.id, id);
    check_eq!(r.owner, "alice");
    check_eq!(r.idempotency_key, Some(key(1)));
    check_eq!(r.method_id, 0xdead_beef);
    check_eq!(r.state, FutureState::Pending);
    check!(r.discard_result);
    check_eq!(r.runner, "runner-a");
    check!(r.created_at > before, "created_at {:?}", r.created_at);
    check_eq!(r.completed_at, None);
    let r = ok!(store.get(plain).await).ok_or("missing")?;
    check_eq!(r.idempotency_key, None);
    check!(!r.discard_result);
    check_eq!(r.method_id, 1);
    check_eq!(store.config().runner, "runner-a");
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (2, 0));
    Ok(())
}

async fn ids_are_random_v4_and_unique(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let id = inserted(&*store, NewFuture::new("o", 1)).await?;
        check_eq!(id.as_bytes()[6] >> 4, 4);
        check_eq!(id.as_bytes()[8] >> 6, 2);
        check!(seen.insert(id), "id {id} twice");
    }
    Ok(())
}

async fn idempotent_retry_returns_the_same_future(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let k = key(2);
    let id = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    // Pending: the same future.
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(id)
    );
    // Even for another method: the key names the dispatch.
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 8).with_key(k)).await),
        Insertion::Existing(id)
    );
    check!(ok!(store.complete(id, Outcome::success(vec![1])).await));
    // Completed: still the same future.
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(id)
    );
    // A failed one too.
    let k2 = key(3);
    let failed = inserted(&*store, NewFuture::new("alice", 7).with_key(k2)).await?;
    let failure = Outcome::failure(crate::Status::internal("boom"));
    check!(ok!(store.complete(failed, failure).await));
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k2)).await),
        Insertion::Existing(failed)
    );
    // Without a key, every dispatch is new.
    let a = inserted(&*store, NewFuture::new("alice", 7)).await?;
    let b = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check!(a != b);
    check_eq!(ok!(store.counts().await).pending, 2);
    Ok(())
}

async fn key_of_another_owner_is_refused(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let k = key(4);
    let id = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check_eq!(
        ok!(store.insert(NewFuture::new("bob", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    check!(ok!(store.complete(id, Outcome::success(vec![])).await));
    check_eq!(
        ok!(store.insert(NewFuture::new("bob", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    // Nothing of bob's was inserted, and alice's future is untouched.
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (0, 1));
    check_eq!(
        ok!(store.get(id).await).map(|r| r.owner),
        Some("alice".into())
    );
    // An owner differing only in case is another owner.
    check_eq!(
        ok!(store.insert(NewFuture::new("Alice", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    Ok(())
}

async fn cancel_releases_the_key(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let k = key(5);
    let first = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check!(matches!(
        ok!(store.cancel("alice", first).await),
        Cancellation::Cancelled { .. }
    ));
    // A retry creates a new future.
    let second = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check!(first != second);
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(second)
    );
    check_eq!(state(&*store, first).await?, FutureState::Cancelled);
    // Released for everyone: once the second is cancelled too, bob may use the key.
    check!(matches!(
        ok!(store.cancel("alice", second).await),
        Cancellation::Cancelled { .. }
    ));
    let bobs = inserted(&*store, NewFuture::new("bob", 7).with_key(k)).await?;
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    // A future its runner completed as cancelled releases the key as well.
    check!(ok!(store.complete(bobs, Outcome::Cancelled).await));
    let alices = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check!(alices != bobs);
    Ok(())
}

async fn discard_keeps_the_key(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let k = key(6);
    let id = inserted(
        &*store,
        NewFuture::new("alice", 7)
            .with_key(k)
            .with_discard_result(true),
    )
    .await?;
    check!(
        !ok!(store.discard(id).await),
        "a pending future has no result"
    );
    check!(ok!(store
        .complete(id, Outcome::success(vec![9; 100]))
        .await));
    check_eq!(fetch(&*store, "alice", &[id]).await?, vec![id]);
    check!(ok!(store.discard(id).await));
    check!(!ok!(store.discard(id).await), "discarded twice");
    check_eq!(state(&*store, id).await?, FutureState::Discarded);
    check_eq!(
        ok!(store.get(id).await).and_then(|r| r.to_future_result()),
        None
    );
    // Nothing to replay...
    check_eq!(fetch(&*store, "alice", &[id]).await?, vec![]);
    let page = ok!(store.completed_page("alice", None, 10).await);
    check!(page.records.is_empty(), "{:?}", page.records);
    // ...but a retried dispatch is still deduplicated.
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(id)
    );
    check_eq!(
        ok!(store.insert(NewFuture::new("bob", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    // A failure can be discarded; a cancelled future has nothing to discard.
    let failed = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check!(ok!(store
        .complete(failed, Outcome::failure(crate::Status::internal("x")))
        .await));
    check!(ok!(store.discard(failed).await));
    let cancelled = inserted(&*store, NewFuture::new("alice", 7)).await?;
    ok!(store.cancel("alice", cancelled).await);
    check!(!ok!(store.discard(cancelled).await));
    check_eq!(state(&*store, cancelled).await?, FutureState::Cancelled);
    check_eq!(ok!(store.counts().await).completed, 3);
    Ok(())
}

async fn delete_releases_the_key(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let k = key(7);
    let id = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check!(ok!(store.complete(id, Outcome::success(vec![])).await));
    check!(ok!(store.delete(id).await));
    check!(!ok!(store.delete(id).await));
    check_eq!(ok!(store.get(id).await), None);
    let again = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    check!(again != id);
    // A pending future can be deleted too (the count follows).
    check!(ok!(store.delete(again).await));
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (0, 0));
    check!(!ok!(store.complete(again, Outcome::success(vec![])).await));
    Ok(())
}

async fn complete_only_once(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check!(ok!(store
        .complete(id, Outcome::success(b"first".to_vec()))
        .await));
    check!(!ok!(store
        .complete(id, Outcome::success(b"second".to_vec()))
        .await));
    check!(!ok!(store.complete(id, Outcome::Cancelled).await));
    check_eq!(
        state(&*store, id).await?,
        FutureState::Succeeded {
            payload: b"first".to_vec(),
            metadata: Metadata::new()
        }
    );
    // Cancelled first: a late result is ignored.
    let c = inserted(&*store, NewFuture::new("alice", 7)).await?;
    ok!(store.cancel("alice", c).await);
    check!(!ok!(store.complete(c, Outcome::success(vec![1])).await));
    check_eq!(state(&*store, c).await?, FutureState::Cancelled);
    // Racing completions: exactly one wins.
    for _ in 0..5 {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        let attempts = (0..8u8).map(|n| store.complete(id, Outcome::success(vec![n])));
        let results = futures_util::future::join_all(attempts).await;
        let mut wins = 0;
        for r in results {
            if ok!(r) {
                wins += 1;
            }
        }
        check_eq!(wins, 1);
    }
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (0, 7));
    Ok(())
}

async fn outcomes_round_trip(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let md: Metadata = [("x-trace", "abc"), ("ключ", "значение"), ("empty", "")]
        .into_iter()
        .collect();
    let outcomes = [
        Outcome::Succeeded {
            payload: (0..=255u8).collect(),
            metadata: md.clone(),
        },
        Outcome::success(vec![]),
        Outcome::Failed {
            code: StatusCode::Unrecognized(200),
            detail: "quota ✓".into(),
            metadata: md.clone(),
        },
        Outcome::failure(crate::Status::deadline_exceeded("")),
        Outcome::Cancelled,
        Outcome::success(vec![0x5a; 1 << 20]),
    ];
    for outcome in outcomes {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store.complete(id, outcome.clone()).await));
        let r = ok!(store.get(id).await).ok_or("missing")?;
        check!(
            r.state == outcome.clone().into_state(),
            "{id}: {:?}",
            r.state
        );
        let completed = r.completed_at.ok_or("no completed_at")?;
        check!(
            completed >= r.created_at,
            "{completed:?} < {:?}",
            r.created_at
        );
        check!(r.to_future_result().is_some());
    }
    Ok(())
}

async fn fetch_completed_is_owner_scoped(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let mut alices = Vec::new();
    let mut all = Vec::new();
    for n in 0..3u8 {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        let outcome = match n {
            0 => Outcome::success(vec![n]),
            1 => Outcome::failure(crate::Status::not_found("x")),
            _ => Outcome::Cancelled,
        };
        check!(ok!(store.complete(id, outcome).await));
        alices.push(id);
        all.push(id);
    }
    let pending = inserted(&*store, NewFuture::new("alice", 7)).await?;
    all.push(pending);
    for _ in 0..2 {
        let id = inserted(&*store, NewFuture::new("bob", 7)).await?;
        check!(ok!(store.complete(id, Outcome::success(vec![])).await));
        all.push(id);
    }
    all.push(ok!(FutureId::random()));
    all.push(FutureId::NIL);
    // Twice each, in reverse order.
    let mut asked: Vec<FutureId> = all.iter().rev().copied().collect();
    asked.extend(all.iter().copied());
    alices.sort();
    check_eq!(fetch(&*store, "alice", &asked).await?, alices);
    check_eq!(fetch(&*store, "alice", &[]).await?, vec![]);
    check_eq!(fetch(&*store, "carol", &asked).await?, vec![]);
    check_eq!(fetch(&*store, "bob", &alices).await?, vec![]);
    check_eq!(fetch(&*store, "bob", &asked).await?.len(), 2);
    Ok(())
}

async fn completed_pages_cover_an_owner(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let mut alices = Vec::new();
    for n in 0..25u8 {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store.complete(id, Outcome::success(vec![n])).await));
        alices.push(id);
    }
    for _ in 0..3 {
        inserted(&*store, NewFuture::new("alice", 7)).await?;
    }
    for _ in 0..5 {
        let id = inserted(&*store, NewFuture::new("bob", 7)).await?;
        check!(ok!(store.complete(id, Outcome::success(vec![])).await));
    }
    alices.sort();
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = ok!(store.completed_page("alice", after, 10).await);
        pages += 1;
        check!(page.records.len() <= 10);
        check!(pages <= 4, "too many pages");
        for r in &page.records {
            check_eq!(r.owner, "alice");
            check!(r.state.is_deliverable());
        }
        seen.extend(page.records.iter().map(|r| r.id));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    check_eq!(seen, alices);
    // A limit of 0 is taken as 1; a huge one is capped.
    let one = ok!(store.completed_page("alice", None, 0).await);
    check_eq!(one.records.len(), 1);
    let capped = ok!(store.completed_page("alice", None, usize::MAX).await);
    check_eq!(capped.records.len(), 25);
    check_eq!(capped.next, None);
    let none = ok!(store.completed_page("carol", None, 10).await);
    check!(none.records.is_empty() && none.next.is_none());
    Ok(())
}

async fn cancel_answers(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("runner-a")).await?;
    check_eq!(
        ok!(store.cancel("alice", ok!(FutureId::random())).await),
        Cancellation::NotFound
    );
    let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check_eq!(ok!(store.cancel("bob", id).await), Cancellation::NotOwner);
    check_eq!(state(&*store, id).await?, FutureState::Pending);
    check_eq!(
        ok!(store.cancel("alice", id).await),
        Cancellation::Cancelled {
            runner: "runner-a".into()
        }
    );
    check_eq!(
        ok!(store.cancel("alice", id).await),
        Cancellation::AlreadyCompleted
    );
    check_eq!(ok!(store.cancel("bob", id).await), Cancellation::NotOwner);
    let r = ok!(store.get(id).await).ok_or("missing")?;
    check_eq!(r.state, FutureState::Cancelled);
    check!(r.completed_at.is_some());
    let done = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check!(ok!(store.complete(done, Outcome::success(vec![])).await));
    check_eq!(
        ok!(store.cancel("alice", done).await),
        Cancellation::AlreadyCompleted
    );
    check!(matches!(
        state(&*store, done).await?,
        FutureState::Succeeded { .. }
    ));
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (0, 2));
    Ok(())
}

async fn events_of_completion_and_cancel(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("runner-a")).await?;
    let mut events = store.subscribe();
    let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
    check!(ok!(store.complete(id, Outcome::success(vec![])).await));
    check_eq!(
        next_event(&mut events, |_| false).await?,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
    // No event for what changes nothing.
    check!(!ok!(store.complete(id, Outcome::success(vec![])).await));
    ok!(store.cancel("alice", id).await);
    no_event(&mut events).await?;
    // A cancellation: completed, and the runner told.
    let c = inserted(&*store, NewFuture::new("bob", 7)).await?;
    ok!(store.cancel("bob", c).await);
    let mut got = vec![
        next_event(&mut events, |_| false).await?,
        next_event(&mut events, |_| false).await?,
    ];
    got.sort_by_key(|e| matches!(e, Event::CancelRequested { .. }));
    check_eq!(
        got,
        vec![
            Event::Completed {
                id: c,
                owner: "bob".into()
            },
            Event::CancelRequested {
                id: c,
                runner: "runner-a".into()
            }
        ]
    );
    // Every subscriber gets every event.
    let mut second = store.subscribe();
    let d = inserted(&*store, NewFuture::new("carol", 7)).await?;
    check!(ok!(store.complete(d, Outcome::Cancelled).await));
    let expected = Event::Completed {
        id: d,
        owner: "carol".into(),
    };
    check_eq!(next_event(&mut events, |_| false).await?, expected);
    check_eq!(next_event(&mut second, |_| false).await?, expected);
    Ok(())
}

async fn stores_on_one_location_see_each_others_events(f: &dyn StoreFactory) -> Result<(), String> {
    let (name, a) = fresh(f, config("runner-a")).await?;
    let b = ok!(f.open(&name, config("runner-b")).await);
    let mut a_events = a.subscribe();
    let mut b_events = b.subscribe();
    // Inserted and completed on A: B sees the completion and the result.
    let id = inserted(&*a, NewFuture::new("alice", 7)).await?;
    check!(ok!(a
        .complete(id, Outcome::success(b"from a".to_vec()))
        .await));
    check_eq!(
        next_event(&mut b_events, |_| false).await?,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
    check_eq!(
        ok!(b.get(id).await).and_then(|r| r.result().and_then(|r| r.ok().map(|(p, _)| p.to_vec()))),
        Some(b"from a".to_vec())
    );
    check_eq!(
        next_event(&mut a_events, |_| false).await?,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
    // Inserted on A (A runs it), cancelled through B: A is told to stop it.
    let running = inserted(&*a, NewFuture::new("alice", 7)).await?;
    check_eq!(
        ok!(b.cancel("alice", running).await),
        Cancellation::Cancelled {
            runner: "runner-a".into()
        }
    );
    check_eq!(
        next_event(&mut a_events, |e| matches!(e, Event::Completed { .. })).await?,
        Event::CancelRequested {
            id: running,
            runner: "runner-a".into()
        }
    );
    check!(!ok!(a.complete(running, Outcome::success(vec![])).await));
    // Idempotency holds across the stores.
    let k = key(8);
    let first = inserted(&*a, NewFuture::new("alice", 7).with_key(k)).await?;
    check_eq!(
        ok!(b.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(first)
    );
    check_eq!(
        ok!(b.insert(NewFuture::new("bob", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    check_eq!(
        ok!(b.get(first).await).map(|r| r.runner),
        Some("runner-a".into())
    );
    Ok(())
}

async fn eviction_by_age_and_count(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let pending = inserted(&*store, NewFuture::new("alice", 7)).await?;
    let mut old = Vec::new();
    for _ in 0..3 {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store.complete(id, Outcome::success(vec![1; 10])).await));
        old.push(id);
    }
    let hour = Retention {
        max_age: Duration::from_secs(3600),
        max_completed: None,
    };
    check_eq!(ok!(store.evict(hour).await), 0);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut fresh_ids = Vec::new();
    for _ in 0..2 {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store
            .complete(id, Outcome::failure(crate::Status::internal("x")))
            .await));
        fresh_ids.push(id);
    }
    let by_age = Retention {
        max_age: Duration::from_millis(400),
        max_completed: None,
    };
    check_eq!(ok!(store.evict(by_age).await), 3);
    for id in &old {
        check_eq!(ok!(store.get(*id).await), None);
    }
    for id in &fresh_ids {
        check!(ok!(store.get(*id).await).is_some());
    }
    check_eq!(state(&*store, pending).await?, FutureState::Pending);
    // By count: the newest stay.
    let mut newer = Vec::new();
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let id = inserted(&*store, NewFuture::new("bob", 7)).await?;
        check!(ok!(store.complete(id, Outcome::Cancelled).await));
        newer.push(id);
    }
    let by_count = Retention {
        max_age: Duration::from_secs(3600),
        max_completed: Some(3),
    };
    check_eq!(ok!(store.evict(by_count).await), 4);
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (1, 3));
    for id in fresh_ids.iter().chain(&newer[..2]) {
        check_eq!(ok!(store.get(*id).await), None);
    }
    for id in &newer[2..] {
        check!(ok!(store.get(*id).await).is_some());
    }
    // Everything completed, at once; the pending one stays.
    let all = Retention {
        max_age: Duration::ZERO,
        max_completed: Some(0),
    };
    check_eq!(ok!(store.evict(all).await), 3);
    let counts = ok!(store.counts().await);
    check_eq!((counts.pending, counts.completed), (1, 0));
    check_eq!(state(&*store, pending).await?, FutureState::Pending);
    Ok(())
}

async fn pending_limit(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(
        f,
        StoreConfig {
            max_pending: 3,
            ..config("r")
        },
    )
    .await?;
    let k = key(9);
    let keyed = inserted(&*store, NewFuture::new("alice", 7).with_key(k)).await?;
    let a = inserted(&*store, NewFuture::new("alice", 7)).await?;
    let b = inserted(&*store, NewFuture::new("bob", 7)).await?;
    check_eq!(
        ok!(store.insert(NewFuture::new("carol", 7)).await),
        Insertion::Full { limit: 3 }
    );
    // A retry of an existing dispatch is still answered.
    check_eq!(
        ok!(store.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(keyed)
    );
    check_eq!(
        ok!(store.insert(NewFuture::new("bob", 7).with_key(k)).await),
        Insertion::KeyOfAnotherOwner
    );
    check_eq!(
        ok!(store
            .insert(NewFuture::new("alice", 7).with_key(key(10)))
            .await),
        Insertion::Full { limit: 3 }
    );
    check!(ok!(store.complete(a, Outcome::success(vec![])).await));
    let c = inserted(&*store, NewFuture::new("carol", 7)).await?;
    check_eq!(
        ok!(store.insert(NewFuture::new("carol", 7)).await),
        Insertion::Full { limit: 3 }
    );
    ok!(store.cancel("bob", b).await);
    inserted(&*store, NewFuture::new("carol", 7)).await?;
    check!(ok!(store.delete(c).await));
    inserted(&*store, NewFuture::new("carol", 7)).await?;
    check_eq!(ok!(store.counts().await).pending, 3);
    Ok(())
}

async fn results_beyond_the_limit_are_refused(f: &dyn StoreFactory) -> Result<(), String> {
    let limit = 64 << 10;
    let (_, store) = fresh(
        f,
        StoreConfig {
            max_result_bytes: limit,
            ..config("r")
        },
    )
    .await?;
    let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
    let too_big = Outcome::success(vec![7; limit + 1]);
    match store.complete(id, too_big).await {
        Err(StoreError::TooLarge { size, limit: l }) => {
            check_eq!((size, l), (limit + 1, limit));
        }
        other => fail!("expected TooLarge, got {other:?}"),
    }
    check_eq!(state(&*store, id).await?, FutureState::Pending);
    // Metadata and detail count.
    let md: Metadata = [("k", "v".repeat(limit))].into_iter().collect();
    let with_md = Outcome::Succeeded {
        payload: vec![],
        metadata: md,
    };
    check!(matches!(
        store.complete(id, with_md).await,
        Err(StoreError::TooLarge { .. })
    ));
    let detail = Outcome::failure(crate::Status::internal("x".repeat(limit + 1)));
    check!(matches!(
        store.complete(id, detail).await,
        Err(StoreError::TooLarge { .. })
    ));
    check_eq!(state(&*store, id).await?, FutureState::Pending);
    // Exactly the limit is fine, and comes back whole.
    let payload: Vec<u8> = (0..limit).map(|i| (i % 251) as u8).collect();
    check!(ok!(store
        .complete(id, Outcome::success(payload.clone()))
        .await));
    check_eq!(
        state(&*store, id).await?,
        FutureState::Succeeded {
            payload,
            metadata: Metadata::new()
        }
    );
    // The failure a server records instead fits.
    let other = inserted(&*store, NewFuture::new("alice", 7)).await?;
    let err = StoreError::TooLarge {
        size: limit + 1,
        limit,
    };
    check!(ok!(store
        .complete(other, Outcome::failure(err.to_status()))
        .await));
    Ok(())
}

async fn owners_beyond_the_limit_are_refused(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(
        f,
        StoreConfig {
            max_owner_bytes: 64,
            ..config("r")
        },
    )
    .await?;
    match store.insert(NewFuture::new("o".repeat(65), 7)).await {
        Err(StoreError::InvalidArgument(_)) => {}
        other => fail!("expected InvalidArgument, got {other:?}"),
    }
    check_eq!(ok!(store.counts().await).pending, 0);
    let exact = inserted(&*store, NewFuture::new("o".repeat(64), 7)).await?;
    check_eq!(ok!(store.get(exact).await).map(|r| r.owner.len()), Some(64));
    // Any text: spaces, quotes, non-ASCII, what an identity hook or an address gives.
    let odd = "tcp:[::1]:5000 'O\"Brien' ünïcødé";
    let id = inserted(&*store, NewFuture::new(odd, 7)).await?;
    check!(ok!(store.complete(id, Outcome::success(vec![])).await));
    check_eq!(fetch(&*store, odd, &[id]).await?, vec![id]);
    let empty = inserted(&*store, NewFuture::new("", 7)).await?;
    check_eq!(
        ok!(store.get(empty).await).map(|r| r.owner),
        Some(String::new())
    );
    Ok(())
}

async fn unknown_and_malformed_ids(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    for len in [0usize, 1, 15, 17, 36] {
        check!(matches!(
            FutureId::from_slice(&vec![0x41; len]),
            Err(StoreError::InvalidArgument(_))
        ));
    }
    check!(
        "550e8400-e29b-41d4-a716-44665544000"
            .parse::<FutureId>()
            .is_err()
    );
    let unknown = ok!(FutureId::random());
    // Ids no store made: all bits set, NIL, version 1.
    let odd = [
        unknown,
        FutureId::NIL,
        FutureId::from_array([0xff; 16]),
        FutureId::from_uuid(Uuid::from_u128(0x6ba7b810_9dad_11d1_80b4_00c04fd430c8)),
    ];
    for id in odd {
        check_eq!(ok!(store.get(id).await), None);
        check!(!ok!(store.complete(id, Outcome::success(vec![])).await));
        check_eq!(ok!(store.cancel("alice", id).await), Cancellation::NotFound);
        check!(!ok!(store.discard(id).await));
        check!(!ok!(store.delete(id).await));
    }
    check_eq!(fetch(&*store, "alice", &odd).await?, vec![]);
    let page = ok!(store
        .completed_page("alice", Some(FutureId::from_array([0xff; 16])), 10)
        .await);
    check!(page.records.is_empty());
    Ok(())
}

async fn restart_fails_the_runners_pending_futures(f: &dyn StoreFactory) -> Result<(), String> {
    let (name, first) = fresh(f, config("node-1")).await?;
    let other = ok!(f.open(&name, config("node-2")).await);
    let k = key(11);
    let p1 = inserted(&*first, NewFuture::new("alice", 7).with_key(k)).await?;
    let p2 = inserted(&*first, NewFuture::new("bob", 7)).await?;
    let done = inserted(&*first, NewFuture::new("alice", 7)).await?;
    check!(ok!(first
        .complete(done, Outcome::success(b"kept".to_vec()))
        .await));
    let elsewhere = inserted(&*other, NewFuture::new("alice", 7)).await?;
    drop(first);
    // The same server again.
    let again = ok!(f.open(&name, config("node-1")).await);
    let mut events = again.subscribe();
    check_eq!(ok!(again.fail_runner("node-1").await), 2);
    for id in [p1, p2] {
        check_eq!(
            state(&*again, id).await?,
            FutureState::Failed {
                code: StatusCode::Unavailable,
                detail: RESTARTED_DETAIL.into(),
                metadata: Metadata::new()
            }
        );
    }
    let mut completed = HashSet::new();
    for _ in 0..2 {
        match next_event(&mut events, |_| false).await? {
            Event::Completed { id, .. } => {
                completed.insert(id);
            }
            other => fail!("unexpected {other:?}"),
        }
    }
    check_eq!(completed, HashSet::from([p1, p2]));
    check!(matches!(
        state(&*again, done).await?,
        FutureState::Succeeded { .. }
    ));
    check_eq!(state(&*again, elsewhere).await?, FutureState::Pending);
    check_eq!(ok!(again.fail_runner("node-1").await), 0);
    // The failed future still holds its key (it completed; it was not cancelled).
    check_eq!(
        ok!(again.insert(NewFuture::new("alice", 7).with_key(k)).await),
        Insertion::Existing(p1)
    );
    // Its result is there for a resolve stream of the restarted server.
    check_eq!(
        fetch(&*again, "alice", &[p1, done, elsewhere]).await?.len(),
        2
    );
    let counts = ok!(again.counts().await);
    check_eq!((counts.pending, counts.completed), (1, 3));
    Ok(())
}

async fn same_key_concurrently_gives_one_future(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    for round in 0..3u128 {
        let k = key(100 + round);
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(
                    async move { store.insert(NewFuture::new("alice", 7).with_key(k)).await },
                )
            })
            .collect();
        let mut inserted_ids = Vec::new();
        let mut ids = HashSet::new();
        for t in tasks {
            match ok!(ok!(t.await)) {
                Insertion::Inserted(id) => {
                    inserted_ids.push(id);
                    ids.insert(id);
                }
                Insertion::Existing(id) => {
                    ids.insert(id);
                }
                other => fail!("unexpected {other:?}"),
            }
        }
        check_eq!(inserted_ids.len(), 1);
        check_eq!(ids.len(), 1);
    }
    check_eq!(ok!(store.counts().await).pending, 3);
    // Two owners racing for one key: one owns it, the other is refused.
    let k = key(200);
    let tasks: Vec<_> = (0..20)
        .map(|n| {
            let store = store.clone();
            let owner = if n % 2 == 0 { "alice" } else { "bob" };
            tokio::spawn(async move { store.insert(NewFuture::new(owner, 7).with_key(k)).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(ok!(ok!(t.await)));
    }
    let inserted_count = outcomes
        .iter()
        .filter(|o| matches!(o, Insertion::Inserted(_)))
        .count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Insertion::KeyOfAnotherOwner))
        .count();
    check_eq!(inserted_count, 1);
    check_eq!(refused, 10);
    Ok(())
}

async fn completion_events_arrive_once_under_load(f: &dyn StoreFactory) -> Result<(), String> {
    const TASKS: usize = 100;
    const EACH: usize = 100;
    let (_, store) = fresh(
        f,
        StoreConfig {
            event_capacity: 2 * TASKS * EACH,
            ..config("r")
        },
    )
    .await?;
    let mut events = store.subscribe();
    let collector = tokio::spawn(async move {
        let mut seen: HashMap<FutureId, usize> = HashMap::new();
        let mut lagged = 0usize;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while seen.len() < TASKS * EACH {
            match tokio::time::timeout_at(deadline, events.next()).await {
                Ok(Some(Event::Completed { id, .. })) => *seen.entry(id).or_default() += 1,
                Ok(Some(Event::Lagged)) => lagged += 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        // Late duplicates would show up now.
        while let Ok(Some(e)) =
            tokio::time::timeout(Duration::from_millis(200), events.next()).await
        {
            if let Event::Completed { id, .. } = e {
                *seen.entry(id).or_default() += 1;
            }
        }
        (seen, lagged)
    });
    let workers: Vec<_> = (0..TASKS)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                let owner = format!("owner-{}", t % 7);
                let mut ids = Vec::with_capacity(EACH);
                for n in 0..EACH {
                    let id = match store.insert(NewFuture::new(owner.clone(), 7)).await? {
                        Insertion::Inserted(id) => id,
                        other => {
                            return Err(StoreError::Unavailable(format!("insert: {other:?}")));
                        }
                    };
                    if !store.complete(id, Outcome::success(vec![n as u8])).await? {
                        return Err(StoreError::Unavailable(format!("{id} did not complete")));
                    }
                    ids.push(id);
                }
                Ok::<_, StoreError>(ids)
            })
        })
        .collect();
    let mut all = HashSet::new();
    for w in workers {
        for id in ok!(ok!(w.await)) {
            all.insert(id);
        }
    }
    check_eq!(all.len(), TASKS * EACH);
    let (seen, lagged) = ok!(collector.await);
    check_eq!(lagged, 0);
    check_eq!(seen.len(), TASKS * EACH);
    let twice = seen.values().filter(|&&n| n != 1).count();
    check_eq!(twice, 0);
    check!(seen.keys().all(|id| all.contains(id)));
    let counts = ok!(store.counts().await);
    check_eq!(
        (counts.pending, counts.completed),
        (0, (TASKS * EACH) as u64)
    );
    Ok(())
}

async fn large_results_take_several_queries(f: &dyn StoreFactory) -> Result<(), String> {
    // Twice FETCH_BUDGET in all: a SQL store reads them in several queries.
    let size = 1 << 20;
    let (_, store) = fresh(f, config("r")).await?;
    let mut ids = Vec::new();
    for n in 0..(2 * super::FETCH_BUDGET / size + 2) {
        let id = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store
            .complete(id, Outcome::success(vec![n as u8; size]))
            .await));
        ids.push(id);
        // Small ones in between.
        let small = inserted(&*store, NewFuture::new("alice", 7)).await?;
        check!(ok!(store.complete(small, Outcome::success(vec![1])).await));
        ids.push(small);
    }
    ids.sort();
    let mut stream = store.fetch_completed("alice", &ids);
    let mut got = Vec::new();
    while let Some(r) = stream.next().await {
        let r = ok!(r);
        match &r.state {
            FutureState::Succeeded { payload, .. } => {
                check!(payload.len() == size || payload.len() == 1)
            }
            other => fail!("{other:?}"),
        }
        got.push(r.id);
    }
    drop(stream);
    check_eq!(got, ids);
    // Pages too: a page holds about the budget at most (one larger result more).
    let mut paged = Vec::new();
    let mut after = None;
    let mut pages = 0;
    for _ in 0..ids.len() + 1 {
        let page = ok!(store.completed_page("alice", after, 1000).await);
        pages += 1;
        let bytes: usize = page
            .records
            .iter()
            .map(|r| match &r.state {
                FutureState::Succeeded { payload, .. } => payload.len(),
                _ => 0,
            })
            .sum();
        check!(
            bytes <= super::FETCH_BUDGET + size,
            "a page of {bytes} bytes"
        );
        paged.extend(page.records.iter().map(|r| r.id));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    check_eq!(paged, ids);
    check!(pages >= 2, "{pages} pages");
    Ok(())
}

async fn a_million_ids_fetch_in_bounded_time(f: &dyn StoreFactory) -> Result<(), String> {
    let (_, store) = fresh(f, config("r")).await?;
    let mut alices = Vec::new();
    let mut real = Vec::new();
    for n in 0..30 {
        let owner = if n % 3 == 0 { "bob" } else { "alice" };
        let id = inserted(&*store, NewFuture::new(owner, 7)).await?;
        if n % 5 != 4 {
            check!(ok!(store
                .complete(id, Outcome::success(vec![n as u8; 100]))
                .await));
            if owner == "alice" {
                alices.push(id);
            }
        }
        real.push(id);
    }
    let mut ids = Vec::with_capacity(1_000_005);
    // Ids no store holds (a cheap generator: a million system calls would dominate).
    let mut x = u128::from_le_bytes(*ok!(FutureId::random()).as_bytes()) | 1;
    for _ in 0..1_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ids.push(FutureId::from_uuid(Uuid::from_u128(x)));
    }
    for (n, id) in real.iter().enumerate() {
        ids[n * 33_333] = *id;
    }
    ids.extend(&real[..5]); // duplicates
    let start = Instant::now();
    let found = fetch(&*store, "alice", &ids).await?;
    let took = start.elapsed();
    alices.sort();
    check_eq!(found, alices);
    check!(took < Duration::from_secs(60), "took {took:?}");
    Ok(())
}
