// The playground page: a small Slack-like client over the local Slack the server runs.
"use strict";

const { el, mrkdwn, blocks, emojiFor } = window.Mrkdwn;

const S = {
  boot: null, // /api/state: bot, people, users, channels, llm, suggestions, graph
  me: null,
  channel: null,
  thread: null, // ts of the open thread
  tab: "thread",
  trace: null, // {channel, ts} of the answer in the side panel
  data: null, // /api/messages of the current channel
  unread: new Set(),
};
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(json.error || response.statusText);
  return json;
}

// A Block Kit button with an action (feedback, "did you mean…?"): Slack's block_actions, signed and
// delivered to the app like a real click; other buttons only look the part.
async function clickButton(m, element) {
  if (!element.action_id || element.value === undefined) {
    toast("Buttons look as they would in Slack; this one has no action.");
    return;
  }
  try {
    await api("/api/actions", { user: S.me, channel: S.channel, ts: m.ts, action_id: element.action_id, value: element.value });
    if (element.action_id.startsWith("answer_choice")) toast("Going on with that one…");
    else toast(element.value === "good" ? "Thanks: that teaches cypherbot." : "Noted: that counts against this answer.");
  } catch (err) {
    toast(err.message);
  }
}

function toast(text) {
  const node = $("toast");
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { node.hidden = true; }, 4000);
}

const users = () => S.boot.users;
const me = () => S.boot.people.find((p) => p.id === S.me);
const isDM = (channel) => S.boot.people.some((p) => p.dm === channel);
const botName = () => S.boot.bot.name;

function channelName(id) {
  const channel = S.boot.channels.find((c) => c.id === id);
  return channel ? "#" + channel.name : botName();
}

