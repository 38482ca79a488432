//! The exact bytes of the two envelopes every action call crosses, as the serde mapping writes
//! them (no whitespace, members in the mapping's order): the daemon's `request` carrying an
//! `execute` call and the app's `reply` carrying its `executed` result. Both sides' hand codecs
//! match and write them from here (`per_call.rs` for the daemon, `app_call.rs` for the app), so
//! the two cannot drift apart.

/// `{"request":{"id":` — how a request starts.
pub(super) const REQUEST_ID: &[u8] = br#"{"request":{"id":"#;
/// Between the id and the action name of an `execute` call.
pub(super) const EXECUTE_ACTION: &[u8] = br#","call":{"execute":{"action":"#;
/// Between the action name and the input.
pub(super) const INPUT: &[u8] = br#","input":"#;
/// Between the input and the expected revision, when there is one.
pub(super) const EXPECTED_REVISION: &[u8] = br#","expectedRevision":"#;
/// The request's four objects closing.
pub(super) const REQUEST_END: &[u8] = b"}}}}";
/// Containers open around a request's `input`: the message, `request`, `call`, `execute`.
pub(super) const INPUT_DEPTH: usize = 4;
/// Values of a request besides its input and expected revision: the four objects, `id` and
/// `action`.
pub(super) const REQUEST_VALUES: usize = 6;

/// `{"reply":{"id":` — how a reply starts.
pub(super) const REPLY_ID: &[u8] = br#"{"reply":{"id":"#;
/// Between the id and an executed result's output.
pub(super) const EXECUTED_OUTPUT: &[u8] = br#","outcome":{"ok":{"executed":{"output":"#;
/// Between the output and the revision.
pub(super) const REVISION: &[u8] = br#","revision":"#;
/// The reply's five objects closing.
pub(super) const REPLY_END: &[u8] = b"}}}}}";
/// Containers open around an executed reply's `output`: the message, `reply`, `outcome`, `ok`,
/// `executed`.
pub(super) const OUTPUT_DEPTH: usize = 5;
/// Values of an executed reply before its output: those containers and `id`.
pub(super) const VALUES_BEFORE_OUTPUT: usize = 6;

/// The value of a JSON integer token without sign, fraction or exponent (`0` or no leading
/// zero) that fits `u64`; `None` otherwise.
pub(super) fn plain_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Such an integer at the start of `bytes`, and what follows it.
pub(super) fn plain_integer(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let (number, rest) = bytes.split_at(digits);
    Some((plain_u64(number)?, rest))
}
