// NetActivity for browsers: each download in progress, with its file's name and progress,
// handed to the native messaging host `netactivity browser-host`, which reports it to the
// desktop's network activity indicator (docs/browsers.md).
//
// Event-driven: downloads.onCreated and onChanged wake it. While a download is in progress it
// holds one port to the host and reads progress with downloads.search twice a second; with none
// it holds no port, sets no timer and reads nothing. What crosses the port is one message per
// download that changed (the protocol: docs/browsers.md): its id, state, file's base name,
// bytes, paused and incognito; never a URL, a directory, or a private window's file name.

// Chromium's `chrome.*` and Firefox's `browser.*` both return promises in Manifest V3.
const api = globalThis.browser ?? globalThis.chrome;

const HOST = "io.github.netactivity.browser";
const POLL_INTERVAL_MS = 500;

/** The port to the host, while a download is in progress. */
let port = null;
/** Whether the host went away on its own (missing, failed, killed): not started again before
 * the next download event or the retry below, so a broken install costs a few attempts a
 * minute, not two a second. */
let hostGone = false;
/** The pending retry after the host went away while downloads were in progress: a host that
 * crashed or was killed is started again, so the downloads show again without waiting for an
 * event (a download's progress raises none). The delay doubles from 1 s to a minute, back to
 * 1 s once a host has stayed up for 5 s. */
let retry = null;
let retryDelayMs = 1000;
const RETRY_MAX_MS = 60000;
const RETRY_RESET_MS = 5000;
let connectedAt = 0;
/** The pending poll, while one is scheduled. */
let timer = null;
/** Whether a poll is running, and whether an event came during it. */
let polling = false;
let wokenWhilePolling = false;
/** The last message sent for each download the host has heard of, by id. */
const sent = new Map();

/** The last path component: the host is told a file's name, never where it is. */
function baseName(path) {
  return (path ?? "").split(/[\\/]/).pop();
}

/** The message that describes `item` to the host. */
function describe(item) {
  return {
    id: item.id,
    state: item.state,
    filename: item.incognito ? "" : baseName(item.filename),
    bytesReceived: item.bytesReceived,
    totalBytes: item.totalBytes,
    paused: item.paused,
    incognito: item.incognito,
  };
}

function send(message) {
  try {
    port?.postMessage(message);
  } catch (error) {
    // The port closed under it: onDisconnect says why.
  }
}

function connect() {
  if (port || hostGone) return;
  const connected = api.runtime.connectNative(HOST);
  port = connected;
  connectedAt = Date.now();
  connected.onDisconnect.addListener(() => {
    if (port !== connected) return;
    port = null;
    hostGone = true;
    stop();
    // A host that ran a while was working: this is no broken install.
    if (Date.now() - connectedAt >= RETRY_RESET_MS) retryDelayMs = 1000;
    retry = setTimeout(() => {
      retry = null;
      wake();
    }, retryDelayMs);
    retryDelayMs = Math.min(retryDelayMs * 2, RETRY_MAX_MS);
  });
}

function disconnect() {
  if (port) port.disconnect();
  port = null;
  stop();
}

/** Forgets every download and cancels the pending poll. */
function stop() {
  sent.clear();
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

/** Sends what changed since the last poll; keeps polling while a download is in progress. */
async function poll() {
  timer = null;
  polling = true;
  try {
    const active = await api.downloads.search({ state: "in_progress" });
    // Chromium names the file a moment after the download starts: it waits for its name.
    const shown = active.filter((item) => item.incognito || baseName(item.filename) !== "");
    if (shown.length > 0) connect();
    if (port) {
      const live = new Set();
      for (const item of shown) {
        live.add(item.id);
        const message = describe(item);
        const text = JSON.stringify(message);
        if (sent.get(item.id) === text) continue;
        sent.set(item.id, text);
        send(message);
      }
      for (const id of [...sent.keys()]) {
        if (live.has(id)) continue;
        // Complete, interrupted (failed or cancelled), or erased from the list.
        const [item] = await api.downloads.search({ id });
        sent.delete(id);
        if (port) send({ id, state: item ? item.state : "removed" });
      }
    }
    if (active.length === 0) {
      disconnect();
    } else if (port || !hostGone) {
      // Reporting, or waiting for a name: poll again.
      timer = setTimeout(poll, POLL_INTERVAL_MS);
    }
  } finally {
    polling = false;
    // A download that began while this poll read the list may not be in it.
    if (wokenWhilePolling) {
      wokenWhilePolling = false;
      wake();
    }
  }
}

/** A download event: polls now unless a poll is running or due within the interval. */
function wake() {
  hostGone = false;
  if (retry !== null) clearTimeout(retry);
  retry = null;
  if (polling) {
    wokenWhilePolling = true;
  } else if (timer === null) {
    poll();
  }
}

api.downloads.onCreated.addListener(wake);
api.downloads.onChanged.addListener(wake);
api.downloads.onErased.addListener(wake);
// A worker (or event page) started by the browser finds the downloads already in progress.
wake();