function time(ts) {
  return new Date(parseFloat(ts) * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// ---- navigation -------------------------------------------------------------------------

function navItem(id, label, extra) {
  const current = id === S.channel;
  const button = el("button", {
    type: "button", class: "nav-item" + (S.unread.has(id) ? " unread" : ""),
    "aria-current": current ? "page" : null, "data-channel": id,
    onclick: () => selectChannel(id),
  }, label, extra || null);
  if (S.unread.has(id)) button.append(el("span", { class: "visually-hidden", text: " (new messages)" }));
  return el("li", {}, button);
}

function renderNav() {
  $("channel-list").replaceChildren(...S.boot.channels.map((c) => navItem(c.id, "# " + c.name)));
  $("dm-list").replaceChildren(navItem(me().dm, "🤖 " + botName(), el("span", { class: "app-badge", text: "APP" })));
  const dm = isDM(S.channel);
  $("channel-title").textContent = dm ? botName() : channelName(S.channel);
  $("channel-hint").textContent = dm
    ? "Your direct messages with the bot: no mention needed, each question opens a thread."
    : "Mention @" + botName() + " to ask; follow up in the thread without mentioning it.";
  $("composer-label").textContent = "Message " + (dm ? botName() : channelName(S.channel));
  $("composer-text").placeholder = dm ? "Ask " + botName() + " something…"
    : "Message " + channelName(S.channel) + " — e.g. @" + botName() + " which services use PostgreSQL?";
}

function renderBoot() {
  const select = $("user-select");
  select.replaceChildren(...S.boot.people.map((p) => el("option", { value: p.id, text: p.name })));
  select.value = S.me;
  const llm = S.boot.llm;
  const pill = $("llm-pill");
  pill.textContent = llm.configured ? "LLM: " + llm.model : "No LLM configured";
  pill.className = "pill " + (llm.configured ? "ok" : "warn");
  $("llm-banner").hidden = llm.configured;
  $("graph-description").textContent = S.boot.graph ? "The graph holds " + S.boot.graph : "";
  showChips("Try a question", S.boot.suggestions.map((q) => ({ title: q, message: q })));
}

function showChips(title, prompts) {
  const chips = prompts.map((p) => el("button", {
    type: "button", class: "chip", title: p.message, onclick: () => ask(p.message),
  }, p.title));
  $("suggestions").querySelector(".suggestions-title").textContent = title;
  $("suggestion-chips").replaceChildren(...chips);
  $("suggestions").hidden = chips.length === 0;
}

// The DM is the split view: opening it starts an assistant thread (assistant_thread_started),
// and the prompts the app suggests for it (setSuggestedPrompts) replace the seed chips.
async function loadAssistantPrompts() {
  try {
    const data = await api("/api/assistant", { user: S.me });
    if (isDM(S.channel)) showChips("Suggested by " + botName(), data.prompts);
  } catch (err) {
    toast(err.message);
  }
}

function selectChannel(id) {
  if (id !== S.channel) {
    S.channel = id;
    S.thread = null;
    S.data = null;
    $("messages").replaceChildren();
    if (S.tab === "thread") $("pane").hidden = true;
  }
  S.unread.delete(id);
  renderNav();
  refresh();
  if (isDM(id)) loadAssistantPrompts(); else renderBoot();
}

// ---- messages ---------------------------------------------------------------------------

function focusKey() {
  const active = document.activeElement;
  return active && active.dataset ? active.dataset.key : undefined;
}

function restoreFocus(key) {
  if (!key) return;
  const node = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
  if (node) node.focus();
}

function avatar(userId) {
  const isBot = userId === S.boot.bot.id;
  const name = users()[userId] || "?";
  return el("div", { class: "avatar" + (isBot ? " bot" : ""), "aria-hidden": "true" },
    isBot ? "⬡" : name.slice(0, 1).toUpperCase());
}

function reactionButton(m, name, label) {
  const entry = (m.reactions || []).find((r) => r.name === name);
  const count = entry ? entry.count : 0;
  const mine = !!entry && entry.users.includes(S.me);
  const who = entry ? entry.users.map((u) => users()[u] || u).join(", ") : "";
  return el("button", {
    type: "button", class: "reaction react-" + label + (mine ? " mine" : ""),
    "aria-pressed": mine ? "true" : "false", "data-key": label + ":" + m.ts,
    "aria-label": `${emojiFor(name)} ${label === "up" ? "thumbs up" : "thumbs down"}: ${count}` +
      (mine ? " (yours — click to remove)" : " (click to add yours)"),
    title: who ? "Reacted: " + who : "React " + emojiFor(name),
    onclick: () => react(m, name, !mine),
  }, emojiFor(name), el("span", { class: "count", text: count ? String(count) : "" }));
}

function otherReactions(m) {
  return (m.reactions || []).filter((r) => !["+1", "-1"].includes(r.name)).map((r) =>
    el("span", { class: "reaction other", title: r.users.map((u) => users()[u] || u).join(", ") },
      emojiFor(r.name) || ":" + r.name + ":", el("span", { class: "count", text: String(r.count) })));
}

function messageView(m, { inThread, ephemeral } = {}) {
  const isBot = m.user === S.boot.bot.id;
  const content = el("div", { class: "content" });
  // A person's message carries its text as rich_text blocks too (as in Slack): show the text.
  const shown = (m.blocks || []).filter((b) => b.type !== "rich_text");
  if (shown.length) {
    content.append(blocks(shown, users(), (element) => clickButton(m, element)));
  } else {
    content.append(mrkdwn(m.text, users()));
  }
  const files = (m.files || []).map((f) => f.name.endsWith(".png") ? el("img", {
    class: "file-image", src: f.url, alt: f.alt_txt || f.title || f.name,
  }) : el("a", {
    class: "file", href: f.url, download: f.name, "aria-label": "Download " + (f.title || f.name),
  }, "📎 ", f.title || f.name, el("span", { class: "file-size", text: f.size ? ` (${f.size.toLocaleString()} bytes)` : "" })));
  const header = el("div", { class: "msg-header" },
    el("span", { class: "author", text: users()[m.user] || m.user }),
    isBot ? el("span", { class: "app-badge", text: "APP" }) : null,
    el("time", { datetime: new Date(parseFloat(m.ts) * 1000).toISOString(), text: time(m.ts) }),
    m.edited && !isBot ? el("span", { class: "edited", text: "(edited)" }) : null,
    ephemeral ? el("span", { class: "ephemeral-note", text: "Only visible to you" }) : null);
  const body = el("div", { class: "msg-body" }, header, content);
  if (files.length) body.append(el("div", { class: "files" }, ...files));
  if (!ephemeral) {
    const tools = el("div", { class: "msg-tools" },
      reactionButton(m, "+1", "up"), reactionButton(m, "-1", "down"), ...otherReactions(m));
    if (!inThread) {
      tools.append(el("button", {
        type: "button", class: "tool reply", "data-key": "reply:" + m.ts, onclick: () => openThread(m.ts),
      }, m.reply_count ? `💬 ${m.reply_count} ${m.reply_count === 1 ? "reply" : "replies"}` : "💬 Reply in thread"));
    }
    if (isBot && m.turn_id) {
      tools.append(el("button", {
        type: "button", class: "tool behind", "data-key": "trace:" + m.ts,
        onclick: () => openTrace(S.channel, m.ts),
      }, "🔍 Behind this answer"));
    }
    body.append(tools);
    const status = !inThread && S.data && S.data.statuses[m.ts];
    if (status) body.append(statusView(status));
  }
  const article = el("article", {
    class: "msg" + (isBot ? " from-bot" : "") + (ephemeral ? " ephemeral" : ""),
    "data-ts": m.ts, "aria-label": `${users()[m.user] || m.user} at ${time(m.ts)}`,
  }, avatar(m.user), body);
  if (S.trace && S.trace.ts === m.ts && S.tab === "trace") article.classList.add("selected");
  return article;
}

function statusView(text) {
  return el("p", { class: "status" }, el("span", { class: "spinner", "aria-hidden": "true" }),
    el("strong", { text: botName() }), " ", text);
}

function isTopLevel(m) {
  return !m.thread_ts || m.thread_ts === m.ts;
}

function renderList(container, items) {
  const nearBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 80;
  container.replaceChildren(...items);
  if (nearBottom) container.scrollTop = container.scrollHeight;
}

function renderMessages() {
  if (!S.data) return;
  const top = S.data.messages.filter(isTopLevel).map((m) => messageView(m));
  const notes = S.data.ephemerals.filter((e) => !e.thread_ts).map((e) => messageView(e, { ephemeral: true }));
  const items = [...top, ...notes];
  if (!items.length) {
    items.push(el("p", { class: "empty" }, isDM(S.channel)
      ? "Ask a question about the graph — or pick a suggestion above."
      : "No messages yet. Mention @" + botName() + " with a question — or pick a suggestion above."));
  }
  renderList($("messages"), items);
}

function renderThread() {
  if (!S.thread || !S.data) return;
  const all = S.data.messages.filter((m) => m.ts === S.thread || m.thread_ts === S.thread);
  const notes = S.data.ephemerals.filter((e) => e.thread_ts === S.thread).map((e) => messageView(e, { inThread: true, ephemeral: true }));
  const items = all.map((m, i) => {
    const view = messageView(m, { inThread: true });
    if (i === 0) view.classList.add("parent");
    return view;
  });
  if (all.length > 1) items.splice(1, 0, el("p", { class: "reply-count", text: `${all.length - 1} ${all.length === 2 ? "reply" : "replies"}` }));
  renderList($("thread-messages"), [...items, ...notes]);
  const status = S.data.statuses[S.thread];
  const line = $("thread-status");
  line.replaceChildren(...(status ? [statusView(status)] : []));
}

let refreshing = null;
let again = false;
function refresh() {
  if (refreshing) { again = true; return refreshing; }
  const channel = S.channel;
  refreshing = api(`/api/messages?channel=${encodeURIComponent(channel)}&user=${encodeURIComponent(S.me)}`)
    .then((data) => {
      if (channel !== S.channel) return;
      const key = focusKey();
      S.data = data;
      renderMessages();
      renderThread();
      restoreFocus(key);
    })
    .catch((err) => toast("Could not load messages: " + err.message))
    .finally(() => {
      refreshing = null;
      if (again) { again = false; refresh(); }
    });
  return refreshing;
}

// ---- actions ----------------------------------------------------------------------------

async function post(text, threadTs) {
  const result = await api("/api/messages", { user: S.me, channel: S.channel, text, thread_ts: threadTs || null });
  await refresh();
  return result;
}

async function ask(question) {
  const text = isDM(S.channel) ? question : "@" + botName() + " " + question;
  try {
    const { ts } = await post(text);
    openThread(ts);
  } catch (err) {
    toast("Could not send: " + err.message);
  }
}

async function react(m, name, add) {
  try {
    await api("/api/reactions", { user: S.me, channel: S.channel, ts: m.ts, name, add });
    await refresh();
    // The app teaches after it acknowledged the event: look again once it has.
    for (const delay of [400, 1200, 3000]) {
      setTimeout(() => {
        if (S.tab === "examples" && !$("pane").hidden) loadExamples();
        if (S.tab === "trace" && S.trace && S.trace.ts === m.ts) loadTrace();
      }, delay);
    }
  } catch (err) {
    toast("Could not react: " + err.message);
  }
}

function composer(form, textarea, send) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = textarea.value.trim();
    if (!text) return;
    textarea.value = "";
    try {
      await send(text);
    } catch (err) {
      textarea.value = text;
      toast("Could not send: " + err.message);
    }
  });
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

