// The browser half of the jfgui-agentd browser bridge, dependency-free.
//
// `WasmApp` loads a wasm module built with host-sdk's bridge endpoint and speaks its buffer
// protocol (the `jfgui_*` exports of host-sdk's `bridge::web`). `BridgeLink` runs the link to
// the bridge (docs/PROTOCOL.md, "The browser bridge"): POST /connect, then GET /poll in a loop,
// each poll answer handed to the wasm endpoint whole, each body it queues posted in order to
// /result (the answers) or /message (task changes, enable/disable, bye), and POST /disconnect
// when the page goes away; after any failure (the bridge or the daemon restarting) it connects
// again by itself. Every body is built and read on the wasm side, in strict JSON with exact
// ids; this module only moves bytes, so it never rounds a 64-bit id through a JavaScript
// number.

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Where `jfgui_next_post` says a body goes. */
const ROUTES = [null, '/result', '/message'];

/** Waits before reconnecting, by consecutive failures (ms). */
const RETRY_MS = [250, 1000, 2000, 5000];

/**
 * The exports every module built with host-sdk's `web_exports!` has (the app adds its own).
 * @typedef {object} BridgeExports
 * @property {WebAssembly.Memory} memory
 * @property {(len: number) => number} jfgui_input where to write `len` bytes of input
 * @property {() => number} jfgui_output where the last call's output starts
 * @property {() => number} jfgui_output_len how long it is
 * @property {() => number} jfgui_connect_body the `/connect` body into the output
 * @property {() => number} jfgui_connected reads the `/connect` answer from the input
 * @property {(nowMs: number) => number} jfgui_poll runs the `/poll` answer in the input
 * @property {(nowMs: number) => number} jfgui_tick ms until the next tick, or -1
 * @property {() => number} jfgui_next_post 0 nothing, 1 `/result`, 2 `/message`
 * @property {(on: number) => void} jfgui_set_enabled agent access on (1) or off (0)
 * @property {() => number} jfgui_closed 1 once the daemon said `bye`
 */

/** A wasm module with host-sdk's buffer protocol (see `BridgeExports`). */
export class WasmApp {
  /**
   * Fetches and instantiates the module at `url`. Goes through an ArrayBuffer rather than
   * `instantiateStreaming`, so any static server's MIME type for `.wasm` does.
   * @param {string | URL} url
   * @param {WebAssembly.Imports} [imports] what the module imports (host-sdk itself: nothing)
   */
  static async load(url, imports = {}) {
    const response = await fetch(url, { cache: 'no-cache' });
    if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
    const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), imports);
    return new WasmApp(instance.exports);
  }

  /** @param {WebAssembly.Exports} exports */
  constructor(exports) {
    /**
     * The raw exports: call them directly, then read `output()`. The app's own exports are
     * there too, untyped.
     * @type {BridgeExports & Record<string, any>}
     */
    this.exports = /** @type {any} */ (exports);
  }

  /**
   * Puts `data` (bytes, or a string as UTF-8) into the input buffer for the next call.
   * @param {Uint8Array | string} data
   */
  input(data) {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    const at = this.exports.jfgui_input(bytes.length) >>> 0;
    // A fresh view every time: the memory may have grown (and its old buffer detached).
    new Uint8Array(this.exports.memory.buffer, at, bytes.length).set(bytes);
  }

  /**
   * A copy of the last call's output.
   * @returns {Uint8Array<ArrayBuffer>}
   */
  output() {
    const at = this.exports.jfgui_output() >>> 0;
    const length = this.exports.jfgui_output_len() >>> 0;
    return new Uint8Array(this.exports.memory.buffer, at, length).slice();
  }

  /** The last call's output as text. */
  outputText() {
    return decoder.decode(this.output());
  }

  /**
   * Returns a call's status, or throws its reason when it failed (negative).
   * @param {number} status
   */
  check(status) {
    if (status < 0) throw new Error(this.outputText());
    return status;
  }
}

/**
 * The bridge's `{url, token}`: `url` must be `http://127.0.0.1:PORT`, where the bridge
 * listens, so the token is never sent anywhere else.
 * @param {{url: unknown, token: unknown}} bridge
 */
export function checkBridge(bridge) {
  const { url, token } = bridge;
  if (typeof url !== 'string' || typeof token !== 'string' || token === '') {
    throw new Error('the bridge needs a "url" and a "token"');
  }
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' || parsed.hostname !== '127.0.0.1' || parsed.port === '' ||
      (parsed.pathname !== '/' && parsed.pathname !== '')) {
    throw new Error(`the bridge URL must be http://127.0.0.1:PORT, not ${url}`);
  }
  return { url: parsed.origin, token };
}

/**
 * What a link tells its page.
 * @typedef {object} LinkHooks
 * @property {() => void} [onChange] after requests ran (the app's state may differ)
 * @property {(state: LinkState, detail?: string) => void} [onState] the link's state, and why
 *   it is retrying
 */

/** @typedef {'connecting' | 'connected' | 'retrying'} LinkState */

/**
 * One page's link to the bridge. See the module comment. A link that was stopped tells its
 * hooks nothing more, so a page that replaces its link only ever hears the current one.
 */
export class BridgeLink {
  /**
   * @param {WasmApp} app
   * @param {{url: string, token: string}} bridge from `checkBridge`
   * @param {LinkHooks} [hooks]
   */
  constructor(app, bridge, hooks = {}) {
    /** @private */
    this.app = app;
    /** The bridge's URL. */
    this.url = bridge.url;
    /** The bridge's token. */
    this.token = bridge.token;
    /** @private */
    this.hooks = hooks;
    /** @private @type {string | null} */
    this.client = null;
    /** Whether `stop()` was called. */
    this.stopped = false;
    /** @private */
    this.aborter = new AbortController();
    /** @private @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    /** @private Posts go one after another, in the order the endpoint queued them. */
    this.posting = Promise.resolve();
  }

