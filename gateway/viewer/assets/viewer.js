// marathonbench viewer: a single page over the JSON API of gateway/viewer/app.py.
// Everything from a run (agent answers, persona text) is shown with textContent, never as markup.
"use strict";

const main = document.getElementById("main");
const where = document.getElementById("where");
let stopCurrent = () => {};
// the recordings folder inside the served one that the page shows ("" for the served folder
// itself): every API call names it (`in=`), every link keeps it
let folder = "";
let currentRun = "";

function api(path) {
  return folder ? `${path}${path.includes("?") ? "&" : "?"}in=${encodeURIComponent(folder)}` : path;
}

function runLink(runId) {
  return `${folder ? "#/in/" + encodeURIComponent(folder) : "#"}/run/${encodeURIComponent(runId)}`;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function kids(...nodes) {  // optional children: leave out the null ones
  return nodes.filter((n) => n !== null && n !== undefined);
}

async function getJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

function clock(ts) {  // 24-hour, as the chart's time axis
  return ts ? new Date(ts * 1000).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false}) : "";
}

function fmtMean(mean, run) {  // a range while grades are unresolved: never one confident figure over guesses
  if (run && run.mean_range) return `${run.mean_range[0].toFixed(2)}–${run.mean_range[1].toFixed(2)} (${run.unresolved.length} unresolved)`;
  return mean === null || mean === undefined ? "—" : mean.toFixed(2);
}

// ---- runs list ------------------------------------------------------------------------

async function showList() {
  where.textContent = "";
  const table = el("table", {class: "runs", id: "runs"});
  const note = el("p", {class: "meta"});
  const inside = el("p", {class: "meta", id: "subfolders"});
  main.replaceChildren(...kids(
    el("h2", {text: folder ? `Runs in ${folder}/` : "Runs"}),
    folder ? el("p", {}, el("a", {href: "#/", id: "to-root", text: "← the runs of the folder above"})) : null,
    note, inside, table));
  async function draw() {
    const data = await getJSON(api("/api/runs"));
    note.textContent = `${data.runs.length} run(s) under ${data.root}` + (data.pending ? ` — reading ${data.pending} more…` : "");
    // recordings folders inside this one (an experiment's, a fork folder): a link each
    const nested = Object.entries(data.subfolders);
    inside.replaceChildren(...(nested.length ? [document.createTextNode("recordings folders inside: ")] : []),
      ...nested.flatMap(([name, n], i) => [
        ...(i ? [document.createTextNode(", ")] : []),
        el("a", {href: `#/in/${encodeURIComponent(name)}`, class: "subfolder", text: `${name}/ (${n} runs)`})]));
    const head = el("tr", {}, ...["run", "status", "benchmark", "agent", "persona", "progress", "graded", "mean", "cost"].map((h) => el("th", {text: h})));
    const rows = data.runs.map((r) =>
      el("tr", {"data-run": r.id, onclick: () => (location.hash = runLink(r.id))},
        el("td", {text: r.id}),
        el("td", {}, el("span", {class: `status ${r.status}`, text: r.status})),
        el("td", {text: r.benchmark + (r.rung ? ` @ ${r.rung}` : "")}),
        el("td", {text: r.agent + (r.stand_in ? " (stand-in, not an LLM)" : r.model ? ` (${r.model})` : "")}),
        el("td", {text: r.persona}),
        el("td", {text: r.phases ? `phase ${Math.max(r.phase, 0)}/${r.phases}` : "—"}),
        el("td", {text: `${r.graded}/${r.questions}`}),
        el("td", {text: fmtMean(r.mean, r)}),
        el("td", {text: r.cost}),
      ));
    table.replaceChildren(head, ...rows);
  }
  await draw();
  const timer = setInterval(() => draw().catch(() => {}), 2000);
  stopCurrent = () => clearInterval(timer);
}

// ---- one run ----------------------------------------------------------------------------

