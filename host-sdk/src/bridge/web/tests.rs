//! The exports' functions driven as the script drives them: bytes in through the pointer
//! [`input`] returns, results out through [`output`].

use alloc::string::String;

use super::*;
use crate::Dispatcher;
use crate::channel::Identity;
use crate::test_support::EchoHost;

#[derive(Debug)]
struct TestApp {
    link: BridgeChannel,
    host: EchoHost,
    now: Duration,
}

impl WebApp for TestApp {
    fn parts(&mut self) -> (&mut BridgeChannel, &mut dyn Host) {
        (&mut self.link, &mut self.host)
    }
    fn set_time(&mut self, now: Duration) {
        self.now = now;
    }
}

fn install() {
    let status = init(|input| {
        let name = core::str::from_utf8(input).map_err(|_| String::from("not UTF-8"))?;
        let host = EchoHost::default();
        let mut d = Dispatcher::new(&host).map_err(|e| e.to_string())?;
        d.set_enabled(true);
        let link = BridgeChannel::new(d, Identity { display_name: name.into(), pid: 0 });
        Ok(TestApp { link, host, now: Duration::ZERO })
    });
    assert_eq!(status, 0, "{}", text());
}

/// What the script's `WasmApp.input` does.
fn write(bytes: &[u8]) {
    let at = input(bytes.len());
    #[allow(unsafe_code)]
    // SAFETY: `input` made the buffer exactly `bytes.len()` long and returned its start;
    // nothing else touches it until the next call.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len())
    };
}

/// What the script's `WasmApp.outputText` does.
fn text() -> String {
    #[allow(unsafe_code)]
    // SAFETY: the output buffer is unchanged until the next call.
    let bytes = unsafe { core::slice::from_raw_parts(output(), output_len()) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn nothing_works_before_init_and_says_why() {
    assert_eq!(connect_body::<TestApp>(), FAILED);
    assert!(text().contains("init"), "{}", text());
    assert_eq!(tick::<TestApp>(0.0), -1.0);
    write(&[0xff]);
    assert_eq!(init::<TestApp>(|_| Err(String::from("bad start"))), FAILED);
    assert_eq!(text(), "bad start");
}

#[test]
fn a_round_trip_through_the_buffers() {
    write(b"Web Test");
    install();
    let n = connect_body::<TestApp>();
    assert!(n > 0);
    assert_eq!(output_len(), n as usize);
    assert!(text().contains(r#""displayName":"Web Test""#), "{}", text());
    write(br#"{"client":"c9","channelVersion":1,"maxMessageBytes":1048576}"#);
    assert_eq!(connected::<TestApp>(), 0);
    set_enabled::<TestApp>(0);
    assert_eq!(next_post::<TestApp>(), 2, "disabled goes to /message");
    assert!(text().contains(r#""enabled":false"#), "{}", text());
    assert_eq!(next_post::<TestApp>(), 0);
    set_enabled::<TestApp>(1);
    assert_eq!(next_post::<TestApp>(), 2);

    write(br#"{"requests":[{"id":18446744073709551615,"request":{"execute":{"action":"bump","input":{},"expectedRevision":0}}}]}"#);
    assert_eq!(poll::<TestApp>(5.0), 1);
    assert_eq!(next_post::<TestApp>(), 1, "the reply goes to /result");
    assert!(text().contains(r#""id":18446744073709551615"#), "the id is exact: {}", text());
    assert_eq!(call::<TestApp>(|app, _, _| Ok(app.now.as_millis() as i32)), 5);

    write(b"not json");
    assert_eq!(poll::<TestApp>(6.0), FAILED);
    assert!(text().contains("strict JSON"), "{}", text());
    assert_eq!(closed::<TestApp>(), 0);
    write(br#"{"requests":[{"id":null,"request":{"bye":{"reason":"shutdown"}}}]}"#);
    assert_eq!(poll::<TestApp>(7.0), 0);
    assert_eq!(closed::<TestApp>(), 1);
    assert_eq!(text(), "shutdown");
}

#[test]
fn a_call_from_inside_a_call_is_refused_and_the_outer_one_goes_on() {
    write(b"Reentrant");
    install();
    let mut inner = 0;
    let outer = call::<TestApp>(|_, input, out| {
        inner = connect_body::<TestApp>();
        out.extend_from_slice(input);
        Ok(7)
    });
    assert_eq!(inner, FAILED);
    assert_eq!(outer, 7);
    assert_eq!(text(), "Reentrant", "the outer call's output, from its own input");
    // A different type than the one installed is not the app.
    #[derive(Debug)]
    struct Other(BridgeChannel, EchoHost);
    impl WebApp for Other {
        fn parts(&mut self) -> (&mut BridgeChannel, &mut dyn Host) {
            (&mut self.0, &mut self.1)
        }
    }
    assert_eq!(connect_body::<Other>(), FAILED);
}
