// The dashboard page: one event stream from the server carries the list of rollouts, the
// release trains and, when a rollout is selected, its detail, its fleet map (the clusters
// once, then their states as deltas) and its burn-up chart. Preact updates the page by
// difference; the map is drawn on a canvas and the chart by uPlot. The page never polls.
import { h, render } from "./vendor/preact.mjs";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "./vendor/hooks.mjs";
import htm from "./vendor/htm.mjs";
import uPlot from "./vendor/uPlot.esm.js";
import { drawMap, layoutMap, hitMap, mapColors, stateOfLetter, letterStates } from "./map.js";

const html = htm.bind(h);
const token = document.querySelector('meta[name="cgu-token"]').content;

export const stateNames = ["Pending", "InProgress", "Completed", "TimedOut", "Failed", "Held"];
const countKeys = { Pending: "pending", InProgress: "inProgress", Completed: "completed", TimedOut: "timedOut", Failed: "failed", Held: "held" };
const stateLabels = { Pending: "pending", Waiting: "waiting", InProgress: "in progress", Completed: "completed", TimedOut: "timed out", Failed: "failed", Held: "held" };

// waitTitles head the box that says what a rollout waits for.
const waitTitles = {
  "pause": "Paused", "approval": "Waits for an approval", "window": "Waits for its maintenance window",
  "soak": "Soaking", "blocker": "Blocked by another rollout", "hub capacity": "Waits for room under the hub's cap",
  "other rollout": "A cluster is in another rollout", "failure budget": "Failure budget spent",
  "not enabled": "Not enabled", "spec": "Cannot start", "fleet frozen": "The fleet is frozen",
  "analysis": "Its analysis gates measure the batch before it ends",
  "analysis inconclusive": "Its analysis gets no usable answer, and holds the batch",
};

// kindLabels say, in the list, what a rollout is when it is not a ClusterGroupUpgrade.
const kindLabels = { ImageBasedGroupUpgrade: " · image-based", ManagedClustersUpgrade: " · release-named" };

// The page's data: what the stream last sent. The fleet map's states change in place (a
// Uint8Array of state letters): a delta touches only the clusters it names.
const store = {
  overview: null, detail: null, fleet: null, trains: null, live: "connecting", serverOffset: 0,
  selection: parseHash(), tab: tabOf(), story: null, version: 0,
};
let rerender = () => {};
function changed() {
  store.version++;
  rerender();
}

function parseHash() {
  const m = /^#\/(ClusterGroupUpgrade|ImageBasedGroupUpgrade|ManagedClustersUpgrade)\/([^/]+)\/([^/]+)(?:\/cluster\/([^/]+))?$/.exec(location.hash);
  return m ? { kind: m[1], namespace: decodeURIComponent(m[2]), name: decodeURIComponent(m[3]), cluster: m[4] ? decodeURIComponent(m[4]) : "" } : null;
}

// tabOf is the tab the address shows: the release trains (#/trains), or the rollouts.
function tabOf() {
  return location.hash === "#/trains" ? "trains" : "rollouts";
}

