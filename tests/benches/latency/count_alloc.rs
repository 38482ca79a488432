//! A counting global allocator for the middle processes this bench starts from its own binary
//! (the relays and the rmcp server, see `middle.rs`): allocations per call of those paths,
//! reported over a small control socket. The daemon and the apps are measured offline with
//! perf uprobes on libc instead (`tests/benches/profile.sh`): production code carries no counter.
//!
//! Counting is off in the bench's main process (its client threads would only add contention)
//! and on in a middle child from its start; the control thread's own allocations are left out.

// `GlobalAlloc` is an unsafe trait: every method forwards to `System` unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

/// Forwards to the system allocator, counting `alloc`, `alloc_zeroed` and `realloc` calls.
#[derive(Debug)]
pub struct Counting;

static ENABLED: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on the control thread, whose answers are not the middle's work.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if ENABLED.load(Ordering::Relaxed) && !QUIET.try_with(Cell::get).unwrap_or(true) {
        COUNT.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments to `System`, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Starts counting and answers every connection to `ctl` with the count so far (one line).
pub fn serve(ctl: &Path) {
    ENABLED.store(true, Ordering::Relaxed);
    let listener = UnixListener::bind(ctl).expect("bind the allocation-count socket");
    thread::spawn(move || {
        QUIET.set(true);
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = writeln!(stream, "{}", COUNT.load(Ordering::Relaxed));
        }
    });
}

/// The count a middle child reports on `ctl`.
pub fn query(ctl: &Path) -> Option<u64> {
    let mut stream = UnixStream::connect(ctl).ok()?;
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).ok()?;
    answer.trim().parse().ok()
}
