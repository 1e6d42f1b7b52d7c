// The dashboard page: one event stream from the server carries the list of rollouts and,
// when one is selected, its detail. The page renders what arrives; it never polls.
"use strict";

const token = document.querySelector('meta[name="cgu-token"]').content;
const stateNames = ["Pending", "InProgress", "Completed", "TimedOut", "Failed", "Held"];
const countKeys = { Pending: "pending", InProgress: "inProgress", Completed: "completed", TimedOut: "timedOut", Failed: "failed", Held: "held" };
const stateLabels = { Pending: "pending", InProgress: "in progress", Completed: "completed", TimedOut: "timed out", Failed: "failed", Held: "held" };

// waitTitles head the box that says what a rollout waits for.
const waitTitles = {
  "pause": "Paused", "approval": "Waits for an approval", "window": "Waits for its maintenance window",
  "soak": "Soaking", "blocker": "Blocked by another rollout", "hub capacity": "Waits for room under the hub's cap",
  "other rollout": "A cluster is in another rollout", "failure budget": "Failure budget spent",
  "not enabled": "Not enabled", "spec": "Cannot start", "fleet frozen": "The fleet is frozen",
  "analysis": "Its analysis gates measure the batch before it ends",
  "analysis inconclusive": "Its analysis gets no usable answer, and holds the batch",
};

let overview = null;
let detail = null;
let selection = parseHash();
let stream = null;
let serverOffset = 0; // server time minus browser time, in ms

// h builds an element: h("td", {class: "x"}, "text", child). Text is never parsed as HTML.
function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// svg builds an SVG element as h builds an HTML one.
function svg(tag, attrs, ...children) {
  return fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, children);
}

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "grow") el.style.flexGrow = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function parseHash() {
  const m = /^#\/(ClusterGroupUpgrade|ImageBasedGroupUpgrade|ManagedClustersUpgrade)\/([^/]+)\/([^/]+)$/.exec(location.hash);
  return m ? { kind: m[1], namespace: decodeURIComponent(m[2]), name: decodeURIComponent(m[3]) } : null;
}