function same(a, b) {
  return a && b && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

function hashOf(sel, cluster) {
  return "#/" + sel.kind + "/" + encodeURIComponent(sel.namespace) + "/" + encodeURIComponent(sel.name) +
    (cluster ? "/cluster/" + encodeURIComponent(cluster) : "");
}

// connect opens the stream for the current selection; the browser reconnects by itself
// when the server goes away.
let stream = null;
function connect() {
  if (stream) stream.close();
  const q = new URLSearchParams();
  const sel = store.selection;
  if (sel) {
    q.set("kind", sel.kind);
    q.set("namespace", sel.namespace);
    q.set("name", sel.name);
  }
  setLive("connecting");
  stream = new EventSource("/api/stream?" + q.toString());
  stream.addEventListener("open", () => setLive("live"));
  stream.addEventListener("error", () => setLive("reconnecting"));
  stream.addEventListener("overview", (e) => {
    store.overview = JSON.parse(e.data);
    store.serverOffset = Date.parse(store.overview.now) - Date.now();
    changed();
  });
  stream.addEventListener("detail", (e) => {
    store.detail = JSON.parse(e.data);
    changed();
  });
  stream.addEventListener("trains", (e) => {
    store.trains = JSON.parse(e.data);
    changed();
  });
  stream.addEventListener("fleet", (e) => {
    applyFleet(JSON.parse(e.data));
  });
  stream.addEventListener("states", (e) => {
    applyDelta(JSON.parse(e.data));
  });
}

function setLive(state) {
  store.live = state;
  changed();
}

// applyFleet takes a whole map: the names once, with their batches, stages and states.
export function applyFleet(f) {
  if (!f) {
    store.fleet = null;
  } else {
    store.fleet = { epoch: f.epoch, names: f.names, batches: f.batches, stages: f.stages || null, canaries: f.canaries || 0,
      states: letterStates(f.states), index: null, version: 0 };
  }
  changed();
}

// applyDelta changes the states a delta names: "12c40r", or all of them.
function applyDelta(d) {
  const f = store.fleet;
  if (!f || f.epoch !== d.epoch) return;
  if (d.states) {
    f.states = letterStates(d.states);
  } else {
    const re = /(\d+)([a-z])/g;
    let m;
    while ((m = re.exec(d.changes)) !== null) {
      const i = Number(m[1]);
      if (i < f.states.length) f.states[i] = m[2].charCodeAt(0);
    }
  }
  f.version++;
  changed();
}

function now() {
  return Date.now() + store.serverOffset;
}

// ago says how long ago (or, for a future time, in how long) t is.
function ago(t) {
  if (!t) return "";
  const s = Math.round((now() - Date.parse(t)) / 1000);
  const text = duration(Math.abs(s));
  return s >= 0 ? text + " ago" : "in " + text;
}

function duration(s) {
  if (s < 60) return s + "s";
  if (s < 3600) return Math.round(s / 60) + "m";
  const hours = Math.floor(s / 3600), minutes = Math.round((s % 3600) / 60);
  return minutes ? hours + "h" + String(minutes).padStart(2, "0") + "m" : hours + "h";
}

function clock(t) {
  if (!t) return "";
  return new Date(t).toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

function timeOfDay(t) {
  return new Date(t).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

// count writes n with its noun: "1 batch", "2 batches".
function count(n, one, many) {
  return n.toLocaleString("en") + " " + (n === 1 ? one : many);
}

function Badge({ state, text }) {
  return html`<span class="badge" data-state=${state}>${text || state}</span>`;
}

function countsText(c) {
  return stateNames.filter((s) => c[countKeys[s]]).map((s) => c[countKeys[s]] + " " + stateLabels[s]).join(", ") || "no clusters";
}

// Bar draws counts as one bar of coloured segments in state order.
function Bar({ counts, total }) {
  return html`<div class="bar" role="img" aria-label=${countsText(counts)}>
    ${stateNames.filter((s) => counts[countKeys[s]] > 0).map((s) => html`<span key=${s} data-state=${s}
      style=${{ flexGrow: counts[countKeys[s]] }} title=${counts[countKeys[s]] + " " + stateLabels[s]}></span>`)}
    ${!total ? html`<span data-state="none" style=${{ flexGrow: 1 }}></span>` : null}
  </div>`;
}

function Chips({ counts }) {
  return html`<div class="chips">${stateNames.filter((s) => counts[countKeys[s]]).map((s) =>
    html`<span key=${s} class="chip" data-state=${s}><b>${counts[countKeys[s]]}</b> ${stateLabels[s]}</span>`)}</div>`;
}

// Legend names each state with the mark the map draws for it: a shape as well as a colour.
function Legend() {
  return html`<div class="legend" aria-hidden="true">${["Pending", "Waiting", ...stateNames.slice(1)].map((s) =>
    html`<span key=${s}><span class="dot" data-state=${s}></span>${stateLabels[s]}</span>`)}</div>`;
}

function Section({ title, id, children }) {
  return html`<section class="part" id=${id}><h3>${title}</h3>${children}</section>`;
}

function App() {
  const [, setVersion] = useState(0);
  rerender = () => setVersion(store.version);
  const o = store.overview;
  const trains = store.tab === "trains";
  const t = store.trains;
  return html`
    <header class="top">
      <h1>${trains ? "Release trains" : "Rollouts"}</h1>
      <nav class="tabs" aria-label="Views">
        <a href="#/" id="tab-rollouts" aria-current=${trains ? null : "page"}>Rollouts</a>
        <a href="#/trains" id="tab-trains" aria-current=${trains ? "page" : null}>Trains${t && t.trains.length ? " (" + t.trains.length + ")" : ""}</a>
      </nav>
      <span class="scope" id="scope">${o ? o.scope : document.body.dataset.scope}</span>
      <span class="live" id="live" data-state=${store.live}>${store.live}</span>
    </header>
    ${trains ? html`<main class="wide"><${TrainsView} trains=${t} /></main>` : html`<main>
      <section class="fleet" aria-labelledby="fleet-title">
        <h2 id="fleet-title" class="visually-hidden">All rollouts</h2>
        <${Totals} overview=${o} />
        <${Rollouts} overview=${o} />
      </section>
      <section class="detail" id="detail" aria-live="polite"><${Detail} /></section>
    </main>`}
    <${Story} />`;
}

function Totals({ overview }) {
  if (!overview) return html`<div class="totals" id="totals"></div>`;
  const states = Object.entries(overview.states || {}).sort();
  return html`<div class="totals" id="totals">
    <div class="total"><b>${overview.rows.length}</b> rollouts</div>
    ${states.map(([s, n]) => html`<div class="total" key=${s}><${Badge} state=${s} text=${n + " " + s} /></div>`)}
    <div class="total wide"><${Bar} counts=${overview.clusters} total=${overview.clusters.total} />
      <span class="muted">${overview.clusters.total + " clusters: " + countsText(overview.clusters)}</span></div>
    <${Legend} />
  </div>`;
}

function Rollouts({ overview }) {
  let body;
  if (!overview) {
    body = html`<tr><td colspan="5" class="empty">Loading…</td></tr>`;
  } else if (overview.rows.length === 0) {
    body = html`<tr><td colspan="5" class="empty">No rollout in ${overview.scope}.</td></tr>`;
  } else {
    body = overview.rows.map((r) => {
      const sel = { kind: r.kind, namespace: r.namespace, name: r.name };
      return html`<tr key=${r.kind + "/" + r.namespace + "/" + r.name} class=${same(sel, store.selection) ? "selected" : ""} tabindex="0"
          data-name=${r.name} onClick=${() => select(sel)} onKeyDown=${(e) => { if (e.key === "Enter") select(sel); }}>
        <td><div class="name">${r.name}</div><div class="muted">${r.namespace}${kindLabels[r.kind] || ""}${r.owner ?
          (r.ownerKind === "ManagedClustersUpgrade" ? " · runs " : " · step of ") + r.owner : ""}</div></td>
        <td><${Badge} state=${r.state} />${r.paused ? html`<${Badge} state="Paused" text="paused" />` : null}</td>
        <td class="num">${r.batch || "–"}</td>
        <td><${Bar} counts=${r.counts} total=${r.total} /><div class="muted">${r.done + "/" + r.total + " done"}</div></td>
        <td>${r.wait ? html`<span class="wait" title=${r.wait.message || ""}>${r.wait.kind}</span>` : ""}</td>
      </tr>`;
    });
  }
  return html`<table class="rollouts">
    <thead><tr><th>Rollout</th><th>State</th><th>Batch</th><th>Clusters</th><th>Waits for</th></tr></thead>
    <tbody id="rows">${body}</tbody>
  </table>`;
}

function select(sel) {
  location.hash = hashOf(sel);
}

window.addEventListener("hashchange", () => {
  const sel = parseHash();
  const before = store.selection;
  store.selection = sel;
  store.tab = tabOf();
  if (!same(sel, before)) {
    store.detail = null;
    store.fleet = null;
    connect();
  }
  openStory(sel && sel.cluster ? sel.cluster : "");
  changed();
});

function Detail() {
  const sel = store.selection;
  const d = store.detail;
  if (!sel) return html`<p class="empty">Select a rollout to see its plan, its clusters and its events.</p>`;
  if (!d || !same(d, sel)) {
    const o = store.overview;
    const known = o && o.rows.some((r) => same(r, sel));
    return html`<p class="empty">${known || !o ? "Loading " + sel.name + "…" : sel.namespace + "/" + sel.name + " does not exist (any more)."}</p>`;
  }
  return html`
    <div class="head">
      <div><h2>${d.name}</h2><div class="muted">${d.kind} in ${d.namespace}</div></div>
      <div class="actions">${actionButtons(d)}</div>
    </div>
    <div class="summary"><${Badge} state=${d.state} />${d.paused ? html`<${Badge} state="Paused" text="paused" />` : null}
      <span class="message">${d.message || ""}</span></div>
    ${d.wait ? html`<div class="waitbox"><b>${(waitTitles[d.wait.kind] || d.wait.kind) + ": "}</b>${d.wait.message || d.wait.reason}${
      d.wait.until ? " (until " + clock(d.wait.until) + ", " + ago(d.wait.until) + ")" : ""}</div>` : null}
    ${d.kind === "ImageBasedGroupUpgrade" ? html`<${Steps} d=${d} />` : d.kind === "ManagedClustersUpgrade" ? html`<${Release} d=${d} />` : html`<${Precache} d=${d} /><${Timeline} d=${d} />`}
    <${Running} d=${d} />
    <${FleetMap} d=${d} />
    <${Chart} d=${d} />
    <${Analysis} list=${d.analysis} />
    <${Problems} title="Held and waiting clusters" list=${d.held} more=${d.heldNotShown} id="held" />
    <${Problems} title="Failed and timed-out clusters" list=${d.failed} more=${d.failedNotShown} id="failed" />
    <${Checks} c=${d.checks} />
    <${Approvals} list=${d.approvals} />
    <${Events} d=${d} />`;
}

function actionButtons(d) {
  if (d.kind !== "ClusterGroupUpgrade") return [];
  const a = d.actions || {};
  const out = [];
  const who = d.namespace + "/" + d.name;
  if (a.approve) out.push(button("approve", "Approve batch " + a.approve, "primary",
    "Approve batch " + a.approve + " of " + who + "? The approval names you as the API server knows you.", a.approve));
  if (a.enable) out.push(button("enable", "Enable", "primary", "Enable " + who + "? The rollout starts enforcing its policies."));
  if (a.pause) out.push(button("pause", "Pause", "secondary", "Pause " + who + "? No new batch, cluster or policy starts until you resume."));
  if (a.resume) out.push(button("resume", "Resume", "primary", "Resume " + who + "?"));
  return out;
}

function button(action, label, style, question, batch) {
  return html`<button key=${action} class=${style} data-action=${action} onClick=${() => confirmThen(label, question, () => act(action, batch))}>${label}</button>`;
}

function confirmThen(title, text, then) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = title;
  dialog.returnValue = "";
  dialog.onclose = () => { if (dialog.returnValue === "ok") then(); };
  dialog.showModal();
}

async function act(action, batch) {
  const sel = store.selection;
  const body = { namespace: sel.namespace, name: sel.name, action };
  if (batch) body.batch = batch;
  try {
    const resp = await fetch("/api/action", {
      method: "POST", headers: { "Content-Type": "application/json", "X-Cgu-Dashboard-Token": token },
      body: JSON.stringify(body),
    });
    const result = await resp.json();
    toast(resp.ok ? result.message : result.error, resp.ok ? "ok" : "error");
  } catch (e) {
    toast("The dashboard did not answer: " + e, "error");
  }
}

function toast(text, kind) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, kind === "error" ? 15000 : 6000);
}

