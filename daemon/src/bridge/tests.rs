//! Unit tests of the request pipeline (`routes::handle`) on an in-process bridge state: every route
//! needs the token (one comparison, on every path), and the guards run before any body is read.

use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use jfgui_engine::{Engine, EngineConfig};

use super::browser::Attachment;
use super::routes::{Route, handle};
use super::token::Token;
use super::{BridgeLimits, BridgeState};

const ORIGIN: &str = "http://127.0.0.1:8765";
const HOST: &str = "127.0.0.1:4000";

fn state() -> Arc<BridgeState> {
    Arc::new(BridgeState {
        engine: Engine::new(EngineConfig::default()),
        limits: BridgeLimits::default(),
        token: Token::generate().unwrap(),
        origin: ORIGIN.into(),
        host: HOST.into(),
        attachment: Mutex::new(Attachment::None),
    })
}

fn request(route: Route, auth: Option<&str>, origin: Option<&str>) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(route.method()).uri(route.path()).header("host", HOST);
    if let Some(o) = origin {
        b = b.header("origin", o);
    }
    if let Some(a) = auth {
        b = b.header("authorization", a);
    }
    b.body(Full::new(Bytes::from_static(b"{}"))).unwrap()
}

#[tokio::test]
async fn every_route_requires_the_token() {
    let s = state();
    let wrong = format!("Bearer {}", "A".repeat(43));
    for route in Route::ALL {
        for auth in [None, Some(wrong.as_str()), Some("Bearer"), Some("Basic x")] {
            let reply = handle(s.clone(), request(route, auth, Some(ORIGIN))).await;
            assert_eq!(reply.status(), StatusCode::UNAUTHORIZED, "{route:?} {auth:?}");
            assert!(reply.headers().get("access-control-allow-origin").is_none());
        }
    }
}

#[tokio::test]
async fn with_the_token_every_route_reaches_its_handler() {
    let s = state();
    let good = format!("bEaReR {}", s.token.reveal());
    for route in Route::ALL {
        let reply = handle(s.clone(), request(route, Some(&good), Some(ORIGIN))).await;
        // `{}` is not a valid body for any route, and no browser is attached.
        assert!(
            matches!(reply.status(), StatusCode::BAD_REQUEST | StatusCode::CONFLICT),
            "{route:?}: {}",
            reply.status()
        );
        assert_eq!(
            reply.headers().get("access-control-allow-origin").map(|v| v.as_bytes()),
            Some(ORIGIN.as_bytes())
        );
    }
}

#[tokio::test]
async fn browser_routes_need_an_origin_and_rpc_does_not() {
    let s = state();
    let good = format!("Bearer {}", s.token.reveal());
    for route in Route::ALL {
        let reply = handle(s.clone(), request(route, Some(&good), None)).await;
        if route.browser_only() {
            assert_eq!(reply.status(), StatusCode::FORBIDDEN, "{route:?}");
        } else {
            assert_ne!(reply.status(), StatusCode::FORBIDDEN, "{route:?}");
        }
    }
}
