//! What a model can see: a model reads tool results, not files, so the results of
//! `jfgui_view_render` and `jfgui_resources_read` carry, beside the structured result and its
//! text twin, the content items a model looks at:
//!
//! - a render: the PNG itself as an MCP `image` item, read whole from the app; a larger one
//!   (or one that cannot be read) gets a text item saying to read its `uri` with
//!   `jfgui_resources_read` instead;
//! - a chunk of a `text/*` or JSON resource that is valid UTF-8: that text;
//! - a chunk that is a whole image (from offset 0 to the end): the image.
//!
//! `structuredContent` is unchanged (the base64 `data` stays there), so the output schemas
//! hold as before.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use jfgui_proto::{Limits, Map, Payload, Value};

use super::backend::Backend;
use super::resources::{self, Whole, WholeError};
use crate::client::method::Method;

/// Largest image carried as an `image` item: 512 KiB, or less when its base64 would not fit
/// one JSON string of the message bounds (256 KiB by default, so 192 KiB).
pub(crate) const MAX_IMAGE: u64 = {
    let fits = Limits::DEFAULT.max_string_bytes as u64 / 4 * 3;
    if fits < 512 * 1024 { fits } else { 512 * 1024 }
};
// Its base64 fits one JSON string of the default bounds.
const _: () = assert!(MAX_IMAGE.div_ceil(3) * 4 <= Limits::DEFAULT.max_string_bytes as u64);

/// The content items a successful call of `method` adds after its text twin. `arguments`
/// are the call's own (the all-apps server's `app` is taken from them to read the image).
pub(crate) async fn extra_content<B: Backend>(
    app: &B,
    method: Method,
    arguments: &Map,
    result: &Payload,
) -> Vec<Payload> {
    match method {
        Method::ViewRender => render(app, arguments, result).await.into_iter().collect(),
        Method::ResourcesRead => chunk(result).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The render's image, or the sentence that says how to get it.
async fn render<B: Backend>(app: &B, arguments: &Map, result: &Payload) -> Option<Payload> {
    let output = result.get("output")?;
    let uri = output.get("uri")?.as_str()?;
    let announced = output.get("mimeType").and_then(Value::as_str).unwrap_or("");
    if !announced.is_empty() && !is_image(announced) {
        return None;
    }
    let mut base = Map::new();
    if let Some(target) = arguments.get("app") {
        base.insert("app", target.clone());
    }
    let read = |why: String| {
        text_item(format!(
            "{why} Read it with jfgui_resources_read (uri {uri:?}) in chunks if you need it."
        ))
    };
    match resources::read_whole(app, &base, uri, MAX_IMAGE).await {
        Ok(Whole { bytes, mime_type }) if is_image(&mime_type) => {
            Some(image_item(&bytes, &mime_type))
        }
        Ok(Whole { mime_type, .. }) => {
            Some(read(format!("The render is {mime_type:?}, not an image to show.")))
        }
        Err(WholeError::TooLarge(total)) => Some(read(format!(
            "The image is {total} bytes, more than the {MAX_IMAGE} bytes shown inline; ask for a smaller one where the application's ui.render takes a size (its inputSchema says)."
        ))),
        Err(WholeError::NotFound) => Some(read("The render's resource is gone.".to_owned())),
        Err(WholeError::Failed(e)) => {
            Some(read(format!("The image could not be read ({}).", e.message)))
        }
    }
}

/// A chunk as text (textual and UTF-8) or as an image (a whole image), else nothing.
fn chunk(result: &Payload) -> Option<Payload> {
    let mime_type = result.get("mimeType")?.as_str()?;
    let data = BASE64.decode(result.get("data")?.as_str()?).ok()?;
    if resources::textual(mime_type) {
        return std::str::from_utf8(&data).ok().map(|text| text_item(text.to_owned()));
    }
    let offset = result.get("offset")?.as_u64()?;
    let eof = result.get("eof")?.as_bool()?;
    let whole = offset == 0 && eof && data.len() as u64 <= MAX_IMAGE;
    (whole && is_image(mime_type)).then(|| image_item(&data, mime_type))
}

fn is_image(mime_type: &str) -> bool {
    mime_type.trim().starts_with("image/")
}

fn image_item(bytes: &[u8], mime_type: &str) -> Payload {
    Payload::object([
        ("type", "image".into()),
        ("data", BASE64.encode(bytes).into()),
        ("mimeType", mime_type.into()),
    ])
}

fn text_item(text: String) -> Payload {
    Payload::object([("type", "text".into()), ("text", text.into())])
}

#[cfg(test)]
mod tests {
    use super::super::rpc::object;
    use super::*;

    fn chunk_of(mime: &str, bytes: &[u8], offset: u64, eof: bool) -> Payload {
        Payload::from(object([
            ("uri", "export://x".into()),
            ("mimeType", mime.into()),
            ("offset", offset.into()),
            ("totalSize", (offset + bytes.len() as u64 + u64::from(!eof)).into()),
            ("data", BASE64.encode(bytes).into()),
            ("eof", eof.into()),
        ]))
    }

    #[test]
    fn textual_utf8_chunks_are_text_and_whole_images_are_images() {
        let text = chunk(&chunk_of("text/plain", "héllo".as_bytes(), 0, true)).unwrap();
        assert_eq!(text.get("type").and_then(Value::as_str), Some("text"));
        assert_eq!(text.get("text").and_then(Value::as_str), Some("héllo"));
        // Not UTF-8 (a chunk may cut a character): nothing but the base64.
        assert!(chunk(&chunk_of("text/plain", &[0xc3], 0, false)).is_none());
        let png = chunk(&chunk_of("image/png", b"\x89PNG", 0, true)).unwrap();
        assert_eq!(png.get("type").and_then(Value::as_str), Some("image"));
        assert_eq!(png.get("mimeType").and_then(Value::as_str), Some("image/png"));
        // Part of an image is no image.
        assert!(chunk(&chunk_of("image/png", b"\x89PNG", 0, false)).is_none());
        assert!(chunk(&chunk_of("image/png", b"\x89PNG", 4, true)).is_none());
        assert!(chunk(&chunk_of("application/octet-stream", b"x", 0, true)).is_none());
    }
}