// The same figure as the report's (gateway/report/context_chart.py), by the same rules: the
// line breaks where the run was stopped and a shaded band shows the stop; session lines are
// named once in the legend (a ladder's many labels would overlap); milliseconds only on ticks
// under a second apart, and at most a tick a second.
const SESSION_LABELS = {new_session: "new session", compact: "compaction asked"};
const SESSION_LINES = {new_session: "dot", compact: "dashdot"};
const STOPPED_FILL = "rgba(120, 120, 140, 0.18)";
const at = (ts) => new Date(ts * 1000);

function brokenAt(points, breaks) {  // points as x and y, with a gap (null) at each break between two
  const xs = [], ys = [];
  const pending = [...breaks].sort((a, b) => a - b);
  for (const [ts, value] of [...points].sort((a, b) => a[0] - b[0])) {
    while (pending.length && pending[0] <= ts) {
      if (xs.length) { xs.push(null); ys.push(null); }
      pending.shift();
    }
    xs.push(at(ts)); ys.push(value);
  }
  return [xs, ys];
}

function chartFigure(series, recorded) {
  const sessions = series.sessions || [];
  const stops = series.stops || [];
  const [xs, ys] = brokenAt(series.calls, stops.map((s) => s[1]));
  const legendOnly = (name, extra) => ({x: [null], y: [null], name, ...extra});
  const actions = [...new Set(sessions.map((p) => p[1]))].sort();
  const times = [...series.calls, ...series.questions, ...sessions].map((p) => p[0]);
  const span = times.length ? Math.max(...times) - Math.min(...times) : 0;
  return {
    data: [
      {x: xs, y: ys, mode: "lines+markers", name: "input tokens per call", connectgaps: false},
      {x: series.compactions.map((p) => at(p[0])), y: series.compactions.map((p) => p[1]), mode: "markers", name: "compaction",
       marker: {symbol: "x", size: 12, color: "crimson"}},
      {x: series.questions.map((p) => at(p[0])), y: series.questions.map(() => 0), mode: "markers", name: "question",
       text: series.questions.map((p) => p[1]), marker: {symbol: "triangle-up", size: 10, color: "seagreen"}},
      ...actions.map((a) => legendOnly(`${SESSION_LABELS[a] || a} (${sessions.filter((p) => p[1] === a).length})`,
        {mode: "lines", line: {dash: SESSION_LINES[a] || "dot", width: 1, color: "#667"}})),
      ...(stops.length ? [legendOnly(`stopped, then resumed (${stops.length})`,
        {mode: "markers", marker: {symbol: "square", size: 12, color: STOPPED_FILL}})] : []),
    ],
    layout: {
      title: {text: "Agent context size over time" + (recorded ? "" : " — not observable: no LLM call of the agent reached the recorder")},
      margin: {l: 60, r: 20, t: 40, b: 40}, yaxis: {title: {text: "tokens"}}, template: "plotly_white",
      xaxis: {type: "date", title: {text: "time of day (24-hour)"}, hoverformat: "%H:%M:%S",
        nticks: Math.max(2, Math.min(10, Math.floor(span))), tickformatstops: [  // as the transcript's clock
        {dtickrange: [null, 999], value: "%H:%M:%S.%L"}, {dtickrange: [1000, 59999], value: "%H:%M:%S"}, {dtickrange: [60000, null], value: "%H:%M"}]},
      shapes: [
        ...sessions.map((p) => ({type: "line", xref: "x", yref: "paper", x0: at(p[0]), x1: at(p[0]), y0: 0, y1: 1,
          line: {dash: SESSION_LINES[p[1]] || "dot", width: 1, color: "#667"}})),
        ...stops.map((s) => ({type: "rect", xref: "x", yref: "paper", x0: at(s[0]), x1: at(s[1]), y0: 0, y1: 1,
          fillcolor: STOPPED_FILL, line: {width: 0}, layer: "below"})),
      ],
    },
  };
}

