// The web Notepad page: a textarea over the shared Notepad model (in web_notepad.wasm), the
// agent-access checkbox, and the bridge settings. The model is the one truth: the user's edits
// go into it (and move its revision), an agent's edits come out of it into the textarea.
//
// The page learns the bridge from the `{"url", "token", "origin"}` line `jfgui-agent
// browser-bridge` prints, pasted into the form, or from the URL fragment
// `#url=...&token=...` (jfgui-web-host's page.js: kept for this tab only). Its link
// reconnects by itself when the bridge or the daemon behind it comes back.

import {
  BridgeLink,
  WasmApp,
  bridgeFromLine,
  bridgeFromLocation,
} from './node_modules/jfgui-web-host/index.js';

const byId = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));
const textarea = /** @type {HTMLTextAreaElement} */ (byId('text'));
const access = /** @type {HTMLInputElement} */ (byId('agent-access'));
const form = /** @type {HTMLFormElement} */ (byId('bridge-form'));
const field = /** @type {HTMLInputElement} */ (byId('bridge'));
const linkState = /** @type {HTMLElement} */ (byId('link-state'));
const revision = /** @type {HTMLElement} */ (byId('revision'));

const app = await WasmApp.load(new URL('web_notepad.wasm', import.meta.url)).catch((e) => {
  setState('error', `${e.message} (was examples/web-notepad/build.sh run?)`);
  throw e;
});
app.input('');
app.check(app.exports.notepad_init());

/** @type {BridgeLink | null} */
let link = null;

// Offsets: the model counts characters (Unicode scalar values), the textarea UTF-16 units.

/** @param {string} text @param {number} units */
function toChars(text, units) {
  let chars = 0;
  let at = 0;
  for (const ch of text) {
    if (at >= units) break;
    at += ch.length;
    chars += 1;
  }
  return chars;
}

/** @param {string} text @param {number} chars */
function toUnits(text, chars) {
  let units = 0;
  let n = 0;
  for (const ch of text) {
    if (n >= chars) break;
    units += ch.length;
    n += 1;
  }
  return units;
}

/** The model's view: `{text, selection: {start, end}, revision, enabled}`. */
function view() {
  app.check(app.exports.notepad_view());
  return JSON.parse(app.outputText());
}

/** Shows the model: text and selection into the textarea where they differ, the revision. */
function show() {
  const v = view();
  const start = toUnits(v.text, v.selection.start);
  const end = toUnits(v.text, v.selection.end);
  if (textarea.value !== v.text) textarea.value = v.text;
  if (textarea.selectionStart !== start || textarea.selectionEnd !== end) {
    textarea.setSelectionRange(start, end);
  }
  revision.textContent = `revision ${v.revision}`;
  document.body.dataset.revision = String(v.revision);
}

/** The user typed, deleted, pasted or moved the selection: into the model. */
function userEdited() {
  const text = textarea.value;
  app.input(text);
  const status = app.exports.notepad_edit(
    toChars(text, textarea.selectionStart),
    toChars(text, textarea.selectionEnd),
  );
  if (status < 0) {
    // Refused (too long, say): the model is unchanged, and the textarea shows it again.
    setState('error', app.outputText());
    show();
  } else if (status === 1) {
    show();
  }
}

/** @param {string} state @param {string} [detail] */
function setState(state, detail) {
  document.body.dataset.link = state;
  const text = {
    idle: 'not connected: paste the line browser-bridge printed',
    connecting: 'connecting…',
    connected: 'connected to the bridge',
    retrying: 'reconnecting',
    error: 'error',
  }[state] ?? state;
  linkState.textContent = detail ? `${text}: ${detail}` : text;
}

/**
 * Replaces the link (the old one says nothing more) with one to `bridge`.
 * @param {{url: string, token: string}} bridge
 */
function connect(bridge) {
  link?.stop();
  link = new BridgeLink(app, bridge, { onChange: show, onState: setState });
  link.run();
}

textarea.addEventListener('input', userEdited);
for (const event of ['select', 'keyup', 'pointerup']) {
  textarea.addEventListener(event, userEdited);
}

access.checked = false;
access.addEventListener('change', () => {
  app.exports.jfgui_set_enabled(access.checked ? 1 : 0);
  link?.flush();
  document.body.dataset.agentAccess = access.checked ? 'on' : 'off';
});

form.addEventListener('submit', (event) => {
  event.preventDefault();
  try {
    connect(bridgeFromLine(field.value));
    field.value = '';
  } catch (e) {
    setState('error', e instanceof Error ? e.message : String(e));
  }
});

// Closing the tab, or leaving the page, ends the link at once.
addEventListener('pagehide', () => link?.stop());
addEventListener('pageshow', (event) => {
  if (event.persisted && link !== null) connect({ url: link.url, token: link.token });
});

show();
setState('idle');
document.body.dataset.agentAccess = 'off';
try {
  const bridge = bridgeFromLocation();
  if (bridge !== null) connect(bridge);
} catch (e) {
  setState('error', e instanceof Error ? e.message : String(e));
}
