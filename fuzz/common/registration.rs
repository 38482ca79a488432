//! The property of the `registration` fuzz target, shared with the corpus replay in
//! `daemon/engine/tests/fuzz_corpus.rs` so both check exactly the same thing.
//!
//! The daemon's side of an app's registration, end to end through the engine.
//! The input is what an app sends on its host channel; the engine serves it as it serves any
//! app (handshake, bounds, validation, the registration budget, the catalog). Nothing may
//! panic; when the app is welcomed, every answer built from the catalog must equal the
//! declarations the input held (`actions/list` rows in order, `actions/describe` objects, a
//! query's hits), and when it leaves, nothing of it may stay registered or counted.

use std::time::Duration;

use jfgui_engine::{Engine, EngineConfig, PeerInfo};
use jfgui_proto::channel::{ActionInfo, AppMessage, DaemonMessage, FrameDecoder, decode_message};
use jfgui_proto::{Limits, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// Small enough that the fuzzer reaches the budget with a few actions.
const BUDGET: usize = 16 * 1024;

/// Describes checked per input (each is a round trip).
const MAX_DESCRIBES: usize = 32;

/// See the module docs.
pub fn check(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        // Deadlines pass at once when everything waits, so a handshake the input leaves
        // unfinished ends at its deadline without real waiting.
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(registration(data));
}

async fn registration(data: &[u8]) {
    let config = EngineConfig { max_registration_bytes: BUDGET, ..EngineConfig::default() };
    let engine = Engine::new(config);
    let (mut app, daemon_side) = tokio::io::duplex(4 << 20);
    let served = tokio::spawn({
        let engine = engine.clone();
        async move { engine.serve_app(daemon_side, PeerInfo::default()).await }
    });
    // Only the handshake: frames after `ready` (a `bye`, a disabling) would change what the
    // checks below may expect.
    let data = &data[..handshake_len(data, &engine)];
    // The daemon may close its side before reading all of it; that is its right.
    let _ = app.write_all(data).await;
    match first_answer(&engine, &mut app).await {
        Some(DaemonMessage::Welcome(welcome)) => {
            let actions = declared(data, &engine).expect("welcomed after a complete handshake");
            welcomed(&engine, &welcome.slug, &actions).await;
        }
        Some(DaemonMessage::Refused(refused)) => {
            assert!(engine.apps().is_empty(), "refused but registered: {refused:?}");
        }
        Some(other) => panic!("the first answer is neither welcome nor refused: {other:?}"),
        None => assert!(engine.apps().is_empty()),
    }
    drop(app);
    tokio::time::timeout(Duration::from_secs(60), served)
        .await
        .expect("the connection ends when the app leaves")
        .expect("no panic");
    assert!(engine.apps().is_empty(), "an app that left is still registered");
    assert_eq!(engine.registration_bytes().used, 0, "a departed app is still counted");
}

/// The daemon's first frame to the app, `None` when it closed without one.
async fn first_answer(engine: &Engine, app: &mut DuplexStream) -> Option<DaemonMessage> {
    let config = engine.config();
    let mut decoder = FrameDecoder::new(config.max_frame);
    let mut buf = [0u8; 4096];
    loop {
        if let Some(body) = decoder.next_frame().expect("the daemon's frames are well formed") {
            return Some(decode_message(&body, &config.frame_limits()).expect("a daemon message"));
        }
        match app.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => decoder.feed(&buf[..n]),
        }
    }
}

/// The bytes up to the end of the first frame that is a `ready`, else all of them.
fn handshake_len(data: &[u8], engine: &Engine) -> usize {
    let limits = engine.config().frame_limits();
    let mut at = 0;
    while let Some(header) = data.get(at..at + 4) {
        let len = u32::from_be_bytes(header.try_into().expect("four bytes")) as usize;
        let Some(body) = data.get(at + 4..(at + 4).saturating_add(len)) else { break };
        at += 4 + len;
        if let Ok(AppMessage::Ready(_)) = decode_message::<AppMessage>(body, &limits) {
            return at;
        }
    }
    data.len()
}

/// The actions the input's `actions` pages declared, read the plain way: every frame decoded
/// as an app message until `ready`.
fn declared(data: &[u8], engine: &Engine) -> Option<Vec<ActionInfo>> {
    let config = engine.config();
    let mut decoder = FrameDecoder::new(config.max_frame);
    decoder.feed(data);
    let mut actions = Vec::new();
    while let Some(body) = decoder.next_frame().ok()? {
        match decode_message::<AppMessage>(&body, &config.frame_limits()).ok()? {
            AppMessage::Actions(page) => actions.extend(page.actions),
            AppMessage::Ready(_) => return Some(actions),
            _ => {}
        }
    }
    None
}

