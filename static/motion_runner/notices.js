// The header's notices (templates/wakes/notices.html): answers to the reader's @mentions.
// Opening the list marks what it shows seen; "Notify me on this device" subscribes this browser
// to Web Push (static/motion_runner/push-worker.js) when the server has a VAPID key.
(function () {
  "use strict";
  const root = document.getElementById("notices");
  if (!root) return;
  const count = root.querySelector(".notices-unseen");
  const pushButton = root.querySelector(".notices-push-on");
  const pushState = root.querySelector(".notices-push-state");

  function post(url, body, method) {
    return fetch(url, {
      method: method || "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrf },
      body: JSON.stringify(body),
    });
  }

  function showCount(unseen) {
    count.textContent = String(unseen);
    count.dataset.count = String(unseen);
  }

  async function markSeen(body) {
    const response = await post(root.dataset.seen, body);
    if (!response.ok) return;
    const page = await response.json();
    showCount(page.unseen);
    for (const item of root.querySelectorAll(".notices-list li.unseen")) item.classList.remove("unseen");
  }

  root.addEventListener("toggle", () => {
    if (!root.open) return;
    const ids = [...root.querySelectorAll(".notices-list li.unseen")].map((li) => Number(li.dataset.id));
    if (ids.length) markSeen({ ids }).catch(() => {});
  });
  root.querySelector(".notices-mark-seen").addEventListener("click", () => markSeen({ all: true }).catch(() => {}));

  // The count follows new answers while the page is open (a minute is soon enough: the thread
  // itself shows the answer at once).
  setInterval(async () => {
    if (document.hidden) return;
    try {
      const response = await fetch(root.dataset.api, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) showCount((await response.json()).unseen);
    } catch (error) {
      /* offline: the next minute tries again */
    }
  }, 60000);

  function keyBytes(base64url) {
    const padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  // The worker's scope is its own folder, not this page: `navigator.serviceWorker.ready` would
  // never resolve here, so its own state is waited for.
  function active(registration) {
    const worker = registration.installing || registration.waiting || registration.active;
    if (!worker || worker.state === "activated") return Promise.resolve(registration);
    return new Promise((resolve) => {
      worker.addEventListener("statechange", () => {
        if (worker.state === "activated") resolve(registration);
      });
    });
  }

  async function subscribe() {
    pushState.textContent = "";
    if ((await Notification.requestPermission()) !== "granted") {
      pushState.textContent = "Notifications are blocked in this browser.";
      return;
    }
    const registration = await active(await navigator.serviceWorker.register(root.dataset.worker));
    const subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: keyBytes(root.dataset.pushKey),
    });
    const response = await post(root.dataset.push, subscription.toJSON());
    pushState.textContent = response.ok ? "This device is notified of answers." : "Not subscribed: the server refused.";
    pushButton.hidden = response.ok;
  }

  window.motionRunnerPushWorker = () => navigator.serviceWorker.register(root.dataset.worker).then(active);

  const canPush = root.dataset.pushKey && "serviceWorker" in navigator && "PushManager" in window;
  if (canPush) {
    navigator.serviceWorker
      .getRegistration(root.dataset.worker)
      .then((registration) => (registration ? registration.pushManager.getSubscription() : null))
      .then((subscription) => {
        pushButton.hidden = Boolean(subscription);
      })
      .catch(() => {
        pushButton.hidden = false;
      });
    pushButton.addEventListener("click", () =>
      subscribe().catch((error) => {
        pushState.textContent = "Not subscribed: " + error.message;
      }),
    );
  }
})();