// ---- side panel -------------------------------------------------------------------------

function selectTab(name) {
  S.tab = name;
  $("pane").hidden = false;
  for (const tab of ["thread", "trace", "examples", "home"]) {
    $("tab-" + tab).setAttribute("aria-selected", tab === name ? "true" : "false");
    $("tab-" + tab).tabIndex = tab === name ? 0 : -1;
    $("pane-" + tab).hidden = tab !== name;
  }
  renderMessages();
}

// The App Home tab as Slack shows it: opening it sends the app `app_home_opened`, and the
// view the app publishes (views.publish) is drawn here.
async function loadHome() {
  $("home").replaceChildren(el("p", { class: "empty", text: "Opening the Home tab…" }));
  try {
    const data = await api("/api/home", { user: S.me });
    $("home").replaceChildren(el("h2", { text: "App Home" }),
      blocks(data.view.blocks, users(), (element) => toast(`“${element.text ? element.text.text : "Button"}” is not wired in the playground.`)));
  } catch (err) {
    $("home").replaceChildren(el("p", { class: "empty", text: err.message }));
  }
}

function openThread(ts) {
  S.thread = ts;
  selectTab("thread");
  renderThread();
  $("thread-text").focus();
}

function openTrace(channel, ts) {
  S.trace = { channel, ts };
  selectTab("trace");
  loadTrace();
}

