//! `json_check FILE`: parses FILE with the default strict bounds (SPEC S5); exits 0 when it is
//! accepted, 1 when it is rejected (the error, with its stable kind and byte offset, on
//! stderr), 2 on a usage or I/O problem.

use std::process::ExitCode;

use jfgui_proto::{Limits, parse};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: json_check FILE");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    match parse(&bytes, &Limits::DEFAULT) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: rejected ({}): {e}", path.to_string_lossy(), e.kind().as_str());
            ExitCode::from(1)
        }
    }
}
