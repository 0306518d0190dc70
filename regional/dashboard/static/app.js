// Global Relay dashboard page: plain JS and uPlot (served by the aggregator), no build step.
// Reads /api/meta once (and again every few refreshes for new filter values and target status),
// then /api/panels every refresh; charts update in place, numbers are rendered as text too.
(() => {
  const PALETTE = ["#5ab0ff", "#f5a524", "#4cd38a", "#ff6b9a", "#b18cff", "#3fd0d6", "#e6d84e", "#ff7b4a"];
  const DASH = { p50: undefined, p95: [7, 4], p99: [2, 3], value: undefined };
  const QREFS = ["p50", "p95", "p99"];
  const state = { meta: null, cards: new Map(), renders: 0, timer: 0, cycle: 0, gen: 0 };
  const $ = (sel) => document.querySelector(sel);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs ?? {})) {
      if (v === undefined || v === null) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) e.append(c);
    return e;
  }

  function groupKey(group) {
    return Object.entries(group)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
  }
  const LABEL_PREFIX = { pop: "POP ", cluster: "cluster " };
  function groupLabel(group) {
    const parts = Object.entries(group).map(([k, v]) =>
      v === "" ? `${k} (none)` : `${LABEL_PREFIX[k] ?? ""}${v}`,
    );
    return parts.length ? parts.join(" · ") : "all";
  }

  /** Value as the chart plots it: seconds in ms, ratios in percent. */
  function scaled(unit, v) {
    if (v === null || v === undefined) return null;
    if (unit === "seconds") return v * 1000;
    if (unit === "ratio") return v * 100;
    return v;
  }
  function digits(x) {
    const a = Math.abs(x);
    return a === 0 ? 0 : a < 10 ? 2 : a < 100 ? 1 : 0;
  }
  function format(unit, v) {
    const x = scaled(unit, v);
    if (x === null || !Number.isFinite(x)) return "–";
    if (unit === "seconds") return `${x.toFixed(digits(x))} ms`;
    if (unit === "ratio") return `${x.toFixed(2)} %`;
    if (unit === "per_second") return `${x.toFixed(digits(x))}/s`;
    return Number.isInteger(x) ? String(x) : x.toFixed(1);
  }
  function axisUnit(unit) {
    return { seconds: "ms", ratio: "%", per_second: "/s", count: "" }[unit] ?? "";
  }

  function selectedFilters() {
    const f = {};
    for (const s of document.querySelectorAll("select[data-filter]"))
      if (s.value) f[s.dataset.filter] = s.value;
    return f;
  }

  function syncUrl() {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(selectedFilters())) p.set(k, v);
    p.set("range", $("#f-range").value);
    history.replaceState(null, "", `?${p}`);
  }

  function fillFilters(meta) {
    const fromUrl = new URLSearchParams(location.search);
    for (const s of document.querySelectorAll("select[data-filter]")) {
      const label = s.dataset.filter;
      const want = s.value || fromUrl.get(label) || "";
      const values = [...(meta.filterValues[label] ?? [])];
      if (want && !values.includes(want)) values.push(want);
      s.replaceChildren(el("option", { value: "", textContent: "all" }));
      for (const v of values) s.append(el("option", { value: v, textContent: v }));
      s.value = want;
    }
    const r = fromUrl.get("range");
    if (r && !state.meta && [...$("#f-range").options].some((o) => o.value === r)) $("#f-range").value = r;
  }

  function showStatus(meta) {
    $("#mode").textContent = meta.mode === "prometheus" ? "Prometheus" : "local aggregator";
    for (const w of document.querySelectorAll(".window")) w.textContent = `${meta.windowS} s window`;
    $("#targets").replaceChildren(
      ...meta.targets.map((t) =>
        el("span", {
          class: t.up ? "target" : "target down",
          textContent: t.name,
          title: t.up ? `${t.url}: ${t.samples} samples` : `${t.url}: ${t.lastError ?? "down"}`,
          "data-target": t.name,
          "data-up": String(t.up),
        }),
      ),
    );
  }

  function buildCards(meta) {
    for (const sec of document.querySelectorAll("section[data-section] .grid")) sec.replaceChildren();
    state.cards.clear();
    for (const p of meta.panels) {
      const na = el("span", { class: "na" });
      const chart = el("div", { class: "chart" });
      const table = el("table", { "data-panel": p.id });
      const card = el(
        "article",
        { class: "panel", "data-panel": p.id },
        el("h3", {}, p.title, na),
        el("p", { class: "help", textContent: p.help }),
        chart,
        table,
      );
      $(`section[data-section="${p.section}"] .grid`).append(card);
      state.cards.set(p.id, { def: p, card, chart, table, na, plot: null, signature: "" });
    }
  }

  function renderTable(c, data) {
    const { def } = c;
    const last = data.timestamps.length - 1;
    const groups = new Map();
    for (const s of data.series) {
      const k = groupKey(s.group);
      if (!groups.has(k)) groups.set(k, { group: s.group, refs: {} });
      groups.get(k).refs[s.ref] = last >= 0 ? s.values[last] : null;
    }
    const quantile = def.kind === "quantile";
    const head = quantile ? ["", "p50", "p95", "p99", "n"] : ["", def.kind === "gauge" ? "now" : "rate"];
    const rows = [el("tr", {}, ...head.map((h) => el("th", { textContent: h })))];
    let i = 0;
    for (const [k, g] of groups) {
      const swatch = el("span", { class: "swatch" });
      swatch.style.background = PALETTE[i++ % PALETTE.length];
      const cells = quantile ? [...QREFS, "n"] : ["value"];
      rows.push(
        el(
          "tr",
          { "data-group": k },
          el("td", {}, swatch, groupLabel(g.group)),
          ...cells.map((ref) => {
            const v = g.refs[ref] ?? null;
            const text = ref === "n" ? (v === null ? "–" : String(Math.round(v))) : format(def.unit, v);
            return el("td", {
              textContent: text,
              "data-panel": def.id,
              "data-group": k,
              "data-ref": ref,
              "data-value": v === null ? "" : String(v),
            });
          }),
        ),
      );
    }
    if (groups.size === 0)
      rows.push(el("tr", {}, el("td", { colSpan: head.length, textContent: "no data" })));
    c.table.replaceChildren(...rows);
  }

  function renderChart(c, data) {
    const { def } = c;
    const plotted = data.series.filter((s) => s.ref !== "n");
    const groupIndex = new Map();
    for (const s of plotted)
      if (!groupIndex.has(groupKey(s.group))) groupIndex.set(groupKey(s.group), groupIndex.size);
    const signature = plotted.map((s) => `${groupKey(s.group)}/${s.ref}`).join("|");
    const xs = data.timestamps.map((t) => t / 1000);
    const cols = [xs, ...plotted.map((s) => s.values.map((v) => scaled(def.unit, v)))];
    if (plotted.length === 0 || xs.length === 0) {
      c.plot?.destroy();
      c.plot = null;
      c.signature = "";
      c.chart.replaceChildren(el("div", { class: "empty", textContent: "no data yet" }));
      return;
    }
    if (c.plot && c.signature === signature) {
      c.plot.setData(cols);
      return;
    }
    c.plot?.destroy();
    c.chart.replaceChildren();
    c.signature = signature;
    const unit = axisUnit(def.unit);
    const axis = {
      stroke: "#8a97a6",
      grid: { stroke: "#263241", width: 1 },
      ticks: { stroke: "#263241", width: 1 },
    };
    c.plot = new uPlot(
      {
        width: Math.max(280, c.chart.clientWidth),
        height: 180,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          axis,
          { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => `${+t.toFixed(2)}${unit}`) },
        ],
        series: [
          {},
          ...plotted.map((s) => ({
            label: `${groupLabel(s.group)} ${s.ref === "value" ? "" : s.ref}`.trim(),
            stroke: PALETTE[groupIndex.get(groupKey(s.group)) % PALETTE.length],
            width: s.ref === "p50" || s.ref === "value" ? 1.6 : 1.2,
            dash: DASH[s.ref],
            points: { show: false },
            spanGaps: false,
          })),
        ],
      },
      cols,
      c.chart,
    );
  }

  /** What the page holds: per panel, timestamps and series by (group, ref). */
  function fullView(res) {
    const panels = new Map(res.panels.map((p) => [p.id, { ...p, series: p.series.map((x) => ({ ...x })) }]));
    return { panels, newest: newestOf(panels.values()), key: "" };
  }

  function newestOf(panels) {
    let n = 0;
    for (const p of panels) if (p.timestamps.length) n = Math.max(n, p.timestamps[p.timestamps.length - 1]);
    return n;
  }

  /**
   * Appends an incremental answer: new points replace held points of the same time bucket (the
   * server keeps the newest snapshot per bucket), points older than the range fall off, series
   * that appear are padded with gaps, series that no longer have any value are dropped.
   */
  function mergeView(view, res) {
    const from = res.now - Number($("#f-range").value) * 1000;
    const step = res.stepMs;
    for (const fresh of res.panels) {
      const held = view.panels.get(fresh.id);
      if (!held) {
        view.panels.set(fresh.id, fresh);
        continue;
      }
      const add = fresh.timestamps;
      let cut = held.timestamps.length;
      if (add.length > 0)
        while (cut > 0 && Math.floor(held.timestamps[cut - 1] / step) >= Math.floor(add[0] / step)) cut--;
      let start = 0;
      while (start < cut && held.timestamps[start] < from) start++;
      const kept = cut - start;
      const gaps = (n) => new Array(n).fill(null);
      const byKey = new Map();
      for (const s of held.series)
        byKey.set(`${groupKey(s.group)}/${s.ref}`, {
          ...s,
          values: s.values.slice(start, cut).concat(gaps(add.length)),
        });
      for (const s of fresh.series) {
        const k = `${groupKey(s.group)}/${s.ref}`;
        const cur = byKey.get(k);
        if (cur) cur.values.splice(kept, add.length, ...s.values);
        else byKey.set(k, { ...s, values: gaps(kept).concat(s.values) });
      }
      held.timestamps = held.timestamps.slice(start, cut).concat(add);
      held.series = [...byKey.values()]
        .filter((s) => s.values.some((v) => v !== null))
        .sort((a, b) =>
          groupKey(a.group) < groupKey(b.group) ? -1 : groupKey(a.group) > groupKey(b.group) ? 1 : 0,
        );
    }
    view.newest = Math.max(view.newest, newestOf(view.panels.values()));
    return view;
  }

  function render(res) {
    const selected = Object.keys(selectedFilters());
    for (const data of res.panels) {
      const c = state.cards.get(data.id);
      if (!c) continue;
      const ignored = selected.filter((f) => !c.def.filters.includes(f));
      c.na.textContent = ignored.length ? `(${ignored.join(", ")} filter n/a)` : "";
      renderChart(c, data);
      renderTable(c, data);
      c.card.dataset.points = String(data.timestamps.length);
      c.card.dataset.newest = String(data.timestamps[data.timestamps.length - 1] ?? "");
    }
    state.renders++;
    document.documentElement.dataset.renders = String(state.renders);
    $("#updated").textContent = `updated ${new Date(res.now).toLocaleTimeString()}`;
    const err = $("#error");
    err.hidden = res.errors.length === 0;
    err.textContent = res.errors.slice(0, 3).join("; ");
  }

  async function getJson(path) {
    const r = await fetch(path, { cache: "no-store" });
    const body = await r.json();
    if (!r.ok) throw new Error(body?.error?.message ?? `HTTP ${r.status}`);
    return body;
  }

  async function refresh() {
    clearTimeout(state.timer);
    const gen = ++state.gen;
    try {
      if (!state.meta || state.cycle++ % 10 === 0) {
        const meta = await getJson("/api/meta");
        fillFilters(meta);
        if (!state.meta) buildCards(meta);
        state.meta = meta;
        showStatus(meta);
      }
      const q = new URLSearchParams(selectedFilters());
      q.set("range", $("#f-range").value);
      // A chart is about a third of the window wide: more points than pixels would not show.
      q.set("points", String(Math.min(600, Math.max(60, Math.floor(window.innerWidth / 4)))));
      q.set("digits", "6");
      const key = q.toString();
      // Same view as last time: ask only for the points after the newest one we hold.
      if (state.view?.key === key && state.view.newest > 0) q.set("since", String(state.view.newest));
      const res = await getJson(`/api/panels?${q}`);
      if (gen !== state.gen) return; // a newer refresh (filter change) owns the loop
      const merged = res.incremental && state.view?.key === key ? mergeView(state.view, res) : fullView(res);
      merged.key = key;
      state.view = merged;
      render({ ...res, panels: [...merged.panels.values()] });
    } catch (e) {
      const err = $("#error");
      err.hidden = false;
      err.textContent = `cannot load data: ${e.message}`;
    }
    if (gen === state.gen && $("#f-live").checked)
      state.timer = setTimeout(refresh, state.meta?.refreshMs ?? 2000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#controls").addEventListener("change", () => {
      syncUrl();
      refresh();
    });
    $("#controls").addEventListener("submit", (e) => e.preventDefault());
    let resizeTimer = 0;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        for (const c of state.cards.values())
          c.plot?.setSize({ width: Math.max(280, c.chart.clientWidth), height: 180 });
      }, 100);
    });
    refresh();
  });
})();
