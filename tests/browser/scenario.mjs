#!/usr/bin/env node
// The web apps in real browsers: Debian's Chromium (over CDP) and Firefox ESR (over WebDriver
// BiDi), headless, driven by puppeteer-core, against the real daemon, the real `jfgui-agent
// browser-bridge` and the official Python MCP client. Called by run.sh, which holds the lock on
// /run that tests/mcp-clients/driver.py takes:
//
//   node scenario.mjs --bin-dir DIR --python VENV/bin/python --artifacts DIR --package TGZ
//        [chromium] [firefox]
//
// Each page is served from a project of its own, as an app author has it: an empty directory,
// `npm install TGZ` (the jfgui-web-host tarball `npm pack` made), then the page's files
// beside node_modules; the page imports node_modules/jfgui-web-host. The web Notepad
// (examples/web-notepad: a Rust app, its own wasm) uses the package's bridge loop; the web
// Counter (examples/web-counter) is JavaScript only, on the package's generic wasm host.
//
// The daemon runs where a login session has it, /run/user/UID/jfgui-agent (XDG_RUNTIME_DIR;
// /run/user/UID is created 0700 when missing and removed again), never through
// JFGUI_RUNTIME_DIR: the MCP client starts its gateway as users configure it, without `env`,
// through tests/mcp-clients/record.py, and every line the gateway writes is checked against
// the official MCP schema of its revision afterwards (driver.py's check_records).
//
// For each browser, with a fresh browser profile and ports:
//  1. jfgui-agentd; the Notepad project served by `python3 -m http.server` on 127.0.0.1 (its
//     origin);
//     `jfgui-agent browser-bridge --origin ORIGIN --token-file F`;
//  2. the page opened with the bridge in the URL fragment (Chromium) or pasted into its form
//     (Firefox); it attaches and `jfgui-agent list` shows it, disabled: calls are refused;
//  3. the agent-access box ticked: the app turns enabled;
//  4. the official Python MCP client (tests/mcp-clients/python/client_check.py: edits, a stale
//     write, a failing atomic batch, an export task cancelled, a PNG read in chunks) through
//     `jfgui-agent stdio SLUG --protocol mcp`, in 2026-07-28 and in 2025-11-25; after each the
//     textarea (read from the DOM) shows the edit and nothing of the refused writes, and after
//     the first a screenshot is written to the artifacts;
//  5. a stale write from the CLI leaves the textarea and its revision unchanged;
//  6. the user types into the textarea (real key events): the model's revision moves, and a
//     write naming the revision from before the typing is refused;
//  7. more than 16 requests in several /rpc sessions through the bridge: waves of concurrent
//     `browser-call`s in JSON-1 and MCP sessions, a write through `browser-call`, a JSON-1
//     session through `browser-stdio`, and the Python MCP client through `browser-stdio`;
//     then `jfgui-agent check SLUG --mutate` finds no FAIL;
//  8. the daemon restarted under the connected tab: `browser-bridge` reopens the bridge on its
//     URL with its token, the page reconnects by itself, without a reload, says "connected"
//     again and is edited again; then `browser-bridge` itself restarted (a new URL and token):
//     its line pasted into the form, the page says "connected" (not the old link's last word)
//     and is edited again;
//  9. the tab closed: the endpoint disappears from `jfgui-agent list`, at once through the
//     page's pagehide /disconnect (a keepalive fetch; it needs a CORS preflight, which Firefox
//     sometimes drops with the closing page), else through the bridge's expiry (lowered to
//     5 s here); the daemon's log says which;
// 10. the web Counter (JavaScript only), its bridge's line read from `--info-file`: attached
//     and enabled, agents' writes change the page, and every contract holds before its
//     functions run (schema, stale revision, an atomic batch rolled back when the app refuses
//     its last call, the user's own clicks moving the revision), a task followed to its end.
// 11. the package README's JavaScript-only app, its code blocks served as written: an agent's
//     write shows on the page, a write its schema refuses does not.
//
// A browser that cannot start fails the run, unless JFGUI_ALLOW_SKIP=1.

import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
/** Each page's files, copied beside its project's node_modules. */
const PAGES = {
  notepad: path.join(root, 'examples/web-notepad/www'),
  counter: path.join(root, 'examples/web-counter/www'),
};
const MCP_CLIENTS = path.join(root, 'tests/mcp-clients');
const CLIENT_CHECK = path.join(MCP_CLIENTS, 'python/client_check.py');
const PYTHON_EDIT = 'Hello from Python. ';
const TYPED = ' typed by the user';
const STEP_TIMEOUT_MS = 30_000;

