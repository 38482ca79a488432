//! The link to one app over its host channel: it only correlates requests and replies, like
//! lsp-server's request queue. What a reply means (task recording, the revision bound, replies
//! of the wrong kind) is `app/replies.rs`'s business; who the app is, `app/registration.rs`'s;
//! which apps exist and whether they are enabled, `app/registry.rs`'s. None of them is
//! imported here: the app's connection (`app/connection.rs`) passes what the link reads
//! ([`Incoming`]) to them.
//!
//! | part | file |
//! |---|---|
//! | the calls: ids, the pending table, deadlines, the link's own errors, the writer task (over the connection's outbox, `output.rs`) | `link/calls.rs` |
//! | hello → action pages → ready → welcome / refused | `link/handshake.rs` |
//! | the reading side of one connection, its deadlines, its end | `link/io.rs` |
//!
//! A connection goes [`accept`] (handshake under its deadline) → [`Handshaken::link`] (once the
//! registry named it) → [`Handshaken::start`] (`welcome`, writer started) →
//! [`LinkReader::next`] until it ends → [`Link::close`] and [`LinkReader::finish`].

mod calls;
mod handshake;
mod io;

use std::sync::Arc;

use jfgui_proto::channel::{ChannelLimits, DaemonMessage, Refused, Welcome, encode_frame};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::watch;

pub use calls::{CallOutcome, Link, Waiter};
pub use handshake::Announced;
pub use io::{Incoming, LinkEnd, LinkReader};

use io::FrameReader;

use crate::partial::Partial;
use crate::{EngineConfig, PeerInfo, until};

/// An app connection whose handshake succeeded, not yet registered.
pub struct Handshaken<S> {
    reader: FrameReader<ReadHalf<S>>,
    writer: WriteHalf<S>,
    shutdown: watch::Receiver<bool>,
    config: Arc<EngineConfig>,
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
) -> Option<(Announced, Handshaken<S>)>
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
    let announced = match outcome {
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
        Ok(Ok(Ok(announced))) => announced,
    };
    Some((announced, Handshaken { reader, writer: wr, shutdown, config }))
}

impl<S> Handshaken<S>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    /// The link of this app once the registry has given it endpoint `slug`.
    pub fn link(&self, slug: String) -> Link {
        Link::new(slug, self.config.clone())
    }

    /// Refuses the app after all (the registry is full), then closes.
    pub async fn refuse(mut self, reason: &str, message: &str) {
        handshake::refuse(&mut self.writer, &self.config, reason, message).await;
    }

    /// Welcomes the app as `slug` and starts the writer of `link`. The reading side is
    /// returned even if the welcome could not be written (then with the error), so the
    /// connection is ended the same way as any other.
    pub async fn start(
        mut self,
        slug: &str,
        link: &Link,
    ) -> (LinkReader<ReadHalf<S>>, Result<(), LinkEnd>) {
        let config = &self.config;
        let welcome = DaemonMessage::Welcome(Welcome {
            slug: slug.to_string(),
            limits: ChannelLimits {
                max_frame_bytes: u32::try_from(config.max_frame).unwrap_or(u32::MAX),
                max_message_bytes: u32::try_from(config.json.max_bytes).unwrap_or(u32::MAX),
            },
        });
        let welcomed = match encode_frame(&welcome, &config.frame_limits(), config.max_frame) {
            Ok(frame) => self.writer.write_all(&frame).await.map_err(LinkEnd::Io),
            Err(e) => Err(LinkEnd::Frame(e)),
        };
        let reader = LinkReader::start(link.clone(), self.reader, self.writer, self.shutdown);
        (reader, welcomed)
    }
}
