// The fleet map: every cluster a cell on one canvas, in groups (by batch, stage, state or a
// label). A cell's colour and its shape both tell its state, so that the map reads without
// colour too: a square in progress or completed, pale pending, hollow waiting, a triangle
// timed out, a diamond failed, two bars held.

// letters are the states' letters in the server's Fleet.States.
const letters = { p: "Pending", w: "Waiting", r: "InProgress", c: "Completed", t: "TimedOut", f: "Failed", h: "Held" };

export function stateOfLetter(l) {
  return letters[typeof l === "number" ? String.fromCharCode(l) : l] || "Pending";
}

// letterStates turns the server's string of states into bytes the page changes in place.
export function letterStates(s) {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const P = 112, W = 119, R = 114, C = 99, T = 116, F = 102, H = 104; // p w r c t f h

// stateOrder puts the clusters that need a look first when grouping by state.
const stateOrder = [F, T, H, W, R, P, C];

// mapColors reads the page's state colours, so that the map follows a dark theme.
export function mapColors(root) {
  const css = getComputedStyle(root);
  const v = (name) => css.getPropertyValue(name).trim();
  return { [P]: v("--pending"), [W]: v("--held"), [R]: v("--progress"), [C]: v("--completed"), [T]: v("--timedout"),
    [F]: v("--failed"), [H]: v("--held"), ink: v("--ink"), muted: v("--muted"), panel: v("--panel") };
}

const titleHeight = 18, groupGap = 8;

// cellSize is the side of a cell: large for a small fleet, 5 pixels at 10,000 and beyond.
function cellSize(n) {
  if (n <= 300) return 14;
  if (n <= 1500) return 11;
  if (n <= 4000) return 8;
  return 6;
}

// groupsOf splits the clusters (indices) into titled groups.
function groupsOf(f, by, labels) {
  const n = f.names.length;
  const groups = new Map();
  const add = (key, title, order, i) => {
    let g = groups.get(key);
    if (!g) {
      g = { key, title, order, members: [] };
      groups.set(key, g);
    }
    g.members.push(i);
  };
  for (let i = 0; i < n; i++) {
    const b = f.batches[i];
    if (by === "state") {
      const s = f.states[i];
      add("s" + s, stateOfLetter(s), stateOrder.indexOf(s), i);
    } else if (by === "stage" && f.stages) {
      const st = f.stages[i];
      add(b + "/" + st, "Batch " + b + (st ? " · stage " + st : " · not started"), b * 1000 + (st || 999), i);
    } else if (by.startsWith("label:") && labels) {
      const v = labels.of[i];
      add("l" + v, v >= 0 ? labels.key + "=" + labels.values[v] : "no " + labels.key, v >= 0 ? v : 1e9, i);
    } else {
      add("b" + b, "Batch " + b + (b <= f.canaries ? " (canary)" : ""), b, i);
    }
  }
  return [...groups.values()].sort((a, b) => a.order - b.order || (a.title < b.title ? -1 : 1));
}

// layoutMap places each cluster's cell: layout.xs and ys (by cluster index), the groups with
// their area, and the canvas' height.
export function layoutMap(f, by, labels, width) {
  const n = f.names.length;
  const size = cellSize(n);
  const pitch = size + (size >= 8 ? 2 : 1);
  const cols = Math.max(1, Math.floor((width + pitch - size) / pitch));
  const xs = new Float32Array(n), ys = new Float32Array(n);
  const groups = groupsOf(f, by, labels);
  let y = 0;
  for (const g of groups) {
    g.top = y;
    g.cellsTop = y + titleHeight;
    g.members.forEach((i, k) => {
      xs[i] = (k % cols) * pitch;
      ys[i] = g.cellsTop + Math.floor(k / cols) * pitch;
    });
    g.bottom = g.cellsTop + Math.ceil(g.members.length / cols) * pitch;
    y = g.bottom + groupGap;
  }
  return { size, pitch, cols, xs, ys, groups, width, height: Math.max(y - groupGap, titleHeight) };
}

// hitMap is the index of the cluster under (x, y), null for none.
export function hitMap(layout, x, y) {
  for (const g of layout.groups) {
    if (y < g.cellsTop || y >= g.bottom) continue;
    const col = Math.floor(x / layout.pitch), row = Math.floor((y - g.cellsTop) / layout.pitch);
    if (col >= layout.cols || x - col * layout.pitch > layout.size || y - g.cellsTop - row * layout.pitch > layout.size) return null;
    const k = row * layout.cols + col;
    return k < g.members.length ? g.members[k] : null;
  }
  return null;
}

// drawMap draws the layout's groups: a title with the group's counts, then a cell per
// cluster, one path per state so that 10,000 cells are seven fills.
export function drawMap(canvas, layout, f, colors, selected) {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = layout.width + "px";
  canvas.style.height = layout.height + "px";
  canvas.width = Math.round(layout.width * dpr);
  canvas.height = Math.round(layout.height * dpr);
  canvas.cguLayout = layout;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, layout.width, layout.height);
  ctx.font = "600 12px system-ui, sans-serif";
  ctx.textBaseline = "top";
  for (const g of layout.groups) {
    const tally = {};
    for (const i of g.members) tally[f.states[i]] = (tally[f.states[i]] || 0) + 1;
    const parts = stateOrder.filter((s) => tally[s]).map((s) => tally[s].toLocaleString("en") + " " + words[s]);
    ctx.fillStyle = colors.ink;
    ctx.fillText(g.title, 0, g.top + 2);
    const w = ctx.measureText(g.title).width;
    ctx.fillStyle = colors.muted;
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillText(" · " + g.members.length.toLocaleString("en") + ": " + parts.join(", "), w, g.top + 2);
    ctx.font = "600 12px system-ui, sans-serif";
  }
  const s = layout.size;
  const paths = {};
  for (const l of stateOrder) paths[l] = new Path2D();
  const n = f.names.length;
  for (let i = 0; i < n; i++) {
    const l = f.states[i];
    shape(paths[l] || paths[P], l, layout.xs[i], layout.ys[i], s);
  }
  for (const l of stateOrder) {
    if (l === W) {
      ctx.strokeStyle = colors[W];
      ctx.lineWidth = Math.max(1.5, s / 5);
      ctx.stroke(paths[l]);
    } else {
      ctx.fillStyle = colors[l];
      ctx.fill(paths[l]);
    }
  }
  const i = selected ? f.names.indexOf(selected) : -1;
  if (i >= 0) {
    ctx.strokeStyle = colors.ink;
    ctx.lineWidth = 2;
    ctx.strokeRect(layout.xs[i] - 2, layout.ys[i] - 2, s + 4, s + 4);
  }
}

const words = { [P]: "pending", [W]: "waiting", [R]: "in progress", [C]: "completed", [T]: "timed out", [F]: "failed", [H]: "held" };

// shape adds a cell of state l at (x, y), side s, to path p.
function shape(p, l, x, y, s) {
  switch (l) {
    case T: // a triangle, point up
      p.moveTo(x + s / 2, y);
      p.lineTo(x + s, y + s);
      p.lineTo(x, y + s);
      p.closePath();
      return;
    case F: // a diamond
      p.moveTo(x + s / 2, y);
      p.lineTo(x + s, y + s / 2);
      p.lineTo(x + s / 2, y + s);
      p.lineTo(x, y + s / 2);
      p.closePath();
      return;
    case H: { // two bars
      const bar = Math.max(1, Math.round(s * 0.34));
      p.rect(x, y, bar, s);
      p.rect(x + s - bar, y, bar, s);
      return;
    }
    case W: { // a hollow square, stroked
      const inset = Math.max(1, s / 8);
      p.rect(x + inset, y + inset, s - 2 * inset, s - 2 * inset);
      return;
    }
    default:
      p.rect(x, y, s, s);
  }
}
