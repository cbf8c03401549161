// The Motion thread: polls the messages API with a cursor and renders what is new.
// Every poll looks back a little (overlap) and skips ids already shown, so a message whose
// write committed a moment late is still shown, and nothing is ever shown twice.
(function () {
  "use strict";
  const root = document.getElementById("thread");
  if (!root) return;
  const list = document.getElementById("messages");
  const activity = document.getElementById("activity");
  const url = root.dataset.messagesUrl;
  const seen = new Set();
  const toolCalls = new Map();
  let cursor = null;
  let delay = 1000;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function when(iso) {
    return new Date(iso).toLocaleString();
  }

  function meta(m) {
    const line = el("div", "meta");
    line.append(el("span", "sender", m.sender));
    line.append(document.createTextNode(when(m.created_at)));
    if (m.turn_mode) line.append(el("span", "mode " + m.turn_mode, m.turn_mode === "full" ? "full tools" : "look-only"));
    return line;
  }

  function lastDots() {
    let last = list.lastElementChild;
    if (last && last.classList.contains("dot-reason")) last = last.previousElementSibling;
    return last && last.classList.contains("dots") ? last : null;
  }

  // A dot is a consideration that ended silent: `<silent>why</silent>` from the agent, or
  // `<silent by="screen">why</silent>` from the screen (dashed, and it says "screened").
  const SILENT = /^\s*<silent(\s+by="([^"]*)")?\s*>([\s\S]*?)<\/silent>\s*$/i;

  function silentOf(m) {
    if (m.kind !== "dot" && !(m.kind === "text" && m.turn)) return null;
    const match = SILENT.exec(m.text || "");
    if (match) return { by: match[2] || "", reason: match[3].trim() || "silent" };
    return m.kind === "dot" ? { by: "", reason: m.text || "silent" } : null;
  }

  function renderDot(m, silent) {
    const row = lastDots() || list.appendChild(el("li", "dots"));
    const screened = silent.by === "screen";
    const dot = el("button", "dot" + (screened ? " screened" : ""));
    dot.type = "button";
    dot.dataset.id = m.id;
    const who = screened ? "screened for " + m.sender : m.sender + " stayed silent";
    dot.title = who + " · " + when(m.created_at);
    dot.setAttribute("aria-label", dot.title);
    dot.addEventListener("click", () => {
      let note = row.nextElementSibling;
      if (!note || !note.classList.contains("dot-reason")) {
        note = el("li", "dot-reason");
        row.after(note);
      }
      const same = note.dataset.id === m.id && !note.hidden;
      note.hidden = same;
      note.dataset.id = m.id;
      note.textContent = (screened ? "screened · " : m.sender + " · ") + when(m.created_at) + " · " + silent.reason;
      row.querySelectorAll(".dot.open").forEach((d) => d.classList.remove("open"));
      if (!same) dot.classList.add("open");
    });
    row.append(dot);
  }

  function render(m) {
    const silent = silentOf(m);
    if (silent) {
      renderDot(m, silent);
      return;
    }
    if (m.kind === "wake") {
      const li = el("li", "msg wake");
      li.dataset.id = m.id;
      li.append(el("span", "", "⏰ " + m.text));
      li.title = when(m.created_at);
      list.append(li);
      return;
    }
    if (m.kind === "tool_result") {
      const call = toolCalls.get(m.tool_id);
      const pre = el("pre", "", m.text || "(empty)");
      if (call) {
        call.append(pre);
        if (m.is_error) call.classList.add("error");
        return;
      }
      const orphan = el("details", "tool" + (m.is_error ? " error" : ""));
      orphan.append(el("summary", "", "result"), pre);
      list.append(wrap(m, orphan));
      return;
    }
    if (m.kind === "tool_call") {
      const details = el("details", "tool");
      details.append(el("summary", "", "⚙ " + (m.text || m.tool_name)));
      toolCalls.set(m.tool_id, details);
      const li = lastToolGroup(m) || list.appendChild(wrap(m));
      li.append(details);
      return;
    }
    if (m.kind === "request") {
      list.append(requestCard(m));
      return;
    }
    const li = wrap(m);
    li.append(el("div", "body", m.text));
    list.append(li);
  }

  // Request cards: an agent's <tools/>, <merge/> or <deploy/>; only a person answers them.
  const openRequests = new Map();
  const LABELS = { tools: "🔨 asks for full tools", merge: "⤵ asks for a merge", deploy: "🚀 asks for a deploy" };

  function requestCard(m) {
    const li = wrap(m, el("div", "body", LABELS[m.tool_name] + ": " + m.text));
    li.classList.add("request-card");
    li.dataset.requestKind = m.tool_name;
    li.dataset.requestId = m.request ? String(m.request.id) : "";
    li.append(el("div", "request-actions"));
    return li;
  }

  function showRequests(requests) {
    openRequests.clear();
    for (const r of requests) openRequests.set(r.id, r);
    document.getElementById("requests").textContent = requests.some((r) => r.kind === "tools") ? "🔨" : "";
    for (const card of list.querySelectorAll(".request-card")) {
      const actions = card.querySelector(".request-actions");
      const request = openRequests.get(Number(card.dataset.requestId));
      actions.textContent = "";
      if (!request) { actions.append(el("span", "muted", "answered")); continue; }
      if (!root.dataset.signedIn) { actions.append(el("span", "muted", "waiting for a person to answer")); continue; }
      const choices = request.kind === "tools" ? [["grant", "Grant full tools"], ["decline", "Decline"]] : [["done", "Done"], ["decline", "Decline"]];
      for (const [action, label] of choices) {
        const button = el("button", "answer " + action, label);
        button.addEventListener("click", () => answerRequest(request.id, action));
        actions.append(button);
      }
    }
  }

  async function answerRequest(id, action) {
    const response = await fetch(`/api/requests/${id}/${action}/`, {
      method: "POST",
      headers: { "X-CSRFToken": root.dataset.csrf, Accept: "application/json" },
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      alert((body.error && body.error.detail) || "Not answered (" + response.status + ")");
    }
  }

  function lastToolGroup(m) {
    const last = list.lastElementChild;
    return last && last.dataset.sender === m.sender && last.dataset.turn === String(m.turn) ? last : null;
  }

  function wrap(m, child) {
    const li = el("li", "msg " + m.kind + (m.turn ? " agent" : ""));
    li.dataset.id = m.id;
    li.dataset.sender = m.sender;
    li.dataset.turn = String(m.turn);
    if (m.kind !== "turn_end") li.append(meta(m));
    if (child) li.append(child);
    return li;
  }

  function showActivity(items) {
    const parts = items.map((a) => a.activity).filter(Boolean);
    if (typing.length && Date.now() - lastPing < 6000) parts.push(typing.join(", ") + " typing…");
    activity.textContent = parts.join(" · ");
  }

  async function poll() {
    const params = new URLSearchParams({ limit: "500" });
    // A long poll: the server answers as soon as there is something new, or after 20 s.
    if (cursor) { params.set("after", cursor); params.set("overlap", "2"); params.set("wait", "20"); }
    try {
      const response = await fetch(url + "?" + params, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(response.status);
      const page = await response.json();
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
      for (const m of page.results) {
        if (seen.has(m.id)) continue;
        seen.add(m.id);
        render(m);
      }
      if (page.next) cursor = page.next;
      showActivity(page.activity || []);
      showRequests(page.requests || []);
      if (nearBottom && page.results.length) window.scrollTo(0, document.body.scrollHeight);
      delay = page.more || cursor ? 0 : 1000;
    } catch (err) {
      delay = Math.min(delay * 2 || 1000, 15000);
    }
    setTimeout(poll, delay);
  }

  const composer = document.getElementById("composer");
  const typingUrl = root.dataset.typingUrl;
  let lastPing = 0;
  let typing = [];
  // Tell the loop a person is composing: it waits (pings expire after a few seconds).
  function pingTyping() {
    const now = Date.now();
    if (!typingUrl || now - lastPing < 2000) return;
    lastPing = now;
    fetch(typingUrl, { method: "POST", headers: { "X-CSRFToken": root.dataset.csrf } })
      .then((r) => (r.ok ? r.json() : { typing: [] }))
      .then((body) => { typing = body.typing || []; })
      .catch(() => {});
  }
  if (composer) {
    composer.elements.text.addEventListener("input", pingTyping);
    composer.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = composer.elements.text.value.trim();
      if (!text) return;
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": root.dataset.csrf },
        body: JSON.stringify({ text }),
      });
      if (response.ok) composer.elements.text.value = "";
      else alert("Not posted: " + (await response.text()));
    });
  }
  poll();
})();
