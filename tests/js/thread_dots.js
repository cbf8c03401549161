// Runs static/motion_runner/thread.js against a tiny DOM stand-in and one page of messages,
// then prints what the thread shows as JSON (tests/test_wakes_dots.py asserts on it).
"use strict";
const fs = require("fs");
const path = require("path");

class Node {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.parent = null;
    this.dataset = {};
    this.attributes = {};
    this.listeners = {};
    this.className = "";
    this._text = "";
    this.hidden = false;
    this.title = "";
    this.elements = {};
  }
  get classList() {
    const node = this;
    const list = () => node.className.split(/\s+/).filter(Boolean);
    return {
      contains: (c) => list().includes(c),
      add: (c) => { if (!list().includes(c)) node.className = [...list(), c].join(" "); },
      remove: (c) => { node.className = list().filter((x) => x !== c).join(" "); },
    };
  }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); }
  append(...nodes) { for (const n of nodes) this.appendChild(typeof n === "string" ? text(n) : n); }
  appendChild(n) { n.parent = this; this.children.push(n); return n; }
  after(n) { const s = this.parent.children; n.parent = this.parent; s.splice(s.indexOf(this) + 1, 0, n); }
  get lastElementChild() { return this.children[this.children.length - 1] || null; }
  get nextElementSibling() { const s = this.parent.children; return s[s.indexOf(this) + 1] || null; }
  get previousElementSibling() { const s = this.parent.children; return s[s.indexOf(this) - 1] || null; }
  setAttribute(k, v) { this.attributes[k] = v; }
  addEventListener(type, fn) { this.listeners[type] = fn; }
  click() { this.listeners.click && this.listeners.click(); }
  querySelectorAll(sel) {
    const cls = sel.split(".").filter(Boolean).slice(1);
    const out = [];
    const walk = (n) => { for (const c of n.children) { if (cls.every((k) => c.classList.contains(k))) out.push(c); walk(c); } };
    walk(this);
    return out;
  }
}
function text(s) { const n = new Node("#text"); n._text = s; return n; }

const thread = new Node("section");
thread.dataset = { messagesUrl: "/api/motions/m/messages/", typingUrl: "/api/motions/m/typing/", csrf: "x" };
const nodes = { thread, messages: new Node("ol"), activity: new Node("div") };
global.document = {
  getElementById: (id) => nodes[id] || null,
  createElement: (tag) => new Node(tag),
  createTextNode: text,
  body: { scrollHeight: 0 },
};
global.window = { innerHeight: 0, scrollY: 0, scrollTo() {} };
global.setTimeout = () => {};
global.alert = (m) => { throw new Error("alert used: " + m); };
const page = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
global.fetch = async () => ({ ok: true, json: async () => page });

require(path.resolve(__dirname, "../../static/motion_runner/thread.js"));

setImmediate(() => {
  const list = nodes.messages;
  const rows = list.children.map((li) => ({
    cls: li.className,
    text: li.textContent,
    dots: li.children.filter((c) => c.classList.contains("dot")).map((d) => ({ cls: d.className, title: d.title })),
  }));
  // click the second dot of the first row: its reason shows under the row
  const firstRow = list.children.find((li) => li.classList.contains("dots"));
  firstRow.children[1].click();
  const reason = firstRow.nextElementSibling;
  process.stdout.write(JSON.stringify({ rows, reason: { cls: reason.className, text: reason.textContent, hidden: reason.hidden } }));
});