function same(a, b) {
  return a && b && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

// connect opens the stream for the current selection; the browser reconnects by itself
// when the server goes away.
function connect() {
  if (stream) stream.close();
  const q = new URLSearchParams();
  if (selection) {
    q.set("kind", selection.kind);
    q.set("namespace", selection.namespace);
    q.set("name", selection.name);
  }
  setLive("connecting");
  stream = new EventSource("/api/stream?" + q.toString());
  stream.addEventListener("open", () => setLive("live"));
  stream.addEventListener("error", () => setLive("reconnecting"));
  stream.addEventListener("overview", (e) => {
    overview = JSON.parse(e.data);
    serverOffset = Date.parse(overview.now) - Date.now();
    renderOverview();
    if (selection && detail === null) renderDetail();
  });
  stream.addEventListener("detail", (e) => {
    detail = JSON.parse(e.data);
    renderDetail();
  });
}

function setLive(state) {
  const el = document.getElementById("live");
  el.dataset.state = state;
  el.textContent = state;
}

function now() {
  return Date.now() + serverOffset;
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
  const d = new Date(t);
  return d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

function timeOfDay(t) {
  return new Date(t).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function badge(state, text) {
  return h("span", { class: "badge", "data-state": state }, text || state);
}

// bar draws counts as one bar of coloured segments, widest first in plan order.
function bar(counts, total) {
  const el = h("div", { class: "bar", role: "img", "aria-label": countsText(counts) });
  for (const s of stateNames) {
    const n = counts[countKeys[s]] || 0;
    if (n > 0) el.append(h("span", { "data-state": s, grow: n, title: n + " " + stateLabels[s] }));
  }
  if (!total) el.append(h("span", { "data-state": "none", grow: 1 }));
  return el;
}

function countsText(c) {
  return stateNames.filter((s) => c[countKeys[s]]).map((s) => c[countKeys[s]] + " " + stateLabels[s]).join(", ") || "no clusters";
}

function chips(counts) {
  return h("div", { class: "chips" }, stateNames.filter((s) => counts[countKeys[s]]).map((s) =>
    h("span", { class: "chip", "data-state": s }, h("b", {}, counts[countKeys[s]]), " " + stateLabels[s])));
}

function legend() {
  return h("div", { class: "legend", "aria-hidden": "true" }, stateNames.map((s) =>
    h("span", {}, h("span", { class: "dot", "data-state": s }), stateLabels[s])));
}

function renderOverview() {
  const totals = document.getElementById("totals");
  const states = Object.entries(overview.states || {}).sort();
  replace(totals,
    h("div", { class: "total" }, h("b", {}, overview.rows.length), " rollouts"),
    ...states.map(([s, n]) => h("div", { class: "total" }, badge(s, n + " " + s))),
    h("div", { class: "total wide" }, bar(overview.clusters, overview.clusters.total),
      h("span", { class: "muted" }, overview.clusters.total + " clusters: " + countsText(overview.clusters))),
    legend(),
  );
  const rows = document.getElementById("rows");
  if (overview.rows.length === 0) {
    rows.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "empty" }, "No rollout in " + overview.scope + ".")));
    return;
  }
  rows.replaceChildren(...overview.rows.map((r) => {
    const sel = { kind: r.kind, namespace: r.namespace, name: r.name };
    const tr = h("tr", {
      class: same(sel, selection) ? "selected" : "", tabindex: 0, "data-name": r.name,
      onclick: () => select(sel), onkeydown: (e) => { if (e.key === "Enter") select(sel); },
    },
    h("td", {}, h("div", { class: "name" }, r.name), h("div", { class: "muted" }, r.namespace,
      kindLabels[r.kind] || "", r.owner ? (r.ownerKind === "ManagedClustersUpgrade" ? " · runs " : " · step of ") + r.owner : "")),
    h("td", {}, badge(r.state), r.paused ? badge("Paused", "paused") : null),
    h("td", { class: "num" }, r.batch || "–"),
    h("td", {}, bar(r.counts, r.total), h("div", { class: "muted" }, r.done + "/" + r.total + " done")),
    h("td", {}, r.wait ? h("span", { class: "wait", title: r.wait.message || "" }, r.wait.kind) : ""),
    );
    return tr;
  }));
}

function select(sel) {
  selection = sel;
  detail = null;
  location.hash = "#/" + sel.kind + "/" + encodeURIComponent(sel.namespace) + "/" + encodeURIComponent(sel.name);
}

window.addEventListener("hashchange", () => {
  const sel = parseHash();
  if (same(sel, selection) && detail) return;
  selection = sel;
  detail = null;
  if (overview) renderOverview();
  renderDetail();
  connect();
});

function renderDetail() {
  const el = document.getElementById("detail");
  if (!selection) {
    el.replaceChildren(h("p", { class: "empty" }, "Select a rollout to see its plan, its running batch and its events."));
    return;
  }
  if (!detail || !same(detail, selection)) {
    const known = overview && overview.rows.some((r) => same(r, selection));
    el.replaceChildren(h("p", { class: "empty" }, known || !overview ? "Loading " + selection.name + "…" :
      selection.namespace + "/" + selection.name + " does not exist (any more)."));
    return;
  }
  const d = detail;
  replace(el,
    h("div", { class: "head" },
      h("div", {}, h("h2", {}, d.name), h("div", { class: "muted" }, d.kind + " in " + d.namespace)),
      h("div", { class: "actions" }, actionButtons(d))),
    h("div", { class: "summary" },
      badge(d.state), d.paused ? badge("Paused", "paused") : null,
      h("span", { class: "message" }, d.message || "")),
    d.wait ? h("div", { class: "waitbox" }, h("b", {}, (waitTitles[d.wait.kind] || d.wait.kind) + ": "), d.wait.message || d.wait.reason,
      d.wait.until ? " (until " + clock(d.wait.until) + ", " + ago(d.wait.until) + ")" : "") : null,
    d.kind === "ImageBasedGroupUpgrade" ? steps(d) : d.kind === "ManagedClustersUpgrade" ? release(d) : timeline(d),
    running(d),
    analysis(d.analysis),
    problems("Held and waiting clusters", d.held, d.heldNotShown, "held"),
    problems("Failed and timed-out clusters", d.failed, d.failedNotShown, "failed"),
    checks(d.checks),
    approvals(d.approvals),
    events(d.events),
  );
}