function addToSeries(series, item) {
  if (item.kind === "llm") series.calls.push([item.ts, item.input_tokens]);
  else if (item.kind === "compaction") series.compactions.push([item.ts, item.tokens_before]);
  else if (item.kind === "question" && !item.resent) series.questions.push([item.ts, item.question_id]);
  else if (item.kind === "session") (series.sessions = series.sessions || []).push([item.ts, item.action]);
  else if (item.kind === "start" && item.stopped_at != null) (series.stops = series.stops || []).push([item.stopped_at, item.ts]);
  else return false;
  return true;
}

async function showRun(runId) {
  const run = await getJSON(api(`/api/runs/${encodeURIComponent(runId)}`));
  currentRun = runId;
  where.textContent = folder ? `/ ${folder} / ${run.id}` : `/ ${run.id}`;
  const status = el("span", {class: `status ${run.status}`, text: run.status, id: "run-status"});
  const meta = el("p", {class: "meta", id: "run-meta"});
  const describe = (r) => {
    const text = (t) => document.createTextNode(t);
    meta.replaceChildren(text(`${r.benchmark}${r.rung ? " @ " + r.rung : ""} · agent ${r.agent}${r.model ? " (" + r.model + ")" : ""} · persona ${r.persona} · phase ${Math.max(r.phase, 0)}/${r.phases} · graded ${r.graded}/${r.questions} · mean ${fmtMean(r.mean, r)} · ${r.cost}`),
      // a fork's parent is a run in the same folder: a link to its teaching
      ...(r.forked_from ? [text(" · forked from "), el("a", {href: runLink(r.forked_from.run), id: "fork-parent", text: r.forked_from.run}),
        text(` at checkpoint "${r.forked_from.checkpoint}": what came before is inherited from that run (open it for the teaching), never graded again`)] : []));
    status.textContent = r.status;
    status.className = `status ${r.status}`;
  };
  describe(run);
  const tagSelect = el("select", {id: "filter-tag"}, el("option", {value: "", text: "all tags"}), ...run.tags.map((t) => el("option", {value: t, text: t})));
  const evidenceSelect = el("select", {id: "filter-evidence"},
    el("option", {value: "", text: "all questions"}),
    el("option", {value: "beyond the boundary", text: "beyond the boundary"}),
    el("option", {value: "in context", text: "still in context"}));
  const chart = el("div", {id: "chart"});
  const transcript = el("div", {class: "transcript", id: "transcript"});
  const more = el("button", {class: "more", id: "load-more", text: "load more"});
  main.replaceChildren(...kids(
    el("h2", {}, document.createTextNode(run.id + " "), status), meta,
    run.stand_in ? el("p", {class: "note", text: "The agent ran on the offline rule-based model stand-in, not an LLM: these scores measure the platform, not a model."}) : null,
    chart,
    el("div", {class: "filters"}, el("label", {text: "tag "}), tagSelect, el("label", {text: "evidence "}), evidenceSelect),
    transcript, more));

  const series = run.series;  // the whole run's chart data; the transcript below is paged
  const questions = {};  // question id → {tags, evidence}
  let lastQuestion = null;
  let lastSeq = -1;
  let chartDrawn = false;
  let source = null;

  function matches(node) {
    const tag = tagSelect.value, evidence = evidenceSelect.value;
    if (!tag && !evidence) return true;
    const q = questions[node.dataset.q];
    if (!q) return false;
    return (!tag || q.tags.includes(tag)) && (!evidence || q.evidence === evidence);
  }
  function applyFilters() {
    for (const node of transcript.children) node.hidden = !matches(node);
  }
  tagSelect.addEventListener("change", applyFilters);
  evidenceSelect.addEventListener("change", applyFilters);

  function render(item) {
    let node = null;
    const time = el("span", {class: "time", text: clock(item.ts)});
    switch (item.kind) {
      case "phase":
        node = el("div", {class: "divider phase", text: `phase ${item.index + 1}: ${item.title}${item.chapter.startsWith("distractors/") ? " (distractor session)" : ""}`});
        break;
      case "session":
        node = el("div", {class: "divider session", text: (item.action === "new_session" ? "— new session —" : "— compaction asked (bench.compact) —")
          + (item.reply ? ` (the agent answered: ${item.reply})` : "")});
        break;
      case "persona": {
        node = el("div", {class: "bubble persona"}, el("span", {text: item.text}));
        if (item.facts.length) node.appendChild(el("div", {class: "facts"}, document.createTextNode("facts told: "), ...item.facts.map((f) => el("span", {text: f}))));
        if (item.resent) node.appendChild(el("span", {class: "tag", text: "re-sent after a restart"}));
        if (item.purpose === "nudge") { node.appendChild(el("span", {class: "tag", text: "retry: search-memory nudge"})); node.dataset.q = item.question_id; lastQuestion = item.question_id; }
        else lastQuestion = null;
        node.appendChild(time);
        break;
      }
      case "question":
        questions[item.question_id] = questions[item.question_id] || {tags: item.tags, evidence: null};
        lastQuestion = item.question_id;
        node = el("div", {class: "bubble question", "data-q": item.question_id},
          el("span", {text: `❓ ${item.question_id}: ${item.text}`}),
          el("div", {class: "facts"}, ...item.tags.map((t) => el("span", {class: "tag", text: t}))), time);
        break;
      case "agent":
        node = el("div", {class: "bubble agent"}, el("span", {text: item.text}), el("span", {class: "time", text: `${clock(item.ts)} · ${item.elapsed.toFixed(1)} s`}));
        if (lastQuestion) node.dataset.q = lastQuestion;
        break;
      case "late_reply":  // never graded: kept with the message it answers
        node = el("div", {class: "bubble agent off-turn"}, el("span", {class: "tag", text: "late reply (not graded)"}),
          el("span", {text: item.text}), el("span", {class: "time", text: `to: ${item.answers.slice(0, 80)}`}));
        break;
      case "agent_initiated":  // a heartbeat, greeting, reminder: never graded
        node = el("div", {class: "bubble agent off-turn"}, el("span", {class: "tag", text: "sent on its own (not graded)"}),
          el("span", {text: item.text}), el("span", {class: "time", text: item.why}));
        break;
      case "grade": {
        const q = questions[item.question_id] = questions[item.question_id] || {tags: item.tags, evidence: null};
        q.evidence = item.evidence;
        // an unresolved grade shows what it can be, never its guess as a score
        const sure = item.certain !== false;
        const cls = !sure ? "unresolved" : item.score >= 10 ? "good" : item.score >= 5 ? "part" : "bad";
        node = el("div", {class: `grade ${cls}`, "data-q": item.question_id},
          el("b", {text: sure ? `${item.question_id}: ${item.score}/10`
            : `${item.question_id}: unresolved, ${item.bounds[0]}–${item.bounds[1]}/10 (the grader was not sure)`}),
          el("div", {text: `expected: ${item.expected}`}),
          el("div", {text: `answer: ${item.answer}`}),
          el("div", {text: `grader (${item.grader}${item.decided_by ? `, rule ${item.decided_by}` : ""}): ${item.reason}`}),
          item.attempts > 1 ? el("div", {text: `after a retry; first try scored ${item.first_score}`}) : null,
          item.evidence ? el("div", {class: "tag", text: `evidence when asked: ${item.evidence}`}) : null,
          el("a", {class: "trace", "data-q": item.question_id, text: "trace this fact", onclick: () => traceFact(item.question_id)}));
        lastQuestion = null;
        break;
      }
      case "compaction":
        node = el("div", {class: "event compaction"}, document.createTextNode(`agent compaction (${item.compaction}): ${item.tokens_before} → ${item.tokens_after} tokens `), inspectLink(item.exchange));
        break;
      case "memory":
        node = el("div", {class: "event memory"}, document.createTextNode(`memory ${item.operation}: ${item.tool}${item.target ? " " + item.target : ""} `), inspectLink(item.exchange));
        if (item.question_id) node.dataset.q = item.question_id;
        break;
      case "edit":
        node = el("div", {class: "event", text: `fact ${item.fact} changed: ${item.new}`});
        break;
      case "error":
        node = el("div", {class: "event error", text: `${item.source} error (${item.error}): ${item.message}`});
        break;
      case "slip":
        node = el("div", {class: "event error", text: `persona slip (${item.slip}): ${item.detail}`});
        break;
      case "canary":
        node = el("div", {class: "event error", text: `canary reached the model: ${item.marker}`});
        break;
      case "start":
        node = el("div", {class: "divider", text: item.resumed ? "— run resumed —" : "— run started —"});
        break;
      case "end":
        node = el("div", {class: "divider", text: `— run ended: ${item.reason}${item.detail ? " (" + item.detail + ")" : ""} —`});
        break;
    }
    if (node) {
      node.dataset.seq = item.seq;
      node.dataset.kind = item.kind;
      node.hidden = !matches(node);
      transcript.appendChild(node);
    }
  }

  function take(items) {
    let seriesChanged = false;
    for (const item of items) {
      if (item.seq <= lastSeq) continue;
      lastSeq = item.seq;
      if (item.seq > run.series_seq) seriesChanged = addToSeries(series, item) || seriesChanged;
      render(item);
    }
    if (seriesChanged || !chartDrawn) {
      const figure = chartFigure(series, run.recorded || series.calls.length > 0);
      if (chartDrawn) Plotly.react(chart, figure.data, figure.layout);
      else Plotly.newPlot(chart, figure.data, figure.layout, {displaylogo: false, responsive: true});
      chartDrawn = true;
    }
    if (items.length) applyFilters();
  }

  function follow() {
    source = new EventSource(api(`/api/runs/${encodeURIComponent(runId)}/stream?after=${lastSeq}`));
    source.addEventListener("items", (e) => take(JSON.parse(e.data)));
    source.addEventListener("status", (e) => describe(JSON.parse(e.data)));
    source.addEventListener("restarted", () => { source.close(); showRun(runId); });
  }

  async function page() {
    more.disabled = true;
    const data = await getJSON(api(`/api/runs/${encodeURIComponent(runId)}/items?after=${lastSeq}&limit=500`));
    take(data.items);
    more.hidden = !data.more;
    more.disabled = false;
    if (!data.more && !source) follow();  // everything loaded: from here on, live
  }
  // the memory autopsy: a question's value through the run, each step linked to its record
  let autopsy = null, autopsySeq = null;
  async function traceFact(qid) {
    if (!autopsy || autopsySeq !== lastSeq) {  // a live run moved on: trace it as it is now
      autopsy = await getJSON(api(`/api/runs/${encodeURIComponent(runId)}/autopsy`));
      autopsySeq = lastSeq;
    }
    const q = autopsy.questions[qid];
    const body = document.getElementById("inspector-body");
    if (!q) {
      body.replaceChildren(el("p", {text: `${qid}: no autopsy (not graded)`}));
    } else {
      body.replaceChildren(...kids(
        el("h3", {id: "trace-verdict", text: `${qid}: expected ${q.expected} — ${q.verdict}`}),
        autopsy.memory_unseen ? el("p", {class: "note", text: `memory files not read: ${autopsy.memory_unseen}`}) : null,
        el("ol", {id: "trace-steps"}, ...q.steps.map((step) => el("li", {class: `step ${step.kind.replace(/ /g, "-")}`},
          el("b", {text: step.kind}), document.createTextNode(` ${step.detail} `),
          step.seq === null ? el("span", {class: "time", text: "(the memory files after the run)"})
            : step.parent ? el("span", {class: "time", text: `(record ${step.seq} of the parent's log: open the parent run)`})
            : el("a", {class: "goto", text: `record ${step.seq}`, onclick: () => showSeq(step.seq)}))))));
    }
    document.getElementById("inspector").showModal();
  }
  async function showSeq(seq) {  // the transcript item of log record `seq`, paged in if need be
    let node = transcript.querySelector(`[data-seq="${seq}"]`);
    while (!node && !more.hidden) {
      await page();
      node = transcript.querySelector(`[data-seq="${seq}"]`);
    }
    document.getElementById("inspector").close();
    if (node) {
      node.hidden = false;
      node.scrollIntoView({block: "center"});
      node.classList.add("traced");
      setTimeout(() => node.classList.remove("traced"), 2000);
    }
  }
  more.addEventListener("click", page);
  new IntersectionObserver((entries) => { if (entries[0].isIntersecting && !more.hidden && !more.disabled) page(); }).observe(more);
  await page();
  stopCurrent = () => { if (source) source.close(); };
}

