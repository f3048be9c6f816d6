//! [`MemoryStore`]: futures in the memory of one process.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use bebop_runtime::Uuid;
use bebop_runtime::rpc::StatusCode;
use tokio::sync::broadcast;

use super::{
    BoxFuture, BoxStream, Cancellation, Counts, Event, EventStream, FETCH_BUDGET, FETCH_CHUNK,
    FutureId, FutureRecord, FutureState, FutureStore, Insertion, MAX_PAGE, Metadata, NewFuture,
    Outcome, Page, RESTARTED_DETAIL, Retention, StoreConfig, StoreError, broadcast_stream,
};

/// A [`FutureStore`] in memory: one process, nothing survives its end. The default store of
/// a server.
///
/// Every operation takes one short lock, so all are atomic. [`handle`](Self::handle) makes
/// another store on the same futures and events with other settings (another runner name,
/// say), as two server processes sharing a database would have.
///
/// ```
/// use bebop_rpc::futures::{FutureStore, MemoryStore, StoreConfig};
///
/// let store = MemoryStore::with_config(StoreConfig { max_pending: 100, ..StoreConfig::new("node-1") });
/// assert_eq!(store.config().runner, "node-1");
/// let other = store.handle(StoreConfig::new("node-2")); // same futures
/// # drop(other);
/// ```
#[derive(Clone)]
pub struct MemoryStore {
    shared: Arc<Shared>,
    config: StoreConfig,
}

struct Shared {
    state: Mutex<State>,
    events: broadcast::Sender<Event>,
}

#[derive(Default)]
struct State {
    futures: HashMap<FutureId, FutureRecord>,
    /// The idempotency keys held (futures not cancelled).
    keys: HashMap<Uuid, FutureId>,
    pending: usize,
    /// Completed futures by completion time: eviction.
    completed: BTreeSet<(SystemTime, FutureId)>,
    /// Each owner's deliverable futures: pages.
    deliverable: HashMap<String, BTreeSet<FutureId>>,
}

impl State {
    /// Records a pending future's completion (the caller checked it is pending).
    fn finish(&mut self, id: FutureId, state: FutureState) -> Option<String> {
        let record = self.futures.get_mut(&id)?;
        let now = SystemTime::now();
        let cancelled = matches!(state, FutureState::Cancelled);
        record.state = state;
        record.completed_at = Some(now);
        let owner = record.owner.clone();
        let key = record.idempotency_key;
        self.pending = self.pending.saturating_sub(1);
        self.completed.insert((now, id));
        self.deliverable
            .entry(owner.clone())
            .or_default()
            .insert(id);
        if cancelled {
            if let Some(key) = key {
                if self.keys.get(&key) == Some(&id) {
                    self.keys.remove(&key);
                }
            }
        }
        Some(owner)
    }

    fn remove(&mut self, id: FutureId) -> bool {
        let Some(record) = self.futures.remove(&id) else {
            return false;
        };
        if let Some(key) = record.idempotency_key {
            if self.keys.get(&key) == Some(&id) {
                self.keys.remove(&key);
            }
        }
        match record.completed_at {
            None => self.pending = self.pending.saturating_sub(1),
            Some(at) => {
                self.completed.remove(&(at, id));
            }
        }
        self.undeliver(&record.owner, id);
        true
    }

    fn undeliver(&mut self, owner: &str, id: FutureId) {
        if let Some(set) = self.deliverable.get_mut(owner) {
            set.remove(&id);
            if set.is_empty() {
                self.deliverable.remove(owner);
            }
        }
    }
}

/// The bytes of a result, as [`Outcome::size`] counts them.
fn result_bytes(state: &FutureState) -> usize {
    match state {
        FutureState::Succeeded { payload, metadata } => {
            payload.len()
                + if metadata.is_empty() {
                    0
                } else {
                    metadata.wire_size()
                }
        }
        FutureState::Failed {
            detail, metadata, ..
        } => {
            detail.len()
                + if metadata.is_empty() {
                    0
                } else {
                    metadata.wire_size()
                }
        }
        FutureState::Pending | FutureState::Cancelled | FutureState::Discarded => 0,
    }
}

impl MemoryStore {
    /// An empty store with the default settings.
    pub fn new() -> Self {
        Self::with_config(StoreConfig::default())
    }

