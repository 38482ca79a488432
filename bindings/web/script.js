// A web app written in JavaScript only: its actions declared in JSON, implemented as
// functions, behind the generic host `jfgui_web_host.wasm` (this package's wasm, built from
// host-sdk). The wasm's Dispatcher runs every contract before a function is called and after
// it answered: agent access, the action's existence, its input schema, capabilities,
// availability, `expectedRevision`, the output schema, batch preflight and transactions, the
// size bounds. A function only applies the action.
//
// The wasm asks the page through two imports (`jfgui.script_call`, `jfgui.script_reply`),
// one JSON request at a time, while it runs a request; this module answers them from the
// app's functions and never calls back into the wasm meanwhile (task reports made inside a
// function are applied right after it returns).

import { BridgeLink, WasmApp, checkBridge } from './bridge.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * One action, in the shape `jfgui-agent describe` shows (the C ABI and the Python package
 * take the same). Schemas are the JSON Schema subset the daemon renders: `{}`, `type` one of
 * `null`, `boolean`, `integer` (`minimum`, `maximum`), `number`, `string` (`maxLength`,
 * `enum`), `array` (`items`, `maxItems`), `object` (`properties`, `required`,
 * `additionalProperties: false`), and `anyOf`; any other keyword is refused.
 * @typedef {object} ActionDeclaration
 * @property {string} name dotted, e.g. `counter.add`
 * @property {string} description one sentence
 * @property {'read' | 'write'} kind a write needs `expectedRevision` from agents
 * @property {object} [inputSchema] default: an object with no members
 * @property {object} [outputSchema] default: any object
 * @property {number} [capabilities] bits a caller must hold (default 0)
 * @property {boolean} [undo]
 * @property {string} [transaction] the domain an atomic batch rolls back
 * @property {number} [commandId]
 */

/**
 * Who is calling `execute`.
 * @typedef {object} CallInfo
 * @property {boolean} external an agent through the daemon (false: the app's own `execute`)
 * @property {string | null} request the daemon's request id, as a decimal string
 * @property {number | null} batchIndex the call's index in a batch
 * @property {boolean} inTransaction inside an atomic batch
 */

/**
 * @typedef {object} ResourceInfo
 * @property {string} uri
 * @property {string} name
 * @property {string} mimeType
 * @property {number} [size]
 */

/**
 * The app: its name, its actions and the functions behind them. Only `revision` and
 * `execute` are required; each optional part left out answers as a Rust app's default would.
 * Functions answer synchronously (for long work, return a `Deferred` and report the task).
 * @typedef {object} AppDefinition
 * @property {string} name the display name (agents see its slug, e.g. `web-counter`)
 * @property {ActionDeclaration[]} actions
 * @property {() => number} revision moves (increases) with every change of state, and only then
 * @property {(action: string, input: any, call: CallInfo) => any} execute applies the action:
 *   returns its output (`undefined`: `{}`) or a `Deferred`; throws `HostError` to refuse
 * @property {() => number} [capabilities] the bits callers are granted (default 0)
 * @property {(action: string) => ({code: string, explanation: string} | null)} [availability]
 *   why an action cannot run now (default: always available)
 * @property {(input: any) => object} [inspect] the state for `state/inspect` (default `{}`)
 * @property {Transactions} [transactions] atomic batches over the declared domains
 * @property {() => ResourceInfo[]} [resources] the resources offered
 * @property {(uri: string) => ({mimeType: string, bytes: Uint8Array} | null)} [readResource]
 *   a resource, whole (the wasm hands it out in chunks)
 * @property {(tasks: string[]) => void} [cancel] clients asked to cancel these tasks; report
 *   `cancelled` (or the end) later. Without it a cancel request stops the task at once.
 */

/**
 * What atomic batches need: all four, or leave `transactions` out (then an atomic batch
 * touching a domain is refused before anything runs).
 * @typedef {object} Transactions
 * @property {(domain: string) => boolean} supports
 * @property {(domains: string[]) => void} begin start grouping changes (throw to refuse)
 * @property {() => void} commit keep them, as one undo step
 * @property {() => void} rollback restore the state and the revision of `begin`
 */

/** Thrown by an app function: the caller gets `failed/host_error` with this `code`. */
export class HostError extends Error {
  /**
   * @param {string} code machine-readable, e.g. `out_of_range`
   * @param {string} message one sentence
   */
  constructor(code, message) {
    super(message);
    this.name = 'HostError';
    this.code = code;
  }
}