async function loadTrace() {
  if (!S.trace) {
    $("trace").replaceChildren(el("p", { class: "empty", text: "Click “Behind this answer” under one of the bot's answers." }));
    return;
  }
  try {
    const data = await api(`/api/trace?channel=${encodeURIComponent(S.trace.channel)}&ts=${encodeURIComponent(S.trace.ts)}`);
    $("trace").replaceChildren(traceView(data));
  } catch (err) {
    $("trace").replaceChildren(el("p", { class: "empty", text: err.message }));
  }
}

function dl(pairs) {
  const list = el("dl", { class: "facts" });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === "") continue;
    list.append(el("dt", { text: term }), el("dd", {}, value));
  }
  return list;
}

function codeBlock(text) {
  return el("pre", { class: "code", tabindex: "0" }, el("code", { text }));
}

function rowsTable(columns, rows) {
  const table = el("table", { class: "rows" });
  table.append(el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })))));
  table.append(el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((v) =>
    el("td", { text: v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v) }))))));
  return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Rows" }, table);
}

function exampleLine(e) {
  return el("li", {}, exampleSummary(e));
}

function exampleSummary(e) {
  return el("div", { class: "example-summary" }, el("span", { class: "example-id", text: "#" + e.id }), " ", el("span", { class: "example-question", text: e.question }), " ",
    el("span", { class: "badge " + e.source, text: e.source.replace("_", " ") }),
    el("span", { class: "votes", text: ` 👍 ${e.up_votes} · 👎 ${e.down_votes}` }),
    e.status !== "active" ? el("span", { class: "badge retired", text: e.status }) : null);
}

