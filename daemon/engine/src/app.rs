//! One app connection from `hello` to its end ([`super::Engine::serve_app`]): the link's
//! handshake, the registry entry, what the app says handed to its owner (replies and task
//! updates to `session/replies.rs`, enable/disable to the registry), and the ending in the order
//! that keeps clients from seeing a half-gone app.

use std::sync::Arc;

use jfgui_proto::channel::Refused;
use tokio::io::{AsyncRead, AsyncWrite};

use super::link::{self, Incoming};
use super::registry::RegistryFull;
use super::session::App;
use super::{Engine, PeerInfo};

/// Runs one app connection to its end.
pub async fn serve<S>(engine: &Engine, stream: S, peer: PeerInfo)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let shared = &engine.0;
    let config = Arc::clone(&shared.config);
    let shutdown = shared.shutdown.subscribe();
    let partial = engine.partial();
    let Some((registration, handshaken)) =
        link::accept(stream, config, partial, shutdown, peer).await
    else {
        return;
    };
    let registry = &shared.registry;
    let display_name = registration.display_name.clone();
    let inserted =
        registry.insert(&display_name, |id, slug| handshaken.handle(id, slug, registration));
    let handle = match inserted {
        Ok(handle) => handle,
        Err(RegistryFull) => {
            let max = shared.config.max_apps;
            tracing::warn!(?peer, max, "app refused: too many apps");
            let message = format!("the daemon already serves its maximum of {max} apps");
            handshaken.refuse(Refused::TOO_MANY_APPS, &message).await;
            return;
        }
    };
    let app = App::new(handle.clone(), Arc::clone(&shared.tasks));
    let (mut link, welcomed) = handshaken.start(&handle).await;
    let end = match welcomed {
        Ok(()) => loop {
            match link.next().await {
                Ok(Incoming::Reply(waiter, outcome)) => app.reply(waiter, outcome),
                Ok(Incoming::Task(snapshot)) => app.task_update(snapshot),
                Ok(Incoming::Enabled(enabled)) => registry.set_enabled(&handle, enabled),
                Err(end) => break end,
            }
        },
        Err(end) => end,
    };

    // Order matters: the endpoint goes first, so no new client arrives while calls are failed.
    registry.remove(&handle);
    let reason = end.reason();
    handle.close(&reason);
    app.gone(&reason);
    if end.is_orderly() {
        tracing::info!(slug = handle.slug(), "app disconnected: {end}");
    } else {
        tracing::warn!(slug = handle.slug(), "app dropped: {end}");
    }
    link.finish(&end).await;
}