// Spread says how spec.remediationStrategy.spread and antiAffinity shaped the batches.
function Spread({ d }) {
  if (!d.spread || d.spread.length === 0) return null;
  const keys = d.spread.map((s) => "at most " + count(s.maxPerBatch, "cluster", "clusters") + " of each " + s.labelKey + " in a batch (" +
    count(s.values, "value", "values") + ", the largest with " + count(s.largest, "cluster", "clusters") +
    (s.unlabeled ? "; " + count(s.unlabeled, "cluster", "clusters") + " without the label" : "") + ")");
  return html`<p id="spread">${"Spread: " + keys.join("; ") + ". " + (d.spreadAddedBatches ?
    "The spread added " + count(d.spreadAddedBatches, "batch", "batches") + " to those maxConcurrency alone makes." :
    "The spread added no batch.")}</p>`;
}

// Precache shows where the pre-caching of a rollout not started stands: the clusters by
// precache state and, with a bandwidth budget, when its plan ends.
function Precache({ d }) {
  const p = d.precache;
  if (!p) return null;
  const states = Object.keys(p.counts || {}).filter((s) => p.counts[s] > 0).sort();
  return html`<${Section} title="Pre-caching" id="precache">
    <p class="precache-counts">${states.map((s) => p.counts[s] + " " + s).join(", ") || "no cluster yet"}</p>
    ${p.text ? html`<p class="precache-plan" data-late=${p.plan && p.plan.late ? "true" : "false"}>${p.text}</p>` : null}
  </${Section}>`;
}

function Timeline({ d }) {
  if (!d.frozen || d.timeline.length === 0) {
    return html`<${Section} title="Plan"><p class="muted">${d.planned ?
      d.planned + " batches planned; the plan is frozen when the rollout starts. kubectl cgu plan " + d.name + " -n " + d.namespace + " previews it." :
      "No plan yet."}</p><${Spread} d=${d} /></${Section}>`;
  }
  const rows = d.timeline.filter((b) => b.state !== "planned" || b.index <= (d.running ? d.running.index + 1 : 1));
  const ended = d.timeline.filter((b) => b.state === "ended").length;
  return html`<${Section} title=${"Plan: " + ended + " of " + count(d.timeline.length, "batch", "batches") + " ended"}>
    <${Spread} d=${d} />
    <ol class="timeline" id="timeline">${d.timeline.map((b) => html`<li key=${b.index} class="batch" data-state=${b.state} data-index=${b.index}
        title=${"Batch " + b.index + (b.canary ? " (canary)" : "") + (b.window ? " (a window of " + b.window + " at once)" : "") +
          (b.stages ? " (stages of " + b.stages.join(", ") + " clusters)" : "") + ": " + b.state + ", " + countsText(b.counts)}>
        <div class="label">${(b.canary ? "C" : "") + b.index + (b.window ? " ⇉" + b.window : "") + (b.stages ? " ↗" : "")}</div>
        <${Bar} counts=${b.counts} total=${b.clusters} /></li>`)}</ol>
    ${d.eta && d.eta.batchesLeft ? html`<p class="eta">Estimated duration: ${d.eta.text}</p>` : null}
    <table class="batches">
      <thead><tr><th>Batch</th><th>State</th><th>Clusters</th><th>Started</th><th>Ended or times out</th></tr></thead>
      <tbody>${rows.map((b) => html`<tr key=${b.index} data-index=${b.index} data-state=${b.state}>
        <td>${b.index + (b.canary ? " canary" : "")}</td>
        <td><${Badge} state=${b.state === "ended" && b.endsRollout ? "EndsRollout" : b.state} text=${b.state + (b.endsRollout ? ", ended the rollout" : "")} /></td>
        <td>${countsText(b.counts)}</td>
        <td>${b.startedAt ? clock(b.startedAt) : "–"}</td>
        <td>${b.finishedAt ? clock(b.finishedAt) + " (took " + duration(Math.round((Date.parse(b.finishedAt) - Date.parse(b.startedAt)) / 1000)) + ")" :
          b.timeoutAt ? "times out " + ago(b.timeoutAt) : "–"}</td></tr>`)}</tbody>
    </table>
    ${rows.length < d.timeline.length ? html`<p class="muted">${d.timeline.length - rows.length} more planned batches.</p>` : null}
  </${Section}>`;
}

function Running({ d }) {
  const r = d.running;
  if (!r) return null;
  const sg = r.stage;
  const title = "Batch " + r.index + (r.ended ? " ended" : " runs") +
    (r.window ? ": a window of " + r.window + " at once, each cluster with its own deadline" : "") +
    (sg ? ": stage " + sg.number + " (" + count(sg.size, "cluster", "clusters") + ", step " + sg.step + " of the growth)" : "");
  return html`<${Section} title=${title} id="running">
    ${sg ? html`<p class="stage" id="stage">${(sg.startedAt ? "Started " + ago(sg.startedAt) : "Not started") + (sg.timeoutAt ? ", times out " + ago(sg.timeoutAt) : "") +
      (sg.resets ? "; the growth went back " + count(sg.resets, "time", "times") : "") + "."}</p>` : null}
    ${sg && sg.unhealthy ? html`<p class="muted" id="unhealthy">Last unhealthy stage: ${sg.unhealthy}</p>` : null}
    <${Chips} counts=${r.counts} />
  </${Section}>`;
}

// FleetMap draws every cluster of the rollout as a cell on a canvas, grouped by batch, stage,
// state or a label; hovering names a cluster, clicking opens its story.
function FleetMap({ d }) {
  const f = store.fleet;
  const canvas = useRef(null);
  const box = useRef(null);
  const layout = useRef(null);
  const [group, setGroup] = useState("batch");
  const [labels, setLabels] = useState(null);
  const [tip, setTip] = useState(null);
  const [width, setWidth] = useState(0);
  const [find, setFind] = useState("");
  const [keys, setKeys] = useState([]);

  // The labels the clusters carry, to group by one of them, when the user may read them.
  useEffect(() => {
    setKeys([]);
    if (!f) return;
    const sel = store.selection;
    const q = new URLSearchParams({ namespace: sel.namespace, name: sel.name });
    fetch("/api/labels?" + q).then((r) => r.ok ? r.json() : null).then((v) => setKeys(v && v.keys ? v.keys : [])).catch(() => setKeys([]));
  }, [f && f.epoch]);

  useLayoutEffect(() => {
    if (!box.current) return undefined;
    const ro = new ResizeObserver((entries) => setWidth(Math.floor(entries[0].contentRect.width)));
    ro.observe(box.current);
    return () => ro.disconnect();
  }, [f !== null]);

  // A label to group by is read when chosen, for the clusters of this map.
  useEffect(() => {
    if (!group.startsWith("label:") || !f) {
      setLabels(null);
      return;
    }
    const sel = store.selection;
    const q = new URLSearchParams({ namespace: sel.namespace, name: sel.name, key: group.slice(6) });
    fetch("/api/labels?" + q).then((r) => r.ok ? r.json() : null).then((v) => setLabels(v && v.epoch === f.epoch ? v : null));
  }, [group, f && f.epoch]);

  // The map is drawn again when its clusters, their states, the grouping, the width or the
  // cluster whose story is open change; not on every push.
  const selected = store.story ? store.story.cluster : "";
  useLayoutEffect(() => {
    if (!f || !canvas.current || !width) return;
    const started = performance.now();
    layout.current = layoutMap(f, group, labels, width);
    drawMap(canvas.current, layout.current, f, mapColors(document.documentElement), selected);
    window.cguDashboard.mapRender = { clusters: f.names.length, ms: performance.now() - started };
  }, [f, f && f.version, group, labels, width, selected]);

  if (!f || d.kind !== "ClusterGroupUpgrade") return null;
  const stageOptions = f.stages ? html`<option value="stage">stage</option>` : null;
  const move = (e) => {
    const hit = layout.current && hitMap(layout.current, e.offsetX, e.offsetY);
    setTip(hit === null ? null : { i: hit, x: e.offsetX, y: e.offsetY });
  };
  const click = (e) => {
    const hit = layout.current && hitMap(layout.current, e.offsetX, e.offsetY);
    if (hit !== null) showStory(f.names[hit]);
  };
  const submitFind = (e) => {
    e.preventDefault();
    const name = find.trim();
    if (f.names.includes(name)) showStory(name);
    else toast(name + " is not in this rollout", "error");
  };
  return html`<${Section} title=${"Clusters: " + count(f.names.length, "cluster", "clusters")} id="map-section">
    <div class="map-tools">
      <label>Group by <select id="map-group" value=${group} onChange=${(e) => setGroup(e.target.value)}>
        <option value="batch">batch</option>${stageOptions}<option value="state">state</option>
        ${keys.map((k) => html`<option key=${k} value=${"label:" + k}>label ${k}</option>`)}
      </select></label>
      <form onSubmit=${submitFind} class="find"><input id="map-find" placeholder="Find a cluster" value=${find}
        onInput=${(e) => setFind(e.target.value)} aria-label="Find a cluster" /></form>
      <${Legend} />
    </div>
    <div class="map" ref=${box}>
      <canvas id="map" ref=${canvas} role="img" aria-label=${mapSummary(f)} onMouseMove=${move} onMouseLeave=${() => setTip(null)} onClick=${click}></canvas>
      ${tip ? html`<div class="tip" id="map-tip" style=${{ left: tip.x + 14 + "px", top: tip.y + 10 + "px" }}>
        <b>${f.names[tip.i]}</b> ${stateLabels[stateOfLetter(f.states[tip.i])]}<br /><span class="muted">batch ${f.batches[tip.i]}${
          f.stages && f.stages[tip.i] ? ", stage " + f.stages[tip.i] : ""} · click for its story</span></div>` : null}
    </div>
  </${Section}>`;
}