/** Returned by `execute` for long work: the task's id; report it through `host.tasks`. */
export class Deferred {
  /** @param {string} task an id unique among the app's unfinished tasks (≤ 128 bytes) */
  constructor(task) {
    this.task = task;
  }
}

/**
 * The host channel's error object, `{code, class, reason, message, data}`: what the
 * Dispatcher refused an app's own `execute` with (`not_executed/schema_violation`, ...).
 */
export class ActionError extends Error {
  /** @param {{code: number, class: string, reason: string, message: string, data: object}} wire */
  constructor(wire) {
    super(wire.message);
    this.name = 'ActionError';
    this.code = wire.code;
    this.class = wire.class;
    this.reason = wire.reason;
    this.data = wire.data;
  }
}

/**
 * A successful call: `{output, revision}`, or `{task, revision}` when it started a task.
 * @typedef {{output: any, revision: number} | {task: object, revision: number}} CallResult
 */

/** The JavaScript app behind the generic wasm host, and its link to the bridge. */
export class ScriptHost {
  /**
   * Loads the generic host (this package's `jfgui_web_host.wasm`, or `options.wasm`) and
   * declares `app`; agent access is off until `setEnabled(true)`.
   * @param {AppDefinition} app
   * @param {{wasm?: string | URL}} [options]
   */
  static async load(app, options = {}) {
    const host = new ScriptHost(app);
    const url = options.wasm ?? new URL('./jfgui_web_host.wasm', import.meta.url);
    host.wasm = await WasmApp.load(url, { jfgui: host.imports() });
    const hooks = [];
    if (app.capabilities) hooks.push('capabilities');
    if (app.availability) hooks.push('availability');
    if (app.inspect) hooks.push('inspect');
    if (app.transactions) hooks.push('transactions');
    if (app.resources && app.readResource) hooks.push('resources');
    if (app.cancel) hooks.push('cancel');
    host.wasm.input(JSON.stringify({ name: app.name, actions: app.actions, hooks }));
    host.wasm.check(host.wasm.exports.jfgui_declare());
    return host;
  }

  /**
   * Use `ScriptHost.load`.
   * @param {AppDefinition} app
   */
  constructor(app) {
    /** The app's definition. */
    this.app = app;
    /** The generic host's module. @type {WasmApp} */
    this.wasm = /** @type {any} */ (null);
    /** The current link to the bridge (`connect`). @type {BridgeLink | null} */
    this.link = null;
    /** @private Nonzero while the wasm waits for one of the app's functions. */
    this.busy = 0;
    /** @private @type {Uint8Array | null} */
    this.reply = null;
    /** @private @type {object[]} task reports made while busy, applied when it returns */
    this.queued = [];
    /** Reports progress and ends of deferred work (from anywhere, also inside functions). */
    this.tasks = {
      /**
       * @param {string} task
       * @param {number} done units done so far
       * @param {number} [total] units in all
       * @param {string} [message] a short status line
       */
      progress: (task, done, total, message) =>
        this.report({ task, progress: { done, total, message } }),
      /** @param {string} task @param {any} [result] the task's result (default `{}`) */
      complete: (task, result) => this.report({ task, complete: result ?? {} }),
      /** @param {string} task @param {string} code @param {string} message */
      fail: (task, code, message) => this.report({ task, fail: { code, message } }),
      /** @param {string} task stopped after a cancel request */
      cancelled: (task) => this.report({ task, cancelled: true }),
    };
  }

  /**
   * Agent access on or off (the user's switch); the daemon is told.
   * @param {boolean} on
   */
  setEnabled(on) {
    this.wasm.exports.jfgui_set_enabled(on ? 1 : 0);
    this.link?.flush();
  }

  /**
   * The app's own call of one of its actions, through the same checks an agent's call gets
   * except agent access and `expectedRevision`: the schemas, capabilities, availability. So
   * the app's UI moves the revision an agent must name. Throws `ActionError` when refused.
   * @param {string} action
   * @param {any} [input]
   * @returns {CallResult}
   */
  execute(action, input = {}) {
    this.wasm.input(JSON.stringify({ action, input }));
    this.wasm.check(this.wasm.exports.jfgui_execute());
    const answer = JSON.parse(this.wasm.outputText());
    this.link?.flush();
    if (answer.error) throw new ActionError(answer.error);
    return answer.ok.executed ?? answer.ok.deferred;
  }

