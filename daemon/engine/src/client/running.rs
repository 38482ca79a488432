//! The calls a client connection has running, polled by the connection's own task.
//!
//! A call that waits for the app is a future in a `FuturesUnordered` the connection polls
//! while it waits for anything else (the next line, a free slot, a local method), not a task
//! of its own: a client that waits for each answer costs no spawn and no cross-task wake-up,
//! and pipelined calls still run concurrently. `FuturesUnordered` polls only the calls that
//! were woken, so a connection with many calls in flight pays per wake-up, not per call; the
//! set is bounded by the connection's in-flight slots.
//!
//! Dropping the set drops the calls, as dropping a `JoinSet` aborts its tasks.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use super::observer::ClientFate;
use crate::output::Output;

/// A running call: its response is written by the call itself.
pub(crate) type Call = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The running calls of one connection.
pub(crate) struct Running {
    /// Where the calls write their responses: those of calls polled in one go are written
    /// together.
    output: Output,
    calls: FuturesUnordered<Call>,
    /// The connection's audited calls, settled after each poll ([`Running::settling`]).
    fate: Option<ClientFate>,
}

impl Running {
    pub(crate) fn new(output: Output) -> Running {
        Running { output, calls: FuturesUnordered::new(), fate: None }
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
        self.calls.push(call);
    }

    /// Polls the calls woken since the last poll; those that finish leave the set. With more
    /// than one call in flight the answers written meanwhile are held and go out in one write
    /// (answers that came from the app in one read cost one write).
    fn poll_woken(&mut self, cx: &mut Context<'_>) {
        let together = match self.calls.len() {
            0 => return,
            n => n > 1,
        };
        if together {
            self.output.hold();
        }
        while let Poll::Ready(Some(())) = self.calls.poll_next_unpin(cx) {}
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
            if self.calls.is_empty() { Poll::Ready(()) } else { Poll::Pending }
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
        assert_eq!(running.calls.len(), 2);
        for tx in senders {
            tx.send(()).unwrap();
        }
        running.finish().await;
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert!(running.calls.is_empty());
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
