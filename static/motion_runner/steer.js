// Steering from the thread (issue 24): ■ stops a running turn, Esc in the composer stops every
// running turn here, a banner says when a scram holds, and the menus set how each agent wakes.
// Kept apart from thread.js: it reads each poll from the "motion:poll" event thread.js sends.
// Everything shown is put on the page as text.
(function () {
  "use strict";
  const root = document.getElementById("thread");
  if (!root) return;
  const running = document.getElementById("running");
  const banner = document.getElementById("scram");
  const canPost = root.dataset.canPost === "1";
  const postError = document.getElementById("post-error");

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  async function send(url, method, body) {
    const response = await fetch(url, {
      method,
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (!response.ok) {
      const error = (data && data.error) || {};
      const fields = error.fields ? Object.values(error.fields).flat().join(" ") : "";
      throw new Error(fields || error.detail || "the server said " + response.status);
    }
    return data;
  }

  function say(text) {
    if (!postError) return;
    postError.textContent = text;
    postError.hidden = false;
  }

  // --- stop -------------------------------------------------------------------------------------
  async function stop(agent) {
    try {
      const answer = await send(root.dataset.stopUrl, "POST", agent ? { agent } : {});
      if (!answer.stopped.length) say(agent ? `@${agent} has no running turn here.` : "No turn is running here.");
    } catch (err) {
      say("Not stopped: " + err.message);
    }
  }

  // ■ goes inside the turn's own group (its header), else beside its wake line, else in the
  // dock's row for turns the page does not show yet.
  function placeFor(turn) {
    const groups = document.querySelectorAll(`#messages .group[data-key="turn:${turn}"] > .meta`);
    return groups[groups.length - 1] || document.querySelector(`#messages li.wake[data-turn="${turn}"]`) || running;
  }

  // Turns whose end is on the page: ■ goes with it, though a poll read before the turn's row
  // was closed may still list it running.
  const endedTurns = new Set();

  function showRunning(activity, results) {
    for (const m of results) if (m.kind === "turn_end" && m.turn) endedTurns.add(m.turn);
    running.textContent = "";
    document.querySelectorAll("#messages .turn[data-turn]").forEach((row) => row.remove());
    if (!canPost) return;
    for (const turn of activity) {
      if (endedTurns.has(turn.turn)) continue;
      const row = el("span", "turn");
      row.dataset.turn = turn.turn;
      row.append(el("span", "", "@" + turn.agent + (turn.stopping ? " is stopping…" : " is working")));
      const button = el("button", "stop", "■");
      button.disabled = Boolean(turn.stopping);
      button.type = "button";
      button.title = `Stop @${turn.agent}'s turn (Esc in the message box stops every turn here)`;
      button.setAttribute("aria-label", `Stop @${turn.agent}`);
      button.addEventListener("click", (event) => { event.stopPropagation(); button.disabled = true; stop(turn.agent); });
      row.append(button);
      placeFor(turn.turn).append(row);
    }
  }

  function showScram(scram) {
    if (!banner) return;
    banner.hidden = !scram;
    banner.textContent = scram
      ? `Scram: every agent is stopped and nothing wakes — ${scram.reason} (${scram.raised_by})`
      : "";
    // The composer says so too: a post is answered 423 (and kept in the box) until it is lifted.
    const box = document.querySelector("#composer textarea");
    if (box) {
      if (!box.dataset.placeholder) box.dataset.placeholder = box.placeholder;
      box.placeholder = scram ? "A scram holds: posts are refused until it is lifted." : box.dataset.placeholder;
    }
    // The scram's button (for those who may): raise while none holds, lift while one does.
    for (const form of document.querySelectorAll("form.scram-button")) {
      form.hidden = (form.dataset.action === "lift") !== Boolean(scram);
    }
  }

  // --- "your mention was answered": a notice on the page (and the browser's, if allowed) ----------
  const me = root.dataset.me;
  const asked = new Map(); // agent name (lower case) -> when I mentioned it
  const noticed = new Set();
  let firstPoll = true;

  function notice(text) {
    let box = document.getElementById("notice");
    if (!box) {
      box = el("div", "notice");
      box.id = "notice";
      box.setAttribute("role", "status");
      (document.querySelector("#dock .dock-row") || root).before(box);
    }
    box.textContent = text;
    box.hidden = false;
    if (document.hidden && "Notification" in window && Notification.permission === "granted") {
      new Notification(text); // eslint-disable-line no-new
    }
  }

  function watchAnswers(results) {
    for (const m of results) {
      if (noticed.has(m.id)) continue;
      noticed.add(m.id);
      if (firstPoll) continue; // the history: nobody is waiting on it
      if (me && m.sender === me && m.kind === "text" && (m.source === "web" || m.source === "api")) {
        for (const match of (m.text || "").matchAll(/@([\w.-]+)/g)) {
          asked.set(match[1].replace(/[.-]+$/, "").toLowerCase(), m.created_at);
          if ("Notification" in window && Notification.permission === "default") Notification.requestPermission();
        }
      } else if (m.kind === "text" && m.source !== "system" && m.turn_reason === "mention") {
        const name = (m.sender || "").toLowerCase();
        if (asked.has(name) && m.created_at >= asked.get(name)) {
          asked.delete(name);
          notice(`@${m.sender} answered you`);
        }
      }
    }
    firstPoll = false;
  }

  document.addEventListener("motion:poll", (event) => {
    showRunning(event.detail.activity || [], event.detail.results || []);
    showScram(event.detail.scram || null);
    watchAnswers(event.detail.results || []);
  });

  const composer = document.getElementById("composer");
  if (composer && canPost) {
    composer.elements.text.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.isComposing) {
        event.preventDefault();
        stop(null);
      }
    });
  }

  // --- the menus ----------------------------------------------------------------------------------
  const steerUrl = root.dataset.steerUrl;
  const body = document.getElementById("steer-body");
  if (!steerUrl || !body) return;
  const EFFORTS = ["", "low", "medium", "high", "xhigh", "max"];
  const CHOICES = {
    listening: [["on", "on"], ["mentions", "mentions only"], ["off", "off"]],
    discretion: [["", "default"], ["reserved", "reserved"], ["normal", "normal"], ["chatty", "chatty"]],
    verbosity: [["", "default"], ["terse", "terse"], ["normal", "normal"], ["full", "full"]],
    reads: [["", "default"], ["2000", "2,000 tokens"], ["10000", "10,000 tokens"], ["40000", "40,000 tokens"]],
    mention_effort: EFFORTS.map((e) => [e, e || "default"]),
    consider_effort: EFFORTS.map((e) => [e, e || "default"]),
    ultracode: [["", "off (default)"], ["on", "on"]],
  };
  const LABELS = {
    listening: "listening", model: "model", mention_effort: "effort (mentions)",
    consider_effort: "effort (looks)", reads: "reads", discretion: "discretion", verbosity: "verbosity",
    ultracode: "ultracode (full-tools mentions)",
  };

  async function change(fields, errorBox) {
    errorBox.textContent = "";
    try {
      draw(await send(steerUrl, "POST", fields));
    } catch (err) {
      errorBox.textContent = "Not changed: " + err.message;
    }
  }

  function select(name, value, onChange) {
    const box = el("select");
    box.name = name;
    for (const [v, label] of CHOICES[name]) {
      const option = el("option", "", label);
      option.value = v;
      if (v === (value || "")) option.selected = true;
      box.append(option);
    }
    box.addEventListener("change", () => onChange(box.value));
    return box;
  }

  function agentMenu(agent, state, errorBox) {
    const set = el("fieldset", "agent-menu");
    set.dataset.agent = agent.name;
    const context = agent.context ? ` · context ${agent.context.percent}% full (${agent.context.tokens.toLocaleString()} of ${agent.context.window.toLocaleString()} tokens)` : "";
    set.append(el("legend", "", "@" + agent.name + context + (agent.listening_everywhere ? "" : " (not listening anywhere: the admin's switch)")));
    for (const name of ["listening", "mention_effort", "consider_effort", "reads", "discretion", "verbosity", "ultracode", "model"]) {
      const label = el("label", "", LABELS[name] + " ");
      const widening = state.widening.includes(name);
      const post = (value, extra) => change(Object.assign({ agent: agent.name, setting: name, value }, extra || {}), errorBox);
      let input;
      if (name === "model") {
        input = el("input");
        input.name = "model";
        input.value = agent.model || "";
        input.placeholder = "default";
        input.size = 16;
        input.addEventListener("change", () => post(input.value));
      } else if (name === "listening") {
        const until = el("input");
        until.type = "datetime-local";
        until.name = "listening_until";
        until.title = "until (blank: until changed)";
        input = select(name, agent.listening, (value) => {
          const when = until.value ? new Date(until.value).toISOString() : "";
          post(value, when ? { until: when } : {});
        });
        label.append(input, " until ", until);
        if (agent.listening_until) label.append(el("span", "muted", ` (set until ${new Date(agent.listening_until).toLocaleString()})`));
        set.append(label);
        continue;
      } else {
        input = select(name, agent[name], post);
      }
      if (widening && !state.can_widen) {
        input.disabled = true;
        label.title = "Only a person who may grant full tools changes this (it widens spend or reads).";
      }
      if (agent.set_by && agent.set_by[name]) label.title = "set by " + agent.set_by[name];
      label.append(input);
      set.append(label);
    }
    return set;
  }

  function motionMenu(state, errorBox) {
    const set = el("fieldset", "motion-menu");
    set.append(el("legend", "", "This Motion"));
    const archived = el("input");
    archived.type = "checkbox";
    archived.name = "archived";
    archived.checked = state.motion.archived;
    archived.addEventListener("change", () => change({ setting: "archived", value: archived.checked ? "yes" : "no" }, errorBox));
    const label = el("label", "", "archived (no unprompted looks; mentions still answered) ");
    label.prepend(archived);
    set.append(label);
    const rules = el("textarea");
    rules.name = "rules";
    rules.rows = 3;
    rules.placeholder = "Rules said in every wake here";
    rules.value = state.motion.rules || "";
    const save = el("button", "", "Save rules");
    save.type = "button";
    save.addEventListener("click", () => change({ setting: "rules", value: rules.value }, errorBox));
    if (state.widening.includes("rules") && !(state.can_set_rules ?? state.can_widen)) {
      // Every wake says the rules as the room's instructions: only someone who may grant sets them.
      rules.disabled = save.disabled = true;
      save.title = "Only a person who may grant full tools changes the rules (each wake obeys them).";
      const why = el("p", "why-disabled", save.title); // said as text too, not only on hover
      why.id = "rules-why";
      save.setAttribute("aria-describedby", why.id);
      set.append(rules, save, why);
    } else {
      set.append(rules, save);
    }
    // The letter an agent's first wake here opens with (blank: the admin's first_session_letter dial).
    const letter = el("textarea");
    letter.name = "letter";
    letter.rows = 3;
    letter.placeholder = "The letter an agent's first wake here opens with (blank: the default)";
    letter.value = state.motion.letter || "";
    const saveLetter = el("button", "", "Save letter");
    saveLetter.type = "button";
    saveLetter.addEventListener("click", () => change({ setting: "letter", value: letter.value }, errorBox));
    if (state.widening.includes("letter") && !state.can_widen) {
      letter.disabled = saveLetter.disabled = true;
      saveLetter.title = "Only a person who may grant full tools changes the letter (a first wake reads it).";
    }
    set.append(letter, saveLetter);
    if (state.motion.agent_chain_turns != null) {
      // The chain guard's bound (a dial in the admin): shown here, set there.
      set.append(el("p", "muted agent-chain", `Agents may wake each other ${state.motion.agent_chain_turns} turns in a row here with no person's post between; then they wait for one (the admin's agent_chain_turns dial).`));
    }
    return set;
  }

  function summarize(state) {
    const summary = document.querySelector("#steer summary");
    const full = state.agents.filter((a) => a.context).map((a) => `@${a.name} context ${a.context.percent}%`);
    if (summary) summary.textContent = "Agents here: listening, model, effort, rules" + (full.length ? " · " + full.join(" · ") : "");
  }

  function draw(state) {
    body.textContent = "";
    // How full each agent's context is, on the menus' closed summary too.
    summarize(state);
    const errorBox = el("div", "steer-error");
    errorBox.setAttribute("role", "alert");
    if (!canPost) body.append(el("p", "muted", "Only people who may post here change these."));
    for (const agent of state.agents) body.append(agentMenu(agent, state, errorBox));
    body.append(motionMenu(state, errorBox), errorBox);
    if (!canPost) body.querySelectorAll("input, select, textarea, button").forEach((node) => { node.disabled = true; });
    const changes = el("ul", "changes");
    for (const row of state.changes) changes.append(el("li", "", row.text + " · " + new Date(row.at).toLocaleString()));
    body.append(changes);
  }

  function load() {
    fetch(steerUrl, { headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : null))
      .then((state) => {
        if (!state) return;
        // An open menu is not redrawn under the person's hands: its summary is, the rest when closed.
        const details = document.querySelector("#steer");
        if (details && details.open && body.childElementCount) summarize(state);
        else draw(state);
      })
      .catch(() => {});
  }
  load();
  // A turn that ends while the page is open (a /context answer, a reply) changes how full the
  // agent's context is: read the menus again, so they say what /context just said.
  let seenPoll = false;
  document.addEventListener("motion:poll", (event) => {
    const ended = (event.detail.results || []).some((m) => m.kind === "turn_end");
    if (ended && seenPoll) load();
    seenPoll = true;
  });
})();