function inspectLink(exchange) {
  if (exchange === undefined || exchange < 0) return null;
  return el("a", {class: "inspect", "data-exchange": exchange, text: "open the LLM exchange", onclick: () => inspect(exchange)});
}

function blockText(block) {
  if (typeof block === "string") return block;
  if (block.type === "text") return block.text;
  if (block.type === "tool_use") return `→ tool ${block.name}(${JSON.stringify(block.input)})`;
  if (block.type === "tool_result") return `← result: ${typeof block.content === "string" ? block.content : JSON.stringify(block.content)}`;
  return JSON.stringify(block);
}

async function inspect(seq) {
  const ex = await getJSON(api(`/api/runs/${encodeURIComponent(currentRun)}/exchange/${seq}`));
  const body = document.getElementById("inspector-body");
  const content = (c) => Array.isArray(c) ? c.map(blockText).join("\n") : typeof c === "string" ? c : JSON.stringify(c);
  body.replaceChildren(...kids(
    el("h3", {text: `LLM exchange #${ex.seq}: ${ex.method} ${ex.path} → ${ex.status} (${ex.api}, ${ex.model}${ex.stream ? ", streamed" : ""})`}),
    el("p", {text: `kind: ${ex.kind} · tools offered: ${ex.tools.join(", ") || "none"} · usage: ${JSON.stringify(ex.usage)}${ex.question_id ? " · during question " + ex.question_id : ""}`}),
    el("h4", {text: "Request: system"}), el("pre", {text: ex.system || "(none)"}),
    el("h4", {text: `Request: ${ex.messages.length} messages`}),
    ...ex.messages.map((m) => el("div", {class: "msg"}, el("div", {class: "role", text: m.role}), el("div", {text: content(m.content)}))),
    el("h4", {text: "Response"}),
    el("pre", {text: ex.text || "(no text)"}),
    ...(ex.tool_calls || []).map((c) => el("pre", {text: `→ ${JSON.stringify(c)}`})),
    ex.error ? el("p", {class: "note", text: `error: ${ex.error}`}) : null,
    el("h4", {text: "Request headers (as recorded, secrets redacted)"}), el("pre", {text: JSON.stringify(ex.request_headers, null, 1)}),
  ));
  document.getElementById("inspector").showModal();
}

async function route() {
  stopCurrent();
  stopCurrent = () => {};
  // #/run/ID, #/in/FOLDER, #/in/FOLDER/run/ID — or the list of the served folder
  let parts = location.hash.replace(/^#\/?/, "").split("/");
  folder = "";
  if (parts[0] === "in" && parts[1]) {
    folder = decodeURIComponent(parts[1]);
    parts = parts.slice(2);
  }
  try {
    if (parts[0] === "run" && parts[1]) await showRun(decodeURIComponent(parts[1]));
    else await showList();
  } catch (err) {
    main.replaceChildren(el("p", {class: "note", text: String(err)}));
  }
}
window.addEventListener("hashchange", route);
route();
