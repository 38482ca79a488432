//! The link to one app over its host channel (SPEC S8): it only correlates requests and
//! replies, like lsp-server's request queue. What a reply means (task recording, the revision
//! bound, replies of the wrong kind) is `session/replies.rs`'s business; which apps exist and
//! whether they are enabled is `registry.rs`'s. Neither is imported here: the engine passes
//! what the link reads ([`Incoming`]) to them.
//!
//! | part | file |
//! |---|---|
//! | the app handle: calls, the pending table, the link's own errors | `link/calls.rs` |
//! | hello → action pages → ready → welcome / refused | `link/handshake.rs` |
//! | the reading side of one connection, its deadlines, its end | `link/io.rs` |
//! | the writing side: direct writes by the caller, the writer task | `link/writer.rs` |
//!
//! A connection goes [`accept`] (handshake under its deadline) → [`Handshaken::handle`] (the
//! registry names it) → [`Handshaken::start`] (`welcome`, writer started) → [`Link::next`]
//! until it ends → [`AppHandle::close`] and [`Link::finish`].

mod calls;
mod handshake;
mod io;
mod writer;

use std::sync::Arc;

use jfgui_proto::channel::{ChannelLimits, DaemonMessage, Refused, Welcome, encode_frame};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::watch;

pub use calls::{AppHandle, CallOutcome, LinkStatus, Waiter};
pub use handshake::Registration;
pub use io::{Incoming, Link, LinkEnd};

use io::FrameReader;

use super::partial::Partial;
use super::{EngineConfig, PeerInfo, until};

/// An app connection whose handshake succeeded, not yet registered.
pub struct Handshaken<S> {
    reader: FrameReader<ReadHalf<S>>,
    writer: WriteHalf<S>,
    shutdown: watch::Receiver<bool>,
    config: Arc<EngineConfig>,
    peer: PeerInfo,
}

/// Runs the handshake of a new app connection within the handshake deadline. On failure the
/// peer has been refused (when it speaks the channel) and the failure logged; `None` then
/// means the connection is over.
pub async fn accept<S>(
    stream: S,
    config: Arc<EngineConfig>,
    partial: Partial,
    mut shutdown: watch::Receiver<bool>,
    peer: PeerInfo,
) -> Option<(Registration, Handshaken<S>)>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (rd, mut wr) = tokio::io::split(stream);
    let mut reader = FrameReader::new(rd, &config, partial);
    let outcome = tokio::select! {
        r = tokio::time::timeout(config.handshake_deadline, handshake::read(&mut reader)) => r,
        _ = until(&mut shutdown, |s| *s) => {
            handshake::refuse(&mut wr, &config, Refused::SHUTDOWN, "the daemon is shutting down")
                .await;
            return None;
        }
    };
    let registration = match outcome {
        Err(_) => {
            tracing::warn!(?peer, "app dropped: handshake not completed within the deadline");
            return None;
        }
        Ok(Err(end)) => {
            tracing::warn!(?peer, "app dropped during the handshake: {end}");
            if handshake::deserves_refusal(&end) {
                let message = end.to_string();
                handshake::refuse(&mut wr, &config, Refused::INVALID_REGISTRATION, &message).await;
            }
            return None;
        }
        Ok(Ok(Err(refusal))) => {
            tracing::warn!(?peer, reason = %refusal.reason, "app refused: {}", refusal.message);
            handshake::refuse(&mut wr, &config, &refusal.reason, &refusal.message).await;
            return None;
        }
        Ok(Ok(Ok(registration))) => registration,
    };
    Some((registration, Handshaken { reader, writer: wr, shutdown, config, peer }))
}

impl<S> Handshaken<S>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    /// The handle of this app once the registry has given it `id` and `slug`.
    pub fn handle(&self, id: u64, slug: String, registration: Registration) -> AppHandle {
        AppHandle::new(id, slug, registration, self.config.clone())
    }

    /// Refuses the app after all (the registry is full), then closes.
    pub async fn refuse(mut self, reason: &str, message: &str) {
        handshake::refuse(&mut self.writer, &self.config, reason, message).await;
    }

    /// Welcomes `app` and starts its writer. The link is returned even if the welcome could
    /// not be written (then with the error), so it is ended the same way as any other.
    pub async fn start(mut self, app: &AppHandle) -> (Link<ReadHalf<S>>, Result<(), LinkEnd>) {
        let config = &self.config;
        let welcome = DaemonMessage::Welcome(Welcome {
            slug: app.slug().to_string(),
            limits: ChannelLimits {
                max_frame_bytes: u32::try_from(config.max_frame).unwrap_or(u32::MAX),
                max_message_bytes: u32::try_from(config.json.max_bytes).unwrap_or(u32::MAX),
            },
        });
        let welcomed = match encode_frame(&welcome, &config.frame_limits(), config.max_frame) {
            Ok(frame) => self.writer.write_all(&frame).await.map_err(LinkEnd::Io),
            Err(e) => Err(LinkEnd::Frame(e)),
        };
        tracing::info!(
            peer = ?self.peer,
            slug = app.slug(),
            display_name = app.display_name(),
            pid = app.pid(),
            actions = app.actions().len(),
            enabled = app.is_enabled(),
            "app registered"
        );
        let link = Link::start(app.clone(), self.reader, self.writer, self.shutdown);
        (link, welcomed)
    }
}
