//! A broadcast queue that holds only what waits: every receiver gets every value sent after
//! it subscribed, in order; a receiver that falls more than the bound behind loses the oldest
//! values and is told how many ([`RecvError::Lagged`]), as with `tokio::sync::broadcast`.
//!
//! Tokio's broadcast channel allocates its slots at the bound when it is created, and the
//! daemon keeps two for its whole life (endpoint events, audit followers; 1024 slots each,
//! about 100 KiB together) for bursts that rarely come. Here a value is kept only until every
//! receiver that was subscribed when it was sent has taken it (or the bound pushed it out), a
//! value sent with no receiver is not kept at all, and the storage is given back once empty.
//!
//! Senders may be on any thread (the audit writer's is not a runtime thread); receivers wait
//! with `async` [`Receiver::recv`], which is cancel-safe (a value is taken only when returned).

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// Storage kept for an empty queue at most, in values: a steady trickle does not allocate per
/// value, a burst is given back.
const KEEP_EMPTY: usize = 16;

/// Why [`Receiver::recv`] returned no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvError {
    /// This many values were pushed out by the bound before this receiver took them; the next
    /// `recv` returns the oldest value still held.
    Lagged(u64),
    /// Every sender is gone and this receiver has taken everything.
    Closed,
}

/// The sending side; clones send into the same queue.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// One subscription: the values sent since it was made.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The sequence number of the next value this receiver takes.
    next: u64,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Woken on every send and when the last sender goes.
    sent: Notify,
    bound: usize,
}

struct State<T> {
    /// The values not yet taken by every receiver they were sent to; `values[i]` has the
    /// sequence number `head + i`.
    values: VecDeque<Held<T>>,
    head: u64,
    receivers: usize,
    senders: usize,
}

struct Held<T> {
    value: T,
    /// Receivers subscribed when it was sent that have not taken it.
    unread: usize,
}

impl<T> State<T> {
    /// The sequence number the next value sent gets.
    fn tail(&self) -> u64 {
        self.head + self.values.len() as u64
    }

    /// Drops the values every receiver has taken (always a prefix: a receiver counted for a
    /// value is counted for every later one, and takes them in order).
    fn release_taken(&mut self) {
        while self.values.front().is_some_and(|v| v.unread == 0) {
            self.values.pop_front();
            self.head += 1;
        }
        if self.values.is_empty() && self.values.capacity() > KEEP_EMPTY {
            self.values = VecDeque::new();
        }
    }
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Every change under the lock leaves the state consistent before anything can panic.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Sender<T> {
    /// An empty queue where a receiver may fall `bound` values behind (at least 1).
    pub fn new(bound: usize) -> Self {
        let state = State { values: VecDeque::new(), head: 0, receivers: 0, senders: 1 };
        let shared =
            Arc::new(Shared { state: Mutex::new(state), sent: Notify::new(), bound: bound.max(1) });
        Sender { shared }
    }

    /// A receiver of every value sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        subscribe(&self.shared)
    }

    /// Receivers subscribed now.
    pub fn receiver_count(&self) -> usize {
        self.shared.lock().receivers
    }

    /// Sends `value` to every receiver subscribed now; with none, it is dropped. When the
    /// bound is reached the oldest value goes, and the receivers that had not taken it lag.
    pub fn send(&self, value: T) {
        let mut state = self.shared.lock();
        if state.receivers == 0 {
            return;
        }
        if state.values.len() >= self.shared.bound {
            state.values.pop_front();
            state.head += 1;
        }
        let unread = state.receivers;
        state.values.push_back(Held { value, unread });
        drop(state);
        self.shared.sent.notify_waiters();
    }
}

impl<T: Clone> Receiver<T> {
    /// The next value, waiting for it; see [`RecvError`].
    pub async fn recv(&mut self) -> Result<T, RecvError> {
        let Receiver { shared, next } = self;
        loop {
            // Registered before looking, so a send between the look and the wait wakes us.
            let mut sent = std::pin::pin!(shared.sent.notified());
            sent.as_mut().enable();
            if let Some(result) = take(shared, next) {
                return result;
            }
            sent.await;
        }
    }
}

/// The value numbered `*next` if there is one, moving `next` on (or the reason there is none
/// and never will be); `None`: wait for a send.
fn take<T: Clone>(shared: &Shared<T>, next: &mut u64) -> Option<Result<T, RecvError>> {
    let mut state = shared.lock();
    if *next < state.head {
        let missed = state.head - *next;
        *next = state.head;
        return Some(Err(RecvError::Lagged(missed)));
    }
    // At most the number of values held: `next` never passes the tail.
    let i = (*next - state.head) as usize;
    let Some(held) = state.values.get_mut(i) else {
        return (state.senders == 0).then_some(Err(RecvError::Closed));
    };
    held.unread -= 1;
    let value = held.value.clone();
    *next += 1;
    state.release_taken();
    Some(Ok(value))
}