// mapSummary says in words what the map shows, for a screen reader.
function mapSummary(f) {
  const n = {};
  for (const code of f.states) {
    const l = String.fromCharCode(code);
    n[l] = (n[l] || 0) + 1;
  }
  return count(f.names.length, "cluster", "clusters") + ": " + Object.entries(n).map(([l, k]) => k.toLocaleString("en") + " " + stateLabels[stateOfLetter(l)]).join(", ");
}

// Chart is the burn-up chart: clusters completed, failed, timed out and in progress against
// time, batch starts as lines, holds as bands, the estimate as a dashed line to the total.
function Chart({ d }) {
  const p = d.progress;
  const box = useRef(null);
  const plot = useRef(null);
  const data = useMemo(() => p ? chartData(p) : null, [p && JSON.stringify(p)]);
  useEffect(() => {
    if (!box.current || !data) return undefined;
    const width = Math.max(320, box.current.clientWidth);
    if (plot.current && plot.current.root.parentNode === box.current) {
      plot.current.marks = { batches: p.batches, holds: p.holds };
      plot.current.setData(data.series);
      return undefined;
    }
    // A chart drawn in a box the page no longer shows (another rollout's) goes.
    if (plot.current) plot.current.destroy();
    const u = new uPlot(chartOptions(width), data.series, box.current);
    u.marks = { batches: p.batches, holds: p.holds };
    plot.current = u;
    window.cguDashboard.chart = u;
    return undefined;
  }, [data]);
  // The chart follows the page's width.
  useEffect(() => {
    if (!box.current) return undefined;
    const ro = new ResizeObserver((entries) => {
      const w = Math.max(320, Math.floor(entries[0].contentRect.width));
      if (plot.current && plot.current.width !== w) plot.current.setSize({ width: w, height: 220 });
    });
    ro.observe(box.current);
    return () => ro.disconnect();
  }, [p !== undefined && p !== null]);
  useEffect(() => () => {
    if (plot.current) plot.current.destroy();
    plot.current = null;
  }, []);
  if (!p) return null;
  const k = p.completed.length - 1;
  const last = "At " + timeOfDay(p.end) + ": " + p.completed[k] + " completed, " + p.inProgress[k] + " in progress, " +
    p.failed[k] + " failed, " + p.timedOut[k] + " timed out, of " + p.total + ".";
  return html`<${Section} title="Progress over time" id="progress">
    <figure class="chart"><div ref=${box} class="chart-box"></div>
      <figcaption id="progress-caption">${last} ${holdText(p.holds)}${p.projection ?
        " The dashed line is the estimate: all done " + ago(p.projection.until) + "." : ""}</figcaption></figure>
  </${Section}>`;
}

function holdText(holds) {
  if (!holds || holds.length === 0) return "";
  const words = { pause: "paused", freeze: "frozen", wait: "waiting" };
  return "Shaded: " + holds.map((h) => words[h.kind] + (h.batch ? " (batch " + h.batch + ", " + h.reason + ")" : "") + " from " + timeOfDay(h.from) +
    (h.to ? " to " + timeOfDay(h.to) : ", still")).join("; ") + ".";
}

// chartData turns the server's buckets into uPlot's columns: the times, then each series;
// the projection adds a point at its end.
function chartData(p) {
  const start = Date.parse(p.start) / 1000, end = Date.parse(p.end) / 1000;
  const xs = p.completed.map((_, k) => Math.min(start + (k + 1) * p.step, end));
  xs.unshift(start);
  const col = (a) => [0, ...a];
  const series = [xs, col(p.completed), col(p.inProgress), col(p.failed), col(p.timedOut), xs.map(() => null)];
  if (p.projection) {
    const last = xs.length - 1;
    series[5][last] = p.projection.done;
    xs.push(Date.parse(p.projection.until) / 1000);
    for (let i = 1; i < 5; i++) series[i].push(null);
    series[5].push(p.total);
  }
  return { series };
}