async fn welcomed(engine: &Engine, slug: &str, actions: &[ActionInfo]) {
    let apps = engine.apps();
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0].action_count, actions.len());
    let held = engine.registration_bytes();
    assert!(held.used > 0 && held.used <= held.budget, "{held:?}");
    if !engine.is_enabled(slug) {
        return;
    }
    let mut client = Client::connect(engine, slug);
    // Every row, page by page, in registration order.
    let rows = client.list(None).await;
    let expected: Vec<Value> = actions.iter().map(row).collect();
    assert_eq!(rows, expected, "actions/list rows");
    for info in actions.iter().take(MAX_DESCRIBES) {
        let mut params = Map::new();
        params.insert("action", info.name.as_str());
        let described = client.call("actions/describe", params).await;
        let whole = jfgui_proto::to_value(info).expect("an action maps onto a value");
        assert_eq!(described.get("action"), Some(&whole), "actions/describe {}", info.name);
    }
    // A query cut from one of the descriptions, in upper case: the hits are the actions
    // whose name or description holds it, ignoring case.
    if let Some(info) = actions.get(actions.len() / 2) {
        let query: String = info.description.chars().take(3).collect::<String>().to_uppercase();
        let hits = client.list(Some(&query)).await;
        let folded = fold(&query);
        let expected: Vec<Value> = actions
            .iter()
            .filter(|a| fold(&a.name).contains(&folded) || fold(&a.description).contains(&folded))
            .map(row)
            .collect();
        assert_eq!(hits, expected, "actions/list query {query:?}");
    }
}

/// Lower case, character by character (what a case-insensitive query means here).
fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

fn row(info: &ActionInfo) -> Value {
    let mut row = Map::new();
    row.insert("name", info.name.as_str());
    row.insert("description", info.description.as_str());
    row.insert("kind", jfgui_proto::to_value(&info.kind).expect("a kind is a string"));
    if let Some(title) = &info.title {
        row.insert("title", title.as_str());
    }
    if info.confirm {
        row.insert("confirm", true);
    }
    row.into()
}

/// A JSON-1 client of the endpoint, over a stream the engine serves.
struct Client {
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
    id: u64,
}

impl Client {
    fn connect(engine: &Engine, slug: &str) -> Client {
        let (ours, theirs) = tokio::io::duplex(4 << 20);
        let engine = engine.clone();
        let slug = slug.to_string();
        tokio::spawn(async move { engine.serve_client(theirs, &slug, PeerInfo::default()).await });
        let (rd, writer) = tokio::io::split(ours);
        Client { reader: BufReader::new(rd), writer, id: 0 }
    }

    /// The `result` of `method`; any error fails the run.
    async fn call(&mut self, method: &str, params: Map) -> Map {
        self.id += 1;
        let mut request = Map::new();
        request.insert("jsonrpc", "2.0");
        request.insert("id", self.id);
        request.insert("method", method);
        request.insert("params", params);
        let mut line = jfgui_proto::encode(&Value::from(request), &Limits::DEFAULT).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.expect("the endpoint reads");
        let mut answer = Vec::new();
        self.reader.read_until(b'\n', &mut answer).await.expect("the endpoint answers");
        let body = answer.strip_suffix(b"\n").unwrap_or(&answer);
        let answer = jfgui_proto::parse(body, &Limits::DEFAULT)
            .unwrap_or_else(|e| panic!("{method}: not strict JSON ({e})"));
        match answer.get("result") {
            Some(Value::Object(result)) => result.clone(),
            _ => panic!("{method}: {answer:?}"),
        }
    }

    /// Every row of `actions/list` (with `query`), following `nextCursor`.
    async fn list(&mut self, query: Option<&str>) -> Vec<Value> {
        let mut rows = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut params = Map::new();
            if let Some(q) = query {
                params.insert("query", q);
            }
            if let Some(c) = cursor.take() {
                params.insert("cursor", c);
            }
            let page = self.call("actions/list", params).await;
            match page.get("actions") {
                Some(Value::Array(page_rows)) => rows.extend(page_rows.iter().cloned()),
                other => panic!("actions/list: {other:?}"),
            }
            match page.get("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next.clone()),
                _ => return rows,
            }
        }
    }
}
