// How a page learns its bridge: the `{"url", "token", "origin"}` line `jfgui-agent
// browser-bridge` prints (pasted by the user, or in the URL fragment `#url=…&token=…`, which
// never reaches a server), kept in this tab's sessionStorage so a reload reconnects and
// nothing outlives the tab.

import { checkBridge } from './bridge.js';

/** The sessionStorage key used when none is given. */
const STORAGE_KEY = 'jfgui-bridge';

/**
 * The bridge from the URL fragment `#url=…&token=…` (then removed from the address bar at
 * once, and remembered), else the one this tab remembered; `null` when neither. Throws when
 * the fragment names no valid bridge.
 * @param {string} [key] the sessionStorage key
 * @returns {{url: string, token: string} | null}
 */
export function bridgeFromLocation(key = STORAGE_KEY) {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has('token')) {
    history.replaceState(null, '', location.pathname + location.search);
    const bridge = checkBridge({ url: params.get('url'), token: params.get('token') });
    rememberBridge(bridge, key);
    return bridge;
  }
  const stored = sessionStorage.getItem(key);
  return stored ? checkBridge(JSON.parse(stored)) : null;
}

/**
 * The bridge from the line `jfgui-agent browser-bridge` printed; refused when the bridge was
 * opened for another origin than this page's (it would refuse the page anyway). Remembered
 * for this tab.
 * @param {string} line
 * @param {string} [key] the sessionStorage key
 * @returns {{url: string, token: string}}
 */
export function bridgeFromLine(line, key = STORAGE_KEY) {
  const parsed = JSON.parse(line);
  if (parsed.origin !== undefined && parsed.origin !== location.origin) {
    throw new Error(`the bridge was opened for ${parsed.origin}, but this page is ${location.origin}`);
  }
  const bridge = checkBridge(parsed);
  rememberBridge(bridge, key);
  return bridge;
}

/**
 * Keeps `bridge` for this tab (sessionStorage: a reload reconnects, nothing outlives the tab).
 * @param {{url: string, token: string}} bridge
 * @param {string} [key] the sessionStorage key
 */
export function rememberBridge(bridge, key = STORAGE_KEY) {
  sessionStorage.setItem(key, JSON.stringify({ url: bridge.url, token: bridge.token }));
}
