// Drives Notepad through `jfgui-agent stdio notepad --protocol mcp` with the official TypeScript
// MCP clients (versions pinned in package.json / package-lock.json):
//
//   node client_check.mjs --sdk client --mode auto     @modelcontextprotocol/client, discover -> 2026-07-28
//   node client_check.mjs --sdk client --mode legacy   @modelcontextprotocol/client, initialize -> 2025-11-25
//   node client_check.mjs --sdk sdk --mode legacy      @modelcontextprotocol/sdk 1.x (speaks only 2025-11-25 and older)
//   node client_check.mjs --sdk client --mode auto --all-apps "Notes A,Notes B"
//        `jfgui-agent mcp` with these Notepads; restarts an app and the daemon mid-session
//        through driver.py's control socket (JFGUI_CONTROL)
//
// Needs JFGUI_AGENT (the gateway binary), JFGUI_PYTHON, JFGUI_RECORDER and JFGUI_RECORD_DIR in
// the environment (driver.py sets them). The gateway is started as the SDK starts servers by
// default, without an `env`: it gets only the SDK's default variables and finds the daemon
// through /run/user/UID; record.py sits in between and records the session for driver.py.
// Prints one PASS/FAIL line per check and a final "N passed, M failed" line; exits 1 on any
// failure.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const NINE_TOOLS = [
    'jfgui_actions_batch',
    'jfgui_actions_describe',
    'jfgui_actions_execute',
    'jfgui_actions_search',
    'jfgui_resources_read',
    'jfgui_state_inspect',
    'jfgui_tasks_cancel',
    'jfgui_tasks_get',
    'jfgui_view_render',
];
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EXPECTED_VERSION = { auto: '2026-07-28', legacy: '2025-11-25' };
// The all-apps tools/list budget (what a model pays per session before it does anything).
const MAX_TOOLS_LIST_BYTES = 12 * 1024;

const { values: args } = parseArgs({
    options: { sdk: { type: 'string' }, mode: { type: 'string' }, 'all-apps': { type: 'string' } },
});
if (!['client', 'sdk'].includes(args.sdk) || !(args.mode in EXPECTED_VERSION) || (args.sdk === 'sdk' && args.mode !== 'legacy')) {
    console.error('usage: client_check.mjs --sdk client --mode auto|legacy | --sdk sdk --mode legacy');
    process.exit(2);
}

const packageName = args.sdk === 'client' ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';
// Read from the installed package (the v2 packages do not export their package.json).
const packageVersion = JSON.parse(
    readFileSync(new URL(`./node_modules/${packageName}/package.json`, import.meta.url), 'utf8'),
).version;
const allApps = args['all-apps'] ? args['all-apps'].split(',') : null;
const label = `node ${packageName} ${packageVersion} ${EXPECTED_VERSION[args.mode]}${allApps ? ' mcp' : ''}`;
let passed = 0;
let failed = 0;

