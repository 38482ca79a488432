//! jfgui-sketch without a window: `jfgui-agent headless jfgui-sketch` (the app serves the host
//! channel on its stdio) through JSON-1, so its actions, transactions, undo and rendering are
//! checked cross-process on machines without a display. The window itself is tested by the
//! GUI suite (`tests/gui/run.sh`, under Xvfb).

use jfgui_tests::cli::run_agent;
use jfgui_tests::{PATIENCE, TempDir, Watchdog, bin};
use serde_json::{Value, json};

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn headless_sketch_draws_undoes_and_renders() {
    let _w = Watchdog::arm(PATIENCE * 3);
    let dir = TempDir::new();
    let rt = dir.rt(); // never created: no daemon anywhere
    let app = bin("jfgui-sketch");
    let rect = json!({"kind": "rectangle", "points": [[10, 10], [110, 60]], "fill": "#ff0000"});
    let missing = json!({"action": "shape.update", "input": {"id": 99}, "expectedRevision": 2});
    let lines = [
        request(
            1,
            "actions/execute",
            json!({"action": "shape.add", "input": rect, "expectedRevision": 1}),
        ),
        request(
            2,
            "actions/batch",
            json!({"atomic": true, "calls": [
            {"action": "shape.add", "input": rect, "expectedRevision": 2}, missing]}),
        ),
        request(
            3,
            "actions/execute",
            json!({"action": "shape.add", "input": rect, "expectedRevision": 1}),
        ),
        request(4, "actions/execute", json!({"action": "edit.undo", "expectedRevision": 2})),
        request(5, "actions/execute", json!({"action": "edit.redo", "expectedRevision": 3})),
        request(6, "actions/execute", json!({"action": "canvas.get"})),
        request(7, "view/render", json!({"input": {"scale": 1}})),
        request(8, "resources/read", json!({"uri": "render://canvas.png", "limit": 16})),
    ];
    let input = lines.join("\n") + "\n";
    let r = run_agent(
        &rt,
        &["headless", app.to_str().unwrap(), "--protocol", "json"],
        input.as_bytes(),
    );
    r.assert_no_panic().assert_code(0);
    let answers: Vec<Value> = r.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id}: {answers:?}"))
    };

    assert_eq!(by_id(1)["result"]["output"]["id"], 1);
    assert_eq!(by_id(1)["result"]["revision"], 2);
    let batch = &by_id(2)["error"];
    assert_eq!(
        (batch["data"]["reason"].as_str(), batch["data"]["index"].as_u64()),
        (Some("rolled_back"), Some(1)),
        "{batch}"
    );
    assert_eq!(
        by_id(3)["error"]["data"]["reason"],
        "stale_revision",
        "the batch changed nothing: still revision 2"
    );
    assert_eq!(by_id(4)["result"]["output"]["shapeCount"], 0);
    assert_eq!(by_id(5)["result"]["output"]["shapeCount"], 1);
    let canvas = &by_id(6)["result"]["output"];
    assert_eq!((canvas["width"].as_u64(), canvas["height"].as_u64()), (Some(640), Some(400)));
    assert_eq!(canvas["shapes"][0]["fill"], "#ff0000");
    let render = &by_id(7)["result"]["output"];
    assert_eq!(
        (render["uri"].as_str(), render["width"].as_u64()),
        (Some("render://canvas.png"), Some(640))
    );
    let chunk = &by_id(8)["result"];
    // The base64 of the PNG signature.
    assert!(chunk["data"].as_str().is_some_and(|d| d.starts_with("iVBORw0KGgo")), "{chunk}");
    assert_eq!(chunk["totalSize"], render["size"]);
}
