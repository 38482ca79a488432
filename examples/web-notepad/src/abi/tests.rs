//! The exports driven the way the script drives them: bytes written through the pointer
//! `jfgui_input` returns, results read through `jfgui_output`.

use jfgui_host_sdk::bridge::web::FAILED;

use super::*;

/// What the page's `WasmApp.input` does.
fn input(bytes: &[u8]) {
    let at = jfgui_input(bytes.len());
    // SAFETY: `jfgui_input` made the buffer exactly `bytes.len()` long and returned its start;
    // nothing else touches it until the next export call.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) };
}

/// What the page's `WasmApp.output` does.
fn output() -> Vec<u8> {
    // SAFETY: the output buffer lives in the thread's state and is unchanged until the next
    // export call.
    unsafe { std::slice::from_raw_parts(jfgui_output(), jfgui_output_len()) }.to_vec()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn nothing_works_before_init_and_says_why() {
    assert_eq!(jfgui_connect_body(), FAILED);
    assert!(text(output()).contains("init"));
    assert_eq!(jfgui_tick(0.0), -1.0);
    input(&[0xff]);
    assert_eq!(notepad_init(), FAILED, "not UTF-8");
}

#[test]
fn a_page_round_trip_through_the_buffers() {
    input("héllo".as_bytes());
    assert_eq!(notepad_init(), 0);
    let n = jfgui_connect_body();
    assert!(n > 0);
    assert_eq!(output().len(), n as usize);
    assert!(text(output()).contains(r#""displayName":"Web Notepad""#));
    input(br#"{"client":"c9","channelVersion":1,"maxMessageBytes":1048576}"#);
    assert_eq!(jfgui_connected(), 0);
    jfgui_set_enabled(1);
    assert_eq!(jfgui_next_post(), 2, "enabled goes to /message");
    assert!(text(output()).contains(r#""client":"c9""#));
    assert_eq!(jfgui_next_post(), 0);

    input(br#"{"requests":[{"id":4,"request":{"execute":{"action":"document.text.insert","input":{"text":"!"},"expectedRevision":1}}}]}"#);
    assert_eq!(jfgui_poll(5.0), 1);
    assert_eq!(jfgui_next_post(), 1, "the reply goes to /result");
    assert!(text(output()).contains(r#""id":4"#));

    input("héllo! ✓".as_bytes());
    assert_eq!(notepad_edit(8, 8), 1);
    assert_eq!(notepad_edit(8, 8), 0);
    assert!(notepad_view() > 0);
    let view = text(output());
    assert!(view.contains(r#""text":"héllo! ✓""#), "{view}");
    assert!(view.contains(r#""revision":3"#), "{view}");
    assert_eq!(notepad_edit(99, 99), FAILED);
    assert!(!output().is_empty());

    input(b"not json");
    assert_eq!(jfgui_poll(6.0), FAILED);
    assert_eq!(jfgui_closed(), 0);
    input(br#"{"requests":[{"id":null,"request":{"bye":{"reason":"shutdown"}}}]}"#);
    assert_eq!(jfgui_poll(7.0), 0);
    assert_eq!(jfgui_closed(), 1);
    assert_eq!(text(output()), "shutdown");
}
