// A TypeScript app written against the package's declarations, as its author would: it must
// compile (`npm run check`), so the shipped .d.ts files describe a usable API.
import {
  ActionError,
  type AppDefinition,
  BridgeLink,
  Deferred,
  HostError,
  type LinkState,
  ScriptHost,
  WasmApp,
  checkBridge,
} from 'jfgui-web-host';

let value = 0;
let revision = 1;

const app: AppDefinition = {
  name: 'Typed Counter',
  actions: [
    { name: 'counter.get', description: 'Read the counter.', kind: 'read' },
    {
      name: 'counter.add',
      description: 'Add to the counter.',
      kind: 'write',
      inputSchema: {
        type: 'object',
        properties: { by: { type: 'integer', minimum: -100, maximum: 100 } },
        required: ['by'],
        additionalProperties: false,
      },
    },
    { name: 'counter.export', description: 'Export the counter.', kind: 'write' },
  ],
  revision: () => revision,
  execute(action, input: { by?: number }, call) {
    if (call.external && call.request === null) throw new Error('unreachable');
    switch (action) {
      case 'counter.get':
        return { value };
      case 'counter.add':
        if (value + (input.by ?? 0) > 1000) throw new HostError('out_of_range', 'at most 1000');
        value += input.by ?? 0;
        revision += 1;
        return { value };
      default:
        return new Deferred('export-1');
    }
  },
  availability: (action) => (action === 'counter.add' && value > 990 ? { code: 'full', explanation: 'nearly full' } : null),
  cancel: (tasks: string[]) => tasks.forEach((t) => host.tasks.cancelled(t)),
};

const host: ScriptHost = await ScriptHost.load(app);
host.setEnabled(true);
const link: BridgeLink = host.connect(checkBridge({ url: 'http://127.0.0.1:1', token: 't' }), {
  onState: (state: LinkState, detail?: string) => console.log(state, detail),
  onChange: () => console.log(value),
});
try {
  const result = host.execute('counter.add', { by: 1 });
  console.log('revision' in result ? result.revision : 0);
} catch (e) {
  if (e instanceof ActionError) console.log(e.class, e.reason, e.data);
}
host.tasks.progress('export-1', 1, 2, 'half');
host.tasks.complete('export-1', { ok: true });
link.stop();
host.disconnect();

const rust: WasmApp = await WasmApp.load('app.wasm');
rust.input('text');
rust.check(rust.exports.jfgui_connect_body());
const own: number = rust.exports.notepad_view();
console.log(own, rust.outputText(), new BridgeLink(rust, { url: 'http://127.0.0.1:2', token: 't' }).stopped);
