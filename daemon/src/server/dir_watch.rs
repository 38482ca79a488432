//! Notices the runtime dir being removed or replaced under the daemon (logout cleanup) without
//! waking an idle daemon: on Linux an inotify watch on the dir itself reports it (an event, never a
//! timer); elsewhere, or if inotify cannot be had, the dir is checked every `--dir-check`.

use std::time::Duration;

use crate::runtime_dir::RuntimeDir;

/// Completes once the runtime dir is gone or replaced. With `fallback_every` zero and no
/// inotify, never.
pub(super) async fn dir_gone(rt: &RuntimeDir, fallback_every: Duration) {
    #[cfg(target_os = "linux")]
    match inotify_watch::DirWatch::new(rt) {
        Ok(watch) => return watch.until_gone(rt).await,
        Err(e) => tracing::warn!(
            "cannot watch the runtime dir with inotify ({e}); checking it every {fallback_every:?}"
        ),
    }
    poll(rt, fallback_every).await
}

async fn poll(rt: &RuntimeDir, every: Duration) {
    if every.is_zero() {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(every).await;
        if !rt.still_present() {
            return;
        }
    }
}

#[cfg(target_os = "linux")]
mod inotify_watch {
    use std::io;

    use inotify::{Inotify, WatchMask};
    use tokio::io::unix::AsyncFd;

    use crate::runtime_dir::RuntimeDir;

    /// Two inotify watches: the runtime dir itself (the working directory, which the daemon
    /// has made the verified dir) for being moved, and its parent for the dir's name being
    /// deleted or moved away. The parent is needed because a directory that is still some
    /// process's working directory (ours) gets no `IN_DELETE_SELF` when it is removed: the
    /// kernel sends that only when the last reference goes. Events on the parent's other
    /// entries wake us too (only on file-system activity there, never on a timer); every event
    /// is confirmed with [`RuntimeDir::still_present`].
    pub(super) struct DirWatch(AsyncFd<Inotify>);

    impl DirWatch {
        pub(super) fn new(rt: &RuntimeDir) -> io::Result<DirWatch> {
            let inotify = Inotify::init()?;
            inotify.watches().add(".", WatchMask::DELETE_SELF | WatchMask::MOVE_SELF)?;
            if let Some(parent) = rt.path().parent() {
                inotify
                    .watches()
                    .add(parent, WatchMask::DELETE | WatchMask::MOVED_FROM | WatchMask::ONLYDIR)?;
            }
            // SAFETY: `Inotify` owns its descriptor for its whole life and `as_raw_fd` always
            // returns that same descriptor, which is what `register` requires.
            #[allow(unsafe_code)]
            let fd = unsafe { AsyncFd::register(inotify) }.map_err(io::Error::from)?;
            Ok(DirWatch(fd))
        }

        /// Sleeps until an event arrives, then confirms with [`RuntimeDir::still_present`].
        pub(super) async fn until_gone(mut self, rt: &RuntimeDir) {
            let mut buf = [0u8; 4096];
            loop {
                let Ok(mut ready) = self.0.readable_mut().await else {
                    return std::future::pending().await;
                };
                match ready.get_inner_mut().read_events(&mut buf) {
                    Ok(events) => {
                        // What matters is the dir's state, not which events came.
                        events.for_each(drop);
                        if !rt.still_present() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => ready.clear_ready(),
                    Err(e) => {
                        tracing::warn!("runtime dir watch failed ({e}); no longer watching");
                        return std::future::pending().await;
                    }
                }
            }
        }
    }
}
