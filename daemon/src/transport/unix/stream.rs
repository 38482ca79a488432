//! An accepted Unix stream socket registered with the reactor for read readiness only, and for
//! write readiness only while a write is blocked.
//!
//! `tokio::net::UnixStream` registers every socket for READABLE | WRITABLE (edge-triggered).
//! On Linux, each time the peer reads from a Unix stream socket the kernel wakes our side's
//! waiters with `EPOLLOUT`, so every request an app reads and every answer a client reads cost
//! the daemon one `epoll_wait` return with nothing to do. The daemon writes directly
//! (`engine/sink.rs`) and needs write readiness only when a socket is full, which is rare, so
//! this type keeps write interest off until a write meets `WouldBlock`. Then it registers a
//! `dup` of the descriptor for WRITABLE alone (epoll keys a registration on the descriptor and
//! its open file, kqueue on the descriptor and the filter, so both registrations coexist and
//! keep separate wakers: a task waiting to read and one waiting to write never steal each
//! other's wake-ups), and drops that registration again as soon as a write is taken whole.
//! Registering reports a socket that is already writable at once, so no drain that happened
//! between the `WouldBlock` and the registration is missed. When that registration cannot be
//! made (the process is out of descriptors just as a write blocks, or the reactor out of
//! room), the write is retried on a timer instead, until a registration can be made or the
//! socket takes the bytes: the connection waits, as on any full socket, and never fails for it.