  /**
   * Connects and serves until `stop()`, connecting again with backoff (0.25 s to 5 s) after
   * any failure: a bridge that is gone (its daemon restarting) comes back on the same URL
   * with the same token, and the app registers anew.
   */
  async run() {
    let failures = 0;
    while (!this.stopped) {
      try {
        this.state('connecting');
        await this.connect();
        failures = 0;
        this.state('connected');
        await this.serve();
      } catch (e) {
        if (this.stopped) break;
        this.client = null;
        this.state('retrying', e instanceof Error ? e.message : String(e));
      }
      if (this.stopped) break;
      await sleep(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
    }
  }

  /**
   * Posts anything the endpoint queued (after a local change such as the enable switch).
   */
  flush() {
    // A stopped link takes nothing from the endpoint: a newer link may be serving it.
    if (this.stopped) return;
    /** @type {[string, Uint8Array<ArrayBuffer>][]} */
    const posts = [];
    for (;;) {
      const route = this.app.check(this.app.exports.jfgui_next_post());
      if (route === 0) break;
      const path = ROUTES[route];
      if (!path) throw new Error(`jfgui_next_post returned an unknown route ${route}`);
      posts.push([path, this.app.output()]);
    }
    if (posts.length === 0 || this.client === null) return;
    this.posting = this.posting.then(async () => {
      for (const [path, body] of posts) {
        if (this.stopped) return;
        try {
          const response = await this.request(path, body);
          if (!response.ok) console.warn(`bridge ${path}: ${await describe(response)}`);
        } catch (e) {
          console.warn(`bridge ${path}:`, e);
        }
      }
    });
  }

  /**
   * Ends the link: stops polling and tells the bridge (`/disconnect`, sent with `keepalive`
   * so it survives the page being closed), which removes the app at once; without it the
   * bridge expires the tab after its expiry time. From here on the hooks hear nothing.
   */
  stop() {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.aborter.abort();
    if (this.client !== null) {
      const body = JSON.stringify({ client: this.client });
      this.request('/disconnect', body, { keepalive: true }).catch(() => {});
    }
  }

  /** @private */
  async connect() {
    this.app.check(this.app.exports.jfgui_connect_body());
    const response = await this.request('/connect', this.app.output());
    if (!response.ok) throw new Error(`/connect: ${await describe(response)}`);
    const answer = new Uint8Array(await response.arrayBuffer());
    // The client id is a string, so JSON.parse keeps it exactly.
    const client = JSON.parse(decoder.decode(answer)).client;
    if (this.stopped) {
      // Stopped while connecting: the wasm endpoint may serve a newer link by now. Leave
      // the bridge free for it at once rather than after its expiry.
      this.request('/disconnect', JSON.stringify({ client }), { keepalive: true }).catch(() => {});
      throw new Error('stopped');
    }
    this.app.input(answer);
    this.app.check(this.app.exports.jfgui_connected());
    this.client = client;
    // The enable switch may have moved while connecting.
    this.flush();
  }

  /** @private Polls until the link ends (a `bye`, or the bridge no longer knowing this client). */
  async serve() {
    while (!this.stopped) {
      const query = `/poll?client=${encodeURIComponent(/** @type {string} */ (this.client))}`;
      const response = await this.request(query, undefined, { signal: this.aborter.signal });
      if (!response.ok) throw new Error(`/poll: ${await describe(response)}`);
      const answer = new Uint8Array(await response.arrayBuffer());
      // A stopped link hands nothing to the endpoint, which may serve a newer link by now
      // (its /disconnect fails what this poll delivered).
      if (this.stopped) return;
      this.app.input(answer);
      const ran = this.app.check(this.app.exports.jfgui_poll(performance.now()));
      this.tick();
      if (ran > 0) this.hooks.onChange?.();
      if (this.app.exports.jfgui_closed() === 1) {
        throw new Error(`the daemon ended the link (${this.app.outputText()})`);
      }
    }
  }

  /** @private Advances the app's tasks, posts what they queued, and comes back when the next is due. */
  tick() {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const next = this.app.exports.jfgui_tick(performance.now());
    if (next >= 0) this.timer = setTimeout(() => this.tick(), Math.ceil(next));
    this.flush();
  }

  /**
   * @private
   * One request to the bridge: the token in `Authorization`, never in the URL; no cookies,
   * no referrer, no cache, and a redirect is an error (the token stays on the bridge).
   * @param {string} path
   * @param {BodyInit | undefined} body `undefined` for a GET
   * @param {RequestInit} extra
   */
  request(path, body, extra = {}) {
    /** @type {Record<string, string>} */
    const headers = { Authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return fetch(this.url + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body,
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
      referrerPolicy: 'no-referrer',
      ...extra,
    });
  }

  /**
   * @private
   * @param {LinkState} state
   * @param {string} [detail]
   */
  state(state, detail) {
    if (!this.stopped) this.hooks.onState?.(state, detail);
  }
}

/**
 * An error answer as `status reason: message` (the bridge's `{"error": {reason, message}}`).
 * @param {Response} response
 */
async function describe(response) {
  const text = await response.text().catch(() => '');
  try {
    const { reason, message } = JSON.parse(text).error;
    return `${response.status} ${reason}: ${message}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
