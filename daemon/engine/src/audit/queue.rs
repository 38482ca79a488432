//! The queue between the calls and the audit writer thread: bounded (a full queue refuses at
//! once, it never blocks the sender) and holding only what waits. `std::sync::mpsc::sync_channel`
//! allocated and wrote all of its slots at creation, resident for the daemon's whole life while
//! an idle daemon's queue is empty.
//!
//! A send wakes the receiver only when it is asleep in [`Receiver::wait`], so the sends that
//! come while the writer is awake (its batch window) cost no system call.

use std::collections::VecDeque;
use std::sync::mpsc::TrySendError;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The sending side (one: the [`Writer`](super::writer::Writer)).
#[derive(Debug)]
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving side, on the writer thread.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when something is queued while the receiver sleeps, or the sender goes.
    queued: Condvar,
    capacity: usize,
}

#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
    /// The receiver is asleep in `wait`.
    sleeping: bool,
    sender_gone: bool,
    receiver_gone: bool,
}

/// A queue of at most `capacity` items (at least 1).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let state =
        State { items: VecDeque::new(), sleeping: false, sender_gone: false, receiver_gone: false };
    let shared = Arc::new(Shared {
        state: Mutex::new(state),
        queued: Condvar::new(),
        capacity: capacity.max(1),
    });
    (Sender { shared: Arc::clone(&shared) }, Receiver { shared })
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Every change under the lock is one push, take or assignment: nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Sender<T> {
    /// Queues `item` unless the queue is full or the receiver is gone; never blocks.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        let mut state = self.shared.lock();
        if state.receiver_gone {
            return Err(TrySendError::Disconnected(item));
        }
        if state.items.len() >= self.shared.capacity {
            return Err(TrySendError::Full(item));
        }
        state.items.push_back(item);
        let wake = std::mem::take(&mut state.sleeping);
        drop(state);
        if wake {
            self.shared.queued.notify_one();
        }
        Ok(())
    }
}

impl<T> Receiver<T> {
    /// Blocks until something is queued (true), or the sender is gone and nothing is (false).
    pub fn wait(&self) -> bool {
        let mut state = self.shared.lock();
        loop {
            if !state.items.is_empty() {
                return true;
            }
            if state.sender_gone {
                return false;
            }
            state.sleeping = true;
            state = self.shared.queued.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Everything queued now, in order; the queue keeps no storage.
    pub fn take_all(&self) -> VecDeque<T> {
        std::mem::take(&mut self.shared.lock().items)
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.shared.lock().sender_gone = true;
        self.shared.queued.notify_one();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.receiver_gone = true;
        // What was queued will never be taken: free it now.
        state.items = VecDeque::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_in_order_and_empty_when_idle() {
        let (tx, rx) = bounded(3);
        assert_eq!(rx.shared.lock().items.capacity(), 0, "nothing allocated up front");
        for i in 0..3 {
            tx.try_send(i).unwrap();
        }
        assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3))));
        assert!(rx.wait());
        assert_eq!(rx.take_all(), [0, 1, 2]);
        assert_eq!(rx.shared.lock().items.capacity(), 0, "taken with its storage");
        tx.try_send(4).unwrap();
        assert_eq!(rx.take_all(), [4]);
    }

    #[test]
    fn a_sleeping_receiver_is_woken_and_sees_the_sender_go() {
        let (tx, rx) = bounded(8);
        let writer = std::thread::spawn(move || {
            let mut got = Vec::new();
            while rx.wait() {
                got.extend(rx.take_all());
            }
            got
        });
        for i in 0..100 {
            // Full only if the receiver lags by 8: then it is told by the refusal.
            while let Err(TrySendError::Full(_)) = tx.try_send(i) {
                std::thread::yield_now();
            }
        }
        drop(tx);
        assert_eq!(writer.join().unwrap(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn sends_to_a_gone_receiver_are_refused() {
        let (tx, rx) = bounded(8);
        tx.try_send(1).unwrap();
        drop(rx);
        assert!(matches!(tx.try_send(2), Err(TrySendError::Disconnected(2))));
    }
}