function traceView(data) {
  const turn = data.turn;
  const run = data.run;
  const out = el("div", { class: "trace" });
  out.append(el("h2", { text: "Behind this answer" }));
  out.append(dl([
    ["Question", turn.question],
    ["Standalone question", turn.standalone_question !== turn.question ? turn.standalone_question : "(the same — no rewrite needed)"],
    ["Outcome", turn.outcome + (run && run.error_kind ? ` (${run.error_kind})` : "")],
    ["History given", run ? `${run.history_turns} earlier turn${run.history_turns === 1 ? "" : "s"} of this thread` : null],
  ]));
  if (!run) {
    out.append(el("p", { class: "note", text: "The detailed run is kept only while this playground runs; here is what memory recorded." }));
    if (turn.cypher) out.append(el("h3", { text: "Cypher" }), codeBlock(turn.cypher));
    return out;
  }
  if (run.reused_example_id !== null) {
    out.append(el("p", { class: "callout" }, `♻️ Verified query reused: example #${run.reused_example_id} answered this exact question, so no model wrote Cypher.`));
  }
  out.append(el("h3", { text: `Attempts (${run.attempts.length})` }));
  const attempts = el("ol", { class: "attempts" });
  run.attempts.forEach((a) => {
    const ok = !a.error;
    attempts.append(el("li", { class: ok ? "ok" : "failed" },
      el("p", { class: "attempt-head" }, ok ? "✅ " : "❌ ", el("strong", { text: a.stage || (ok ? "ok" : "failed") }),
        a.rows !== null ? ` · ${a.rows} row${a.rows === 1 ? "" : "s"}` : ""),
      codeBlock(a.cypher),
      a.error ? el("p", { class: "attempt-error" }, el("strong", { text: a.stage === "evaluate" ? "Evaluator: " : "Error: " }), a.error) : null));
  });
  if (!run.attempts.length) attempts.append(el("li", { text: "No Cypher was written for this question." }));
  out.append(attempts);
  if (run.rules_fired && run.rules_fired.length) {
    out.append(el("h3", { text: `Repair rules (${run.rules_fired.length})` }));
    const fired = el("ul", { class: "rules-fired" });
    run.rules_fired.forEach((f) => fired.append(el("li", {},
      el("strong", { text: f.rule }), ` · ${f.kind} · attempt ${f.attempt}: ${f.detail}`)));
    out.append(fired);
  }
  if (run.columns.length) {
    out.append(el("h3", { text: `Rows (${run.row_count}${run.truncated ? "+" : ""}${run.row_count > run.rows.length ? `, first ${run.rows.length} shown` : ""})` }));
    out.append(rowsTable(run.columns, run.rows));
  }
  if (run.chart) {
    out.append(el("h3", { text: run.chart.kind ? `Chart (${run.chart.kind.replace("_", " ")})` : "Chart" }));
    out.append(el("p", { class: "chart-reason", text: run.chart.kind
      ? `Drawn because the rows are ${run.chart.reason}; the Vega-Lite spec:`
      : `No chart: ${run.chart.reason}.` }));
    if (run.chart.spec) {
      out.append(el("details", { class: "chart-spec" }, el("summary", { text: "Vega-Lite spec" }),
        el("pre", { text: JSON.stringify(run.chart.spec, null, 2) })));
    }
  }
  out.append(el("h3", { text: `LLM calls (${run.llm_calls})` }));
  out.append(el("p", {}, run.llm_calls
    ? `${run.llm_steps.join(" → ")} · ${run.prompt_tokens.toLocaleString()} prompt (${(run.cached_prompt_tokens || 0).toLocaleString()} cached) + ${run.completion_tokens.toLocaleString()} completion tokens`
    : "None: no model was needed."));
  out.append(el("h3", { text: `Timings (${Math.round(run.total_ms).toLocaleString()} ms in all)` }));
  const timings = el("table", { class: "timings" }, el("tbody", {},
    ...Object.entries(run.timings_ms).map(([step, ms]) =>
      el("tr", {}, el("th", { scope: "row", text: step }), el("td", { text: `${Math.round(ms).toLocaleString()} ms` })))));
  out.append(timings);
  if (run.steps.length) {
    out.append(el("h3", { text: "Progress shown" }));
    out.append(el("ol", { class: "steps" }, ...run.steps.map((s) =>
      el("li", {}, el("span", { class: "at", text: `${Math.round(s.at_ms)} ms` }), " ", s.text))));
  }
  if (data.examples_used.length) {
    out.append(el("h3", { text: "Examples it used" }), el("ul", { class: "example-list" }, ...data.examples_used.map(exampleLine)));
  }
  out.append(el("h3", { text: "Taught" }));
  out.append(data.taught_as.length
    ? el("ul", { class: "example-list taught" }, ...data.taught_as.map(exampleLine))
    : el("p", { class: "note", text: "Not an example yet: react 👍 to the answer if it is right, and I'll reuse this query for similar questions." }));
  return out;
}

