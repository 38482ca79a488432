//! One app connection from `hello` to its end ([`crate::Engine::serve_app`]): the link's
//! handshake, the registry entry, what the app says handed to its owner (replies and task
//! updates to `replies.rs`, enable/disable to the registry), and the ending in the order that
//! keeps clients from seeing a half-gone app.

use std::sync::Arc;

use jfgui_proto::channel::Refused;
use tokio::io::{AsyncRead, AsyncWrite};

use super::App;
use super::link::{self, Incoming};
use super::registration::{Declared, Registration};
use super::registry::NotAdmitted;
use crate::{Engine, PeerInfo};

/// Runs one app connection to its end.
pub async fn serve<S>(engine: &Engine, stream: S, peer: PeerInfo)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let shared = &engine.0;
    let config = Arc::clone(&shared.config);
    let shutdown = shared.shutdown.subscribe();
    let partial = engine.partial();
    let Some((announced, handshaken)) = link::accept(stream, config, partial, shutdown, peer).await
    else {
        return;
    };
    // Built before the registry's lock is taken; the action trees are dropped here, only
    // their encoding is kept.
    let declared = Declared::new(announced);
    let registry = &shared.registry;
    let inserted = registry.insert(declared, |id, slug, declared| {
        let link = handshaken.link(slug.clone());
        let enabled = declared.enabled();
        let registration = Registration::new(id, slug, declared);
        App::new(registration, link, enabled, Arc::clone(&shared.tasks))
    });
    let app = match inserted {
        Ok(app) => app,
        Err(NotAdmitted::Full) => {
            let max = shared.config.max_apps;
            tracing::warn!(?peer, max, "app refused: too many apps");
            let message = format!("the daemon already serves its maximum of {max} apps");
            handshaken.refuse(Refused::TOO_MANY_APPS, &message).await;
            return;
        }
        Err(NotAdmitted::OverBudget { size, used, budget }) => {
            tracing::warn!(?peer, size, used, budget, "app refused: registration too large");
            let message = format!(
                "this registration takes {size} bytes; with the {used} bytes the registered apps \
                 hold it would pass the daemon's registration budget of {budget} bytes"
            );
            handshaken.refuse(Refused::REGISTRATION_TOO_LARGE, &message).await;
            return;
        }
    };
    let registration = app.registration();
    let (mut reader, welcomed) = handshaken.start(registration.slug(), app.link()).await;
    tracing::info!(
        ?peer,
        slug = registration.slug(),
        display_name = registration.display_name(),
        pid = registration.pid(),
        actions = registration.actions().len(),
        enabled = app.is_enabled(),
        "app registered"
    );
    let end = match welcomed {
        Ok(()) => loop {
            match reader.next().await {
                Ok(Incoming::Reply(waiter, outcome)) => app.reply(waiter, outcome),
                Ok(Incoming::Task(snapshot)) => app.task_update(snapshot),
                Ok(Incoming::Enabled(enabled)) => registry.set_enabled(&app, enabled),
                Err(end) => break end,
            }
        },
        Err(end) => end,
    };

    // Order matters: the endpoint goes first, so no new client arrives while calls are failed.
    registry.remove(&app);
    let reason = end.reason();
    app.close(&reason);
    app.gone(&reason);
    if end.is_orderly() {
        tracing::info!(slug = registration.slug(), "app disconnected: {end}");
    } else {
        tracing::warn!(slug = registration.slug(), "app dropped: {end}");
    }
    reader.finish(&end).await;
}