// replace sets an element's children, skipping the parts that are not shown (null).
function replace(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

function actionButtons(d) {
  if (d.kind !== "ClusterGroupUpgrade") return [];
  const a = d.actions || {};
  const out = [];
  if (a.approve) out.push(button("approve", "Approve batch " + a.approve, "primary",
    "Approve batch " + a.approve + " of " + d.namespace + "/" + d.name + "? The approval names you as the API server knows you.", a.approve));
  if (a.enable) out.push(button("enable", "Enable", "primary", "Enable " + d.namespace + "/" + d.name + "? The rollout starts enforcing its policies."));
  if (a.pause) out.push(button("pause", "Pause", "secondary", "Pause " + d.namespace + "/" + d.name + "? No new batch, cluster or policy starts until you resume."));
  if (a.resume) out.push(button("resume", "Resume", "primary", "Resume " + d.namespace + "/" + d.name + "?"));
  return out;
}

function button(action, label, style, question, batch) {
  return h("button", { class: style, "data-action": action, onclick: () => confirmThen(label, question, () => act(action, batch)) }, label);
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
  const body = { namespace: selection.namespace, name: selection.name, action };
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

// count writes n with its noun: "1 batch", "2 batches".
function count(n, one, many) {
  return n + " " + (n === 1 ? one : many);
}

function section(title, ...children) {
  return h("section", { class: "part" }, h("h3", {}, title), ...children);
}

// spread says how spec.remediationStrategy.spread and antiAffinity shaped the batches.
function spread(d) {
  if (!d.spread || d.spread.length === 0) return null;
  const keys = d.spread.map((s) => "at most " + count(s.maxPerBatch, "cluster", "clusters") + " of each " + s.labelKey + " in a batch (" +
    count(s.values, "value", "values") + ", the largest with " + count(s.largest, "cluster", "clusters") +
    (s.unlabeled ? "; " + count(s.unlabeled, "cluster", "clusters") + " without the label" : "") + ")");
  return h("p", { id: "spread" }, "Spread: " + keys.join("; ") + ". " + (d.spreadAddedBatches ?
    "The spread added " + count(d.spreadAddedBatches, "batch", "batches") + " to those maxConcurrency alone makes." :
    "The spread added no batch."));
}

function timeline(d) {
  if (!d.frozen || d.timeline.length === 0) {
    return section("Plan", h("p", { class: "muted" }, d.planned ?
      d.planned + " batches planned; the plan is frozen when the rollout starts. kubectl cgu plan " + d.name + " -n " + d.namespace + " previews it." :
      "No plan yet."), spread(d));
  }
  const blocks = h("ol", { class: "timeline", id: "timeline" }, d.timeline.map((b) => h("li", {
    class: "batch", "data-state": b.state, "data-index": b.index,
    title: "Batch " + b.index + (b.canary ? " (canary)" : "") + (b.window ? " (a window of " + b.window + " at once)" : "") +
      (b.stages ? " (stages of " + b.stages.join(", ") + " clusters)" : "") + ": " + b.state + ", " + countsText(b.counts),
  }, h("div", { class: "label" }, (b.canary ? "C" : "") + b.index + (b.window ? " ⇉" + b.window : "") + (b.stages ? " ↗" : "")), bar(b.counts, b.clusters))));
  const rows = d.timeline.filter((b) => b.state !== "planned" || b.index <= (d.running ? d.running.index + 1 : 1));
  const table = h("table", { class: "batches" },
    h("thead", {}, h("tr", {}, h("th", {}, "Batch"), h("th", {}, "State"), h("th", {}, "Clusters"), h("th", {}, "Started"), h("th", {}, "Ended or times out"))),
    h("tbody", {}, rows.map((b) => h("tr", { "data-index": b.index, "data-state": b.state },
      h("td", {}, b.index + (b.canary ? " canary" : "")),
      h("td", {}, badge(b.state === "ended" && b.endsRollout ? "EndsRollout" : b.state, b.state + (b.endsRollout ? ", ended the rollout" : ""))),
      h("td", {}, countsText(b.counts)),
      h("td", {}, b.startedAt ? clock(b.startedAt) : "–"),
      h("td", {}, b.finishedAt ? clock(b.finishedAt) + " (took " + duration(Math.round((Date.parse(b.finishedAt) - Date.parse(b.startedAt)) / 1000)) + ")" :
        b.timeoutAt ? "times out " + ago(b.timeoutAt) : "–")))));
  const ended = d.timeline.filter((b) => b.state === "ended").length;
  return section("Plan: " + ended + " of " + count(d.timeline.length, "batch", "batches") + " ended",
    spread(d), blocks, eta(d.eta), table,
    rows.length < d.timeline.length ? h("p", { class: "muted" }, (d.timeline.length - rows.length) + " more planned batches.") : null);
}

function eta(e) {
  if (!e || !e.batchesLeft) return null;
  return h("p", { class: "eta" }, "Estimated duration: " + e.text);
}

function running(d) {
  const r = d.running;
  if (!r) return null;
  const sg = r.stage;
  return section("Batch " + r.index + (r.ended ? " ended" : " runs") +
    (r.window ? ": a window of " + r.window + " at once, each cluster with its own deadline" : "") +
    (sg ? ": stage " + sg.number + " (" + count(sg.size, "cluster", "clusters") + ", step " + sg.step + " of the growth)" : ""),
    sg ? h("p", { class: "stage", id: "stage" },
      (sg.startedAt ? "Started " + ago(sg.startedAt) : "Not started") + (sg.timeoutAt ? ", times out " + ago(sg.timeoutAt) : "") +
      (sg.resets ? "; the growth went back " + count(sg.resets, "time", "times") : "") + ".") : null,
    sg && sg.unhealthy ? h("p", { class: "muted", id: "unhealthy" }, "Last unhealthy stage: " + sg.unhealthy) : null,
    chips(r.counts),
    h("ul", { class: "clusters", id: "running" }, r.clusters.map((c) => h("li", {
      "data-state": c.state, title: c.name + ": " + stateLabels[c.state] + (c.policy ? ", on " + c.policy : "") + (c.reason ? " (" + c.reason + ")" : ""),
    }, h("span", { class: "dot", "data-state": c.state }), c.name))),
    r.notShown ? h("p", { class: "muted" }, r.notShown + " more clusters in this batch are not shown; the counts include them.") : null);
}

// analysis shows each analysed batch's gates: verdict, message, query and a plot of the
// measurements.
function analysis(list) {
  if (!list || list.length === 0) return null;
  return h("section", { class: "part", id: "analysis" }, h("h3", {}, "Analysis"),
    h("p", { class: "muted plot-key" }, "Each mark is a measurement: ", h("span", { "data-outcome": "Passed" }, "●"), " passed, ",
      h("span", { "data-outcome": "Failed" }, "◆"), " failed, ", h("span", { "data-outcome": "Inconclusive" }, "▲"),
      " inconclusive (on the axis when it got no value). Solid line: the value (the worst cluster's, or a comparison's median); " +
      "dashed: the baseline's median; dotted: the threshold."),
    list.map((a) => h("div", { class: "analysed", "data-batch": a.batch },
      h("h4", {}, "Batch " + a.batch, h("span", { class: "muted" }, " · measured from " + clock(a.startedAt))),
      h("ul", { class: "gates" }, a.gates.map(gate)))));
}

function gate(g) {
  const how = [g.condition ? "passes when the value is " + g.condition : "",
    g.failureCondition ? "fails when it is " + g.failureCondition : "",
    g.mode === "Comparison" ? "compared with the clusters not upgraded yet" : ""].filter(Boolean).join(", ");
  return h("li", { class: "gate", "data-gate": g.name, "data-phase": g.phase },
    h("div", { class: "gate-text" },
      h("div", {}, h("b", {}, g.name), " ", badge(g.phase), how ? h("span", { class: "muted" }, how) : null),
      g.message ? h("p", { class: "gate-message" }, g.message) : null,
      g.clusters && g.clusters.length ? h("p", { class: "gate-clusters" }, "Missed: ", g.clusters.join(", "),
        g.clustersNotShown ? " and " + g.clustersNotShown + " more" : "") : null,
      h("code", { class: "query" }, g.query),
      h("p", { class: "muted" }, measured(g))),
    plot(g));
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

// plot draws a gate's measurements, oldest first: a mark for each, coloured (and shaped) by
// its outcome, on the line of the values; a comparison's baseline as a dashed line; an
// Absolute gate's threshold as a dotted one. A measurement without a value is a mark on the
// axis.
function plot(g) {
  const W = 300, H = 96, left = 46, right = 10, top = 8, bottom = 22, axis = H - bottom;
  const pts = g.points || [];
  const title = plotTitle(g);
  const el = svg("svg", { class: "plot", viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": title },
    svg("title", {}, title));
  el.append(svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: axis }),
    svg("line", { class: "axis", x1: left, y1: axis, x2: W - right, y2: axis }));
  if (pts.length === 0) {
    el.append(svg("text", { class: "note", x: (left + W - right) / 2, y: (top + axis) / 2, "text-anchor": "middle" }, "no measurement yet"));
    return el;
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
    el.append(svg("text", { class: "tick", x: left - 4, y: y(v) + 3.5, "text-anchor": "end" }, number(v)));
  }
  if (limit !== null) {
    el.append(svg("line", { class: "threshold", x1: left, y1: y(limit), x2: W - right, y2: y(limit) },
      svg("title", {}, g.condition ? "Threshold: the value must be " + g.condition.trim() :
        "Threshold: the value fails when it is " + g.failureCondition.trim())));
  }
  for (const key of ["baseline", "value"]) {
    const d = path(pts, key, x, y);
    if (d) el.append(svg("path", { class: "line " + key, d }));
  }
  pts.forEach((p, i) => el.append(mark(p, x(i), p.value === null ? axis : y(p.value))));
  el.append(svg("text", { class: "tick", x: x(0), y: H - 6, "text-anchor": pts.length === 1 ? "middle" : "start" }, timeOfDay(pts[0].at)),
    pts.length > 1 ? svg("text", { class: "tick", x: x(pts.length - 1), y: H - 6, "text-anchor": "end" }, timeOfDay(pts[pts.length - 1].at)) : null);
  return el;
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
  const attrs = { class: "mark", "data-outcome": p.outcome };
  const t = svg("title", {}, about);
  if (p.outcome === "Passed") return svg("circle", { ...attrs, cx, cy, r: 4.5 }, t);
  if (p.outcome === "Failed") return svg("path", { ...attrs, d: "M" + cx + " " + (cy - 6) + "l6 6-6 6-6-6z" }, t);
  return svg("path", { ...attrs, d: "M" + cx + " " + (cy - 8) + "l6 9h-12z" }, t);
}

function problems(title, list, more, id) {
  if (!list || list.length === 0) return null;
  return section(title + " (" + (list.length + (more || 0)) + ")",
    h("table", { class: "problems", id: id },
      h("thead", {}, h("tr", {}, h("th", {}, "Cluster"), h("th", {}, "Batch"), h("th", {}, "State"), h("th", {}, "Reason"))),
      h("tbody", {}, list.map((c) => h("tr", {},
        h("td", {}, c.name), h("td", { class: "num" }, c.batch || "–"), h("td", {}, badge(c.state, stateLabels[c.state] || c.state)),
        h("td", {}, [c.policy, c.reason].filter(Boolean).join(": ")))))),
    more ? h("p", { class: "muted" }, more + " more not shown.") : null);
}

function checks(c) {
  if (!c) return null;
  const counts = Object.entries(c.counts || {}).sort();
  return section("Upgrade checks",
    h("div", { class: "chips" }, counts.map(([k, n]) => h("span", { class: "chip", "data-verdict": k }, h("b", {}, n), " " + k))),
    c.clusters && c.clusters.length ? h("table", { class: "problems" },
      h("thead", {}, h("tr", {}, h("th", {}, "Cluster"), h("th", {}, "Verdict"), h("th", {}, "Reason"), h("th", {}, "Message"))),
      h("tbody", {}, c.clusters.map((k) => h("tr", {}, h("td", {}, k.name), h("td", {}, k.outcome), h("td", {}, k.reason), h("td", {}, k.message || ""))))) : null,
    c.clustersNotShown ? h("p", { class: "muted" }, c.clustersNotShown + " more; kubectl cgu preflight lists all.") : null);
}

function approvals(list) {
  if (!list || list.length === 0) return null;
  return section("Approvals", h("ul", { class: "plain" }, list.map((a) => h("li", {}, "Batch " + a.batch + " by " + (a.by || "someone") + ", " + ago(a.at)))));
}

function events(list) {
  if (!list || list.length === 0) return section("Events", h("p", { class: "muted" }, "No event."));
  return section("Events", h("ul", { class: "events", id: "events" }, list.map((e) => h("li", { "data-type": e.type },
    h("span", { class: "when", title: clock(e.time) }, timeOfDay(e.time)), h("b", {}, e.reason), " ", e.message, e.count > 1 ? h("span", { class: "muted" }, " ×" + e.count) : null))));
}

// kindLabels say, in the list, what a rollout is when it is not a ClusterGroupUpgrade.
const kindLabels = { ImageBasedGroupUpgrade: " · image-based", ManagedClustersUpgrade: " · release-named" };

// release shows a ManagedClustersUpgrade's release, the ClusterGroupUpgrade that runs it, the
// worker capacity its multi-node clusters add, and the updates of its plan.
function release(d) {
  const r = d.release;
  const link = r.upgrade ? h("a", { href: "#/ClusterGroupUpgrade/" + encodeURIComponent(d.namespace) + "/" + encodeURIComponent(r.upgrade) }, r.upgrade) : "not yet";
  const c = r.workerCapacity;
  const capacity = c ? h("p", { id: "capacity" }, "Worker capacity: " + c.total + (c.total === 1 ? " multi-node cluster adds" : " multi-node clusters add") + " workers; " +
    c.added + " added, " + c.notReady + " upgraded without them (not ready in time), " + c.removed + " removed") : null;
  return section("Release " + r.version + " in " + r.channel, h("p", { id: "release" }, "Rolled out by ClusterGroupUpgrade ", link), capacity,
    h("table", { class: "batches", id: "updates" },
      h("thead", {}, h("tr", {}, h("th", {}, "Update"), h("th", {}, "To"), h("th", {}, "Clusters"), h("th", {}, "Policy"), h("th", {}, "Accepted risks"))),
      h("tbody", {}, r.updates.map((u) => h("tr", { "data-index": u.index, "data-version": u.version },
        h("td", {}, u.index), h("td", {}, u.version), h("td", { class: "num" }, u.clusters), h("td", {}, u.policy),
        h("td", {}, (u.risks || []).join(", ") || "–"))))));
}

function steps(d) {
  return section("Plan steps", h("table", { class: "batches" },
    h("thead", {}, h("tr", {}, h("th", {}, "Step"), h("th", {}, "Actions"), h("th", {}, "State"), h("th", {}, "Clusters"), h("th", {}, "Rollout"))),
    h("tbody", {}, (d.steps || []).map((s) => h("tr", {},
      h("td", {}, s.index + 1), h("td", {}, s.actions.join(", ")), h("td", {}, badge(s.state)),
      h("td", {}, s.counts ? countsText(s.counts) : "–"),
      h("td", {}, s.upgrade ? h("a", { href: "#/ClusterGroupUpgrade/" + encodeURIComponent(d.namespace) + "/" + encodeURIComponent(s.upgrade) }, s.upgrade) : "–"))))));
}

// Ages move with time even when nothing changes: redraw the relative times each minute.
setInterval(() => { if (detail) renderDetail(); }, 60000);
renderDetail();
connect();