function check(name, condition, detail = '') {
    if (condition) {
        passed += 1;
        console.log(`PASS [${label}] ${name}`);
    } else {
        failed += 1;
        console.log(`FAIL [${label}] ${name}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    }
    return condition;
}

async function loadSdk() {
    if (args.sdk === 'client') {
        const { Client } = await import('@modelcontextprotocol/client');
        const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
        return { Client, StdioClientTransport };
    }
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    return { Client, StdioClientTransport };
}

/// Records the messages the server sends, so the negotiated revision is checked on the wire.
function recording(transport, seen) {
    return new Proxy(transport, {
        set(target, prop, value) {
            if (prop === 'onmessage' && typeof value === 'function') {
                target.onmessage = (message, extra) => {
                    seen.push(message);
                    value(message, extra);
                };
            } else {
                target[prop] = value;
            }
            return true;
        },
    });
}

const sc = (r) => r.structuredContent ?? {};
const textOf = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// One command to driver.py's control socket; rejects unless it answers ok.
function control(line) {
    return new Promise((resolve, reject) => {
        const socket = createConnection(process.env.JFGUI_CONTROL);
        let answer = '';
        socket.on('connect', () => socket.write(`${line}\n`));
        socket.on('data', (chunk) => {
            answer += chunk;
        });
        socket.on('error', reject);
        socket.on('close', () => (answer.trim() === 'ok' ? resolve() : reject(new Error(`driver control ${line}: ${answer.trim()}`))));
    });
}

const slug = (name) => name.toLowerCase().split(/\s+/).join('-');
const imagesOf = (r) => (r.content ?? []).filter((c) => c.type === 'image');

/// The PNG `jfgui-agent render SLUG -o FILE` saves (the CLI, not MCP).
function cliRender(appSlug) {
    const dir = mkdtempSync(join(tmpdir(), 'jfgui-render-'));
    try {
        const path = join(dir, 'view.png');
        execFileSync(process.env.JFGUI_AGENT, ['render', appSlug, '-o', path], { stdio: ['ignore', 'pipe', 'inherit'] });
        return readFileSync(path);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/// Polls jfgui_tasks_get until the task reaches `final` (or 30 s pass); the last task.
async function waitTask(callTool, id, final) {
    const deadline = Date.now() + 30000;
    let task = {};
    while (Date.now() < deadline) {
        task = sc(await callTool('jfgui_tasks_get', { id })).task ?? {};
        if (task.state === final) break;
        await sleep(100);
    }
    return task;
}

/// The quick-start task as a model does it, counting tool calls and result bytes: insert a
/// greeting into the app `displayName` after jfgui_apps_list, in at most three calls.
async function quickStart(callTool, displayName) {
    const transcript = [];
    const counted = async (name, toolArgs) => {
        const r = await callTool(name, toolArgs);
        transcript.push(`${transcript.length + 1}. ${name} ${JSON.stringify(toolArgs)} -> ${JSON.stringify(r).length} bytes`);
        return r;
    };
    let r = await counted('jfgui_apps_list', {});
    const app = (sc(r).apps ?? []).find((a) => a.displayName === displayName)?.app;
    r = await counted('jfgui_actions_search', { app, query: 'insert', describe: true });
    const action = (sc(r).actions ?? []).find((a) => a.inputSchema?.properties?.text);
    r = await counted('jfgui_state_inspect', { app });
    const { revision } = sc(r);
    const before = sc(r).state?.text ?? '';
    const greeting = 'Hello, world! ';
    r = await counted('jfgui_actions_execute', { app, action: action?.name, input: { text: greeting }, expectedRevision: revision });
    const after = sc(await callTool('jfgui_state_inspect', { app })).state?.text ?? '';
    for (const line of transcript) console.log(`[quick-start] ${line}`);
    console.log(`[quick-start] ${transcript.length - 1} calls after jfgui_apps_list`);
    check(
        'quick start: the greeting is inserted in 3 calls after jfgui_apps_list',
        !r.isError && transcript.length - 1 <= 3 && after.includes(greeting) && after.length === before.length + greeting.length,
        transcript,
    );
}

/// An app with agent access off: listed with `enabled: false` and what to tell the user, never
/// its actions; a call to it is not_executed/app_disabled saying so.
async function disabledApp(callTool, displayName) {
    let r = await callTool('jfgui_apps_list', {});
    const entry = (sc(r).apps ?? []).find((a) => a.displayName === displayName) ?? {};
    check(
        'an app with agent access off is listed as enabled: false with a hint, without its actions',
        entry.enabled === false && (entry.hint ?? '').includes('Agent access') && !('actionCount' in entry),
        entry,
    );
    r = await callTool('jfgui_actions_search', { app: slug(displayName) });
    const error = sc(r).error ?? {};
    check(
        'a call to it is isError not_executed/app_disabled with the words for the user',
        r.isError === true &&
            error.class === 'not_executed' &&
            error.reason === 'app_disabled' &&
            (error.message ?? '').includes('Agent access') &&
            !('actions' in sc(r)),
        r,
    );
}

/// `jfgui-agent mcp`: the app list, a call to each app, an app restarted and the daemon
/// restarted under one client session that is never restarted.
async function runAllApps() {
    const { Client, StdioClientTransport } = await loadSdk();
    const [first, second] = allApps;
    const transport = new StdioClientTransport({
        command: process.env.JFGUI_PYTHON,
        args: [process.env.JFGUI_RECORDER, process.env.JFGUI_RECORD_DIR, process.env.JFGUI_AGENT, 'mcp'],
        stderr: 'inherit',
    });
    const options = args.sdk === 'client' && args.mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {};
    const client = new Client({ name: 'jfgui-mcp-client-check', version: '1.0.0' }, options);
    await client.connect(transport);
    try {
        if (typeof client.getNegotiatedProtocolVersion === 'function') {
            const negotiated = client.getNegotiatedProtocolVersion();
            check('negotiated revision', negotiated === EXPECTED_VERSION[args.mode], negotiated);
        }
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name).sort();
        check('lists jfgui_apps_list and the nine tools', JSON.stringify(names) === JSON.stringify(['jfgui_apps_list', ...NINE_TOOLS].sort()), names);
        check('the nine tools take `app`', tools.filter((t) => NINE_TOOLS.includes(t.name)).every((t) => t.inputSchema.properties?.app));
        const listedBytes = Buffer.byteLength(JSON.stringify(tools));
        console.log(`[tools/list] ${tools.length} tools, ${listedBytes} bytes of tool definitions`);
        check(`tools/list within ${MAX_TOOLS_LIST_BYTES} bytes`, listedBytes <= MAX_TOOLS_LIST_BYTES, listedBytes);
        const callTool = (name, toolArgs) => client.callTool({ name, arguments: toolArgs });
        const apps = async () => {
            const r = await callTool('jfgui_apps_list', {});
            return JSON.stringify((sc(r).apps ?? []).filter((a) => a.enabled).map((a) => [a.app, a.displayName]).sort());
        };
        const both = JSON.stringify(allApps.map((n) => [slug(n), n]).sort());
        let listed = await apps();
        check('jfgui_apps_list lists both apps', listed === both, listed);
        for (const name of allApps) {
            const r = await callTool('jfgui_state_inspect', { app: slug(name) });
            check(`a call reaches ${name}`, sc(r).state?.text === `text of ${name}`, r);
        }
        let r = await callTool('jfgui_state_inspect', { app: first });
        const revision = sc(r).revision;
        r = await callTool('jfgui_actions_execute', {
            app: first,
            action: 'document.text.insert',
            input: { text: ' edited' },
            expectedRevision: revision,
        });
        check(`a write to ${first} by display name`, !r.isError && sc(r).revision === revision + 1, r);
        await quickStart(callTool, first);
        await disabledApp(callTool, process.env.JFGUI_DISABLED_APP);

        await control(`kill-app ${second}`);
        r = await callTool('jfgui_state_inspect', { app: slug(second) });
        let error = sc(r).error ?? {};
        check(
            'an app that left is not_found/app listing the others',
            r.isError === true &&
                error.class === 'not_found' &&
                error.reason === 'app' &&
                JSON.stringify(error.data?.apps) === JSON.stringify([{ app: slug(first), displayName: first }]),
            r,
        );
        await control(`start-app ${second}`);
        r = await callTool('jfgui_state_inspect', { app: slug(second) });
        check('the restarted app is reached by the same value', !r.isError && sc(r).state?.text === `text of ${second}`, r);

        await control('stop-daemon');
        r = await callTool('jfgui_state_inspect', { app: slug(first) });
        error = sc(r).error ?? {};
        check(
            'while the daemon is away: isError not_executed/daemon_unavailable',
            r.isError === true && error.class === 'not_executed' && error.reason === 'daemon_unavailable',
            r,
        );
        const runtime = `/run/user/${process.getuid()}/jfgui-agent`;
        check(
            'it names the runtime dir looked in and the setting that points elsewhere',
            (error.message ?? '').includes(`nothing listens in ${runtime}`) && (error.message ?? '').includes('JFGUI_RUNTIME_DIR'),
            error.message,
        );
        await control('start-daemon');
        r = await callTool('jfgui_state_inspect', { app: slug(first) });
        check(
            'after the daemon restarted and the apps re-registered, the next call succeeds',
            !r.isError && (sc(r).state?.text ?? '').includes(' edited'),
            r,
        );
        listed = await apps();
        check('both apps are listed again', listed === both, listed);
    } finally {
        await client.close();
    }
}

async function run() {
    const { Client, StdioClientTransport } = await loadSdk();
    // No `env`: the SDK's default, exactly what a user's MCP client configuration gives.
    const params = {
        command: process.env.JFGUI_PYTHON,
        args: [
            process.env.JFGUI_RECORDER,
            process.env.JFGUI_RECORD_DIR,
            process.env.JFGUI_AGENT,
            'stdio',
            'notepad',
            '--protocol',
            'mcp',
        ],
        stderr: 'inherit',
    };
    const seen = [];
    const plain = new StdioClientTransport(params);
    // The v2 auto mode probes on a sibling process only for the base transport class, so the
    // recording proxy is used for the v1 SDK, which has no accessor for the negotiated version.
    const transport = args.sdk === 'sdk' ? recording(plain, seen) : plain;
    const options = args.sdk === 'client' && args.mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {};
    const client = new Client({ name: 'jfgui-mcp-client-check', version: '1.0.0' }, options);
    await client.connect(transport);
    try {
        const negotiated =
            typeof client.getNegotiatedProtocolVersion === 'function'
                ? client.getNegotiatedProtocolVersion()
                : seen.find((m) => m.result?.protocolVersion)?.result.protocolVersion;
        check('negotiated revision', negotiated === EXPECTED_VERSION[args.mode], negotiated);
        const caps = client.getServerCapabilities() ?? {};
        check('tools and resources advertised', caps.tools !== undefined && caps.resources !== undefined, caps);

        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name).sort();
        check('lists the nine tools', JSON.stringify(names) === JSON.stringify(NINE_TOOLS), names);
        check('every tool has input and output schemas', tools.every((t) => t.inputSchema && t.outputSchema));

        const callTool = (name, toolArgs) => client.callTool({ name, arguments: toolArgs });
        const inspect = async () => {
            const r = await callTool('jfgui_state_inspect', {});
            return [sc(r).revision, sc(r).state];
        };

        let r = await callTool('jfgui_actions_search', { query: 'text' });
        const found = (sc(r).actions ?? []).map((a) => a.name);
        check('search finds document.text.insert', found.includes('document.text.insert'), found);
        check('search result text is its structured content', JSON.stringify(JSON.parse(r.content[0].text)) === JSON.stringify(sc(r)));

        r = await callTool('jfgui_actions_describe', { action: 'document.text.insert' });
        check('describe returns the input schema', sc(r).action?.inputSchema?.type === 'object', sc(r));

        const [revision] = await inspect();
        r = await callTool('jfgui_actions_execute', {
            action: 'document.text.insert',
            input: { text: 'Hello from Node. ' },
            expectedRevision: revision,
        });
        const newRevision = sc(r).revision;
        check('write with the right revision succeeds', !r.isError && newRevision === revision + 1, r);

        r = await callTool('jfgui_actions_execute', {
            action: 'document.text.insert',
            input: { text: 'stale' },
            expectedRevision: revision,
        });
        let error = sc(r).error ?? {};
        check(
            'write with a stale revision is an isError result',
            r.isError === true && error.reason === 'stale_revision' && error.class === 'not_executed',
            r,
        );
        check(
            'the stale error names the current revision',
            error.data?.currentRevision === newRevision && textOf(r).includes(`expectedRevision ${newRevision}`),
            textOf(r),
        );

        const [beforeRevision, beforeState] = await inspect();
        r = await callTool('jfgui_actions_batch', {
            atomic: true,
            calls: [
                { action: 'document.text.insert', input: { text: 'lost' }, expectedRevision: beforeRevision },
                { action: 'document.text.replace', input: { start: 0, end: 1000000, text: 'x' }, expectedRevision: beforeRevision },
            ],
        });
        error = sc(r).error ?? {};
        check('a failing atomic batch is an isError result naming call 1', r.isError === true && error.data?.index === 1, r);
        const [afterRevision, afterState] = await inspect();
        check(
            'the document is unchanged after the failed batch',
            afterRevision === beforeRevision && afterState.text === beforeState.text,
            [beforeRevision, afterRevision, afterState],
        );

        r = await callTool('jfgui_actions_execute', { action: 'document.export', expectedRevision: afterRevision });
        const task = sc(r).task ?? {};
        check('export starts a task', !r.isError && task.state === 'running', r);
        r = await callTool('jfgui_tasks_cancel', { id: task.id ?? '' });
        let state = sc(r).task?.state;
        check('cancel moves the task to cancelling', state === 'cancelling' || state === 'cancelled', r);
        const deadline = Date.now() + 20000;
        while (state !== 'cancelled' && Date.now() < deadline) {
            await sleep(100);
            r = await callTool('jfgui_tasks_get', { id: task.id ?? '' });
            state = sc(r).task?.state;
        }
        check('the export task ends cancelled', state === 'cancelled', r);

        r = await callTool('jfgui_actions_execute', { action: 'document.export', expectedRevision: afterRevision });
        const exported = await waitTask(callTool, sc(r).task?.id ?? '', 'completed');
        r = await callTool('jfgui_resources_read', { uri: exported.result?.uri ?? '' });
        const texts = (r.content ?? []).slice(1).filter((c) => c.type === 'text').map((c) => c.text);
        check(
            'a text export is read as text (and as base64 in structuredContent)',
            !r.isError &&
                JSON.stringify(texts) === JSON.stringify([afterState.text]) &&
                Buffer.from(sc(r).data ?? '', 'base64').toString('utf8') === afterState.text,
            r,
        );

        r = await callTool('jfgui_view_render', {});
        const rendered = r;
        const output = sc(r).output ?? {};
        check('render names a PNG resource', output.uri === 'render://view.png' && output.mimeType === 'image/png', r);
        // At least four chunks, whatever the PNG's size.
        const limit = Math.max(1, Math.min(65536, Math.floor((output.size ?? 0) / 4)));
        const parts = [];
        let offset = 0;
        let total;
        let eof = false;
        let chunks = 0;
        while (!eof && chunks < 10000) {
            r = await callTool('jfgui_resources_read', { uri: output.uri, offset, limit });
            if (r.isError) break;
            const chunk = Buffer.from(sc(r).data, 'base64');
            parts.push(chunk);
            offset += chunk.length;
            total = sc(r).totalSize;
            eof = sc(r).eof;
            chunks += 1;
        }
        const data = Buffer.concat(parts);
        check('chunked read reaches eof in several chunks', eof && chunks >= 4, [eof, chunks, limit]);
        check('PNG signature', data.subarray(0, 8).equals(PNG_SIGNATURE), data.subarray(0, 8).toString('hex'));
        check('PNG size matches totalSize and the render', data.length === total && total === output.size, [data.length, total, output]);
        const images = imagesOf(rendered);
        check('the render result carries the image', images.length === 1 && images[0].mimeType === 'image/png', rendered.content);
        const shown = Buffer.from(images[0]?.data ?? '', 'base64');
        const saved = cliRender('notepad');
        check('the image is the PNG jfgui-agent render saves', shown.equals(saved) && saved.equals(data), [shown.length, saved.length, data.length]);

        const { resources } = await client.listResources();
        check('resources/list names the PNG', resources.some((x) => x.uri === 'render://view.png'), resources);
        const whole = await client.readResource({ uri: 'render://view.png' });
        const blob = Buffer.from(whole.contents[0].blob ?? '', 'base64');
        check('resources/read returns the same PNG whole', blob.equals(data), [blob.length, data.length]);

        try {
            await callTool('jfgui_no_such_tool', {});
            check('an unknown tool is a protocol error', false, 'no error thrown');
        } catch (e) {
            check('an unknown tool is a protocol error', e.code === -32602, String(e));
        }
    } finally {
        await client.close();
    }
}

try {
    const timer = setTimeout(() => {
        check('session ran to the end', false, 'timed out after 120 s');
        console.log(`${label}: ${passed} passed, ${failed} failed`);
        process.exit(1);
    }, 120000);
    await (allApps ? runAllApps() : run());
    clearTimeout(timer);
} catch (e) {
    check('session ran to the end', false, `${e?.name}: ${e?.message}`);
}
console.log(`${label}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