const { values: options, positionals } = parseArgs({
  options: {
    'bin-dir': { type: 'string' },
    python: { type: 'string' },
    artifacts: { type: 'string' },
    package: { type: 'string' },
  },
  allowPositionals: true,
});
for (const name of ['bin-dir', 'python', 'artifacts', 'package']) {
  if (!options[name]) throw new Error(`--${name} is required`);
}
const binDir = path.resolve(options['bin-dir']);
const python = path.resolve(options.python);
const artifacts = path.resolve(options.artifacts);
const tarball = path.resolve(/** @type {string} */ (options.package));
const agent = path.join(binDir, 'jfgui-agent');
const allowSkip = process.env.JFGUI_ALLOW_SKIP === '1';

/** How each browser is started: the Debian binaries, headless, a fresh profile. */
const BROWSERS = {
  chromium: {
    bridgeBy: 'fragment',
    launch: (/** @type {string} */ profile) => ({
      browser: /** @type {const} */ ('chrome'),
      executablePath: '/usr/bin/chromium',
      headless: true,
      userDataDir: profile,
      // The machine's network is closed: anything Chromium fetches in the background fails
      // and can stall the start.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    }),
  },
  firefox: {
    bridgeBy: 'paste',
    launch: (/** @type {string} */ profile) => ({
      browser: /** @type {const} */ ('firefox'),
      protocol: /** @type {const} */ ('webDriverBiDi'),
      executablePath: '/usr/bin/firefox-esr',
      headless: true,
      userDataDir: profile,
    }),
  },
};

function log(/** @type {string} */ message) {
  console.log(`[browser] ${message}`);
}

function expect(/** @type {unknown} */ condition, /** @type {string} */ what) {
  if (!condition) throw new Error(`FAILED: ${what}`);
  log(`ok: ${what}`);
}

/** The browser could not be started (a skip only with JFGUI_ALLOW_SKIP=1). */
class LaunchError extends Error {}

/** Every child still running, killed if this script dies early (puppeteer does the same for
 * the browsers), so a crash leaves no daemon or bridge behind. */
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A child process whose output is kept, stopped with SIGTERM (then SIGKILL). */
class Proc {
  /**
   * @param {string} name
   * @param {string} command
   * @param {string[]} args
   * @param {NodeJS.ProcessEnv} env
   */
  constructor(name, command, args, env) {
    this.name = name;
    this.stdout = '';
    this.stderr = '';
    this.child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(this.child);
    this.child.on('exit', () => live.delete(this.child));
    this.child.stdout.on('data', (d) => { this.stdout += d; });
    this.child.stderr.on('data', (d) => { this.stderr += d; });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => resolve({ code, signal }));
      this.child.on('error', (error) => resolve({ code: null, signal: null, error }));
    });
  }

  running() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Waits for `pattern` in stdout or stderr.
   * @param {RegExp} pattern
   * @param {'stdout' | 'stderr'} stream
   */
  async waitFor(pattern, stream) {
    return waitFor(() => {
      const match = this[stream].match(pattern);
      if (match) return match;
      if (!this.running()) throw new Error(`${this.name} exited: ${this.stderr}`);
      return null;
    }, `${this.name} to print ${pattern}`);
  }

  async stop() {
    if (!this.running()) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * Polls `probe` until it returns something other than null/false.
 * @template T
 * @param {() => T | Promise<T>} probe
 * @param {string} what
 * @param {number} timeout
 * @returns {Promise<NonNullable<T>>}
 */
async function waitFor(probe, what, timeout = STEP_TIMEOUT_MS) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== false && value !== undefined) return /** @type {any} */ (value);
    if (Date.now() > deadline) throw new Error(`FAILED: timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs a command to its end.
 * @param {string} command
 * @param {string[]} args
 * @param {{env: NodeJS.ProcessEnv, input?: string, cwd?: string, timeout?: number}} how
 * @returns {Promise<{code: number | null, stdout: string, stderr: string}>}
 */
function run(command, args, { env, input, cwd, timeout = 180_000 }) {
  return new Promise((resolve, reject) => {
    // Without input, stdin is /dev/null: nothing to write into a pipe the child may have
    // closed already.
    const child = spawn(command, args, { env, cwd, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    live.add(child);
    child.on('exit', () => live.delete(child));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`FAILED: ${path.basename(command)} ${args.join(' ')} ran over ${timeout} ms`));
    }, timeout);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // a child that exits early: its answer tells
      child.stdin.end(input);
    }
  });
}

/**
 * /run/user/UID as systemd-logind makes it (0700, ours), created when missing; `release`
 * removes what was created: the dirs, or only `jfgui-agent` inside an existing one (as
 * tests/mcp-clients/driver.py does).
 */
function runUser() {
  const dir = `/run/user/${process.getuid?.()}`;
  const runtime = path.join(dir, 'jfgui-agent');
  /** @type {string[]} */
  const created = [];
  for (const [p, mode] of /** @type {const} */ ([['/run/user', 0o755], [dir, 0o700]])) {
    if (!existsSync(p)) {
      mkdirSync(p, { mode });
      chmodSync(p, mode);
      created.push(p);
    }
  }
  if (existsSync(runtime)) throw new Error(`FAILED: ${runtime} exists: another daemon may run there`);
  created.push(runtime);
  const release = () => {
    for (const p of created.reverse()) rmSync(p, { recursive: true, force: true });
  };
  return { dir, runtime, release };
}

/** The package README, whose JavaScript-only app is served as written. */
const README = path.join(root, 'bindings/web/README.md');

/** @typedef {keyof PAGES | 'readme'} Project */

/**
 * The projects the pages are served from: for each page an empty directory with the package
 * tarball installed by npm, the page's files beside node_modules (for `readme`, the README's
 * first `js` block as counter.js and its first `html` block as index.html).
 * @returns {Promise<Record<Project, string>>}
 */
async function installProjects() {
  const projects = /** @type {Record<Project, string>} */ ({});
  for (const name of /** @type {Project[]} */ ([...Object.keys(PAGES), 'readme'])) {
    const dir = await mkdtemp(path.join(tmpdir(), `jfgui-web-${name}-`));
    await writeFile(path.join(dir, 'package.json'),
      JSON.stringify({ name: `jfgui-browser-${name}`, private: true }) + '\n');
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball],
      { env: process.env, cwd: dir });
    if (installed.code !== 0) throw new Error(`FAILED: npm install ${tarball}: ${installed.stderr}`);
    if (name === 'readme') {
      const text = await readFile(README, 'utf8');
      const block = (/** @type {string} */ lang) => text.match(new RegExp('```' + lang + '\\n([\\s\\S]*?)```'))?.[1];
      await writeFile(path.join(dir, 'counter.js'), block('js') ?? '');
      await writeFile(path.join(dir, 'index.html'), block('html') ?? '');
    } else {
      // Only the page's own files: never a node_modules of a checkout's local install.
      const www = PAGES[name];
      await cp(www, dir, {
        recursive: true,
        filter: (src) => !/(^|\/)(node_modules|package(-lock)?\.json)$/.test(path.relative(www, src)),
      });
    }
    const module = path.join(dir, 'node_modules/jfgui-web-host');
    const manifest = JSON.parse(await readFile(path.join(module, 'package.json'), 'utf8'));
    const shipped = ['index.js', 'bridge.js', 'page.js', 'script.js', 'types/index.d.ts', 'jfgui_web_host.wasm', 'LICENSE'];
    expect(shipped.every((f) => existsSync(path.join(module, f))) && manifest.types === './types/index.d.ts',
      `${name}: npm installed jfgui-web-host ${manifest.version} from the tarball ` +
      `(wasm ${statSync(path.join(module, 'jfgui_web_host.wasm')).size} bytes, types) into ${dir}`);
    projects[name] = dir;
  }
  return projects;
}

/**
 * One browser's whole scenario; returns its version, or null when skipped.
 * @param {'chromium' | 'firefox'} kind
 * @param {Record<Project, string>} projects
 */
async function scenario(kind, projects) {
  const spec = BROWSERS[kind];
  const home = runUser();
  const scratch = await mkdtemp(path.join(tmpdir(), `jfgui-browser-${kind}-`));
  const records = path.join(scratch, 'records');
  await mkdir(records);
  const runtime = home.runtime;
  const env = { ...process.env, XDG_RUNTIME_DIR: home.dir, JFGUI_LOG: 'info' };
  delete env.JFGUI_RUNTIME_DIR;
  delete env.JFGUI_BRIDGE_TOKEN;
  // What the MCP client needs to start the recorded gateway (the gateway itself gets none).
  const clientEnv = {
    ...env,
    JFGUI_AGENT: agent,
    JFGUI_PYTHON: python,
    JFGUI_RECORDER: path.join(MCP_CLIENTS, 'record.py'),
    JFGUI_RECORD_DIR: records,
  };
  /** @type {Proc[]} */
  const procs = [];
  /** @type {import('puppeteer-core').Browser | undefined} */
  let browser;
  const cli = (/** @type {string[]} */ args, extra = {}) => run(agent, args, { env, ...extra });
  const apps = async () => JSON.parse((await cli(['list', '--json'])).stdout).apps;
  const inspect = async (/** @type {string} */ slug) => {
    const r = await cli(['inspect', slug, '--json']);
    if (r.code !== 0) throw new Error(`inspect ${slug}: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  /** Starts jfgui-agentd and waits until it answers. @param {string} name */
  const startDaemon = async (name) => {
    const proc = new Proc(name, path.join(binDir, 'jfgui-agentd'),
      ['--bridge-expiry', '5s', '--bridge-poll-wait', '3s'], env);
    procs.push(proc);
    await waitFor(async () => {
      if (!proc.running()) throw new Error(`the daemon exited: ${proc.stderr}`);
      const status = await cli(['status', '--json']);
      return status.code === 0 && JSON.parse(status.stdout).pid === proc.child.pid;
    }, `${name} to answer`);
    return proc;
  };
  /** Serves a project on a free port; returns its origin. @param {string} name @param {string} dir */
  const serve = async (name, dir) => {
    const server = new Proc(name, 'python3',
      ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], env);
    procs.push(server);
    return `http://127.0.0.1:${(await server.waitFor(/port (\d+)/, 'stdout'))[1]}`;
  };
  try {
    // 1. Daemon, page server, bridge.
    let daemon = await startDaemon('jfgui-agentd');
    const origin = await serve('http.server', projects.notepad);
    const tokenFile = path.join(scratch, 'bridge.token');
    const bridgeProc = new Proc('browser-bridge', agent,
      ['browser-bridge', '--origin', origin, '--token-file', tokenFile], env);
    procs.push(bridgeProc);
    const line = (await bridgeProc.waitFor(/^\{.*\}$/m, 'stderr'))[0];
    const bridge = JSON.parse(line);
    expect(bridge.origin === origin && /^http:\/\/127\.0\.0\.1:\d+$/.test(bridge.url),
      `browser-bridge printed {url, token, origin} for ${origin}: ${bridge.url}`);

    // 2. The browser and the page.
    try {
      browser = await puppeteer.launch(spec.launch(path.join(scratch, 'profile')));
    } catch (e) {
      throw new LaunchError(`${kind} did not start: ${e instanceof Error ? e.message : e}`);
    }
    const version = await browser.version();
    log(`${kind}: ${version}`);
    const page = await browser.newPage();
    await page.setViewport({ width: 900, height: 520 });
    page.on('console', (m) => log(`${kind} console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log(`${kind} page error: ${e}`));
    if (spec.bridgeBy === 'fragment') {
      const fragment = new URLSearchParams({ url: bridge.url, token: bridge.token });
      await page.goto(`${origin}/#${fragment}`);
    } else {
      await page.goto(`${origin}/`);
      await page.waitForSelector('body[data-link="idle"]');
      await page.type('#bridge', line);
      await page.click('#bridge-form button');
    }
    await page.waitForSelector('body[data-link="connected"]', { timeout: STEP_TIMEOUT_MS });
    expect(!page.url().includes(bridge.token), `the token is not left in the address bar (${spec.bridgeBy})`);
    const listed = await waitFor(async () => (await apps()).find((/** @type {any} */ a) =>
      a.displayName === 'Web Notepad'), 'the web Notepad in `jfgui-agent list`');
    const slug = listed.slug;
    expect(listed.enabled === false && listed.endpoint === null,
      `\`list\` shows ${slug}, disabled and without an endpoint until the box is ticked`);
    const refused = await cli(['call', slug, 'document.get', '--json']);
    expect(refused.code === 3, `so a call finds no endpoint (exit ${refused.code}): ${refused.stderr.trim()}`);

    // 3. The user allows agent access.
    await page.click('#agent-access');
    const enabled = await waitFor(async () => (await apps()).find((/** @type {any} */ a) =>
      a.slug === slug && a.enabled), 'the app to turn enabled');
    expect(enabled.endpoint !== null && existsSync(enabled.endpoint),
      `ticking the box enables the app and opens its endpoint ${enabled.endpoint}`);

    const textarea = () => page.$eval('#text', (t) => /** @type {HTMLTextAreaElement} */ (t).value);
    const shownRevision = () => page.$eval('body', (b) => Number(/** @type {HTMLElement} */ (b).dataset.revision));

    // 4. The official Python MCP client, both revisions, through `jfgui-agent stdio SLUG`.
    for (const [i, mode] of /** @type {const} */ (['auto', 'legacy']).entries()) {
      const r = await run(python, [CLIENT_CHECK, '--mode', mode, '--slug', slug], { env: clientEnv });
      process.stdout.write(r.stdout);
      expect(r.code === 0, `python MCP client (${mode}) through stdio ${slug}: ${r.stdout.trim().split('\n').pop()}\n${r.stderr}`);
      const text = await textarea();
      expect(text.split(PYTHON_EDIT).length - 1 === i + 1,
        `the textarea shows the MCP client's edit (${mode}): ${JSON.stringify(text)}`);
      expect(!text.includes('stale') && !text.includes('lost'),
        'the stale write and the failed atomic batch left the textarea unchanged');
      const model = await inspect(slug);
      expect(model.state.text === text && model.revision === await shownRevision(),
        `the textarea is the model (revision ${model.revision})`);
      if (i === 0) {
        const shot = path.join(artifacts, `${kind}-after-edit.png`);
        await page.screenshot({ path: /** @type {`${string}.png`} */ (shot) });
        log(`screenshot: ${shot}`);
      }
    }

    // 5. A stale write from the CLI changes nothing on the page.
    const current = await inspect(slug);
    const stale = await cli(['call', slug, 'document.text.insert', '--input-json', '{"text":"STALE"}',
      '--expected-revision', String(current.revision - 1), '--json']);
    expect(stale.code === 1 && stale.stdout.includes('stale_revision'), 'a stale write is refused');
    expect(await textarea() === current.state.text && await shownRevision() === current.revision,
      'and leaves the textarea and its revision unchanged');

    // 6. The user types.
    await page.focus('#text');
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    await page.keyboard.type(TYPED);
    const typed = await waitFor(async () => {
      const s = await inspect(slug);
      return s.state.text.endsWith(TYPED) ? s : null;
    }, 'the typed text in the model');
    expect(typed.revision >= current.revision + TYPED.length,
      `typing moved the revision from ${current.revision} to ${typed.revision}`);
    expect(await textarea() === typed.state.text, 'the textarea and the model agree after typing');
    const beforeTyping = await cli(['call', slug, 'document.text.insert', '--input-json', '{"text":"STALE"}',
      '--expected-revision', String(current.revision), '--json']);
    expect(beforeTyping.code === 1 && beforeTyping.stdout.includes('stale_revision') &&
      (await textarea()) === typed.state.text,
      'a write naming the revision from before the typing is refused and changes nothing');

    // 7. Many requests, several sessions, through the bridge itself.
    const via = ['--url', bridge.url, '--token-file', tokenFile];
    // One session per concurrent call (a session takes one request with a given id at a
    // time, and browser-call always sends id 1); the waves reuse them.
    let requests = 0;
    for (let wave = 0; wave < 4; wave += 1) {
      const mcp = wave === 3;
      const results = await Promise.all(Array.from({ length: 6 }, (_, j) => cli(mcp
        ? ['browser-call', ...via, '--protocol', 'mcp', '--session', `mcp-${j}`, 'tools/call',
          '{"name":"jfgui_state_inspect","arguments":{}}', '--json']
        : ['browser-call', ...via, '--session', `json-${j}`, 'state/inspect', '{}', '--json'])));
      const wrong = results.filter((r) => {
        const answer = r.code === 0 ? JSON.parse(r.stdout) : {};
        return (mcp ? answer.structuredContent?.revision : answer.revision) !== typed.revision;
      });
      expect(wrong.length === 0, `wave ${wave}: ${results.length} concurrent browser-calls (${mcp ? 'MCP' : 'JSON-1'}) ` +
        `in ${results.length} sessions read revision ${typed.revision} ${wrong.map((r) => r.stdout + r.stderr).join(' ')}`);
      requests += results.length;
    }
    const write = await cli(['browser-call', ...via, 'actions/execute', JSON.stringify({
      action: 'document.text.insert', input: { text: ' [browser-call]' }, expectedRevision: typed.revision,
    }), '--json']);
    requests += 1;
    expect(write.code === 0 && (await textarea()).endsWith(' [browser-call]'),
      `a write through browser-call shows in the textarea ${write.stdout}${write.stderr}`);
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'agent/info' },
      { jsonrpc: '2.0', id: 2, method: 'actions/list' },
      { jsonrpc: '2.0', id: 3, method: 'actions/execute', params: { action: 'document.get' } },
      { jsonrpc: '2.0', id: 4, method: 'state/inspect', params: {} },
    ];
    const stdio = await cli(['browser-stdio', ...via, '--protocol', 'json'],
      { input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' });
    const answers = stdio.stdout.trim().split('\n').map((l) => JSON.parse(l));
    requests += lines.length;
    expect(stdio.code === 0 && answers.length === lines.length &&
      answers.every((a) => a.result !== undefined) &&
      answers.find((a) => a.id === 3)?.result.output.text === (await textarea()),
      `browser-stdio (JSON-1) answered ${answers.length} requests in its own session`);
    const viaBridge = await run(python,
      [CLIENT_CHECK, '--mode', 'auto', '--bridge-url', bridge.url, '--token-file', tokenFile, '--slug', slug],
      { env: clientEnv });
    process.stdout.write(viaBridge.stdout);
    expect(viaBridge.code === 0, `python MCP client through browser-stdio: ${viaBridge.stdout.trim().split('\n').pop()}\n${viaBridge.stderr}`);
    log(`${requests} requests through browser-call and browser-stdio in 14 sessions, then the MCP client's`);

    // 7b. `jfgui-agent check --mutate` through the bridge: the web Notepad keeps every contract.
    const checked = await cli(['check', slug, '--mutate', '--json']);
    const report = checked.stdout ? JSON.parse(checked.stdout) : {};
    const fails = (report.findings ?? []).filter((/** @type {any} */ f) => f.level === 'FAIL');
    expect(checked.code === 0 && report.passed === true && fails.length === 0,
      `jfgui-agent check ${slug} --mutate finds no FAIL: ${JSON.stringify(report.counts)} ${JSON.stringify(fails)} ${checked.stderr.trim()}`);

    // 8. The daemon restarts under the connected tab; then the bridge command does.
    const linkText = () => page.$eval('#link-state', (e) => e.textContent);
    /** An agent's edit once the page is back (at the caret, wherever the checks above left it);
     * `what` says after what. @param {string} what */
    const editAgain = async (what) => {
      const text = ` [${what}]`;
      const before = await waitFor(async () => (await apps()).some((/** @type {any} */ a) =>
        a.slug === slug && a.enabled) && inspect(slug), `${slug} enabled again ${what}`);
      const r = await cli(['call', slug, 'document.text.insert', '--input-json', JSON.stringify({ text }),
        '--expected-revision', String(before.revision), '--json']);
      expect(r.code === 0 && await waitFor(async () => (await textarea()).includes(text), 'the edit in the textarea'),
        `${what}: an agent's edit shows in the textarea ${r.stderr}`);
    };
    await page.evaluate(() => { /** @type {any} */ (window).jfguiSameDocument = true; });
    await daemon.stop();
    await page.waitForSelector('body[data-link="retrying"]', { timeout: STEP_TIMEOUT_MS });
    log(`the daemon stopped; the page says: ${await linkText()}`);
    const restartedAt = Date.now();
    daemon = await startDaemon('jfgui-agentd-restarted');
    await bridgeProc.waitFor(/open again/, 'stderr');
    await page.waitForSelector('body[data-link="connected"]', { timeout: STEP_TIMEOUT_MS });
    log(`the page is connected again ${Date.now() - restartedAt} ms after the daemon started`);
    expect(JSON.parse(line).url === bridge.url && bridgeProc.running(),
      'browser-bridge stayed and reopened the bridge on its URL with its token');
    await editAgain('after the daemon restart');
    expect(await page.evaluate(() => /** @type {any} */ (window).jfguiSameDocument === true) &&
      await linkText() === 'connected to the bridge' && await page.$eval('#agent-access', (b) => /** @type {HTMLInputElement} */ (b).checked),
      'the page reconnected by itself, without a reload, agent access still on, and says "connected to the bridge"');
    await bridgeProc.stop();
    await page.waitForSelector('body[data-link="retrying"]', { timeout: STEP_TIMEOUT_MS });
    const newBridgeProc = new Proc('browser-bridge-2', agent, ['browser-bridge', '--origin', origin], env);
    procs.push(newBridgeProc);
    const newLine = (await newBridgeProc.waitFor(/^\{.*\}$/m, 'stderr'))[0];
    await page.type('#bridge', newLine);
    await page.click('#bridge-form button');
    await page.waitForSelector('body[data-link="connected"]', { timeout: STEP_TIMEOUT_MS });
    await editAgain('after browser-bridge restarted');
    // The old link slept in its backoff (at most 5 s) when it was replaced: past that, it
    // would have spoken by now.
    await new Promise((r) => setTimeout(r, 5_500));
    expect(await linkText() === 'connected to the bridge' &&
      await page.evaluate(() => /** @type {any} */ (window).jfguiSameDocument === true),
      `with a new bridge's line pasted the page says "${await linkText()}", nothing of the old link`);

    // 9. Closing the tab removes the endpoint.
    const closedAt = Date.now();
    await page.close();
    await waitFor(async () => !(await apps()).some((/** @type {any} */ a) => a.slug === slug),
      'the endpoint to go after the tab closed');
    // The last detach: the first in this daemon's log is the old bridge's closing (step 8).
    const reason = [...daemon.stderr.matchAll(/browser detached.*?reason="?(\w+)/g)].pop()?.[1];
    expect((reason === 'disconnect' || reason === 'expired') &&
      !existsSync(path.join(runtime, 'apps', `${slug}.sock`)),
      `closing the tab removed ${slug} after ${Date.now() - closedAt} ms (the daemon logged: ${reason})`);

    // Every gateway the MCP client started got only the SDK's default environment, and every
    // line it wrote validates against the official schema of its revision.
    const recorded = await run(python, ['-c', [
      'import sys',
      `sys.path.insert(0, ${JSON.stringify(MCP_CLIENTS)})`,
      'import driver',
      'problems = driver.check_records(sys.argv[1])',
      'print("\\n".join(problems))',
      'sys.exit(1 if problems else 0)',
    ].join('\n'), records], { env });
    expect(recorded.code === 0,
      `the recorded MCP sessions pass driver.py's checks: ${recorded.stderr.trim()} ${recorded.stdout.trim()}`);

    // 10. The web Counter: JavaScript only, on the package's generic wasm host.
    const counterOrigin = await serve('http.server-counter', projects.counter);
    const infoFile = path.join(scratch, 'counter-bridge.json');
    procs.push(new Proc('browser-bridge-counter', agent,
      ['browser-bridge', '--origin', counterOrigin, '--info-file', infoFile], env));
    const info = JSON.parse(await waitFor(async () => existsSync(infoFile) &&
      (await readFile(infoFile, 'utf8')).trim(), 'the --info-file'));
    expect(info.origin === counterOrigin && /^http:\/\/127\.0\.0\.1:\d+$/.test(info.url) &&
      (statSync(infoFile).mode & 0o777) === 0o600,
      `browser-bridge --info-file wrote {url, token, origin} for ${counterOrigin}, mode 0600`);
    const counter = await browser.newPage();
    counter.on('console', (m) => log(`${kind} counter console.${m.type()}: ${m.text()}`));
    counter.on('pageerror', (e) => log(`${kind} counter page error: ${e}`));
    await counter.goto(`${counterOrigin}/#${new URLSearchParams({ url: info.url, token: info.token })}`);
    await counter.waitForSelector('body[data-link="connected"]', { timeout: STEP_TIMEOUT_MS });
    const counterListed = await waitFor(async () => (await apps()).find((/** @type {any} */ a) =>
      a.displayName === 'Web Counter'), 'the web Counter in `jfgui-agent list`');
    const cslug = counterListed.slug;
    expect(counterListed.enabled === false && counterListed.actionCount === 3,
      `\`list\` shows ${cslug} with its 3 declared actions, disabled until the box is ticked`);
    await counter.click('#agent-access');
    await waitFor(async () => (await apps()).some((/** @type {any} */ a) => a.slug === cslug && a.enabled),
      'the counter to turn enabled');
    const shown = () => counter.$eval('body', (b) => ({
      value: Number(/** @type {HTMLElement} */ (b).dataset.value),
      revision: Number(/** @type {HTMLElement} */ (b).dataset.revision),
    }));
    /** @param {string} action @param {object} input @param {number} [revision] */
    const count = (action, input, revision) => cli(['call', cslug, action, '--input-json', JSON.stringify(input),
      ...(revision === undefined ? [] : ['--expected-revision', String(revision)]), '--json']);
    const start = await shown();
    let r = await count('counter.add', { by: 5 }, start.revision);
    expect(r.code === 0 && JSON.parse(r.stdout).output.value === 5 &&
      (await waitFor(async () => (await shown()).value === 5 && shown(), 'the page to show 5')).revision === start.revision + 1,
      `an agent's counter.add runs the page's function: the page shows 5 ${r.stderr}`);
    const five = await shown();
    r = await count('counter.add', { by: 500 }, five.revision);
    expect(r.code === 1 && r.stdout.includes('schema_violation'), 'an input outside the declared schema is refused before the function runs');
    r = await count('counter.add', { by: 1 }, start.revision);
    expect(r.code === 1 && r.stdout.includes('stale_revision'), 'a stale revision is refused');
    r = await count('counter.add', { by: 1 });
    expect(r.code === 1 && r.stdout.includes('revision_required'), 'a write without a revision is refused');
    const calls = Array.from({ length: 10 }, () => ({ action: 'counter.add', input: { by: 100 }, expectedRevision: five.revision }));
    r = await cli(['batch', cslug, '--input-file', '-', '--atomic', '--json'], { input: JSON.stringify(calls) });
    expect(r.code === 1 && r.stdout.includes('rolled_back') && r.stdout.includes('out_of_range'),
      `an atomic batch whose 10th call the app refuses (HostError out_of_range) is rolled back: ${r.stdout.slice(0, 300)}`);
    expect(JSON.stringify(await shown()) === JSON.stringify(five) && (await inspect(cslug)).state.value === 5,
      'and the page and the model are as before it (value 5, same revision)');
    await counter.click('#plus');
    const clicked = await waitFor(async () => { const v = await shown(); return v.value === 6 && v; }, 'the click');
    expect(clicked.revision === five.revision + 1, "the user's click goes through the same action and moves the revision");
    r = await count('counter.add', { by: 1 }, five.revision);
    expect(r.code === 1 && r.stdout.includes('stale_revision') && (await shown()).value === 6,
      'a write naming the revision from before the click is refused');
    r = await cli(['call', cslug, 'counter.count_to', '--input-json', '{"target":12}',
      '--expected-revision', String(clicked.revision), '--wait', '--json']);
    const task = r.code === 0 ? JSON.parse(r.stdout).task : {};
    expect(task.state === 'completed' && task.result?.value === 12 && (await shown()).value === 12,
      `a deferred count_to, reported by the page's timers, is followed to its end: ${r.stdout}${r.stderr}`);
    await counter.close();
    await waitFor(async () => !(await apps()).some((/** @type {any} */ a) => a.slug === cslug),
      'the counter to go after its tab closed');

    // 11. The package README's app, served exactly as written there.
    const readmeOrigin = await serve('http.server-readme', projects.readme);
    const readmeBridgeProc = new Proc('browser-bridge-readme', agent, ['browser-bridge', '--origin', readmeOrigin], env);
    procs.push(readmeBridgeProc);
    const readmeBridge = JSON.parse((await readmeBridgeProc.waitFor(/^\{.*\}$/m, 'stderr'))[0]);
    const readme = await browser.newPage();
    readme.on('pageerror', (e) => log(`${kind} README app page error: ${e}`));
    await readme.goto(`${readmeOrigin}/#${new URLSearchParams({ url: readmeBridge.url, token: readmeBridge.token })}`);
    await waitFor(async () => (await readme.title()) === 'connected', "the README app's link to say connected");
    await readme.click('input[type=checkbox]');
    await waitFor(async () => (await apps()).some((/** @type {any} */ a) => a.slug === 'web-counter' && a.enabled),
      "the README app to turn enabled");
    r = await cli(['call', 'web-counter', 'counter.add', '--input-json', '{"by":5}', '--expected-revision', 'auto', '--json']);
    expect(r.code === 0 && await waitFor(async () => (await readme.$eval('output', (o) => o.textContent)) === '5', 'the output'),
      `the README's JavaScript-only app, as written, is called by an agent: ${r.stderr}`);
    r = await cli(['call', 'web-counter', 'counter.add', '--input-json', '{"by":500}', '--expected-revision', 'auto', '--json']);
    expect(r.code === 1 && r.stdout.includes('schema_violation') && (await readme.$eval('output', (o) => o.textContent)) === '5',
      "and what its schema refuses never reaches its function, as the README says");
    await readme.close();
    return version;
  } finally {
    await browser?.close().catch(() => {});
    for (const p of procs.reverse()) await p.stop();
    await mkdir(artifacts, { recursive: true });
    for (const p of procs) {
      await writeFile(path.join(artifacts, `${kind}-${p.name}.log`), p.stdout + p.stderr);
    }
    await rm(scratch, { recursive: true, force: true });
    home.release();
  }
}

await mkdir(artifacts, { recursive: true });
const projects = await installProjects();
const chosen = positionals.length > 0 ? positionals : Object.keys(BROWSERS);
const versions = [];
let failed = 0;
let skipped = 0;
for (const kind of chosen) {
  if (!(kind in BROWSERS)) throw new Error(`unknown browser ${kind}`);
  const started = Date.now();
  try {
    const version = await scenario(/** @type {'chromium' | 'firefox'} */ (kind), projects);
    versions.push(`${kind}: ${version}`);
    log(`${kind}: passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (e) {
    if (e instanceof LaunchError && allowSkip) {
      log(`SKIPPED (JFGUI_ALLOW_SKIP=1): ${e.message}`);
      versions.push(`${kind}: skipped`);
      skipped += 1;
      continue;
    }
    failed += 1;
    log(`${kind}: ${e instanceof Error ? e.stack : e}`);
  }
}
for (const dir of Object.values(projects)) await rm(dir, { recursive: true, force: true });
await writeFile(path.join(artifacts, 'versions.txt'), versions.join('\n') + '\n');
log(`versions: ${versions.join('; ')}`);
log(`${chosen.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
