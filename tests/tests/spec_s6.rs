//! SPEC S6 through the real binaries: JSON control protocol 1 bounds a demanding client hits.

use std::time::Duration;

use jfgui_tests::serde_json::json;
use jfgui_tests::{Daemon, LineClient, TempDir, Watchdog, notepad};

#[test]
fn resources_read_offset_past_the_end_is_invalid_params() {
    let _wd = Watchdog::arm(Duration::from_secs(120));
    let tmp = TempDir::new();
    let rt = tmp.rt();
    let d = Daemon::start(&rt, &[]);
    let _app = notepad(&rt, &["--agent-enable", "--text", "hello"]);
    let endpoint = d.wait_endpoint("notepad");
    let mut c = LineClient::connect(&endpoint).expect("connect");
    let rendered = c.call("view/render", json!({})).expect("render");
    let uri = rendered["result"]["output"]["uri"].as_str().expect("uri").to_string();
    let total = rendered["result"]["output"]["size"].as_u64().expect("size");

    // offset == totalSize is the end: an empty chunk with eof.
    let end = c.call("resources/read", json!({"uri": uri, "offset": total})).expect("read");
    assert_eq!(end["result"]["data"], "", "{end}");
    assert_eq!(end["result"]["eof"], true, "{end}");
    assert_eq!(end["result"]["totalSize"], total, "{end}");

    // Past the end is a paging parameter out of range (S6: -32602), not a silent empty chunk.
    let past = c.call("resources/read", json!({"uri": uri, "offset": total + 1})).expect("read");
    assert_eq!(past["error"]["code"], -32602, "{past}");
    assert_eq!(past["error"]["data"]["reason"], "out_of_range", "{past}");
    assert_eq!(past["error"]["data"]["param"], "offset", "{past}");
    assert_eq!(past["error"]["data"]["totalSize"], total, "{past}");
}
