//! The calls a client connection has running, polled by the connection's own task.
//!
//! A call that waits for the app used to be a task of its own: spawning it, waking it when the
//! app answered and waking the connection's writer from it were three task hops per call on
//! top of the connection's. Here the calls are futures the connection polls while it waits for
//! anything else (the next line, a free slot, a local method), so a client that waits for each
//! answer costs no spawn and no cross-task wake-up, and pipelined calls still run concurrently.
//!
//! Only the calls that were woken are polled (each slot has its own waker, queueing its index),
//! so a connection with many calls in flight pays per wake-up, not per call. The set is bounded
//! by the connection's in-flight slots; slots and their wakers are reused.
//!
//! Dropping the set drops the calls, as dropping a `JoinSet` aborts its tasks.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use super::observer::ClientFate;
use super::output::Output;

/// A running call: its response is written by the call itself.
pub(crate) type Call = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The running calls of one connection.
pub(crate) struct Running {
    /// Where the calls write their responses: those of calls polled in one go are written
    /// together.
    output: Output,
    slots: Vec<Slot>,
    /// Indices of the empty slots.
    free: Vec<usize>,
    /// Calls in the set.
    len: usize,
    woken: Arc<Woken>,
    /// The indices being polled (kept for its capacity).
    batch: Vec<usize>,
    /// The connection's audited calls, settled after each poll ([`Running::settling`]).
    fate: Option<ClientFate>,
}

struct Slot {
    call: Option<Call>,
    waker: Waker,
    flag: Arc<SlotWaker>,
}

/// The indices of the woken calls and the task to wake for them.
#[derive(Default)]
struct Woken {
    state: Mutex<WokenState>,
}

#[derive(Default)]
struct WokenState {
    indices: Vec<usize>,
    task: Option<Waker>,
}

impl Woken {
    fn lock(&self) -> MutexGuard<'_, WokenState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One slot's waker: queues the slot's index once until it is polled.
struct SlotWaker {
    index: usize,
    queued: AtomicBool,
    woken: Arc<Woken>,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let task = {
            let mut state = self.woken.lock();
            state.indices.push(self.index);
            state.task.clone()
        };
        if let Some(task) = task {
            task.wake();
        }
    }
}

impl Running {
    pub(crate) fn new(output: Output) -> Running {
        Running {
            output,
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            woken: Arc::default(),
            batch: Vec::new(),
            fate: None,
        }
    }

    /// The same set, settling the audited calls that finished in a poll after the poll, when
    /// their answers were written or queued (`observer.rs`): auditing never waits in front of
    /// an answer.
    pub(crate) fn settling(mut self, fate: ClientFate) -> Running {
        self.fate = Some(fate);
        self
    }

