// The thread as people expect one (issue 34): day dividers between the messages, "↓ newest"
// with the count of new messages while the reader is scrolled up, and the search box.
// Kept apart from thread.js: it watches the message list and reads each poll from the
// "motion:poll" event thread.js sends. Everything shown is put on the page as text.
(function () {
  "use strict";
  const root = document.getElementById("thread");
  const list = document.getElementById("messages");
  if (!root || !list) return;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // --- day dividers: one before the first row of each day (the reader's own days) -----------
  const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: "long", year: "numeric", month: "long", day: "numeric" });

  function dayKey(date) {
    return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`;
  }

  function dayLabel(date) {
    const today = new Date();
    const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
    if (dayKey(date) === dayKey(today)) return "Today";
    if (dayKey(date) === dayKey(yesterday)) return "Yesterday";
    return dayFormat.format(date);
  }

  // A row's day is its first time's (a group's header, a wake line's, a dot's label).
  function rowDate(row) {
    const time = row.querySelector("time[datetime]");
    return time ? new Date(time.dateTime) : null;
  }

  function markDays() {
    list.querySelectorAll(":scope > li.day-divider").forEach((divider) => divider.remove());
    let last = null;
    for (const row of [...list.children]) {
      const date = rowDate(row);
      if (!date) continue;
      const key = dayKey(date);
      if (key === last) continue;
      const divider = el("li", "day-divider");
      divider.append(el("h2", "", dayLabel(date))); // a heading a screen reader can jump by
      divider.dataset.day = key;
      row.before(divider);
      last = key;
    }
    rows.takeRecords(); // the dividers' own changes are no news
  }

  // thread.js adds and lets go of rows as the reader moves: the dividers follow.
  const rows = new MutationObserver(markDays);
  rows.observe(list, { childList: true });

  // --- "↓ newest": while the reader is scrolled up, with how many new messages came -----------
  const newest = document.getElementById("newest");
  const known = new Set();
  const COUNTED = new Set(["text", "error", "request"]);
  let firstPoll = true;
  let away = false; // the reader scrolled up from the newest
  let fresh = 0;

  function nearBottom() { // as thread.js's isNearBottom: the bottom the page can scroll to
    const page = document.scrollingElement || document.documentElement;
    return page.scrollHeight - page.clientHeight - window.scrollY <= 80;
  }

  function showNewest() {
    if (!newest) return;
    newest.hidden = !away;
    newest.textContent = fresh ? `↓ ${fresh} new message${fresh === 1 ? "" : "s"}` : "↓ newest";
  }

  window.addEventListener("scroll", () => {
    away = !nearBottom();
    if (!away) fresh = 0;
    showNewest();
  }, { passive: true });

  document.addEventListener("motion:poll", (event) => {
    for (const m of event.detail.results || []) {
      if (known.has(m.id)) continue;
      known.add(m.id);
      if (!firstPoll && away && COUNTED.has(m.kind) && !/^\s*<silent/i.test(m.text || "")) fresh += 1;
    }
    if (firstPoll) { // the page has opened (around a linked message, maybe, with no scroll yet)
      requestAnimationFrame(() => {
        away = !nearBottom();
        showNewest();
      });
    }
    firstPoll = false;
    showNewest();
  });

  if (newest) {
    newest.addEventListener("click", () => {
      window.scrollTo(0, document.body.scrollHeight);
      document.dispatchEvent(new CustomEvent("motion:newest")); // far back: thread.js reads the newest page
      const box = document.querySelector("#composer textarea");
      if (box) box.focus({ preventScroll: true });
    });
  }

  // --- the search box: this Motion's words, each found message opened in place ----------------
  const form = document.getElementById("thread-search");
  const results = document.getElementById("search-results");
  if (!form || !results) return;
  const input = form.elements.q;
  let asked = 0;

  function close() {
    results.hidden = true;
    results.textContent = "";
  }

  async function search() {
    const query = input.value.trim();
    if (query.length < 2) return close();
    const mine = ++asked;
    results.hidden = false;
    results.textContent = "Searching…";
    let answer = null;
    try {
      const response = await fetch(form.dataset.url + "?" + new URLSearchParams({ q: query }), { headers: { Accept: "application/json" } });
      answer = response.ok ? await response.json() : { error: response.status };
    } catch (err) {
      answer = { error: "unreachable" };
    }
    if (mine !== asked) return; // a newer search took over
    results.textContent = "";
    if (answer.error) {
      results.append(el("p", "error", answer.error === "unreachable" ? "Not searched: the server could not be reached." : `Not searched (the server said ${answer.error}).`));
      return;
    }
    const head = el("p", "muted", answer.results.length
      ? `${answer.results.length}${answer.more ? "+" : ""} found for “${answer.query}”, newest first`
      : `Nothing here says “${answer.query}”.`);
    const shut = el("button", "link", "Close");
    shut.type = "button";
    shut.addEventListener("click", close);
    head.append(" · ", shut);
    results.append(head);
    const found = el("ol");
    for (const r of answer.results) {
      const item = el("li");
      const link = el("a");
      link.href = "#m-" + r.id;
      const time = el("time", "when", new Date(r.created_at).toLocaleString());
      time.dateTime = r.created_at;
      link.append(el("span", "who", (r.is_agent ? "@" : "") + r.sender), time, el("div", "snippet", r.snippet));
      item.append(link);
      found.append(item);
    }
    results.append(found);
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); search(); });
  input.addEventListener("keydown", (event) => { if (event.key === "Escape") close(); });
})();