    /// An empty store.
    pub fn with_config(config: StoreConfig) -> Self {
        let (events, _) = broadcast::channel(config.event_capacity.max(1));
        MemoryStore {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                events,
            }),
            config,
        }
    }

    /// Another store on the same futures and events, with other settings (the event
    /// capacity stays that of the first).
    pub fn handle(&self, config: StoreConfig) -> MemoryStore {
        MemoryStore {
            shared: self.shared.clone(),
            config,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent data: every change is made
        // in one step after its checks.
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn publish(&self, event: Event) {
        // No subscriber is not an error.
        let _ = self.shared.events.send(event);
    }

    fn insert_now(&self, new: NewFuture) -> Result<Insertion, StoreError> {
        self.config.check_owner(&new.owner)?;
        let mut st = self.lock();
        if let Some(key) = new.idempotency_key {
            if let Some(&id) = st.keys.get(&key) {
                let same = st.futures.get(&id).is_some_and(|r| r.owner == new.owner);
                return Ok(if same {
                    Insertion::Existing(id)
                } else {
                    Insertion::KeyOfAnotherOwner
                });
            }
        }
        if st.pending >= self.config.max_pending {
            return Ok(Insertion::Full {
                limit: self.config.max_pending,
            });
        }
        let mut id = FutureId::random()?;
        while st.futures.contains_key(&id) {
            id = FutureId::random()?;
        }
        if let Some(key) = new.idempotency_key {
            st.keys.insert(key, id);
        }
        st.pending += 1;
        st.futures.insert(
            id,
            FutureRecord {
                id,
                owner: new.owner,
                idempotency_key: new.idempotency_key,
                method_id: new.method_id,
                state: FutureState::Pending,
                discard_result: new.discard_result,
                runner: self.config.runner.clone(),
                created_at: SystemTime::now(),
                completed_at: None,
            },
        );
        Ok(Insertion::Inserted(id))
    }

    fn complete_now(&self, id: FutureId, outcome: Outcome) -> Result<bool, StoreError> {
        self.config.check_outcome(&outcome)?;
        let owner = {
            let mut st = self.lock();
            if !st.futures.get(&id).is_some_and(|r| r.state.is_pending()) {
                return Ok(false);
            }
            st.finish(id, outcome.into_state())
        };
        match owner {
            Some(owner) => {
                self.publish(Event::Completed { id, owner });
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn cancel_now(&self, owner: &str, id: FutureId) -> Cancellation {
        let runner = {
            let mut st = self.lock();
            let Some(record) = st.futures.get(&id) else {
                return Cancellation::NotFound;
            };
            if record.owner != owner {
                return Cancellation::NotOwner;
            }
            if !record.state.is_pending() {
                return Cancellation::AlreadyCompleted;
            }
            let runner = record.runner.clone();
            st.finish(id, FutureState::Cancelled);
            runner
        };
        self.publish(Event::Completed {
            id,
            owner: owner.to_owned(),
        });
        self.publish(Event::CancelRequested {
            id,
            runner: runner.clone(),
        });
        Cancellation::Cancelled { runner }
    }

    fn discard_now(&self, id: FutureId) -> bool {
        let mut st = self.lock();
        let Some(record) = st.futures.get_mut(&id) else {
            return false;
        };
        if !matches!(
            record.state,
            FutureState::Succeeded { .. } | FutureState::Failed { .. }
        ) {
            return false;
        }
        record.state = FutureState::Discarded;
        let owner = record.owner.clone();
        st.undeliver(&owner, id);
        true
    }

    fn evict_now(&self, retention: Retention) -> u64 {
        let mut st = self.lock();
        let mut evicted = 0u64;
        if let Some(cutoff) = SystemTime::now().checked_sub(retention.max_age) {
            while let Some(&(at, id)) = st.completed.first() {
                if at >= cutoff {
                    break;
                }
                st.remove(id);
                evicted += 1;
            }
        }
        if let Some(max) = retention.max_completed {
            while st.completed.len() as u64 > max {
                let Some(&(_, id)) = st.completed.first() else {
                    break;
                };
                st.remove(id);
                evicted += 1;
            }
        }
        evicted
    }

    fn page_now(&self, owner: &str, after: Option<FutureId>, limit: usize) -> Page {
        let limit = limit.clamp(1, MAX_PAGE);
        let st = self.lock();
        let Some(set) = st.deliverable.get(owner) else {
            return Page::default();
        };
        let start = after.unwrap_or(FutureId::NIL);
        let ids = set.range((std::ops::Bound::Excluded(start), std::ops::Bound::Unbounded));
        let mut records = Vec::new();
        // As the SQL stores do: records while those before hold less than the budget.
        let mut bytes = 0usize;
        let mut ids = ids.peekable();
        while records.len() < limit && bytes < FETCH_BUDGET {
            let Some(id) = ids.next() else { break };
            if let Some(r) = st.futures.get(id) {
                bytes += result_bytes(&r.state);
                records.push(r.clone());
            }
        }
        let next = match (ids.peek(), records.last()) {
            (Some(_), Some(last)) => Some(last.id),
            _ => None,
        };
        Page { records, next }
    }

    fn fail_runner_now(&self, runner: &str) -> u64 {
        let events: Vec<Event> = {
            let mut st = self.lock();
            let ids: Vec<FutureId> = st
                .futures
                .values()
                .filter(|r| r.runner == runner && r.state.is_pending())
                .map(|r| r.id)
                .collect();
            ids.into_iter()
                .filter_map(|id| {
                    st.finish(
                        id,
                        FutureState::Failed {
                            code: StatusCode::Unavailable,
                            detail: RESTARTED_DETAIL.to_owned(),
                            metadata: Metadata::new(),
                        },
                    )
                    .map(|owner| Event::Completed { id, owner })
                })
                .collect()
        };
        let n = events.len() as u64;
        for event in events {
            self.publish(event);
        }
        n
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.lock();
        f.debug_struct("MemoryStore")
            .field("runner", &self.config.runner)
            .field("futures", &st.futures.len())
            .field("pending", &st.pending)
            .finish_non_exhaustive()
    }
}

impl FutureStore for MemoryStore {
    fn config(&self) -> &StoreConfig {
        &self.config
    }

    fn insert(&self, future: NewFuture) -> BoxFuture<'_, Result<Insertion, StoreError>> {
        let r = self.insert_now(future);
        Box::pin(std::future::ready(r))
    }

    fn complete(&self, id: FutureId, outcome: Outcome) -> BoxFuture<'_, Result<bool, StoreError>> {
        let r = self.complete_now(id, outcome);
        Box::pin(std::future::ready(r))
    }

    fn get(&self, id: FutureId) -> BoxFuture<'_, Result<Option<FutureRecord>, StoreError>> {
        let r = self.lock().futures.get(&id).cloned();
        Box::pin(std::future::ready(Ok(r)))
    }

    fn fetch_completed<'a>(
        &'a self,
        owner: &'a str,
        ids: &'a [FutureId],
    ) -> BoxStream<'a, Result<FutureRecord, StoreError>> {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        // One record at a time: the stream holds one clone, however many ids.
        Box::pin(futures_util::stream::unfold(
            (sorted, 0usize),
            move |(sorted, mut at)| async move {
                while at < sorted.len() {
                    let id = sorted[at];
                    at += 1;
                    if at % FETCH_CHUNK == 0 {
                        // Let other tasks run during a long list.
                        tokio::task::yield_now().await;
                    }
                    let found = {
                        let st = self.lock();
                        st.futures
                            .get(&id)
                            .filter(|r| r.owner == owner && r.state.is_deliverable())
                            .cloned()
                    };
                    if let Some(record) = found {
                        return Some((Ok(record), (sorted, at)));
                    }
                }
                None
            },
        ))
    }

    fn completed_page<'a>(
        &'a self,
        owner: &'a str,
        after: Option<FutureId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Page, StoreError>> {
        let r = self.page_now(owner, after, limit);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: FutureId,
    ) -> BoxFuture<'a, Result<Cancellation, StoreError>> {
        let r = self.cancel_now(owner, id);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn discard(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        let r = self.discard_now(id);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn delete(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        let r = self.lock().remove(id);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn evict(&self, retention: Retention) -> BoxFuture<'_, Result<u64, StoreError>> {
        let r = self.evict_now(retention);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, StoreError>> {
        let st = self.lock();
        let counts = Counts {
            pending: st.pending as u64,
            completed: st.completed.len() as u64,
        };
        Box::pin(std::future::ready(Ok(counts)))
    }

    fn fail_runner<'a>(&'a self, runner: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        let r = self.fail_runner_now(runner);
        Box::pin(std::future::ready(Ok(r)))
    }

    fn subscribe(&self) -> EventStream {
        broadcast_stream(self.shared.events.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::super::conformance::{self, StoreFactory};
    use super::*;

    /// Named memory stores: opening a name twice gives two handles on one store.
    #[derive(Default)]
    struct Memory {
        stores: Mutex<HashMap<String, MemoryStore>>,
        next: std::sync::atomic::AtomicUsize,
    }

    impl StoreFactory for Memory {
        fn create(&self) -> BoxFuture<'_, Result<String, StoreError>> {
            let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::pin(std::future::ready(Ok(format!("store-{n}"))))
        }

        fn open<'a>(
            &'a self,
            name: &'a str,
            config: StoreConfig,
        ) -> BoxFuture<'a, Result<Arc<dyn FutureStore>, StoreError>> {
            let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
            let store = match stores.get(name) {
                Some(first) => first.handle(config),
                None => {
                    let store = MemoryStore::with_config(config);
                    stores.insert(name.to_owned(), store.clone());
                    store
                }
            };
            Box::pin(std::future::ready(Ok(
                Arc::new(store) as Arc<dyn FutureStore>
            )))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn memory_store_passes_the_conformance_suite() {
        let report = conformance::run_all(&Memory::default()).await;
        println!("{report}");
        assert!(report.passed(), "{report}");
    }
}
