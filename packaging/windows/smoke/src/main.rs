//! Named-pipe smoke client (Windows, under wine): given the daemon's pipe prefix
//! (`\\.\pipe\jfgui-agent-<SID>`), checks `daemon/status` on `-control`, registers an app on
//! `-host`, finds it in `apps/list`, gets an answer on its `-app-<slug>` endpoint (the app never
//! replies, so the daemon's request-deadline error), and that an unknown slug
//! has no pipe. Exits 1 with the reason on the first failure.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::process::ExitCode;

fn open(name: &str) -> Result<File, String> {
    OpenOptions::new().read(true).write(true).open(name).map_err(|e| format!("open {name}: {e}"))
}

fn line(f: &mut File) -> Result<String, String> {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match f.read(&mut b) {
            Ok(1) if b[0] != b'\n' => out.push(b[0]),
            Ok(_) => break,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

fn rpc(name: &str, method: &str, params: &str) -> Result<String, String> {
    let mut f = open(name)?;
    writeln!(f, r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
        .map_err(|e| e.to_string())?;
    line(&mut f)
}

fn frame(f: &mut File, body: &str) -> Result<(), String> {
    let len = u32::try_from(body.len()).map_err(|e| e.to_string())?;
    f.write_all(&len.to_be_bytes())
        .and_then(|()| f.write_all(body.as_bytes()))
        .map_err(|e| e.to_string())
}

fn read_frame(f: &mut File) -> Result<String, String> {
    let mut len = [0u8; 4];
    f.read_exact(&mut len).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    f.read_exact(&mut body).map_err(|e| e.to_string())?;
    String::from_utf8(body).map_err(|e| e.to_string())
}

fn expect(what: &str, got: &str, needle: &str) -> Result<(), String> {
    println!("{what}: {got}");
    if got.contains(needle) { Ok(()) } else { Err(format!("{what}: expected {needle:?}")) }
}

fn run(prefix: &str) -> Result<(), String> {
    let control = format!("{prefix}-control");
    expect("status", &rpc(&control, "daemon/status", "{}")?, "\"result\"")?;
    let mut app = open(&format!("{prefix}-host"))?;
    let hello = format!(
        r#"{{"hello":{{"channelVersion":1,"displayName":"Wine Smoke","pid":{},"enabled":true}}}}"#,
        std::process::id()
    );
    frame(&mut app, &hello)?;
    frame(&mut app, r#"{"ready":{"actionCount":0}}"#)?;
    expect("welcome", &read_frame(&mut app)?, r#""slug":"wine-smoke""#)?;
    // The endpoint is named (its pipe), not `null`: only that field holds `-app-SLUG"`.
    expect("list", &rpc(&control, "apps/list", "{}")?, r#"-app-wine-smoke""#)?;
    let endpoint = format!("{prefix}-app-wine-smoke");
    let mut tries = 0;
    let info = loop {
        match rpc(&endpoint, "agent/info", r#"{"protocolVersion":"1"}"#) {
            Ok(info) => break info,
            Err(e) if tries < 50 => {
                tries += 1;
                println!("endpoint not up yet ({e})");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => return Err(e),
        }
    };
    // The app here never answers: the daemon's deadline error proves the endpoint pipe is
    // served by the engine for this app.
    expect("endpoint", &info, r#""reason":"timeout""#)?;
    match open(&format!("{prefix}-app-no-such-app")) {
        Ok(_) => Err("a pipe exists for an unknown slug".into()),
        Err(e) => {
            println!("unknown slug: {e}");
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let Some(prefix) = std::env::args().nth(1) else {
        eprintln!("usage: jfgui-pipe-smoke \\\\.\\pipe\\jfgui-agent-<SID>");
        return ExitCode::from(2);
    };
    match run(&prefix) {
        Ok(()) => {
            println!("smoke: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("smoke: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