    /// Adds a call; it is first polled the next time the set is polled (the caller's next
    /// `select!`).
    pub(crate) fn push(&mut self, call: Call) {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                let index = self.slots.len();
                let flag = Arc::new(SlotWaker {
                    index,
                    queued: AtomicBool::new(false),
                    woken: self.woken.clone(),
                });
                self.slots.push(Slot { call: None, waker: Waker::from(flag.clone()), flag });
                index
            }
        };
        self.slots[index].call = Some(call);
        self.len += 1;
        // Queued as if woken, without waking the task: the caller polls the set next anyway.
        // (A stale wake-up from the slot's last call may have queued it already.)
        if !self.slots[index].flag.queued.swap(true, Ordering::AcqRel) {
            self.woken.lock().indices.push(index);
        }
    }

    /// Polls the calls woken since the last poll; those that finish leave the set. Calls woken
    /// while this runs (one that yields) are polled next time: the task is woken for them.
    fn poll_woken(&mut self, cx: &mut Context<'_>) {
        {
            let mut state = self.woken.lock();
            if !state.task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                state.task = Some(cx.waker().clone());
            }
            std::mem::swap(&mut state.indices, &mut self.batch);
        }
        let together = self.batch.len() > 1;
        if together {
            self.output.hold();
        }
        for i in 0..self.batch.len() {
            let index = self.batch[i];
            let slot = &mut self.slots[index];
            // Cleared before polling, so a wake-up during the poll queues the call again.
            slot.flag.queued.store(false, Ordering::Release);
            let Some(call) = slot.call.as_mut() else { continue };
            if call.as_mut().poll(&mut Context::from_waker(&slot.waker)).is_ready() {
                slot.call = None;
                self.free.push(index);
                self.len -= 1;
            }
        }
        self.batch.clear();
        if together {
            self.output.release();
        }
        if let Some(fate) = &self.fate {
            fate.settle();
        }
    }

    /// Drives the calls forever: a branch of the connection's `select!`s that never completes.
    pub(crate) async fn run(&mut self) {
        std::future::poll_fn(|cx| {
            self.poll_woken(cx);
            Poll::<()>::Pending
        })
        .await
    }

    /// Drives the calls until none is left.
    pub(crate) async fn finish(&mut self) {
        std::future::poll_fn(|cx| {
            self.poll_woken(cx);
            if self.len == 0 { Poll::Ready(()) } else { Poll::Pending }
        })
        .await
    }

    /// Runs `fut` to completion on this task, driving the calls meanwhile (a local method, a
    /// response waiting for room: the calls do not wait for them).
    pub(crate) async fn beside<F: Future>(&mut self, fut: F) -> F::Output {
        tokio::select! {
            biased;
            out = fut => out,
            () = self.run() => unreachable!("Running::run never completes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use tokio::sync::oneshot;

    #[tokio::test]
    async fn calls_run_concurrently_and_finish_in_any_order() {
        let mut running = Running::new(Output::start(tokio::io::sink(), 1024));
        let done = Arc::new(AtomicUsize::new(0));
        let mut senders = Vec::new();
        for _ in 0..3 {
            let (tx, rx) = oneshot::channel::<()>();
            senders.push(tx);
            let done = done.clone();
            running.push(Box::pin(async move {
                let _ = rx.await;
                done.fetch_add(1, Ordering::SeqCst);
            }));
        }
        // The last one first: only it finishes.
        senders.pop().unwrap().send(()).unwrap();
        running.beside(tokio::task::yield_now()).await;
        running.beside(tokio::task::yield_now()).await;
        assert_eq!(done.load(Ordering::SeqCst), 1);
        assert_eq!(running.len, 2);
        for tx in senders {
            tx.send(()).unwrap();
        }
        running.finish().await;
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert_eq!(running.len, 0);
        // Slots are reused.
        running.push(Box::pin(async {}));
        running.finish().await;
        assert_eq!(running.slots.len(), 3);
    }

    #[tokio::test]
    async fn a_call_woken_from_another_task_is_polled() {
        let mut running = Running::new(Output::start(tokio::io::sink(), 1024));
        let (tx, rx) = oneshot::channel::<u32>();
        let (out_tx, out_rx) = oneshot::channel::<u32>();
        running.push(Box::pin(async move {
            let v = rx.await.unwrap_or(0);
            let _ = out_tx.send(v + 1);
        }));
        let sender = tokio::spawn(async move {
            tokio::task::yield_now().await;
            tx.send(41).unwrap();
        });
        running.finish().await;
        sender.await.unwrap();
        assert_eq!(out_rx.await.unwrap(), 42);
    }

    #[tokio::test]
    async fn dropping_the_set_drops_its_calls() {
        struct Flag(Arc<AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let mut running = Running::new(Output::start(tokio::io::sink(), 1024));
        let flag = Flag(dropped.clone());
        running.push(Box::pin(async move {
            let _flag = flag;
            std::future::pending::<()>().await;
        }));
        running.beside(tokio::task::yield_now()).await;
        assert!(!dropped.load(Ordering::SeqCst));
        drop(running);
        assert!(dropped.load(Ordering::SeqCst));
    }
}
