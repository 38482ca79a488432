// Web Counter: an app written in JavaScript only, on jfgui-web-host's generic wasm host. Its
// actions are declared below and implemented as plain functions; the wasm's Dispatcher checks
// every agent call (agent access, the input schema, expectedRevision, batches) before a
// function runs, so the functions only apply the action.

import {
  Deferred,
  HostError,
  ScriptHost,
  bridgeFromLine,
  bridgeFromLocation,
} from './node_modules/jfgui-web-host/index.js';

const LIMIT = 1000;
const COUNT_STEP_MS = 100;

let value = 0;
let revision = 1;
/** @type {{value: number, revision: number} | null} what an atomic batch rolls back to */
let saved = null;
/** @type {Map<string, ReturnType<typeof setInterval>>} running count_to tasks */
const counting = new Map();
let nextTask = 1;

/** @param {number} by */
function add(by) {
  if (Math.abs(value + by) > LIMIT) {
    throw new HostError('out_of_range', `the counter stays within -${LIMIT}..${LIMIT}`);
  }
  value += by;
  revision += 1;
  show();
  return { value };
}

/** Counts up to `target`, one step per tick, as a task. @param {number} target */
function countTo(target) {
  const task = `count-${nextTask++}`;
  const start = value;
  counting.set(task, setInterval(() => {
    if (value >= target) {
      clearInterval(counting.get(task));
      counting.delete(task);
      host.tasks.complete(task, { value });
      return;
    }
    add(1);
    host.tasks.progress(task, value - start, target - start);
  }, COUNT_STEP_MS));
  return new Deferred(task);
}

const host = await ScriptHost.load({
  name: 'Web Counter',
  actions: [
    {
      name: 'counter.get', description: 'Read the counter.', kind: 'read',
      outputSchema: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
    },
    {
      name: 'counter.add', description: `Add to the counter (it stays within -${LIMIT}..${LIMIT}).`,
      kind: 'write', undo: true, transaction: 'counter',
      inputSchema: {
        type: 'object', properties: { by: { type: 'integer', minimum: -100, maximum: 100 } },
        required: ['by'], additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
    },
    {
      name: 'counter.count_to', description: 'Count up to a value, one step every 100 ms (a task).',
      kind: 'write',
      inputSchema: {
        type: 'object', properties: { target: { type: 'integer', minimum: -LIMIT, maximum: LIMIT } },
        required: ['target'], additionalProperties: false,
      },
    },
  ],
  revision: () => revision,
  execute(action, input) {
    switch (action) {
      case 'counter.get': return { value };
      case 'counter.add': return add(input.by);
      case 'counter.count_to': return countTo(input.target);
    }
  },
  inspect: () => ({ value, counting: [...counting.keys()] }),
  transactions: {
    supports: (domain) => domain === 'counter',
    begin: () => { saved = { value, revision }; },
    commit: () => { saved = null; },
    rollback: () => {
      if (saved) ({ value, revision } = saved);
      saved = null;
      show();
    },
  },
  cancel(tasks) {
    for (const task of tasks) {
      clearInterval(counting.get(task));
      counting.delete(task);
      host.tasks.cancelled(task);
    }
  },
});

// The page: the value, the user's own buttons (through the same checks as an agent's call,
// so they move the revision), the agent-access switch, the bridge.
const byId = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));

function show() {
  byId('value').textContent = String(value);
  byId('revision').textContent = `revision ${revision}`;
  document.body.dataset.value = String(value);
  document.body.dataset.revision = String(revision);
}

/** @param {string} state @param {string} [detail] */
function setState(state, detail) {
  document.body.dataset.link = state;
  byId('link-state').textContent = detail ? `${state}: ${detail}` : state;
}

/** @param {{url: string, token: string}} bridge */
function connect(bridge) {
  host.connect(bridge, { onState: setState });
}

for (const [id, by] of [['minus', -1], ['plus', 1]]) {
  byId(id).addEventListener('click', () => {
    try {
      host.execute('counter.add', { by });
    } catch (e) {
      setState('error', e instanceof Error ? e.message : String(e));
    }
  });
}
byId('agent-access').checked = false;
byId('agent-access').addEventListener('change', (/** @type {Event} */ event) => {
  const on = /** @type {HTMLInputElement} */ (event.target).checked;
  host.setEnabled(on);
  document.body.dataset.agentAccess = on ? 'on' : 'off';
});
byId('bridge-form').addEventListener('submit', (/** @type {Event} */ event) => {
  event.preventDefault();
  try {
    connect(bridgeFromLine(byId('bridge').value));
    byId('bridge').value = '';
  } catch (e) {
    setState('error', e instanceof Error ? e.message : String(e));
  }
});
addEventListener('pagehide', () => host.disconnect());

show();
setState('idle');
document.body.dataset.agentAccess = 'off';
try {
  const bridge = bridgeFromLocation('jfgui-counter-bridge');
  if (bridge !== null) connect(bridge);
} catch (e) {
  setState('error', e instanceof Error ? e.message : String(e));
}
