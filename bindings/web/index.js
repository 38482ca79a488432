// jfgui-web-host: a web page's app for jfgui-agentd, attached through `jfgui-agent
// browser-bridge`. `ScriptHost` runs an app written in JavaScript behind this package's
// generic wasm host; `WasmApp` and `BridgeLink` run an app compiled from Rust with host-sdk's
// `web` feature. See README.md.

export { BridgeLink, WasmApp, checkBridge } from './bridge.js';
export { bridgeFromLine, bridgeFromLocation, rememberBridge } from './page.js';
export { ActionError, Deferred, HostError, ScriptHost } from './script.js';

/** @typedef {import('./bridge.js').BridgeExports} BridgeExports */
/** @typedef {import('./bridge.js').LinkHooks} LinkHooks */
/** @typedef {import('./bridge.js').LinkState} LinkState */
/** @typedef {import('./script.js').ActionDeclaration} ActionDeclaration */
/** @typedef {import('./script.js').AppDefinition} AppDefinition */
/** @typedef {import('./script.js').CallInfo} CallInfo */
/** @typedef {import('./script.js').CallResult} CallResult */
/** @typedef {import('./script.js').ResourceInfo} ResourceInfo */
/** @typedef {import('./script.js').Transactions} Transactions */
