"use strict";
// wiretap ui: a virtualised message list and the report, kept live over server-sent events.
// The page holds the rows it shows (in blocks of BLOCK) and asks the server for others on demand.
(function () {
  const BLOCK = 200;
  const KEEP_BLOCKS = 12;
  const ROW = 22;
  const VERDICTS = [
    ["poll_intervals", "Poll intervals"],
    ["cancel_on_exit", "Cancel on exit"],
    ["elicitation_gaps", "Polling while a question was open"],
    ["shutdown", "Shutdown"],
  ];
  const $ = (id) => document.getElementById(id);
  const session = new URLSearchParams(location.search).get("session") || "";
  const state = { total: 0, blocks: new Map(), generation: 0, open: null, extra: 0, servers: [], report: -1, loading: new Set() };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const child of children) node.append(child instanceof Node ? child : String(child ?? "—"));
    return node;
  }

  function query(extra) {
    const params = new URLSearchParams();
    if (session) params.set("session", session);
    const f = filters();
    for (const [k, v] of Object.entries(f)) if (v) params.set(k, v);
    for (const [k, v] of Object.entries(extra || {})) params.set(k, v);
    return params.toString();
  }

  function filters() {
    return { q: $("q").value.trim(), m: $("m").value.trim(), dir: $("dir").value, server: $("server").value,
      err: $("err").checked ? "1" : "" };
  }

  async function get(path, extra) {
    const response = await fetch(`${path}?${query(extra)}`, { cache: "no-store" });
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return response.json();
  }

  // ---- the message list ----
  async function loadBlock(block, generation) {
    const key = `${generation}:${block}`;
    if (state.loading.has(key)) return;
    state.loading.add(key);
    try {
      const data = await get("/api/rows", { from: block * BLOCK, count: BLOCK });
      if (generation !== state.generation) return;
      setTotal(data.total, data.all);
      state.blocks.set(block, data.rows);
      forgetFarBlocks(block);
      render();
    } finally {
      state.loading.delete(key);
    }
  }

  function forgetFarBlocks(near) {
    // The page keeps what it shows and a little around it, not what was scrolled past.
    if (state.blocks.size <= KEEP_BLOCKS) return;
    const far = [...state.blocks.keys()].sort((a, b) => Math.abs(b - near) - Math.abs(a - near));
    for (const block of far.slice(0, state.blocks.size - KEEP_BLOCKS)) state.blocks.delete(block);
  }

  function setTotal(total, all) {
    state.total = total;
    setSpacer();
    $("count").textContent = `${total} of ${all} shown`;
  }

  function setSpacer() {
    $("spacer").style.height = `${state.total * ROW + (state.open ? state.extra : 0)}px`;
  }

  // One row at a time is open, showing its JSON: the rows below it move down by its extra height.
  function top(n) {
    return n * ROW + (state.open && n > state.open.at ? state.extra : 0);
  }

  function indexAt(y) {
    const n = Math.floor(y / ROW);
    if (!state.open || n <= state.open.at) return n;
    return Math.max(state.open.at, Math.floor((y - state.extra) / ROW));
  }

  function rowNode(row, n, names) {
    const line = el("div", { class: "line" }, el("span", { class: "t" }, row.t.toFixed(3)));
    if (names) line.append(el("span", { class: "srv" }, (state.servers[row.server] || {}).name || row.server));
    line.append(el("span", { class: "lane" }, row.lane), el("span", { class: "method" }, row.title),
      row.where ? `${row.where} ${row.summary}` : row.summary);
    line.addEventListener("click", () => toggle(row.id, n));
    const node = el("div", { class: `row ${row.lane === "---" ? "LIFE" : row.lane}${row.error ? " error" : ""}`,
      "data-id": row.id, "data-lane": row.lane }, line);
    if (state.open && state.open.id === row.id) {
      node.classList.add("open");
      node.append(detail(state.open.data));
    }
    return node;
  }

  function detail(data) {
    const head = el("div", { class: "meta" }, `row ${data.id} · ${data.server}`);
    if (data.pair !== null) {
      const link = el("a", { class: "pair", href: "#", "data-id": data.pair },
        data.pair_is_response ? "→ its response" : "← its request");
      link.addEventListener("click", (e) => { e.preventDefault(); goTo(data.pair); });
      head.append(" · ", link);
    }
    return el("div", { class: "json" }, head, el("pre", {}, data.json));
  }

  function render() {
    const list = $("list");
    const first = Math.max(0, indexAt(list.scrollTop) - 5);
    const last = Math.min(state.total, indexAt(list.scrollTop + list.clientHeight) + 6);
    const rows = $("rows");
    rows.style.transform = `translateY(${top(first)}px)`;
    const names = state.servers.length > 1;
    const nodes = [];
    for (let n = first; n < last; n++) {
      const block = Math.floor(n / BLOCK);
      const rowsOf = state.blocks.get(block);
      const row = rowsOf && rowsOf[n - block * BLOCK];
      if (!row) {
        if (!rowsOf || n - block * BLOCK >= rowsOf.length) loadBlock(block, state.generation);
        nodes.push(el("div", { class: "row pending" }, "…"));
        continue;
      }
      nodes.push(rowNode(row, n, names));
    }
    rows.replaceChildren(...nodes);
    const open = rows.querySelector(".row.open");
    if (open && open.offsetHeight - ROW !== state.extra) {
      state.extra = open.offsetHeight - ROW;
      setSpacer();
    }
  }

  async function toggle(id, at) {
    if (state.open && state.open.id === id) {
      state.open = null;
      state.extra = 0;
    } else {
      const data = await get("/api/event", { id });
      state.open = { id, at, data };
      state.extra = 0;
    }
    setSpacer();
    render();
  }

  function refilter() {
    state.generation += 1;
    state.blocks.clear();
    state.open = null;
    state.extra = 0;
    const f = filters();
    const hash = new URLSearchParams();
    for (const [k, v] of Object.entries(f)) if (v) hash.set(k, v);
    history.replaceState(null, "", hash.toString() ? `#${hash}` : location.pathname + location.search);
    $("list").scrollTop = 0;
    loadBlock(0, state.generation);
  }

  async function grew() {
    // New rows: learn the new total, follow the tail if asked to, and load the last (partial) block
    // again; its rows stay shown until the fresh copy replaces them, so nothing shown flickers to "…".
    const lastBlock = Math.floor(Math.max(0, state.total - 1) / BLOCK);
    const data = await get("/api/rows", { from: state.total, count: 0 });
    setTotal(data.total, data.all);
    if ($("tail").checked) $("list").scrollTop = $("list").scrollHeight;
    render();
    loadBlock(lastBlock, state.generation);
  }

  async function goTo(id) {
    let data = await get("/api/position", { id });
    if (data.at < 0) {
      for (const k of ["q", "m", "dir", "server"]) $(k).value = "";
      $("err").checked = false;
      refilter();
      data = await get("/api/position", { id });
    }
    $("tail").checked = false;
    state.open = null;
    await toggle(id, data.at);
    const list = $("list");
    list.scrollTop = Math.max(0, data.at * ROW - list.clientHeight / 3);
    render();
  }

  // ---- the report ----
  function table(columns, body, numeric) {
    const head = el("tr", {}, ...columns.map((c) => el("th", {}, c)));
    const rows = body.map((r) => el("tr", {}, ...r.map((v, n) =>
      v instanceof Node ? el("td", {}, v) : el("td", numeric.includes(n) ? { class: "num" } : {}, cell(v)))));
    return el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows));
  }

  function cell(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "number" && !Number.isInteger(v)) return v.toFixed(2);
    return String(v);
  }

  function svgOf(text) {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") return el("p", { class: "note" }, "timeline unavailable");
    for (const s of svg.querySelectorAll("script, foreignObject")) s.remove();
    return document.importNode(svg, true);
  }

  function renderReport(data) {
    const many = data.servers.length > 1;
    const verdicts = [], timelines = [], findings = [], latency = [], tasks = [];
    for (const server of data.servers) {
      if (server.error) { verdicts.push(el("p", { class: "note" }, `${server.name}: ${server.error}`)); continue; }
      const report = server.report;
      if (many) verdicts.push(el("div", { class: "server-name" }, server.name));
      verdicts.push(el("div", { class: "verdicts" }, ...VERDICTS.filter(([key]) => report.verdicts[key]).map(([key, title]) => {
        const verdict = report.verdicts[key];
        const card = el("div", { class: `verdict ${key}` }, el("h4", {}, title), el("p", {}, verdict.verdict));
        if (verdict.evidence.length) card.append(el("ul", {}, ...verdict.evidence.map((line) => el("li", {}, line))));
        return card;
      })));
      const figure = el("figure", { class: "timeline", "data-server": server.name }, svgOf(server.svg));
      if (server.shift) {
        figure.append(el("figcaption", {}, `${server.name}: seconds from its own start, ` +
          `${server.shift.toFixed(2)} s after the session's (the message list is on the session's clock)`));
      }
      timelines.push(figure);
      for (const f of report.findings) {
        const times = f.times.map((t) => t.toFixed(2)).join(", ") + (f.count > 1 ? ` (×${f.count})` : "");
        findings.push([server.name, el("span", { class: `sev ${f.severity}` }, f.severity), f.code, times, f.message,
          f.advice]);
      }
      for (const r of report.latency) latency.push([server.name, r.method, r.count, r.errors, r.p50_ms, r.p95_ms, r.max_ms]);
      for (const t of report.tasks) {
        tasks.push([server.name, t.id, t.tool, t.created_at, t.requested_poll_ms, t.polls,
          t.intervals ? t.intervals.median.toFixed(2) : null, t.final_state, t.live_at_client_exit]);
      }
    }
    $("verdicts").replaceChildren(...verdicts);
    $("timelines").replaceChildren(...(timelines.length ? [el("h3", {}, "Timeline"), ...timelines] : []));
    // One server: no server column.
    const trim = (columns, body, numeric) => many ? [columns, body, numeric]
      : [columns.slice(1), body.map((r) => r.slice(1)), numeric.map((n) => n - 1)];
    const parts = [];
    if (tasks.length) parts.push(el("h3", {}, "Tasks"), table(...trim(["server", "task", "tool", "created s",
      "asked ms", "polls", "median interval s", "final state", "live at client exit"], tasks, [3, 4, 5, 6])));
    if (findings.length) parts.push(el("h3", {}, "Findings"),
      table(...trim(["server", "severity", "code", "times s", "finding", "advice"], findings, [])));
    if (latency.length) parts.push(el("h3", {}, "Latency per method"),
      table(...trim(["server", "method", "count", "errors", "p50 ms", "p95 ms", "max ms"], latency, [2, 3, 4, 5, 6])));
    $("tables").replaceChildren(...parts);
  }

  async function reportChanged(version) {
    if (version === state.report) return;
    state.report = version;
    renderReport(await get("/api/report"));
  }

  // ---- state, sessions and the push stream ----
  async function loadState() {
    const data = await get("/api/state");
    $("title").textContent = data.title;
    state.servers = data.servers;
    const pick = $("server");
    const chosen = pick.value;
    const names = data.servers.map((s) => `${s.name} (${s.file})`).join("\n");
    if (names !== state.serverNames) {
      state.serverNames = names;
      pick.replaceChildren(el("option", { value: "" }, "every server"),
        ...data.servers.map((s) => el("option", { value: String(s.server) }, `${s.name} (${s.file})`)));
      pick.value = chosen;
      pick.hidden = data.servers.length < 2 && !chosen;
    }
    if (data.sessions.length) {
      // A folder of sessions: a new one may start while we watch; the menu shows it within seconds.
      if ($("session-pick").hidden) setInterval(loadState, 5000);
      $("session-pick").hidden = false;
      if (data.sessions.join("\n") !== state.sessions) {
        state.sessions = data.sessions.join("\n");
        $("sessions").replaceChildren(...data.sessions.map((s) => el("option", { value: s }, s)));
        $("sessions").value = data.current;
      }
    }
  }

  function listen() {
    const source = new EventSource(`/api/stream?${session ? `session=${encodeURIComponent(session)}` : ""}`);
    let servers = -1;
    source.onopen = () => { $("live").textContent = "live"; $("live").className = "live on"; };
    source.onerror = () => { $("live").textContent = "disconnected"; $("live").className = "live off"; };
    source.onmessage = async (message) => {
      const data = JSON.parse(message.data);
      if (data.servers !== servers) { servers = data.servers; await loadState(); }
      if (data.running === false) $("live").textContent = "live (session ended)";
      if (data.rows !== state.all) { state.all = data.rows; await grew(); }
      await reportChanged(data.report);
    };
  }

  function start() {
    const asked = new URLSearchParams(location.hash.slice(1));
    for (const k of ["q", "m", "dir", "server"]) if (asked.get(k)) $(k).value = asked.get(k);
    $("err").checked = asked.get("err") === "1";
    let timer = null;
    const later = () => { clearTimeout(timer); timer = setTimeout(refilter, 150); };
    for (const k of ["q", "m"]) $(k).addEventListener("input", later);
    for (const k of ["dir", "server", "err"]) $(k).addEventListener("change", refilter);
    $("sessions").addEventListener("change", () => {
      location.search = `?session=${encodeURIComponent($("sessions").value)}`;
    });
    $("list").addEventListener("scroll", () => {
      const list = $("list");
      if (list.scrollTop + list.clientHeight < list.scrollHeight - ROW) $("tail").checked = false;
      render();
    }, { passive: true });
    window.addEventListener("resize", render);
    $("list").addEventListener("keydown", (e) => {
      // Up and down open the previous or next row; Escape closes it.
      if (e.key === "Escape" && state.open) { e.preventDefault(); toggle(state.open.id, state.open.at); return; }
      if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
      e.preventDefault();
      const at = state.open ? state.open.at + (e.key === "ArrowDown" ? 1 : -1) : 0;
      const block = state.blocks.get(Math.floor(at / BLOCK));
      const row = block && block[at - Math.floor(at / BLOCK) * BLOCK];
      if (!row) return;
      toggle(row.id, at).then(() => {
        const list = $("list");
        if (top(at) < list.scrollTop || top(at) + ROW > list.scrollTop + list.clientHeight) {
          list.scrollTop = Math.max(0, top(at) - list.clientHeight / 3);
        }
      });
    });
    loadState().then(() => {
      const server = asked.get("server");
      if (server) $("server").value = server;
      loadBlock(0, state.generation);
      listen();
    });
  }

  start();
})();