function chartOptions(width) {
  const css = getComputedStyle(document.documentElement);
  const c = (name) => css.getPropertyValue(name).trim();
  return {
    width, height: 220, legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    scales: { y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    axes: [{ stroke: c("--muted"), grid: { stroke: c("--line") } }, { stroke: c("--muted"), grid: { stroke: c("--line") } }],
    series: [
      {},
      { label: "completed", stroke: c("--completed"), width: 2, fill: c("--completed") + "22" },
      { label: "in progress", stroke: c("--progress"), width: 2 },
      { label: "failed", stroke: c("--failed"), width: 2, dash: [2, 2] },
      { label: "timed out", stroke: c("--timedout"), width: 2, dash: [6, 3] },
      { label: "estimate", stroke: c("--muted"), width: 1.5, dash: [8, 6], spanGaps: true, points: { show: false } },
    ],
    hooks: { drawClear: [drawMarks] },
  };
}

// drawMarks shades the holds and draws a line at each batch's start, under the series.
function drawMarks(u) {
  const m = u.marks;
  if (!m) return;
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  const css = getComputedStyle(document.documentElement);
  ctx.save();
  for (const hd of m.holds || []) {
    const x0 = u.valToPos(Date.parse(hd.from) / 1000, "x", true);
    const x1 = hd.to ? u.valToPos(Date.parse(hd.to) / 1000, "x", true) : u.valToPos(u.scales.x.max, "x", true);
    ctx.fillStyle = (hd.kind === "freeze" ? css.getPropertyValue("--accent") : css.getPropertyValue("--held")).trim() + "2e";
    ctx.fillRect(Math.max(left, x0), top, Math.max(1, Math.min(left + width, x1) - Math.max(left, x0)), height);
  }
  ctx.strokeStyle = css.getPropertyValue("--muted").trim();
  ctx.fillStyle = ctx.strokeStyle;
  ctx.setLineDash([3, 3]);
  ctx.font = 10 * devicePixelRatio + "px sans-serif";
  for (const b of m.batches || []) {
    const x = Math.round(u.valToPos(Date.parse(b.at) / 1000, "x", true));
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.fillText("B" + b.index, x + 3, top + 11 * devicePixelRatio);
  }
  ctx.restore();
}

// Analysis shows each analysed batch's gates: verdict, message, query and a plot of the
// measurements.
function Analysis({ list }) {
  if (!list || list.length === 0) return null;
  return html`<section class="part" id="analysis"><h3>Analysis</h3>
    <p class="muted plot-key">Each mark is a measurement: <span data-outcome="Passed">●</span> passed, <span data-outcome="Failed">◆</span> failed, <span
      data-outcome="Inconclusive">▲</span> inconclusive (on the axis when it got no value). Solid line: the value (the worst cluster's, or a comparison's median); dashed: the baseline's median; dotted: the threshold.</p>
    ${list.map((a) => html`<div key=${a.batch} class="analysed" data-batch=${a.batch}>
      <h4>Batch ${a.batch}<span class="muted"> · measured from ${clock(a.startedAt)}</span></h4>
      <ul class="gates">${a.gates.map((g) => html`<${Gate} key=${g.name} g=${g} />`)}</ul></div>`)}
  </section>`;
}

function Gate({ g }) {
  const how = [g.condition ? "passes when the value is " + g.condition : "",
    g.failureCondition ? "fails when it is " + g.failureCondition : "",
    g.mode === "Comparison" ? "compared with the clusters not upgraded yet" : ""].filter(Boolean).join(", ");
  return html`<li class="gate" data-gate=${g.name} data-phase=${g.phase}>
    <div class="gate-text">
      <div><b>${g.name}</b> <${Badge} state=${g.phase} />${how ? html`<span class="muted">${how}</span>` : null}</div>
      ${g.message ? html`<p class="gate-message">${g.message}</p>` : null}
      ${g.clusters && g.clusters.length ? html`<p class="gate-clusters">Missed: ${g.clusters.join(", ")}${g.clustersNotShown ? " and " + g.clustersNotShown + " more" : ""}</p>` : null}
      <code class="query">${g.query}</code>
      <p class="muted">${measured(g)}</p>
    </div>
    <${Plot} g=${g} />
  </li>`;
}

function measured(g) {
  if (!g.conclusive && !g.inconclusives) return "Not measured yet.";
  return "Measured: " + (g.conclusive - g.failures) + " passed, " + g.failures + " failed" +
    (g.inconclusives ? ", " + g.inconclusives + " inconclusive" : "") + ".";
}

// number writes a measured value short: 4 significant digits at most.
function number(v) {
  return String(Number(v.toPrecision(4)));
}

// plotTitle says what a gate's plot shows: "api-errors: 3 measurements, last 0.2 (Failed)".
function plotTitle(g) {
  const pts = g.points || [];
  if (pts.length === 0) return g.name + ": no measurement yet (" + g.phase + ")";
  const last = pts[pts.length - 1];
  return g.name + ": " + count(pts.length, "measurement", "measurements") + ", last " +
    (last.value === null ? "without a value" : number(last.value)) + " (" + g.phase + ")";
}

// threshold is the number of a success condition such as "< 0.05", null for none.
function threshold(condition) {
  const m = /^\s*(?:<=|>=|<|>)\s*(\S+)\s*$/.exec(condition || "");
  const v = m ? Number(m[1]) : NaN;
  return Number.isFinite(v) ? v : null;
}

// Plot draws a gate's measurements, oldest first: a mark for each, coloured (and shaped) by
// its outcome, on the line of the values; a comparison's baseline as a dashed line; an
// Absolute gate's threshold as a dotted one. A measurement without a value is a mark on the
// axis.
function Plot({ g }) {
  const W = 300, H = 96, left = 46, right = 10, top = 8, bottom = 22, axis = H - bottom;
  const pts = g.points || [];
  const title = plotTitle(g);
  const frame = (children) => html`<svg class="plot" viewBox=${"0 0 " + W + " " + H} width=${W} height=${H} role="img" aria-label=${title}>
    <title>${title}</title>
    <line class="axis" x1=${left} y1=${top} x2=${left} y2=${axis} /><line class="axis" x1=${left} y1=${axis} x2=${W - right} y2=${axis} />
    ${children}</svg>`;
  if (pts.length === 0) {
    return frame(html`<text class="note" x=${(left + W - right) / 2} y=${(top + axis) / 2} text-anchor="middle">no measurement yet</text>`);
  }
  const limit = threshold(g.condition || g.failureCondition);
  const values = pts.flatMap((p) => [p.value, p.baseline]).filter((v) => v !== null && v !== undefined);
  const highest = Math.max(0, ...values, ...(limit === null ? [] : [limit]));
  const lowest = Math.min(0, ...values, ...(limit === null ? [] : [limit]));
  const span = highest > lowest ? highest - lowest : 1;
  const x = (i) => pts.length === 1 ? (left + W - right) / 2 : left + 14 + i * (W - left - right - 24) / (pts.length - 1);
  const y = (v) => axis - (v - lowest) * (axis - top - 4) / span;
  // The scale: the lowest and highest values and the threshold, those that do not overlap.
  const ticks = [];
  for (const v of [lowest, highest, limit]) {
    if (v === null || ticks.some((t) => Math.abs(y(t) - y(v)) < 11)) continue;
    ticks.push(v);
  }
  return frame(html`
    ${ticks.map((v) => html`<text class="tick" x=${left - 4} y=${y(v) + 3.5} text-anchor="end">${number(v)}</text>`)}
    ${limit !== null ? html`<line class="threshold" x1=${left} y1=${y(limit)} x2=${W - right} y2=${y(limit)}><title>${g.condition ?
      "Threshold: the value must be " + g.condition.trim() : "Threshold: the value fails when it is " + g.failureCondition.trim()}</title></line>` : null}
    ${["baseline", "value"].map((key) => { const dd = path(pts, key, x, y); return dd ? html`<path class=${"line " + key} d=${dd} />` : null; })}
    ${pts.map((p, i) => mark(p, x(i), p.value === null ? axis : y(p.value)))}
    <text class="tick" x=${x(0)} y=${H - 6} text-anchor=${pts.length === 1 ? "middle" : "start"}>${timeOfDay(pts[0].at)}</text>
    ${pts.length > 1 ? html`<text class="tick" x=${x(pts.length - 1)} y=${H - 6} text-anchor="end">${timeOfDay(pts[pts.length - 1].at)}</text>` : null}`);
}

// path is the line through the points' values of key, broken where one has none.
function path(pts, key, x, y) {
  let d = "", pen = "M";
  pts.forEach((p, i) => {
    if (p[key] === null || p[key] === undefined) {
      pen = "M";
      return;
    }
    d += pen + x(i).toFixed(1) + " " + y(p[key]).toFixed(1) + " ";
    pen = "L";
  });
  return d.trim();
}

// mark is one measurement: a circle passed, a diamond failed, a triangle inconclusive.
function mark(p, cx, cy) {
  const about = timeOfDay(p.at) + " " + p.outcome.toLowerCase() + (p.value === null ? ", no value" : ": " + number(p.value)) +
    (p.baseline === null || p.baseline === undefined ? "" : " (baseline " + number(p.baseline) + ")");
  if (p.outcome === "Passed") return html`<circle class="mark" data-outcome=${p.outcome} cx=${cx} cy=${cy} r="4.5"><title>${about}</title></circle>`;
  const d = p.outcome === "Failed" ? "M" + cx + " " + (cy - 6) + "l6 6-6 6-6-6z" : "M" + cx + " " + (cy - 8) + "l6 9h-12z";
  return html`<path class="mark" data-outcome=${p.outcome} d=${d}><title>${about}</title></path>`;
}

function Problems({ title, list, more, id }) {
  if (!list || list.length === 0) return null;
  return html`<${Section} title=${title + " (" + (list.length + (more || 0)) + ")"}>
    <table class="problems" id=${id}>
      <thead><tr><th>Cluster</th><th>Batch</th><th>State</th><th>Reason</th></tr></thead>
      <tbody>${list.map((c) => html`<tr key=${c.name}>
        <td><a href=${hashOf(store.selection, c.name)} class="cluster-link">${c.name}</a></td><td class="num">${c.batch || "–"}</td>
        <td><${Badge} state=${c.state} text=${stateLabels[c.state] || c.state} /></td>
        <td>${[c.policy, c.reason].filter(Boolean).join(": ")}</td></tr>`)}</tbody>
    </table>
    ${more ? html`<p class="muted">${more} more not shown.</p>` : null}
  </${Section}>`;
}

function Checks({ c }) {
  if (!c) return null;
  const counts = Object.entries(c.counts || {}).sort();
  return html`<${Section} title="Upgrade checks">
    <div class="chips">${counts.map(([k, n]) => html`<span key=${k} class="chip" data-verdict=${k}><b>${n}</b> ${k}</span>`)}</div>
    ${c.clusters && c.clusters.length ? html`<table class="problems">
      <thead><tr><th>Cluster</th><th>Verdict</th><th>Reason</th><th>Message</th></tr></thead>
      <tbody>${c.clusters.map((k) => html`<tr key=${k.name}><td>${k.name}</td><td>${k.outcome}</td><td>${k.reason}</td><td>${k.message || ""}</td></tr>`)}</tbody>
    </table>` : null}
    ${c.clustersNotShown ? html`<p class="muted">${c.clustersNotShown} more; kubectl cgu preflight lists all.</p>` : null}
  </${Section}>`;
}

function Approvals({ list }) {
  if (!list || list.length === 0) return null;
  return html`<${Section} title="Approvals"><ul class="plain">${list.map((a) =>
    html`<li key=${a.batch}>Batch ${a.batch} by ${a.by || "someone"}, ${ago(a.at)}</li>`)}</ul></${Section}>`;
}

// Events shows the events grouped by kind and batch, failures and holds first, and the
// latest one by one; a filter narrows both.
function Events({ d }) {
  const [filter, setFilter] = useState("");
  const [warnings, setWarnings] = useState(false);
  const groups = d.eventGroups || [];
  const list = d.events || [];
  if (list.length === 0 && groups.length === 0) return html`<${Section} title="Events"><p class="muted">No event.</p></${Section}>`;
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (...texts) => words.every((w) => texts.some((t) => (t || "").toLowerCase().includes(w)));
  const shownGroups = groups.filter((g) => (!warnings || g.type === "Warning") &&
    matches(g.reason, g.action, g.message, g.clusterText, g.batch ? "batch " + g.batch : ""));
  const shownList = list.filter((e) => (!warnings || e.type === "Warning") && matches(e.reason, e.message));
  return html`<${Section} title="Events" id="events-section">
    <div class="event-tools">
      <input id="event-filter" type="search" placeholder="Filter: a cluster, a reason, batch 3…" value=${filter} onInput=${(e) => setFilter(e.target.value)} aria-label="Filter the events" />
      <label><input type="checkbox" id="event-warnings" checked=${warnings} onChange=${(e) => setWarnings(e.target.checked)} /> warnings only</label>
    </div>
    <ul class="groups" id="event-groups">${shownGroups.map((g) => html`<li key=${g.type + g.action + g.batch} data-type=${g.type} data-rank=${g.rank} data-action=${g.action}>
      <details><summary><b>${g.action}</b>${g.batch ? html` <span class="muted">batch ${g.batch}</span>` : null} <span class="count">×${g.count}</span>
        ${g.clusterText ? html` <span class="group-clusters">${g.clusterText}</span>` : null}</summary>
        <p>${g.message}</p><p class="muted">${g.reason} · ${g.first === g.last ? timeOfDay(g.last) : timeOfDay(g.first) + " to " + timeOfDay(g.last)}</p>
      </details></li>`)}</ul>
    ${groups.length && shownGroups.length === 0 ? html`<p class="muted">No group of events matches.</p>` : null}
    <h4 class="latest">Latest</h4>
    <ul class="events" id="events">${shownList.map((e, i) => html`<li key=${i} data-type=${e.type}>
      <span class="when" title=${clock(e.time)}>${timeOfDay(e.time)}</span><b>${e.reason}</b> ${e.message}${e.count > 1 ? html`<span class="muted"> ×${e.count}</span>` : null}</li>`)}</ul>
  </${Section}>`;
}

// Release shows a ManagedClustersUpgrade's release, the ClusterGroupUpgrade that runs it, the
// worker capacity its multi-node clusters add, and the updates of its plan.
function Release({ d }) {
  const r = d.release;
  const c = r.workerCapacity;
  return html`<${Section} title=${"Release " + r.version + " in " + r.channel}>
    <p id="release">Rolled out by ClusterGroupUpgrade ${r.upgrade ? html`<a href=${"#/ClusterGroupUpgrade/" + encodeURIComponent(d.namespace) + "/" + encodeURIComponent(r.upgrade)}>${r.upgrade}</a>` : "not yet"}</p>
    ${c ? html`<p id="capacity">${"Worker capacity: " + c.total + (c.total === 1 ? " multi-node cluster adds" : " multi-node clusters add") + " workers; " +
      c.added + " added, " + c.notReady + " upgraded without them (not ready in time), " + c.removed + " removed"}</p>` : null}
    <table class="batches" id="updates">
      <thead><tr><th>Update</th><th>To</th><th>Clusters</th><th>Policy</th><th>Accepted risks</th></tr></thead>
      <tbody>${r.updates.map((u) => html`<tr key=${u.index} data-index=${u.index} data-version=${u.version}>
        <td>${u.index}</td><td>${u.version}</td><td class="num">${u.clusters}</td><td>${u.policy}</td><td>${(u.risks || []).join(", ") || "–"}</td></tr>`)}</tbody>
    </table>
  </${Section}>`;
}

function Steps({ d }) {
  return html`<${Section} title="Plan steps"><table class="batches">
    <thead><tr><th>Step</th><th>Actions</th><th>State</th><th>Clusters</th><th>Rollout</th></tr></thead>
    <tbody>${(d.steps || []).map((s) => html`<tr key=${s.index}>
      <td>${s.index + 1}</td><td>${s.actions.join(", ")}</td><td><${Badge} state=${s.state} /></td>
      <td>${s.counts ? countsText(s.counts) : "–"}</td>
      <td>${s.upgrade ? html`<a href=${"#/ClusterGroupUpgrade/" + encodeURIComponent(d.namespace) + "/" + encodeURIComponent(s.upgrade)}>${s.upgrade}</a>` : "–"}</td></tr>`)}</tbody>
  </table></${Section}>`;
}

// The Trains tab: each release train as a row of its rings, left to right, each ring with
// the release it runs and that release's state there; under the rings, one lane per release
// of the ledger, newest first, its mark at the furthest ring it reached (before the first
// ring while it waits for an approval or for the first ring). Every mark has a word as well
// as a colour and a glyph.

// ringMarks are the glyphs of a release's state in a ring.
const ringMarks = { Rolling: "▶", Soaking: "◷", Qualified: "✓", Failed: "✕" };

// releaseMark is how a release's lane marks where it stands: a kind (its colour and glyph)
// and a word.
function releaseMark(r, rings) {
  const here = r.at >= 0 ? r.rings.find((x) => x.ring === r.at) : null;
  switch (r.state) {
    case "AwaitingApproval": return { kind: "awaiting", glyph: "?", word: "awaits approval" };
    case "Stopped": return { kind: "stopped", glyph: "✕", word: "stopped" + (here ? " in " + here.name : "") };
    case "Superseded": return { kind: "superseded", glyph: "↷", word: "superseded" };
    case "Delivered": return { kind: "delivered", glyph: "✓", word: "delivered" };
    case "Waiting":
      if (!here) return { kind: "waiting", glyph: "…", word: "waits for " + (rings[0] ? rings[0].name : "the first ring") };
      return { kind: "qualified", glyph: "✓", word: "qualified, waits" };
  }
  if (here && here.state === "Soaking") return { kind: "soaking", glyph: ringMarks.Soaking, word: "soaking" };
  if (here && here.state === "Failed") return { kind: "stopped", glyph: "✕", word: "failed in " + here.name };
  if (here && here.state === "Qualified") return { kind: "qualified", glyph: "✓", word: "qualified" };
  return { kind: "rolling", glyph: ringMarks.Rolling, word: "rolling" };
}

// railWidths are the widths, in pixels, of a train's columns: the releases' names, where
// they are found, and each ring (its box and the arrow after it).
const railWidths = { lane: 150, gate: 100, ring: 160 };

function TrainsView({ trains }) {
  if (!trains) return html`<p class="empty">Loading…</p>`;
  if (!trains.served) return html`<p class="empty" id="no-trains">This hub serves no ReleaseTrains.</p>`;
  if (trains.trains.length === 0) return html`<p class="empty" id="no-trains">No release train in ${trains.scope}.</p>`;
  return html`<div class="trains" id="trains">${trains.trains.map((t) => html`<${Train} key=${t.namespace + "/" + t.name} t=${t} />`)}</div>`;
}

function Train({ t }) {
  const p = t.progressing;
  const u = t.unreachable;
  const id = "train-" + t.namespace + "-" + t.name;
  return html`<article class="train" data-train=${t.namespace + "/" + t.name} aria-labelledby=${id}>
    <div class="train-head">
      <h2 id=${id}>${t.name}</h2>
      <span class="muted">${t.namespace} · channel ${t.channel}${t.newest ? " · newest " + t.newest : ""}${t.approval ? " · a new release waits for an approval" : ""}</span>
      ${t.paused ? html`<${Badge} state="Paused" text="paused" />` : null}
    </div>
    ${p ? html`<p class="train-progress"><${Badge} state=${p.reason} text=${p.reason} /> <span class="message">${p.message}</span></p>` : null}
    ${u ? html`<p class="train-warn" data-condition="HubsReporting"><b>⚠ Regional hubs do not report${u.hubs ? ": " + u.hubs.join(", ") : ""}${
      u.hubsNotShown ? " and " + u.hubsNotShown + " more" : ""}.</b> ${u.message}</p>` : null}
    ${(t.problems || []).map((c) => html`<p class="train-warn" key=${c.type} data-condition=${c.type}><b>⚠ ${c.type} ${c.reason}:</b> ${c.message}</p>`)}
    <div class="rail-scroll">
      <table class="rail" style=${{ width: railWidths.lane + railWidths.gate + t.rings.length * railWidths.ring + "px" }}>
        <caption class="visually-hidden">${"The rings of " + t.name + " in order, and where each release stands"}</caption>
        <colgroup><col style=${{ width: railWidths.lane + "px" }} /><col style=${{ width: railWidths.gate + "px" }} />${
          t.rings.map((r) => html`<col key=${r.name} style=${{ width: railWidths.ring + "px" }} />`)}</colgroup>
        <thead><tr>
          <th scope="col" class="lane-head">Release</th>
          <th scope="col" class="gate-head"><div class="gate" title=${t.approval ? "A new release waits here for an approval" : "Where a release waits for the first ring"}>${
            t.approval ? "approval" : "found"}</div></th>
          ${t.rings.map((r, i) => html`<th scope="col" key=${r.name} class="ring-col" data-ring=${r.name} data-index=${i}><${Ring} t=${t} r=${r} /></th>`)}
        </tr></thead>
        <tbody>${t.ledger.map((r) => html`<${Lane} key=${r.version} t=${t} r=${r} />`)}</tbody>
      </table>
    </div>
    ${t.ledger.length === 0 ? html`<p class="muted">No release yet: the train takes the newest release of ${t.channel} it finds.</p>` : null}
  </article>`;
}

// Ring is one ring's box: its name, where it runs, its release and that release's state,
// counts and soak, and its regional hubs that do not report.
function Ring({ t, r }) {
  const inn = r.in;
  const where = r.hubs && r.hubs.length ? "hubs " + r.hubs.join(", ") + (r.hubsNotShown ? " +" + r.hubsNotShown : "") : "this hub";
  const asks = [r.minClusters ? "≥" + r.minClusters + " clusters" : "", r.soak ? "soak " + duration(r.soak) : "",
    r.maxFailed ? "≤" + r.maxFailed + " failed" : ""].filter(Boolean).join(" · ");
  const release = r.rollout && !(r.hubs && r.hubs.length) ?
    html`<a href=${"#/ManagedClustersUpgrade/" + encodeURIComponent(t.namespace) + "/" + encodeURIComponent(r.rollout)} title=${"Its rollout, " + r.rollout}>${r.release}</a>` : r.release;
  const lost = r.unreachable && r.unreachable.length;
  return html`<div class="ring" data-state=${inn ? inn.state : "none"} data-unreachable=${lost ? "true" : null}
      title=${"Ring " + r.name + " on " + where + (asks ? "; a release qualifies with " + asks : "")}>
    <div class="ring-name">${r.name}</div>
    <div class="ring-where muted">${where}</div>
    ${r.release ? html`<div class="ring-release"><b>${release}</b>${inn ? html` <span class="ring-state" data-state=${inn.state}><span class="glyph" aria-hidden="true">${ringMarks[inn.state] || ""}</span> ${inn.state.toLowerCase()}</span>` : ""}</div>` :
      html`<div class="ring-release muted">no release yet</div>`}
    ${inn ? html`<div class="ring-counts" title=${r.ended ? "Its rollout ended" : "Its rollout runs"}>${inn.complete + "/" + inn.clusters + " run it" + (inn.failed ? " · " + inn.failed + " failed" : "")}</div>` : null}
    ${soakText(r) ? html`<div class="ring-soak">${soakText(r)}</div>` : asks ? html`<div class="ring-asks muted">${asks}</div>` : null}
    ${r.blocked ? html`<div class="ring-blocked" title=${r.blocked}>⚠ ${r.blocked}</div>` : null}
    ${lost ? html`<div class="ring-flag">⚠ ${r.unreachable.join(", ") + (r.unreachableNotShown ? " +" + r.unreachableNotShown : "")} not reporting: held</div>` : null}
  </div>`;
}

// soakText says how long a soaking release has left in its ring.
function soakText(r) {
  const inn = r.in;
  if (!inn || inn.state !== "Soaking" || !inn.soakEnds) return "";
  const left = Math.round((Date.parse(inn.soakEnds) - now()) / 1000);
  return "soak " + duration(r.soak) + ": " + (left > 0 ? duration(left) + " left" : "over");
}

// Lane is one release of the ledger: a line from where it was found through the rings it
// qualified in, its mark at the furthest ring it reached, and what the ledger says of it.
function Lane({ t, r }) {
  const m = releaseMark(r, t.rings);
  const n = t.rings.length;
  const byRing = {};
  for (const x of r.rings) if (x.ring >= 0) byRing[x.ring] = x;
  const here = r.at >= 0 ? byRing[r.at] : null;
  const counts = here ? ": " + here.complete + " of " + here.clusters + " clusters run it" + (here.failed ? ", " + here.failed + " failed" : "") : "";
  const pill = html`<span class="pill" data-mark=${m.kind} title=${r.version + " " + m.word + counts + (r.message ? " (" + r.message + ")" : "")}><span
    class="glyph" aria-hidden="true">${m.glyph}</span> <b>${r.version}</b> ${m.word}</span>`;
  const cells = [];
  for (let i = 0; i < r.at; i++) {
    const x = byRing[i];
    cells.push(html`<td key=${i} class="trail">${x ? html`<span class="tick" data-state=${x.state} title=${r.version + " " + x.state.toLowerCase() + " in " + x.name + ": " +
      x.complete + " of " + x.clusters + " clusters" + (x.failed ? ", " + x.failed + " failed" : "")}><span aria-hidden="true">${ringMarks[x.state] || "·"}</span><span
      class="visually-hidden">${x.state.toLowerCase() + " in " + x.name}</span></span>` : null}</td>`);
  }
  const message = r.message ? html`<span class="lane-message">${r.message}</span>` : null;
  return html`<tr class="lane" data-version=${r.version} data-state=${r.state} data-at=${r.at}>
    <th scope="row" class="lane-head" title=${r.version + ": " + r.state + ", found " + clock(r.foundAt)}><b>${r.version}</b></th>
    ${r.at < 0 ? html`<td class="here" colSpan=${n + 1}>${pill}${message}</td>` :
      html`<td class="gate-cell trail"><span class="found" title=${"Found " + clock(r.foundAt)}></span></td>${cells}<td class="here" colSpan=${n - r.at}>${pill}${message}</td>`}
  </tr>`;
}

// showStory opens a cluster's story: the address names it, so that it can be shared.
function showStory(cluster) {
  location.hash = hashOf(store.selection, cluster);
}

// openStory reads a cluster's story from the hub, as the user; "" closes it.
let storyRequest = 0;
async function openStory(cluster) {
  const sel = store.selection;
  const ticket = ++storyRequest;
  if (!cluster || !sel || sel.kind !== "ClusterGroupUpgrade") {
    store.story = null;
    changed();
    return;
  }
  store.story = { cluster, loading: true };
  changed();
  const q = new URLSearchParams({ namespace: sel.namespace, name: sel.name, cluster });
  let story;
  try {
    const resp = await fetch("/api/story?" + q);
    story = resp.ok ? await resp.json() : { cluster, error: (await resp.text()).trim() };
  } catch (e) {
    story = { cluster, error: "The dashboard did not answer: " + e };
  }
  if (ticket !== storyRequest) return;
  store.story = { ...story, cluster };
  changed();
}

function closeStory() {
  if (store.selection) location.hash = hashOf(store.selection);
}

// Escape closes the story, unless a dialog is open (it closes the dialog).
window.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && store.story && !document.querySelector("dialog[open]")) closeStory();
});