use std::future::Future;
use std::io::{self, IoSlice, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::time::Sleep;

/// How long a blocked write waits before it tries again when no registration for write
/// readiness could be made: short against a client's patience, long enough that a process
/// at its descriptor limit spends nothing noticeable on it.
const RETRY_UNREGISTERED: Duration = Duration::from_millis(50);

/// Whether the reactor's selector is edge-triggered here (epoll, kqueue), so that a read
/// shorter than the buffer proves the socket drained and a short write proves it full; the
/// readiness can then be cleared without a syscall that returns `EAGAIN` (tokio's streams do
/// the same on the same platforms). A level-triggered selector would report it again anyway.
const EDGE_TRIGGERED: bool = cfg!(any(
    target_os = "android",
    target_os = "linux",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "ios",
    target_os = "macos",
    target_os = "netbsd",
    target_os = "openbsd",
));

/// An accepted, identity-checked connection (see the module docs for its readiness).
#[derive(Debug)]
pub struct Stream {
    /// The socket, registered for READABLE only (hang-ups and errors are always reported).
    io: AsyncFd<UnixStream>,
    /// How a blocked write waits for room. `None` while writes go through, so an idle or
    /// flowing connection has no write interest.
    blocked: Option<Blocked>,
}

/// How a blocked write waits for the socket to take bytes again.
#[derive(Debug)]
enum Blocked {
    /// On a `dup` of the socket registered for WRITABLE only.
    Registered(AsyncFd<OwnedFd>),
    /// On a timer: no registration could be made (see [`RETRY_UNREGISTERED`]).
    Retrying(Pin<Box<Sleep>>),
}

impl Blocked {
    /// The wait for `socket`, whose last write met `WouldBlock`.
    fn on(socket: &AsyncFd<UnixStream>) -> Blocked {
        let twin = socket.as_fd().try_clone_to_owned();
        match twin.and_then(|twin| registered(twin, Interest::WRITABLE)) {
            Ok(registration) => Blocked::Registered(registration),
            Err(e) => {
                tracing::debug!(error = %e, "no registration for a blocked write; retrying it");
                Blocked::Retrying(Box::pin(tokio::time::sleep(RETRY_UNREGISTERED)))
            }
        }
    }
}

impl Stream {
    /// Registers `socket`, which must already be in non-blocking mode, for read readiness.
    pub(super) fn new(socket: UnixStream) -> io::Result<Stream> {
        Ok(Stream { io: registered(socket, Interest::READABLE)?, blocked: None })
    }

    /// One non-blocking write, without waiting or registering anything (a last word on a
    /// connection that is closed right after).
    pub fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        self.io.get_ref().write(bytes)
    }

    /// One non-blocking `recv` into the unfilled part of `buf`; `Ok(n)` has filled `n` bytes.
    #[allow(unsafe_code)]
    fn recv(&self, buf: &mut ReadBuf<'_>) -> io::Result<usize> {
        // SAFETY: only written through (by recv, below), never de-initialised.
        let spare = unsafe { buf.unfilled_mut() };
        // SAFETY: `spare` is valid for writes of `spare.len()` bytes for this call; recv
        // writes at most that many and reads none of them.
        let n =
            unsafe { libc::recv(self.io.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len(), 0) };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        // SAFETY: recv returned `n`, so it initialised the first `n` bytes of `spare`.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Ok(n)
    }

    /// Writes with `write` (one syscall), waiting for write readiness only after `WouldBlock`;
    /// `len` is what `write` was given in all.
    fn poll_write_with(
        &mut self,
        cx: &mut Context<'_>,
        len: usize,
        write: impl Fn(&UnixStream) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            let registration = match &mut self.blocked {
                None => match write(self.io.get_ref()) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.blocked = Some(Blocked::on(&self.io));
                        continue;
                    }
                    done => return Poll::Ready(done),
                },
                Some(Blocked::Retrying(timer)) => {
                    ready!(timer.as_mut().poll(cx));
                    // Tried again as a first write: a registration comes first if still full.
                    self.blocked = None;
                    continue;
                }
                Some(Blocked::Registered(registration)) => registration,
            };
            let mut guard = ready!(registration.poll_write_ready(cx))?;
            match write(self.io.get_ref()) {
                Ok(n) if n == len => {
                    // Taken whole: the socket has room again, so the write interest goes.
                    self.blocked = None;
                    return Poll::Ready(Ok(n));
                }
                Ok(n) => {
                    if EDGE_TRIGGERED && n > 0 {
                        guard.clear_ready();
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => guard.clear_ready(),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// Registers `owner`'s descriptor with the reactor for `interest`.
#[allow(unsafe_code)]
fn registered<T: AsRawFd + Into<OwnedFd>>(owner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
    // SAFETY: `T` owns its descriptor (it converts into an `OwnedFd`): it stays open, the same
    // descriptor of the same file, until the `AsyncFd` that now owns `owner` drops it.
    unsafe { AsyncFd::register_with_interest(owner, interest) }.map_err(|e| e.into_parts().1)
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut guard = ready!(this.io.poll_read_ready(cx))?;
            let wanted = buf.remaining();
            match this.recv(buf) {
                Ok(n) => {
                    // A short read drained the socket: clearing now (only if no newer event
                    // came meanwhile, which the guard's tick checks) saves the next read's
                    // `EAGAIN`. 0 is EOF and stays ready, so every later read sees it too.
                    if EDGE_TRIGGERED && 0 < n && n < wanted {
                        guard.clear_ready();
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => guard.clear_ready(),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_with(cx, bytes.len(), |mut s| s.write(bytes))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.get_mut().poll_write_with(cx, len, |mut s| s.write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.io.get_ref().shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Far more than a Unix socket pair buffers, so writing it blocks until the peer reads.
    const MORE_THAN_BUFFERED: usize = 8 << 20;
    /// Generous: the machine running the tests may be busy.
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Ours over one end of a fresh socket pair, and tokio's stream over the other.
    fn pair() -> (Stream, tokio::net::UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        theirs.set_nonblocking(true).unwrap();
        (Stream::new(ours).unwrap(), tokio::net::UnixStream::from_std(theirs).unwrap())
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Polls one write with a waker that does nothing, as `engine/sink.rs` `write_now` does.
    fn write_now(stream: &mut Stream, bytes: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(stream).poll_write(&mut Context::from_waker(Waker::noop()), bytes)
    }

    /// Fills the socket with `write_now` until it takes nothing more; returns what it took.
    fn fill(stream: &mut Stream) -> usize {
        let chunk = [7u8; 64 << 10];
        let mut taken = 0;
        while let Poll::Ready(n) = write_now(stream, &chunk) {
            taken += n.unwrap();
        }
        taken
    }

    async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(PATIENCE, fut).await.unwrap_or_else(|_| panic!("{what} hung"))
    }

    #[tokio::test]
    async fn bytes_go_both_ways_and_a_flowing_connection_has_no_write_interest() {
        let (mut ours, mut theirs) = pair();
        for round in 0..100u8 {
            ours.write_all(&[round; 300]).await.unwrap();
            let mut got = [0; 300];
            within("the peer's read", theirs.read_exact(&mut got)).await.unwrap();
            assert_eq!(got, [round; 300]);
            theirs.write_all(&[round; 50]).await.unwrap();
            let mut back = [0; 50];
            within("our read", ours.read_exact(&mut back)).await.unwrap();
            assert_eq!(back, [round; 50]);
        }
        assert!(ours.blocked.is_none(), "write interest registered while writes go through");
        let sent = [IoSlice::new(b"one "), IoSlice::new(b"line\n")];
        assert_eq!(ours.write_vectored(&sent).await.unwrap(), 9);
        let mut got = [0; 9];
        within("the vectored bytes", theirs.read_exact(&mut got)).await.unwrap();
        assert_eq!(&got, b"one line\n");
    }

    #[tokio::test]
    async fn a_write_blocked_on_a_full_socket_completes_once_the_peer_drains_it() {
        let (mut ours, mut theirs) = pair();
        let buffered = fill(&mut ours);
        assert!(buffered > 0);
        assert!(ours.blocked.is_some(), "a blocked write waits on write readiness");
        let data = pattern(MORE_THAN_BUFFERED);
        let expected = data.clone();
        let writer = tokio::spawn(async move {
            ours.write_all(&data).await.unwrap();
            ours
        });
        let mut got = vec![0; buffered + expected.len()];
        within("draining", theirs.read_exact(&mut got)).await.unwrap();
        assert!(got[..buffered].iter().all(|&b| b == 7));
        assert!(got[buffered..] == expected[..], "the bytes arrive whole and in order");
        let ours = within("the blocked write", writer).await.unwrap();
        assert!(ours.blocked.is_none(), "write interest dropped once writes go through");
    }

    /// Set in the child process that runs the descriptor-limit test's body.
    const OUT_OF_DESCRIPTORS_CHILD: &str = "JFGUI_TEST_STREAM_OUT_OF_DESCRIPTORS";

    /// The body runs in a child process of this test binary: using up every descriptor here
    /// would break the tests running beside it.
    #[test]
    fn a_write_that_blocks_when_no_descriptor_is_left_waits_for_room_instead_of_failing() {
        if std::env::var_os(OUT_OF_DESCRIPTORS_CHILD).is_some() {
            return out_of_descriptors();
        }
        let name =
            "a_write_that_blocks_when_no_descriptor_is_left_waits_for_room_instead_of_failing";
        let module = module_path!().split_once("::").expect("a crate path").1;
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([&format!("{module}::{name}"), "--exact", "--nocapture", "--test-threads=1"])
            .env(OUT_OF_DESCRIPTORS_CHILD, "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("1 passed"), "the child ran the test: {said}");
    }

    #[allow(unsafe_code)]
    fn out_of_descriptors() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (mut ours, mut theirs) = pair();
            let buffered = fill(&mut ours);
            ours.blocked = None; // as after the last write went through: the next one blocks
            let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit/setrlimit read and write valid, exclusively borrowed rlimits;
            // this process runs only this test.
            unsafe {
                assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
                let low = libc::rlimit { rlim_cur: 256.min(limit.rlim_max), ..limit };
                assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &low), 0);
            }
            let mut hoard = Vec::new();
            let exhausted = loop {
                match std::fs::File::open("/dev/null") {
                    Ok(file) => hoard.push(file),
                    Err(e) => break e,
                }
            };
            assert_eq!(exhausted.raw_os_error(), Some(libc::EMFILE));
            let data = pattern(MORE_THAN_BUFFERED);
            assert!(write_now(&mut ours, &data).is_pending(), "a blocked write waits");
            assert!(matches!(ours.blocked, Some(Blocked::Retrying(_))), "{:?}", ours.blocked);
            let expected = data.clone();
            let writer = async move {
                ours.write_all(&data).await.unwrap();
                ours
            };
            let mut got = vec![0; buffered + expected.len()];
            let (ours, read) = within("the blocked write", async {
                tokio::join!(writer, theirs.read_exact(&mut got))
            })
            .await;
            read.unwrap();
            assert!(got[buffered..] == expected[..], "the bytes arrive whole and in order");
            assert!(ours.blocked.is_none());
            drop(hoard);
        });
    }

    #[tokio::test]
    async fn a_noop_waker_write_that_blocks_leaves_the_next_writer_to_be_woken() {
        let (mut ours, mut theirs) = pair();
        let buffered = fill(&mut ours);
        // The writer that comes next (the connection's writer task) polls with its own waker
        // and must be woken by the drain, although the first poll registered a no-op one.
        let writer = tokio::spawn(async move { ours.write_all(b"last\n").await.map(|()| ours) });
        let mut got = vec![0; buffered + 5];
        within("draining", theirs.read_exact(&mut got)).await.unwrap();
        assert_eq!(&got[buffered..], b"last\n");
        within("the queued write", writer).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn eof_is_reported_to_every_read_after_the_peer_closes() {
        let (mut ours, mut theirs) = pair();
        theirs.write_all(b"bye").await.unwrap();
        drop(theirs);
        let mut all = Vec::new();
        within("reading to EOF", ours.read_to_end(&mut all)).await.unwrap();
        assert_eq!(all, b"bye");
        let mut buf = [0; 8];
        assert_eq!(within("a read after EOF", ours.read(&mut buf)).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn after_our_shutdown_the_peer_sees_eof_and_can_still_answer() {
        let (mut ours, mut theirs) = pair();
        ours.write_all(b"done").await.unwrap();
        ours.shutdown().await.unwrap();
        let mut got = Vec::new();
        within("the peer reading to EOF", theirs.read_to_end(&mut got)).await.unwrap();
        assert_eq!(got, b"done");
        theirs.write_all(b"ok").await.unwrap();
        let mut back = [0; 2];
        within("the answer", ours.read_exact(&mut back)).await.unwrap();
        assert_eq!(&back, b"ok");
    }

    #[tokio::test]
    async fn data_sent_after_a_short_read_drained_the_socket_is_still_delivered() {
        let (mut ours, mut theirs) = pair();
        theirs.write_all(b"first").await.unwrap();
        let mut buf = [0; 64];
        // 5 of 64 bytes: the read readiness is cleared without another recv.
        assert_eq!(within("the first read", ours.read(&mut buf)).await.unwrap(), 5);
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            theirs.write_all(b"second").await.unwrap();
            theirs
        });
        let n = within("the read after the short one", ours.read(&mut buf)).await.unwrap();
        assert_eq!(&buf[..n], b"second");
        later.await.unwrap();
    }

    #[tokio::test]
    async fn a_read_waiting_beside_a_blocked_write_gets_its_data_and_the_write_finishes() {
        let (ours, mut theirs) = pair();
        let (mut rd, mut wr) = tokio::io::split(ours);
        let data = pattern(MORE_THAN_BUFFERED);
        let expected = data.clone();
        let writer = tokio::spawn(async move { wr.write_all(&data).await });
        let reader = tokio::spawn(async move {
            let mut line = [0; 6];
            rd.read_exact(&mut line).await.map(|_| line)
        });
        // Neither wake-up may be lost to the other: the reader gets its bytes while the write
        // is still blocked (nothing drained yet), then the write completes once drained.
        tokio::time::sleep(Duration::from_millis(50)).await;
        theirs.write_all(b"hello\n").await.unwrap();
        assert_eq!(&within("the read", reader).await.unwrap().unwrap(), b"hello\n");
        assert!(!writer.is_finished(), "nothing was drained yet");
        let mut got = vec![0; expected.len()];
        within("draining", theirs.read_exact(&mut got)).await.unwrap();
        assert!(got == expected);
        within("the blocked write", writer).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_write_blocked_when_the_peer_goes_away_fails_instead_of_hanging() {
        let (mut ours, theirs) = pair();
        fill(&mut ours);
        let writer = tokio::spawn(async move { ours.write_all(&[1; 4096]).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(theirs);
        let err = within("the failing write", writer).await.unwrap().unwrap_err();
        assert!(
            matches!(err.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset),
            "{err}"
        );
    }
}