async function loadExamples() {
  try {
    const data = await api("/api/examples");
    const list = data.examples;
    const counts = {};
    for (const e of list) counts[e.source] = (counts[e.source] || 0) + 1;
    const summary = Object.entries(counts).map(([k, n]) => `${n} ${k.replace("_", " ")}`).join(" · ");
    $("examples").replaceChildren(
      el("h2", { text: "Taught examples" }),
      el("p", { class: "note", text: `Verified questions and their Cypher, newest first (${summary || "none yet"}). A 👍 on an answer adds one; 👎s retire it. "schema" ones were generated from the graph's own schema: shown to the model as examples, never reused as they are.` }),
      el("ul", { class: "examples" }, ...list.map((e) => el("li", { class: "example", "data-example": String(e.id) },
        exampleSummary(e),
        el("details", {}, el("summary", { text: "Cypher" }), codeBlock(e.cypher))))));
  } catch (err) {
    $("examples").replaceChildren(el("p", { class: "empty", text: "Could not load examples: " + err.message }));
  }
}

// ---- live updates -----------------------------------------------------------------------

let pending = null;
function scheduleRefresh() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refresh(); }, 60);
}

function onEvent(event) {
  if (event.channel === S.channel) {
    scheduleRefresh();
  } else if (event.kind === "message_posted" && event.channel) {
    S.unread.add(event.channel);
    renderNav();
  }
  if (event.kind === "trace_ready") {
    if (S.tab === "trace" && S.trace && S.trace.ts === event.ts) loadTrace();
    if (S.tab === "examples" && !$("pane").hidden) loadExamples();
  }
}

function connect() {
  const status = $("connection");
  const source = new EventSource("/api/events");
  source.onopen = () => { status.textContent = "● live"; status.className = "connection live"; refresh(); };
  source.onerror = () => { status.textContent = "○ reconnecting…"; status.className = "connection down"; };
  source.onmessage = (message) => onEvent(JSON.parse(message.data));
}

// ---- start ------------------------------------------------------------------------------

async function init() {
  S.boot = await api("/api/state");
  S.me = S.boot.people[0].id;
  S.channel = S.boot.channels.length ? S.boot.channels[0].id : me().dm;
  renderBoot();
  renderNav();
  $("user-select").addEventListener("change", (event) => {
    const wasDM = isDM(S.channel);
    S.me = event.target.value;
    toast("You are now " + me().name + ".");
    if (wasDM) selectChannel(me().dm); else { renderNav(); refresh(); }
  });
  composer($("composer"), $("composer-text"), async (text) => {
    const { ts } = await post(text);
    const mentions = text.toLowerCase().includes("@" + botName().toLowerCase());
    if (isDM(S.channel) || mentions) openThread(ts);
  });
  composer($("thread-composer"), $("thread-text"), (text) => post(text, S.thread));
  $("tab-thread").addEventListener("click", () => { selectTab("thread"); renderThread(); });
  $("tab-trace").addEventListener("click", () => { selectTab("trace"); loadTrace(); });
  $("tab-examples").addEventListener("click", () => { selectTab("examples"); loadExamples(); });
  $("tab-home").addEventListener("click", () => { selectTab("home"); loadHome(); });
  $("open-home").addEventListener("click", () => { selectTab("home"); loadHome(); });
  $("open-examples").addEventListener("click", () => { selectTab("examples"); loadExamples(); });
  $("close-pane").addEventListener("click", () => { $("pane").hidden = true; renderMessages(); });
  document.querySelector(".tabs").addEventListener("keydown", (event) => {
    const order = ["thread", "trace", "examples", "home"];
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const next = order[(order.indexOf(S.tab) + step + order.length) % order.length];
    $("tab-" + next).click();
    $("tab-" + next).focus();
  });
  connect();
  await refresh();
}

document.addEventListener("DOMContentLoaded", () => {
  init().catch((err) => toast("The playground did not start: " + err.message));
});