impl<T> Receiver<T> {
    /// A receiver of every value sent from now on (not the ones this one has yet to take).
    pub fn resubscribe(&self) -> Self {
        subscribe(&self.shared)
    }
}

fn subscribe<T>(shared: &Arc<Shared<T>>) -> Receiver<T> {
    let mut state = shared.lock();
    state.receivers += 1;
    Receiver { shared: Arc::clone(shared), next: state.tail() }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Sender { shared: Arc::clone(&self.shared) }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.senders -= 1;
        let last = state.senders == 0;
        drop(state);
        if last {
            self.shared.sent.notify_waiters();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.receivers -= 1;
        let from = self.next.saturating_sub(state.head) as usize;
        for held in state.values.iter_mut().skip(from) {
            held.unread -= 1;
        }
        state.release_taken();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("Sender")
            .field("bound", &self.shared.bound)
            .field("held", &state.values.len())
            .field("receivers", &state.receivers)
            .finish()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").field("next", &self.next).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn held<T>(tx: &Sender<T>) -> (usize, usize) {
        let state = tx.shared.lock();
        (state.values.len(), state.values.capacity())
    }

    #[tokio::test]
    async fn every_receiver_gets_every_value_sent_after_it_subscribed() {
        let tx = Sender::new(8);
        tx.send(0); // nobody subscribed: not kept
        assert_eq!(held(&tx), (0, 0));
        let mut a = tx.subscribe();
        tx.send(1);
        let mut b = tx.subscribe();
        tx.send(2);
        assert_eq!(a.recv().await, Ok(1));
        assert_eq!(a.recv().await, Ok(2));
        assert_eq!(b.recv().await, Ok(2));
        assert_eq!(tx.receiver_count(), 2);
    }

    #[tokio::test]
    async fn values_are_held_only_until_every_receiver_took_them() {
        let tx = Sender::new(1024);
        let mut fast = tx.subscribe();
        let mut slow = tx.subscribe();
        for i in 0..1000 {
            tx.send(i);
            assert_eq!(fast.recv().await, Ok(i));
        }
        assert_eq!(held(&tx).0, 1000, "the slow receiver has taken none");
        for i in 0..1000 {
            assert_eq!(slow.recv().await, Ok(i));
        }
        assert_eq!(held(&tx), (0, 0), "empty again, and the burst's storage given back");
        tx.send(7);
        drop(slow);
        assert_eq!(held(&tx).0, 1, "the fast receiver has not taken it yet");
        drop(fast);
        assert_eq!(held(&tx).0, 0, "a receiver that goes releases what it had not taken");
    }

    #[tokio::test]
    async fn a_receiver_beyond_the_bound_is_told_exactly_how_many_it_missed() {
        let tx = Sender::new(4);
        let mut rx = tx.subscribe();
        for i in 0..10 {
            tx.send(i);
        }
        assert_eq!(held(&tx).0, 4, "never more than the bound");
        assert_eq!(rx.recv().await, Err(RecvError::Lagged(6)));
        for i in 6..10 {
            assert_eq!(rx.recv().await, Ok(i));
        }
        // A fresh subscription starts at the end, whatever the old one had left.
        tx.send(10);
        let mut again = rx.resubscribe();
        tx.send(11);
        assert_eq!(again.recv().await, Ok(11));
        assert_eq!(rx.recv().await, Ok(10));
    }

    #[tokio::test]
    async fn the_receiver_is_closed_after_the_last_sender_once_it_took_everything() {
        let tx = Sender::new(4);
        let second = tx.clone();
        let mut rx = tx.subscribe();
        tx.send("a");
        drop(tx);
        second.send("b");
        drop(second);
        assert_eq!(rx.recv().await, Ok("a"));
        assert_eq!(rx.recv().await, Ok("b"));
        assert_eq!(rx.recv().await, Err(RecvError::Closed));
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_by_a_send_from_another_thread() {
        let tx = Sender::new(4);
        let mut rx = tx.subscribe();
        let waiting = tokio::spawn(async move { (rx.recv().await, rx.recv().await) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sender = std::thread::spawn(move || {
            tx.send(1u8);
            drop(tx);
        });
        sender.join().unwrap();
        let got = tokio::time::timeout(Duration::from_secs(30), waiting).await.unwrap().unwrap();
        assert_eq!(got, (Ok(1), Err(RecvError::Closed)));
    }
}
