//! Memory given back after large frees (after an attack round the daemon's RSS must return to
//! within 10 % of its baseline; without this it kept 131 MB of a 4.9 MB baseline). glibc's
//! allocator keeps freed heap pages for reuse, and after large blocks are freed its dynamic mmap
//! threshold rises, so the buffers of the next round come from the heap too and stay. When
//! connections have closed and the count has stayed still for [`QUIET`], this asks glibc to return
//! free pages (`malloc_trim(0)`), on a blocking thread so the event loop never waits for it.
//!
//! Only on Linux with glibc (the other allocators we ship on return memory themselves or do
//! not offer this). It wakes only after connections close, never while the daemon is idle.

use std::time::Duration;

use tokio::sync::watch;

/// How long the connection count must stay still after a drop before trimming: one trim per
/// burst of disconnects, not one per connection.
const QUIET: Duration = Duration::from_secs(1);

/// Trims after every burst of closed connections; `live` counts the daemon's connections.
pub async fn run(mut live: watch::Receiver<usize>) {
    let mut last = *live.borrow_and_update();
    loop {
        if live.changed().await.is_err() {
            return;
        }
        let now = *live.borrow_and_update();
        let dropped = now < last;
        last = now;
        if !dropped {
            continue;
        }
        // Wait for the count to stay still.
        loop {
            tokio::select! {
                changed = live.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    last = *live.borrow_and_update();
                }
                () = tokio::time::sleep(QUIET) => break,
            }
        }
        let _ = tokio::task::spawn_blocking(trim).await;
    }
}

fn trim() {
    // SAFETY: malloc_trim takes no pointers and only walks glibc's own heap under its locks;
    // it is safe to call from any thread at any time.
    #[allow(unsafe_code)]
    let released = unsafe { libc::malloc_trim(0) };
    tracing::debug!(released = released != 0, "returned free heap memory to the system");
}