// Story is the panel that tells one cluster's story.
function Story() {
  const s = store.story;
  if (!s) return null;
  return html`<aside class="story" id="story" data-cluster=${s.cluster} aria-label=${"Story of " + s.cluster}>
    <div class="story-head"><h2>${s.cluster}</h2><button class="secondary" id="story-close" onClick=${closeStory}>Close</button></div>
    ${s.loading ? html`<p class="muted">Reading its story…</p>` : s.error ? html`<p class="error" id="story-error">${s.error}</p>` : html`<${StoryBody} s=${s} />`}
  </aside>`;
}

function StoryBody({ s }) {
  const field = (label, value, id) => value ? html`<div class="field" id=${id}><span class="label">${label}</span><span>${value}</span></div>` : null;
  const b = s.batch || {};
  const batch = b.index ? "Batch " + b.index + (b.of ? " of " + b.of : "") + (b.canary ? " (canary)" : "") +
    (b.startedAt ? ", started " + clock(b.startedAt) : ", not started") + (b.finishedAt ? ", ended " + clock(b.finishedAt) : "") : "";
  return html`
    <div class="summary"><${Badge} state=${s.state} text=${stateLabels[s.state] || s.state} />
      <span>${s.since ? "since " + clock(s.since) + " (" + ago(s.since) + ")" : ""}</span></div>
    ${field("Batch", batch, "story-batch")}
    ${field("Why", s.reason ? s.reason + (s.explanation ? ": " + s.explanation : "") : s.explanation, "story-reason")}
    ${field("Waits for", s.waitsFor, "story-waits")}
    ${field("Time", s.timing && s.timing.text, "story-time")}
    ${s.policies && s.policies.length ? html`<h3>Policies, in order</h3><ol class="policies" id="story-policies">${s.policies.map((p) =>
      html`<li key=${p.name} data-policy=${p.name} data-compliance=${p.compliance || ""} class=${p.current ? "current" : ""}><b>${p.name}</b> <span class="compliance">${
        p.step ? "a ManifestWork step" : !p.placed ? "not placed on the cluster" : p.compliance || "not reported yet"}</span>${
        p.enforced ? html` <span class="muted">enforced</span>` : null}${p.current ? html` <span class="muted">(the cluster's current policy)</span>` : null}${
        p.softTimedOut ? html` <span class="muted">(went on without it)</span>` : null}${p.compliantBefore ? html` <span class="muted">(compliant everywhere before the start)</span>` : null}${
        p.problem ? html` <span class="error">${p.problem}</span>` : null}</li>`)}</ol>` : null}
    <${Spoke} spoke=${s.spoke} />
    ${field("Pre-caching", s.precache, "story-precache")}
    ${field("Backup", s.backup, "story-backup")}
    <h3>Its events</h3>
    ${s.events && s.events.length ? html`<ul class="events" id="story-events">${s.events.map((e, i) => html`<li key=${i} data-type=${e.type}>
      <span class="when" title=${clock(e.time)}>${timeOfDay(e.time)}</span><b>${e.reason}</b> ${e.message}${e.count > 1 ? html`<span class="muted"> ×${e.count}</span>` : null}</li>`)}</ul>` :
    html`<p class="muted">No event names it (the API server keeps events an hour by default).</p>`}`;
}

function Spoke({ spoke }) {
  if (!spoke) return null;
  const u = spoke.latest;
  return html`<h3>As the cluster reports</h3><div id="story-spoke">
    ${!spoke.answered ? html`<p class="muted">${"No ClusterVersion yet: " + (spoke.problem || "its view has not answered")}</p>` : null}
    ${spoke.desired ? html`<div class="field"><span class="label">Desired</span><span>${spoke.desired}</span></div>` : null}
    ${u ? html`<div class="field"><span class="label">Latest update</span><span>${u.version + " " + u.state + ", started " + clock(u.startedAt) +
      (u.completedAt ? ", completed " + clock(u.completedAt) : "")}</span></div>` : null}
    ${spoke.progressing ? html`<div class="field"><span class="label">Progressing</span><span>${spoke.progressing}</span></div>` : null}
    ${spoke.failing ? html`<div class="field"><span class="label">Failing</span><span class="error">${spoke.failing}</span></div>` : null}
  </div>`;
}

// The page's own hooks, for the browser test and for a person's console: where a cluster's
// cell is, and how long the map took to draw.
window.cguDashboard = {
  mapRender: null, chart: null, store,
  locate(name) {
    const canvas = document.getElementById("map");
    const f = store.fleet;
    if (!canvas || !f) return null;
    const i = f.names.indexOf(name);
    const layout = canvas.cguLayout;
    if (i < 0 || !layout) return null;
    const r = canvas.getBoundingClientRect();
    const cx = layout.xs[i], cy = layout.ys[i];
    return { x: r.left + cx + layout.size / 2, y: r.top + cy + layout.size / 2, size: layout.size, cx, cy };
  },
  applyFleet,
  // applyTrains shows trains as if the stream had sent them.
  applyTrains(t) {
    store.trains = t;
    changed();
  },
};

// Ages move with time even when nothing changes: redraw the relative times each minute.
setInterval(changed, 60000);
const root = document.getElementById("app");
root.replaceChildren();
render(html`<${App} />`, root);
openStory(store.selection && store.selection.cluster ? store.selection.cluster : "");
connect();
