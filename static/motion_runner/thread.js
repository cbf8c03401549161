// The Motion thread: opens at the newest page of messages (or around a `#m-<id>` message), loads
// older pages as the reader scrolls up, and polls the messages API with a cursor for what is new.
// The page keeps at most MAX_ROWS rows: rows far from where the reader is are let go, and read
// again from the API if the reader scrolls back to them.
// Every poll looks back a little (overlap) and skips ids already shown, so a message whose
// write committed a moment late is still shown, and nothing is ever shown twice.
// Prose arrives as `html`, rendered and sanitized by the server (motion_runner/markup.py);
// everything else is put on the page with textContent, so nothing an agent writes runs here.
(function () {
  "use strict";
  const root = document.getElementById("thread");
  if (!root) return;
  let list = document.getElementById("messages"); // swapped for a scratch list while older rows render
  const activity = document.getElementById("activity");
  const connection = document.getElementById("connection");
  const url = root.dataset.messagesUrl;
  const seen = new Set();
  const toolCalls = new Map();
  const wakeLines = new Set(); // turns whose wake line is on the page
  const endedTurns = new Set(); // turns whose turn_end arrived: their activity is over
  const requestCards = new Map(); // request id -> card element
  const GROUP_GAP_MS = 5 * 60 * 1000; // a person's posts closer than this share one header
  let cursor = null;
  let catchingUp = false; // the last page was full: ask again at once, with no overlap
  let delay = 1000;
  let lastActivity = [];
  let typing = [];
  let holds = []; // agents whose next turn is held, and why
  let liveToken = null; // the last answer's `live`: the long poll answers as soon as it differs

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // --- times: relative on the page, absolute on hover ------------------------------------
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  function ago(iso) {
    const seconds = Math.round((new Date(iso) - Date.now()) / 1000);
    if (Math.abs(seconds) < 45) return "just now";
    if (Math.abs(seconds) < 3600) return relative.format(Math.round(seconds / 60), "minute");
    if (Math.abs(seconds) < 86400) return relative.format(Math.round(seconds / 3600), "hour");
    if (Math.abs(seconds) < 7 * 86400) return relative.format(Math.round(seconds / 86400), "day");
    return new Date(iso).toLocaleDateString();
  }
  function timeEl(iso) {
    const t = el("time", "when", ago(iso));
    t.dateTime = iso;
    t.title = new Date(iso).toLocaleString();
    return t;
  }
  setInterval(() => {
    for (const t of document.querySelectorAll("time.when")) t.textContent = ago(t.dateTime);
  }, 30000);

  function dollars(value) {
    const amount = Number(value);
    if (!isFinite(amount)) return "";
    return "$" + (amount < 0.01 && amount > 0 ? amount.toFixed(4) : amount.toFixed(2));
  }

  // --- dots: considerations that ended silent ----------------------------------------------
  function lastDots() {
    let last = list.lastElementChild;
    if (last && last.classList.contains("dot-reason")) last = last.previousElementSibling;
    return last && last.classList.contains("dots") ? last : null;
  }

  // `<silent>why</silent>` from the agent, or `<silent by="screen">why</silent>` from the screen.
  // A bare `<silent>` or `<silent/>` is a silence too, never shown as text.
  const SILENT = /^\s*<silent(\s+by="([^"]*)")?\s*\/?>(?:([\s\S]*?)<\/silent>)?\s*$/i;
  const dotOfTurn = new Map();
  const turnsWithCard = new Set(); // turns that said something: their end goes on their card // turn -> its dot: one silence is one dot, with no card beside it

  function silentOf(m) {
    if (m.kind !== "dot" && !(m.kind === "text" && m.turn)) return null;
    const match = SILENT.exec(m.text || "");
    if (match) return { by: match[2] || "", reason: (match[3] || "").trim() || "silent" };
    return m.kind === "dot" ? { by: "", reason: m.text || "silent" } : null;
  }

  function renderDot(m, silent) {
    if (m.turn && dotOfTurn.has(m.turn)) return; // the agent's <silent> and the loop's dot: one silence
    const row = lastDots() || list.appendChild(el("li", "dots"));
    const screened = silent.by === "screen";
    const dot = el("button", "dot" + (screened ? " screened" : ""));
    dot.type = "button";
    dot.dataset.id = m.id;
    const who = screened ? "screened for " + m.sender : m.sender + " stayed silent";
    dot.title = who + " · " + new Date(m.created_at).toLocaleString();
    dot.setAttribute("aria-label", dot.title);
    if (m.turn) dotOfTurn.set(m.turn, dot);
    dot.addEventListener("click", () => {
      let note = row.nextElementSibling;
      if (!note || !note.classList.contains("dot-reason")) {
        note = el("li", "dot-reason");
        row.after(note);
      }
      const same = note.dataset.id === m.id && !note.hidden;
      note.hidden = same;
      note.dataset.id = m.id;
      note.textContent = (screened ? "screened · " : m.sender + " · ") + ago(m.created_at) + " · " + silent.reason;
      row.querySelectorAll(".dot.open").forEach((d) => d.classList.remove("open"));
      if (!same) dot.classList.add("open");
    });
    row.append(dot);
  }

  // --- wake lines: one for every turn, whatever started it ----------------------------------
  // What a harness says when asked to resume a session it lost (motion_runner/runner/turns.py).
  const SESSION_GONE = /No conversation found with session ID|no rollout found for thread id|No session found matching|its session .* is gone/i;
  const AGAIN = /\(again after session .* was gone\)/;

  function isMaintenance(m) {
    return m.turn_reason === "compact" || m.turn_reason === "command" || AGAIN.test(m.turn_reason_detail || "");
  }

  function wakeLineFor(m) {
    const name = "@" + m.sender;
    const detail = (m.turn_reason_detail || "").replace(AGAIN, "").trim();
    if (m.turn_reason === "compact") return ["🧹", name + " compacts its session (maintenance" + (detail ? ": " + detail : "") + ")"];
    if (AGAIN.test(m.turn_reason_detail || "")) return ["↻", name + " wakes again in a new session (maintenance: the old one was gone)" + (detail ? " · " + detail : "")];
    const mode = m.turn_mode === "full" ? "full tools" : "look-only";
    if (m.turn_reason === "manual") return ["⏰", name + " woken by hand (manage.py wake) · " + mode + (detail ? " · " + detail : "")];
    if (m.turn_reason === "grant") return ["🔨", name + " woke: " + (detail || "full tools granted") + " · " + mode];
    return ["⏰", name + " woke: " + (detail || m.turn_reason || "a wake") + " · " + mode];
  }

  // One short line (who woke, why, with what tools); the rest (session, effort, cost, cap) on
  // hover, or on a click or Enter, which opens the whole line.
  function wakeLine(icon, text, iso, maintenance) {
    const li = el("li", "wake" + (maintenance ? " maintenance" : ""));
    const parts = text.split(" · ");
    const what = el("span", "what", parts.slice(0, 2).join(" · "));
    li.append(el("span", "icon", icon), what);
    if (parts.length > 2) li.append(el("span", "detail", " · " + parts.slice(2).join(" · ")));
    if (iso) li.append(timeEl(iso));
    li.title = text;
    li.tabIndex = 0;
    li.setAttribute("aria-expanded", "false");
    const toggle = () => li.setAttribute("aria-expanded", String(li.classList.toggle("open")));
    li.addEventListener("click", toggle);
    li.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(); });
    return li;
  }

  // --- groups: one header for consecutive posts of one turn (or one person) ------------------
  function groupKey(m) {
    return m.turn ? "turn:" + m.turn : "person:" + m.sender;
  }

  // A turn's card: the nearest card above, when it is this turn's (another turn's wake line, a
  // dot or a day between do not split it: issue 43.5). Its end ("done", the cost) goes on its
  // card wherever that is, as the card's footer.
  function cardOfTurn(turn, anywhere) {
    const key = "turn:" + turn;
    if (anywhere) {
      const found = [...list.querySelectorAll(":scope > li.group")].filter((row) => row.dataset.key === key && !row.dataset.growing);
      if (found.length) return found[found.length - 1];
    }
    for (let row = list.lastElementChild; row; row = row.previousElementSibling) {
      if (row.dataset.growing) continue;
      if (row.classList.contains("group")) return row.dataset.key === key ? row : null;
    }
    return null;
  }

  function currentGroup(m) {
    if (m.turn) return cardOfTurn(m.turn, m.kind === "turn_end");
    const last = list.lastElementChild;
    if (!last || !last.classList.contains("group") || last.dataset.key !== groupKey(m)) return null;
    if (!m.turn && new Date(m.created_at) - new Date(last.dataset.lastAt) > GROUP_GAP_MS) return null;
    return last;
  }

  function header(m) {
    const line = el("div", "meta");
    line.append(el("span", "sender", m.turn ? "@" + turnAgent(m) : m.sender));
    if (m.turn_mode) line.append(el("span", "mode " + m.turn_mode, m.turn_mode === "full" ? "full tools" : "look-only"));
    line.append(permalink(m));
    return line;
  }

  // A line the runner says about a turn ("@magent's turn killed: …") is the agent's, in its group.
  function turnAgent(m) {
    const named = m.source === "system" && /^@([\w.-]+)'s turn\b/.exec(m.text || "");
    return named ? named[1] : m.sender;
  }

  function groupFor(m) {
    const found = currentGroup(m);
    if (found) {
      found.dataset.lastAt = m.created_at;
      return found.querySelector(".items");
    }
    if (m.turn && !wakeLines.has(m.turn)) {
      const [icon, text] = wakeLineFor(m);
      const line = wakeLine(icon, text, m.created_at, isMaintenance(m));
      line.dataset.turn = m.turn; // steer.js puts the turn's ■ here until its group is on the page
      list.append(line);
      wakeLines.add(m.turn);
    }
    if (m.turn) turnsWithCard.add(m.turn);
    const li = el("li", "group" + (m.turn ? " agent" : " person") + (isMaintenance(m) ? " maintenance" : ""));
    li.dataset.key = groupKey(m);
    li.dataset.lastAt = m.created_at;
    li.append(header(m), el("div", "items"));
    list.append(li);
    return li.querySelector(".items");
  }

  // Claude Code's own words when it has no API key (tests/recordings/claude-code/not_logged_in):
  // said as what to do about it, with a link to the agent's page for those who can edit it.
  const NO_KEY = /^\s*Not logged in · Please run \/login\s*$/;
  const agentPages = JSON.parse((document.getElementById("agent-pages") || {}).textContent || "{}");
  const turnsWithoutKey = new Set();
  const errorsOfTurn = new Map(); // turn -> the error text it showed

  function noKeyNote(m) {
    turnsWithoutKey.add(m.turn);
    const note = el("div", "body error no-key");
    note.dataset.id = m.id;
    note.title = m.text;
    note.append("@" + m.sender + " has no API key, so it cannot answer. ");
    const page = agentPages[m.sender];
    if (page) {
      const link = el("a", "", "Give it one: " + m.sender + " → env (ANTHROPIC_API_KEY)");
      link.href = page;
      note.append(link);
    } else {
      note.append("Ask an admin to give it one (Agent → env).");
    }
    return note;
  }

  function prose(m, cls) {
    const body = el("div", "body " + (cls || ""));
    body.dataset.id = m.id;
    if (m.html !== null && m.html !== undefined) body.innerHTML = m.html; // sanitized by the server
    else { body.textContent = m.text; body.classList.add("plain"); } // its line breaks kept
    return body;
  }

  function render(m) {
    const silent = silentOf(m);
    if (silent) return renderDot(m, silent);
    if (m.kind === "wake") {
      if (m.turn) wakeLines.add(m.turn);
      const li = wakeLine("⏰", m.text, m.created_at, false);
      li.dataset.id = m.id;
      if (m.turn) li.dataset.turn = m.turn;
      return list.append(li);
    }
    if (m.kind === "watch") {
      const li = el("li", "watch");
      li.dataset.id = m.id;
      li.append(el("span", "icon", "👁"), prose(m, "inline"), timeEl(m.created_at));
      return list.append(li);
    }
    if (!m.turn && m.source === "system") {
      const li = el("li", "system" + (m.kind === "error" ? " error" : ""));
      li.dataset.id = m.id;
      li.append(prose(m), timeEl(m.created_at));
      return list.append(li);
    }
    if (m.kind === "turn_end" && !m.is_error && dotOfTurn.has(m.turn) && !turnsWithCard.has(m.turn)) {
      return silentTurnEnd(m); // a silence is a dot alone
    }
    if (m.kind === "tool_result") {
      const call = toolCalls.get(m.tool_id);
      const pre = el("pre", "", m.text || "(empty)");
      pre.dataset.id = m.id;
      if (call) {
        call.append(pre);
        if (m.is_error) call.classList.add(m.turn_mode === "look" ? "refused" : "error");
        return;
      }
      const orphan = el("details", "tool" + (m.is_error ? " error" : ""));
      orphan.append(el("summary", "", "result"), pre);
      return groupFor(m).append(orphan);
    }
    const items = groupFor(m);
    if (m.kind === "tool_call") {
      const details = el("details", "tool");
      details.dataset.id = m.id;
      details.append(el("summary", "", "⚙ " + (m.text || m.tool_name)));
      toolCalls.set(m.tool_id, details);
      return items.append(details);
    }
    if (m.kind === "request") return items.append(requestCard(m));
    if (m.kind === "turn_end") return items.append(turnEnd(m));
    if (m.kind === "task") {
      const line = el("div", "task", (/started/.test(m.text || "") ? "⏳ " : "⏹ ") + m.text);
      line.dataset.id = m.id;
      return items.append(line);
    }
    if (m.kind === "thinking") {
      const details = el("details", "tool thinking");
      details.dataset.id = m.id;
      details.append(el("summary", "", "💭 thinking"), prose(m));
      return items.append(details);
    }
    if (m.kind === "compact") {
      const details = el("details", "tool compact");
      details.append(el("summary", "", "🧹 the session was compacted: its summary"), prose(m));
      return items.append(details);
    }
    if ((m.kind === "text" || m.kind === "error") && NO_KEY.test(m.text || "")) return items.append(noKeyNote(m));
    if (m.kind === "error" && m.stop_reason === "stopped" && m.turn) return items.append(stopEnd(m));
    if (m.kind === "error") {
      if (m.turn) errorsOfTurn.set(m.turn, (m.text || "").trim());
      const gone = SESSION_GONE.test(m.text || "");
      return items.append(prose(m, gone ? "maintenance-note" : "error"));
    }
    items.append(said(m));
  }

  // A post taken back (motion_runner/retract.py): the line where it was, as memory-lane shows it;
  // the reader's own post has its control (delete; edit within a day), answered by the API.
  const ZERO = "00000000-0000-0000-0000-000000000000";
  function said(m) {
    const back = m.taken_back;
    if (back && back.kind === "deleted") {
      const line = el("div", "body taken-back", "taken back: deleted by " + back.by);
      line.dataset.id = m.id;
      return line;
    }
    const body = prose(m);
    if (back && back.kind === "edited") body.append(el("span", "edited", " (edited)"));
    const me = root.dataset.me;
    if (me && m.sender === me && !m.turn && m.kind === "text" && (m.source === "web" || m.source === "api")) {
      const control = el("button", "take-back", "take back");
      control.type = "button";
      control.title = "Delete this post: its words leave the thread and every wake that read it";
      control.addEventListener("click", () => takeBack(m, body, null));
      const edit = el("button", "take-back", "edit");
      edit.type = "button";
      edit.addEventListener("click", () => {
        const text = window.prompt("Your post, as it should now read:", m.text || "");
        if (text !== null && text.trim()) takeBack(m, body, text);
      });
      body.append(control, edit);
    }
    return body;
  }

  async function takeBack(m, body, text) {
    if (text === null && !window.confirm("Delete this post everywhere it was read?")) return;
    const response = await fetch(root.dataset.messageUrl.replace(ZERO, m.id), {
      method: text === null ? "DELETE" : "PATCH",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrf },
      body: text === null ? undefined : JSON.stringify({ text }),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      window.alert((answer.error && answer.error.message) || answer.detail || "Not taken back.");
      return;
    }
    body.replaceWith(said({ ...m, text: answer.text, html: null, taken_back: { kind: answer.kind, by: answer.by, at: answer.at } }));
  }

  // A silent turn's end: its cost goes on its dot's label, not on a card of its own.
  function silentTurnEnd(m) {
    endedTurns.add(m.turn);
    showActivity();
    const dot = dotOfTurn.get(m.turn);
    if (m.cost_usd !== null && m.cost_usd !== undefined) {
      dot.title += " · " + dollars(m.cost_usd);
      dot.setAttribute("aria-label", dot.title);
    }
  }

  // A turn a person (or a scram) stopped: a stop, with who, when and what it cost; not a crash.
  function stopEnd(m) {
    endedTurns.add(m.turn);
    showActivity();
    const footer = el("div", "turn-end stopped");
    footer.dataset.id = m.id;
    footer.title = m.text;
    footer.append(el("span", "stop-mark", "■"));
    const who = (m.text || "").replace(/^@[\w.-]+'s turn killed: /, "");
    const parts = ["stopped: " + who];
    if (m.cost_usd !== null && m.cost_usd !== undefined) parts.push(dollars(m.cost_usd));
    footer.append(parts.join(" · "), " · ", timeEl(m.created_at));
    return footer;
  }

  function turnEnd(m) {
    endedTurns.add(m.turn);
    showActivity();
    const footer = el("div", "turn-end" + (m.is_error ? " error" : ""));
    footer.dataset.id = m.id;
    if (m.is_error && SESSION_GONE.test(m.text || "")) {
      footer.className = "turn-end maintenance-note";
      footer.textContent = "↻ its session was gone: waking again in a new one";
      return footer;
    }
    // An error the turn already said above is not said again in its footer.
    const said = errorsOfTurn.get(m.turn);
    const repeated = said && m.text && (said.includes(m.text.trim()) || m.text.includes(said));
    const why = turnsWithoutKey.has(m.turn) ? "no API key" : repeated ? "see above" : m.text || m.stop_reason || "error";
    const parts = [m.is_error ? "✕ ended: " + why : "✓ done"];
    if (m.cost_usd !== null && m.cost_usd !== undefined) parts.push(dollars(m.cost_usd));
    const tokens = (m.input_tokens || 0) + (m.output_tokens || 0) + (m.cache_read_input_tokens || 0) + (m.cache_creation_input_tokens || 0);
    if (tokens) parts.push(tokens.toLocaleString() + " tokens");
    footer.textContent = parts.join(" · ");
    return footer;
  }

  // --- request cards: an agent's <tools/>, <merge/> or <deploy/>; a person answers in place --
  const ASKS = { tools: ["🔨", "asks for full tools"], merge: ["⤵", "asks for a merge"], deploy: ["🚀", "asks for a deploy"] };
  const ANSWERED = { granted: "granted", declined: "declined", done: "marked done" };
  const openRequests = new Map();

  function requestCard(m) {
    const [icon, asks] = ASKS[m.tool_name] || ["❓", "asks"];
    const card = el("div", "request-card " + (m.tool_name || ""));
    card.dataset.id = m.id;
    const title = el("div", "ask");
    title.append(el("span", "icon", icon), el("strong", "", "@" + m.sender + " " + asks));
    card.append(title, el("div", "to", m.text));
    card.append(el("div", "request-actions"), el("div", "request-error"));
    if (m.request) {
      card.dataset.requestId = String(m.request.id);
      card.dataset.kind = m.tool_name;
      requestCards.set(m.request.id, card);
      fillCard(card, m.request);
    } else {
      card.querySelector(".request-actions").append(el("span", "muted", "not a request anyone can answer"));
    }
    return card;
  }

  function fillCard(card, request) {
    const actions = card.querySelector(".request-actions");
    actions.textContent = "";
    card.classList.toggle("answered", request.status !== "open");
    if (request.status !== "open") {
      actions.append(el("span", "answer-note", "✓ " + (ANSWERED[request.status] || request.status) + (request.decided_by ? " by " + request.decided_by : "")));
      if (request.decided_at) actions.append(timeEl(request.decided_at));
      return;
    }
    if (!root.dataset.signedIn) return actions.append(el("span", "muted", "waiting for a person to answer"));
    const isTools = card.dataset.kind === "tools";
    if (isTools && !root.dataset.canGrant) {
      return actions.append(el("span", "muted", "waiting for someone who can grant full tools (signed in with an SSH key)"));
    }
    const choices = isTools ? [["grant", "Grant full tools"], ["decline", "Decline"]]
      : [["done", card.dataset.kind === "merge" ? "Mark merged" : "Mark deployed"], ["decline", "Decline"]];
    for (const [action, label] of choices) {
      const button = el("button", "answer " + action, label);
      button.type = "button";
      button.addEventListener("click", () => answerRequest(card, request.id, action));
      actions.append(button);
    }
  }

  // 🔨 by the title while a tools request waits for a person.
  function showHammer() {
    const waiting = [...openRequests.values()].some((r) => r.kind === "tools");
    document.getElementById("requests").textContent = waiting ? "🔨" : "";
  }

  function showRequests(open, answered) {
    openRequests.clear();
    for (const r of open) openRequests.set(r.id, r);
    showHammer();
    for (const r of answered) {
      const card = requestCards.get(r.id);
      if (card && !card.classList.contains("answered")) fillCard(card, r);
    }
  }

  async function answerRequest(card, id, action) {
    const problem = card.querySelector(".request-error");
    problem.textContent = "";
    card.querySelectorAll(".request-actions button").forEach((b) => (b.disabled = true));
    try {
      const response = await fetch(`/api/requests/${id}/${action}/`, {
        method: "POST",
        headers: { "X-CSRFToken": root.dataset.csrf, Accept: "application/json" },
      });
      if (response.ok) {
        openRequests.delete(id);
        showHammer();
        return fillCard(card, await response.json());
      }
      problem.textContent = await humanError(response, "Not answered");
    } catch (err) {
      problem.textContent = "Not answered: the server could not be reached. Try again.";
    }
    card.querySelectorAll(".request-actions button").forEach((b) => (b.disabled = false));
  }

  // --- errors people can read ----------------------------------------------------------------
  async function humanError(response, what) {
    let detail = "";
    try {
      const body = await response.clone().json();
      const error = body.error || {};
      detail = error.detail || "";
      if (error.fields) detail = Object.values(error.fields).flat().join(" ") || detail;
    } catch (err) { /* not JSON: an HTML error page is never shown */ }
    // The server's detail may end its own sentence: one full stop, never ".." (issue 43).
    const said = (text) => `${what}: ${text}` + (/[.!?]$/.test(text) ? "" : ".");
    if (response.status === 401 || response.status === 403) return said(detail || "you are not signed in, or may not do this");
    if (response.status >= 500) return `${what}: the server had a problem (${response.status}). Try again in a moment.`;
    return said(detail || "the server said " + response.status);
  }

  // --- live state: what running turns are doing, who is typing --------------------------------
  function showActivity() {
    // The runner writes "name: what" (motion_runner/ingest.py activity_for).
    const parts = lastActivity
      .filter((a) => a.activity && !endedTurns.has(a.turn))
      .map((a) => (a.activity.startsWith(a.agent + ":") ? "@" : "") + a.activity);
    for (const hold of holds) parts.push("@" + hold.agent + " held: " + hold.reason);
    if (typing.length) parts.push(typing.join(", ") + (typing.length === 1 ? " is" : " are") + " typing…");
    activity.textContent = parts.join(" · ");
  }

  // --- words as they are typed: a running turn's text so far (never stored), shown where its
  // message will be, in its group when that is the last, and dropped when the message comes.
  function dropGrowing() {
    for (const node of root.querySelectorAll("#messages [data-growing]")) node.remove();
  }

  function growingShown() {
    return Boolean(root.querySelector("#messages [data-growing]"));
  }

  function showGrowing() {
    dropGrowing();
    for (const turn of lastActivity) {
      if (!turn.typed || endedTurns.has(turn.turn)) continue;
      const body = el("div", "body growing");
      if (turn.typed_html) body.innerHTML = turn.typed_html; // its Markdown, sanitized by the server
      else { body.textContent = turn.typed; body.style.whiteSpace = "pre-wrap"; }
      (body.lastElementChild || body).append(el("span", "caret", "▍"));
      body.dataset.growing = turn.turn;
      body.setAttribute("aria-hidden", "true"); // its message is announced once it is whole
      const card = cardOfTurn(turn.turn, false);
      if (card) {
        card.querySelector(".items").append(body);
        continue;
      }
      const li = el("li", "group agent growing");
      li.dataset.growing = turn.turn;
      li.setAttribute("aria-hidden", "true");
      const meta = el("div", "meta");
      meta.append(el("span", "sender", "@" + turn.agent));
      const items = el("div", "items");
      items.append(body);
      li.append(meta, items);
      list.append(li);
    }
  }

  function showConnection(ok, retryIn) {
    if (ok) {
      connection.hidden = true;
      document.body.classList.remove("offline");
      return;
    }
    connection.hidden = false;
    document.body.classList.add("offline");
    connection.textContent = "";
    connection.append(el("span", "", `Offline: reconnecting${retryIn ? " in " + Math.round(retryIn / 1000) + " s" : ""}…`));
    const now = el("button", "link", "Retry now");
    now.type = "button";
    now.addEventListener("click", pollNow);
    connection.append(" ", now);
  }

  function showClosed(status) {
    connection.hidden = false;
    connection.textContent = status === 404
      ? "This Motion is gone (404)."
      : "You are signed out, or may not read this Motion. Sign in again and reload; what you typed is kept until you leave the page.";
  }

  let timer = null;
  let inflight = null;
  // One poll loop only: "Retry now" cancels the waiting (or hanging) poll and starts at once.
  function pollNow() {
    clearTimeout(timer);
    if (inflight) inflight.abort();
    poll();
  }

  async function poll() {
    if (!atLiveEnd && !isNearBottom()) { // reading far back: newer rows wait until wanted
      pausedForReader = true;
      inflight = null;
      return;
    }
    const controller = new AbortController();
    inflight = controller;
    document.body.dataset.live = "1"; // following the thread: a long poll waits for what is new
    const params = new URLSearchParams({ limit: "500" });
    // A long poll: the server answers as soon as there is something new, or after the wait (20 s).
    // It looks back 2 s for rows committed late, except while catching up after a full page: more
    // than a page written within 2 s would otherwise be read again and again, never past it.
    const overlap = Boolean(cursor) && !catchingUp;
    if (cursor) { params.set("after", cursor); if (overlap) params.set("overlap", "2"); params.set("wait", pollWait()); }
    // Whom this page shows typing: the poll answers as soon as that is not so, a ping that came
    // between two polls included (it rang before this one waited).
    if (cursor && typing.length) typing.forEach((name) => params.append("typing", name));
    else if (cursor) params.set("typing", "");
    // What this page shows of the running turns, their words, a scram: the poll answers as soon
    // as that is not so (a turn starts before it says anything, it types, it ends).
    if (cursor && liveToken) params.set("live", liveToken);
    try {
      const response = await fetch(url + "?" + params, { headers: { Accept: "application/json" }, signal: controller.signal });
      if (response.status === 401 || response.status === 403 || response.status === 404) {
        return showClosed(response.status); // not a network fault: polling again will not help
      }
      if (response.status === 429) { // this reader holds its share of long polls: ask again then
        inflight = null;
        timer = setTimeout(poll, (Number(response.headers.get("Retry-After")) || 5) * 1000);
        return;
      }
      if (!response.ok) throw new Error(String(response.status));
      const page = await response.json();
      if (controller.signal.aborted) return; // the rows around the reader changed meanwhile
      const nearBottom = isNearBottom();
      let newest = null;
      dropGrowing(); // a final message takes the place of the text it replaces
      for (const m of page.results) {
        if (seen.has(m.id)) continue;
        show(m);
        newest = m.cursor;
      }
      // Without overlap the page is strictly after the cursor; with it, only its new rows move
      // the cursor (a page of rows seen before would take it back).
      if (!overlap && page.next) cursor = page.next;
      else if (newest) cursor = newest;
      catchingUp = Boolean(page.more);
      atLiveEnd = !page.more;
      showLive(page);
      showConnection(true);
      if (nearBottom && (page.results.length || growingShown())) {
        trimTop();
        window.scrollTo(0, document.body.scrollHeight);
      }
      delay = page.more || cursor ? 0 : 1000;
    } catch (err) {
      if (controller.signal.aborted) return; // a newer poll took over
      delay = Math.min(Math.max(delay * 2, 1000), 15000);
      showConnection(false, delay);
    }
    inflight = null;
    timer = setTimeout(poll, delay);
  }

  // --- long threads: open at the newest page, older pages on scroll-up, the DOM kept bounded ----
  const PAGE = 50; // messages a page (a screen and more; thread.html asks for the first with the same limit)
  const MAX_ROWS = 600; // top-level rows kept on the page
  let older = null; // the `before` cursor of the oldest row shown, or null at the thread's start
  let loadingOlder = false;
  let atLiveEnd = true; // false while the newest rows are not on the page (a reader far back)
  let pausedForReader = false;

  // Within 80 px of the bottom the page can actually scroll to (issue 43: measured against the
  // body's height, the page's end sat 92 px short of it and the poll paused at message 1,596).
  function isNearBottom() {
    const page = document.scrollingElement || document.documentElement;
    return page.scrollHeight - page.clientHeight - window.scrollY <= 80;
  }

  // "↓ newest" (thread_view.js): far back, the newest page is read at once in place of the rows
  // shown, rather than page after page of the rows between.
  let jumping = false;
  async function toNewest() {
    if (atLiveEnd || jumping) return window.scrollTo(0, document.body.scrollHeight);
    jumping = true;
    clearTimeout(timer);
    if (inflight) inflight.abort();
    inflight = null;
    pausedForReader = false;
    try {
      const page = await fetchPage({ latest: "1", limit: String(PAGE) });
      if (!page) return;
      list.replaceChildren();
      seen.clear();
      for (const m of page.results) show(m);
      older = page.previous;
      cursor = page.next;
      catchingUp = Boolean(page.more);
      atLiveEnd = !page.more;
      showLive(page);
      showConnection(true);
      window.scrollTo(0, document.body.scrollHeight);
    } catch (err) {
      showConnection(false);
    } finally {
      jumping = false;
    }
    poll();
  }
  document.addEventListener("motion:newest", toNewest);

  function showLive(page) {
    lastActivity = page.activity || [];
    typing = page.typing || [];
    liveToken = page.live || null;
    holds = page.holds || [];
    showActivity();
    showGrowing();
    showRequests(page.requests || [], page.answered_requests || []);
    // steer.js (■ stop, the scram banner, the menus) reads every poll from here.
    document.dispatchEvent(new CustomEvent("motion:poll", { detail: page }));
  }

  // Renders one message and marks the rows it made with its cursor: the first message's cursor
  // is where to read older rows from once the rows above are let go, the last one's where to
  // read newer rows from once the rows below are.
  function show(m) {
    seen.add(m.id);
    render(m);
    for (let row = list.lastElementChild; row && !row.dataset.cursor; row = row.previousElementSibling) {
      row.dataset.cursor = m.cursor;
    }
    if (list.lastElementChild) list.lastElementChild.dataset.lastCursor = m.cursor;
  }

  function rowIds(row) {
    const ids = [...row.querySelectorAll("[data-id]")].map((node) => node.dataset.id);
    if (row.dataset.id) ids.push(row.dataset.id);
    return ids;
  }

  // Lets go of the oldest rows while the reader is at the newest: scrolling up reads them again.
  function trimTop() {
    if (list.children.length <= MAX_ROWS) return;
    while (list.children.length > MAX_ROWS) list.firstElementChild.remove();
    const first = [...list.children].find((row) => row.dataset.cursor);
    if (first) older = first.dataset.cursor;
  }

  // Lets go of the newest rows while the reader is far back; the poll reads them again when the
  // reader scrolls down to them.
  function trimBottom() {
    if (list.children.length <= MAX_ROWS) return;
    while (list.children.length > MAX_ROWS) {
      for (const id of rowIds(list.lastElementChild)) seen.delete(id);
      list.lastElementChild.remove();
    }
    const rows = [...list.children].reverse();
    const last = rows.find((row) => row.dataset.lastCursor);
    if (last) cursor = last.dataset.lastCursor;
    atLiveEnd = false;
    clearTimeout(timer);
    if (inflight) inflight.abort();
    inflight = null;
    pausedForReader = true;
  }

  async function fetchPage(params, early) {
    const response = await (early || fetch(url + "?" + new URLSearchParams(params), { headers: { Accept: "application/json" } }));
    if (response.status === 401 || response.status === 403 || response.status === 404) {
      showClosed(response.status);
      return null;
    }
    if (!response.ok) throw new Error(String(response.status));
    return response.json();
  }

  async function loadOlder() {
    if (loadingOlder || !older) return;
    loadingOlder = true;
    try {
      const page = await fetchPage({ before: older, limit: String(PAGE) });
      if (!page) return;
      const real = list;
      const scratch = document.createElement("ol");
      list = scratch;
      try {
        for (const m of page.results) show(m);
      } finally {
        list = real;
      }
      const height = document.body.scrollHeight;
      real.prepend(...scratch.children);
      window.scrollBy(0, document.body.scrollHeight - height); // the reader's place stays put
      older = page.previous;
      trimBottom();
    } catch (err) {
      showConnection(false);
    } finally {
      loadingOlder = false;
    }
  }

  function onScroll() {
    if (window.scrollY < 600) loadOlder();
    if (pausedForReader && isNearBottom()) {
      pausedForReader = false;
      poll();
    }
  }

  // A group's time links to its first message (`#m-<id>`): the page opens around it.
  function permalink(m) {
    const link = el("a", "permalink");
    link.href = "#m-" + m.id;
    link.append(timeEl(m.created_at));
    return link;
  }

  // A `#m-<id>` followed on the page: shown if it is here, else the page opens around it.
  function followLink() {
    const target = /^#m-([0-9a-f-]{36})$/i.exec(location.hash);
    if (!target) return;
    const shown = list.querySelector(`[data-id="${target[1]}"]`);
    if (!shown) return location.reload();
    document.querySelectorAll(".linked").forEach((node) => node.classList.remove("linked"));
    shown.classList.add("linked");
    shown.scrollIntoView({ block: "center" });
  }
  window.addEventListener("hashchange", followLink);

  // The first page: the newest, or the one around the message a `#m-<id>` link names.
  async function openThread() {
    const target = /^#m-([0-9a-f-]{36})$/i.exec(location.hash);
    let page = null;
    try {
      page = target ? await fetchPage({ around: target[1], limit: String(PAGE) }).catch(() => null) : null;
      // The page's head asked for the newest page already (thread.html), while this script loaded.
      const early = window.threadFirstPage;
      window.threadFirstPage = null;
      if (!page) page = await fetchPage({ latest: "1", limit: String(PAGE) }, early);
    } catch (err) {
      showConnection(false, 2000);
      setTimeout(openThread, 2000);
      return;
    }
    if (!page) return; // closed: showClosed said why
    for (const m of page.results) show(m);
    older = page.previous;
    cursor = page.next;
    catchingUp = Boolean(page.more);
    atLiveEnd = !page.more;
    showLive(page);
    showConnection(true);
    const shown = target && list.querySelector(`[data-id="${target[1]}"]`);
    if (shown) {
      shown.classList.add("linked");
      shown.scrollIntoView({ block: "center" });
    } else {
      window.scrollTo(0, document.body.scrollHeight);
    }
    window.addEventListener("scroll", onScroll, { passive: true });
    if (document.body.scrollHeight <= window.innerHeight) loadOlder(); // too short to scroll up
    poll();
  }

  // --- the composer ----------------------------------------------------------------------------
  const composer = document.getElementById("composer");
  const postError = document.getElementById("post-error");
  const typingUrl = root.dataset.typingUrl;
  let lastPing = 0;

  // Tell the loop (and everyone reading) that a person is composing; pings expire after a few seconds.
  function pingTyping() {
    const now = Date.now();
    clearTimeout(idleTimer);
    idleTimer = setTimeout(stopTyping, TYPING_IDLE_MS);
    if (!typingUrl || now - lastPing < 2000) return;
    lastPing = now;
    fetch(typingUrl, { method: "POST", headers: { "X-CSRFToken": root.dataset.csrf } }).catch(() => {});
  }

  // --- mentions: a name that is no agent here (a typo, @magnet for @magent) wakes nobody ----------
  const agentsHere = (root.dataset.agents || "").split(" ").filter(Boolean);
  const MENTION = /(^|[^\w@])@([A-Za-z0-9_][A-Za-z0-9_.-]*)/g;

  function hintMentions(text) {
    const hint = document.getElementById("mention-hint");
    if (!hint) return;
    const unknown = [...new Set([...text.matchAll(MENTION)].map((m) => m[2].replace(/[.-]+$/, "")))]
      .filter((name) => !agentsHere.some((agent) => agent.toLowerCase() === name.toLowerCase()));
    hint.hidden = unknown.length === 0;
    if (hint.hidden) return;
    const here = agentsHere.length ? "agents here: " + agentsHere.map((a) => "@" + a).join(", ") : "no agents here";
    hint.textContent = unknown.map((n) => "@" + n).join(", ") + (unknown.length === 1 ? " is" : " are") +
      " not an agent here, so no agent wakes for " + (unknown.length === 1 ? "it" : "them") + " (" + here + ").";
  }

  // --- typing: said stopped a second after the last key, and at once on posting ------------------
  const TYPING_IDLE_MS = 1000;
  let idleTimer = null;

  function stopTyping() {
    clearTimeout(idleTimer);
    if (!typingUrl || !lastPing) return;
    lastPing = 0;
    fetch(typingUrl, { method: "DELETE", headers: { "X-CSRFToken": root.dataset.csrf } }).catch(() => {});
  }

  // While someone is shown typing, the long poll asks again each second: a ping that lapses (a
  // closed tab says no stop) is seen within a second, not at the end of a 20 s wait.
  function pollWait() {
    return typing.length ? "1" : root.dataset.pollWait || "20";
  }

  // A v4 UUID per draft: a double click or a retry posts the same message once.
  // (getRandomValues works on plain http too, unlike crypto.randomUUID.)
  function uuid4() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  if (composer) {
    const box = composer.elements.text;
    const button = composer.querySelector("button[type=submit]");
    let draftId = uuid4();
    let sending = false;

    // What is in the box outlives this tab's next load of the page: the scram's buttons (and a
    // reload) load it anew, and text a scram refused must still be there once the scram is lifted.
    const draftKey = "motion-runner:draft:" + location.pathname;
    try {
      const kept = sessionStorage.getItem(draftKey);
      if (kept && !box.value) box.value = kept;
      sessionStorage.removeItem(draftKey);
    } catch (err) { /* storage refused (private mode): the box starts empty, as before */ }
    window.addEventListener("pagehide", () => {
      try {
        if (box.value.trim()) sessionStorage.setItem(draftKey, box.value);
      } catch (err) { /* storage refused or full: nothing kept */ }
    });

    function showPostError(message) {
      postError.textContent = message + " ";
      const retry = el("button", "link", "Retry");
      retry.type = "button";
      retry.addEventListener("click", send);
      postError.append(retry);
      postError.hidden = false;
    }

    async function send() {
      const text = box.value.trim();
      if (!text || sending) return;
      sending = true;
      button.disabled = true;
      button.textContent = "Posting…";
      postError.hidden = true;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrf },
          body: JSON.stringify({ text, id: draftId }),
        });
        if (response.ok) {
          // Only what was sent is cleared: anything typed meanwhile stays.
          if (box.value.trim() === text) box.value = "";
          hintMentions(box.value);
          stopTyping();
          draftId = uuid4(); // the long poll answers with the new post by itself
        } else {
          showPostError(await humanError(response, "Not posted (your text is kept)"));
        }
      } catch (err) {
        showPostError("Not posted: the server could not be reached. Your text is kept.");
      } finally {
        sending = false;
        button.disabled = false;
        button.textContent = "Post";
      }
    }

    box.addEventListener("input", () => { pingTyping(); hintMentions(box.value); });
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        send();
      }
    });
    composer.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  }
  openThread();
})();