  /**
   * Connects to the bridge (`{url, token}`, as `jfgui-agent browser-bridge` printed it) and
   * serves it until `disconnect()`, reconnecting by itself; replaces an earlier link.
   * @param {{url: unknown, token: unknown}} bridge
   * @param {import('./bridge.js').LinkHooks} [hooks]
   */
  connect(bridge, hooks = {}) {
    this.link?.stop();
    this.link = new BridgeLink(this.wasm, checkBridge(bridge), hooks);
    this.link.run();
    return this.link;
  }

  /** Ends the link (the app leaves the daemon at once). */
  disconnect() {
    this.link?.stop();
    this.link = null;
  }

  /** @private @param {object} report */
  report(report) {
    this.queued.push(report);
    // Inside a function the wasm is busy: the reports go in right after it returns.
    if (this.busy > 0) {
      if (this.queued.length === 1) queueMicrotask(() => this.applyQueued(true));
      return;
    }
    this.applyQueued(false);
  }

  /** @private @param {boolean} later whether the caller is gone (then a refusal can only be logged) */
  applyQueued(later) {
    const reports = this.queued;
    this.queued = [];
    if (reports.length === 0) return;
    this.wasm.input(JSON.stringify(reports));
    const status = this.wasm.exports.jfgui_report_tasks();
    this.link?.flush();
    if (status < 0) {
      const error = new Error(`task report refused: ${this.wasm.outputText()}`);
      if (!later) throw error;
      console.error(error);
    }
  }

  /** @private The wasm's imports: requests to the app's functions, answered in JSON. */
  imports() {
    return {
      /** @param {number} at @param {number} length */
      script_call: (at, length) => {
        const memory = this.wasm.exports.memory;
        const request = JSON.parse(decoder.decode(new Uint8Array(memory.buffer, at, length)));
        this.reply = encoder.encode(this.answer(request.method, request.params));
        return this.reply.length;
      },
      /** @param {number} at */
      script_reply: (at) => {
        const reply = /** @type {Uint8Array} */ (this.reply);
        new Uint8Array(this.wasm.exports.memory.buffer, at, reply.length).set(reply);
        this.reply = null;
      },
    };
  }

  /**
   * @private
   * One request of the wasm, answered `{"ok": ...}`, `{"error": {code, message}}` (a
   * `HostError`) or `{"bug": ...}` (anything else thrown), as JSON text.
   * @param {string} method
   * @param {any} params
   */
  answer(method, params) {
    this.busy += 1;
    try {
      return JSON.stringify({ ok: this.run(method, params) });
    } catch (e) {
      if (e instanceof HostError) {
        return JSON.stringify({ error: { code: e.code, message: e.message } });
      }
      console.error(`jfgui-web-host: the app's ${method} threw`, e);
      return JSON.stringify({ bug: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    } finally {
      this.busy -= 1;
    }
  }

  /**
   * @private
   * @param {string} method
   * @param {any} p
   */
  run(method, p) {
    const app = this.app;
    switch (method) {
      case 'revision':
        return app.revision();
      case 'capabilities':
        return app.capabilities?.() ?? 0;
      case 'execute': {
        const out = app.execute(p.action, p.input, p.call);
        if (out instanceof Deferred) return { deferred: out.task };
        if (typeof out?.then === 'function') {
          throw new TypeError(`execute of ${p.action} returned a Promise: answer synchronously, or return a Deferred and report the task`);
        }
        return { output: out === undefined ? {} : out };
      }
      case 'availability':
        return app.availability?.(p.action) ?? null;
      case 'inspect':
        return app.inspect?.(p.input) ?? {};
      case 'supportsTransaction':
        return app.transactions?.supports(p.domain) === true;
      case 'beginTransaction':
        app.transactions?.begin(p.domains);
        return null;
      case 'commitTransaction':
        app.transactions?.commit();
        return null;
      case 'rollbackTransaction':
        app.transactions?.rollback();
        return null;
      case 'resources':
        return app.resources?.() ?? [];
      case 'readResource': {
        const resource = app.readResource?.(p.uri);
        return resource ? { mimeType: resource.mimeType, base64: base64(resource.bytes) } : null;
      }
      case 'cancel':
        app.cancel?.(p.tasks);
        return null;
      default:
        throw new TypeError(`unknown request ${method}`);
    }
  }
}

/** @param {Uint8Array} bytes */
function base64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
