// The battle wizard's save queue (app/web/battle_wizard.py): every tap of a − / + counter
// and every change of a wizard form is queued, sent in order one at a time, each with its
// own Idempotency-Key, and kept on the phone (localStorage) until the server has it. So a
// fast thumb on a slow link never loses a tap, a retry after a lost answer is not counted
// twice, and a dropped connection or a reload only delays what was entered.
//
// Each request carries the draft's version; the answer gives the next one. A change made
// elsewhere in between (another tab, the other player) is refused by the server with a
// conflict, which is shown with a Reload button; nothing is overwritten silently.
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft]");
  if (!form) return;
  document.documentElement.classList.add("js");
  var draft = form.getAttribute("data-draft");
  var storeKey = "crusade-wizard-queue:" + draft;
  var versionInput = form.querySelector("input[name=version]");
  var csrfInput = form.querySelector("input[name=csrf_token]");
  var pageVersion = versionInput ? Number(versionInput.value) : null;
  var stored = read();
  var state = {
    version: stored.items.length ? stored.version : pageVersion,
    items: stored.items,
  };
  var busy = false;
  var stopped = null; // the refusal that stopped the queue (a conflict), if any
  var waiting = null; // the submit button whose click waits for the queue to empty
  var failures = 0;
  var confirmed = {}; // counter slug -> the value the server last confirmed

  function read() {
    try {
      var found = JSON.parse(localStorage.getItem(storeKey) || "null");
      if (found && Array.isArray(found.items)) return found;
    } catch (e) { /* no storage, or a broken entry: start empty */ }
    return { version: null, items: [] };
  }

  function write() {
    try {
      if (state.items.length) localStorage.setItem(storeKey, JSON.stringify(state));
      else localStorage.removeItem(storeKey);
    } catch (e) { /* private mode: the queue lives as long as the page */ }
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return String(Date.now()) + "-" + Math.random().toString(16).slice(2);
  }

  // --- what the page shows ------------------------------------------------------------

  function banner() { return document.getElementById("connection-status"); }

  function say(text, withReload) {
    var el = banner();
    if (!el) return;
    el.textContent = text;
    if (withReload) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "secondary";
      button.textContent = "Reload";
      button.addEventListener("click", function () {
        state.items = [];
        write();
        window.location.reload();
      });
      el.appendChild(document.createTextNode(" "));
      el.appendChild(button);
    }
    el.hidden = !text;
  }

  // What is waiting, said quietly while it goes out (the banner above is for problems).
  function status() {
    var el = document.getElementById("queue-status");
    if (!el) return;
    var text = state.items.length ? waitingText() + "…" : "";
    if (el.textContent !== text) el.textContent = text;
    el.hidden = !text;
  }

  function waitingText() {
    var n = state.items.length;
    return n + (n === 1 ? " change" : " changes") + " waiting to be sent";
  }

  function counters() { return form.querySelectorAll("[data-counter]"); }

  function pendingDelta(slug) {
    var sum = 0;
    state.items.forEach(function (item) { if (item.slug === slug) sum += item.delta; });
    return sum;
  }

  function showCounts() {
    counters().forEach(function (box) {
      var slug = box.getAttribute("data-counter");
      var output = box.querySelector("output");
      if (!(slug in confirmed)) confirmed[slug] = Number(output.textContent) || 0;
      output.textContent = String(confirmed[slug] + pendingDelta(slug));
    });
    if (typeof checkKills === "function") checkKills();
  }

  // --- queueing ----------------------------------------------------------------------------

  function fields() {
    var list = [];
    new FormData(form).forEach(function (value, name) {
      if (name !== "action" && name !== "bump" && name !== "version" && typeof value === "string") {
        list.push([name, value]);
      }
    });
    return list;
  }

  function enqueue(item) {
    item.key = newKey();
    var last = state.items[state.items.length - 1];
    // A newer snapshot of the same form replaces one not sent yet: only the latest matters.
    if (item.snapshot && last && last.snapshot && last.url === item.url &&
        !(busy && state.items.length === 1)) {
      state.items[state.items.length - 1] = item;
    } else {
      state.items.push(item);
    }
    write();
    pump();
  }

  function tap(button) {
    var spec = button.value; // "card:field:+1"
    var box = button.closest("[data-counter]");
    var slug = box.getAttribute("data-counter");
    var delta = spec.slice(-2) === "+1" ? 1 : -1;
    var shown = Number(box.querySelector("output").textContent) || 0;
    var top = Number(box.getAttribute("data-max") || "99");
    if (shown + delta < 0 || shown + delta > top) return; // the server would refuse it too
    enqueue({ url: form.getAttribute("data-taps"), fields: [["bump", spec]], slug: slug, delta: delta });
    showCounts();
  }

  // --- sending, one at a time ---------------------------------------------------------------

  function pump() {
    status();
    if (busy || stopped) return;
    if (!state.items.length) {
      say("");
      if (waiting) { var button = waiting; waiting = null; form.requestSubmit(button); }
      return;
    }
    busy = true;
    var item = state.items[0];
    var body = new URLSearchParams();
    item.fields.forEach(function (pair) { body.append(pair[0], pair[1]); });
    if (state.version !== null && state.version !== undefined) body.append("version", String(state.version));
    var headers = { "Idempotency-Key": item.key, "Content-Type": "application/x-www-form-urlencoded" };
    if (csrfInput) headers["X-CSRF-Token"] = csrfInput.value;
    fetch(item.url, { method: "POST", body: body, headers: headers, credentials: "same-origin" })
      .then(function (response) {
        return response.text().then(function (text) { answered(item, response, text); });
      })
      .catch(function () { retryLater("no connection"); });
  }

  function retryLater(why) {
    busy = false;
    failures += 1;
    say(waitingText() + " (" + why + "). They are kept on this phone and sent when the connection is back.");
    setTimeout(pump, Math.min(15000, 500 * Math.pow(2, failures)));
  }

  function parse(text) { return new DOMParser().parseFromString(text, "text/html"); }

  function answered(item, response, text) {
    if (response.status >= 500 || response.status === 409 && /idempotency_request_in_progress/.test(text)) {
      retryLater("the server answered " + response.status);
      return;
    }
    busy = false;
    if (failures) say("");
    failures = 0;
    var doc = parse(text);
    var versioned = doc.querySelector("[data-draft-version]");
    var version = response.headers.get("X-Draft-Version") ||
      (versioned && versioned.getAttribute("data-draft-version"));
    if (version) {
      state.version = Number(version);
      if (versionInput) versionInput.value = version;
    }
    if (item.slug) {
      var output = doc.querySelector("output");
      if (output) confirmed[item.slug] = Number(output.textContent) || 0;
    }
    if (response.ok || response.status === 422) {
      state.items.shift();
      write();
      if (item.swap && response.ok) swap(item.swap, doc);
      showCounts();
      if (response.status === 422) {
        var refusal = doc.querySelector(".field-error, [data-code]");
        say("Not saved: " + (refusal ? refusal.textContent.trim() : "the server refused this change."));
        setTimeout(pump, 0);
        return;
      }
      pump();
      return;
    }
    // A conflict, or the session ended: stop, keep the changes, and say why.
    stopped = response.status;
    var detail = doc.querySelector("[data-code] p") || doc.querySelector("[data-code]");
    say(waitingText() + " and not saved: " +
        (detail ? detail.textContent.trim() : "the server answered " + response.status + "."), true);
  }

  function swap(selector, doc) {
    var fresh = doc.querySelector(selector);
    var old = document.querySelector(selector);
    if (fresh && old) old.replaceWith(document.importNode(fresh, true));
  }

  // --- what the player does -------------------------------------------------------------------

  form.addEventListener("click", function (event) {
    var button = event.target.closest("button[name=bump]");
    if (!button || !form.getAttribute("data-taps")) return;
    event.preventDefault();
    tap(button);
  });

  // A battle size shows its own mission list at once (the others are hidden and not sent).
  var size = form.querySelector("[data-shows-size]");
  function showSize() {
    var checked = size.querySelector("input:checked");
    var value = checked ? checked.value : "";
    form.querySelectorAll("[data-size-block]").forEach(function (block) {
      var shown = block.getAttribute("data-size-block") === value;
      block.hidden = !shown;
      block.querySelectorAll("select").forEach(function (select) { select.disabled = !shown; });
    });
  }
  if (size) size.addEventListener("change", showSize);

  // After the game: a warning (not a refusal) when one side's kills and the other side's
  // destroyed units do not add up; a unit can also fall to a mission rule or its own hazard.
  function checkKills() {
    form.querySelectorAll("[data-kills-check]").forEach(function (note) {
      var side = note.getAttribute("data-kills-check");
      var ours = form.querySelector("[data-side='" + side + "']");
      var theirs = form.querySelector("[data-side='" + (side === "0" ? "1" : "0") + "']");
      if (!ours || !theirs) return;
      var kills = 0;
      ours.querySelectorAll("[data-counter*='-destroyed_'] output").forEach(function (o) {
        kills += Number(o.textContent) || 0;
      });
      var lost = theirs.querySelectorAll("input[data-destroyed]:checked").length;
      var text = kills === lost ? "" : "Check: " + kills + (kills === 1 ? " kill" : " kills") +
        " entered here, " + lost + " enemy " + (lost === 1 ? "unit" : "units") +
        " marked destroyed. Fine if something else destroyed them; otherwise fix it before review.";
      if (note.textContent !== text) note.textContent = text;
      note.hidden = !text;
    });
  }
  form.addEventListener("change", checkKills);

  // The agenda lists are named after the forces as soon as they are chosen.
  form.querySelectorAll("[data-names-side]").forEach(function (select) {
    select.addEventListener("change", function () {
      var option = select.selectedOptions[0];
      var name = option && option.value ? option.getAttribute("data-name") : null;
      var side = select.getAttribute("data-names-side");
      form.querySelectorAll("[data-side-name='" + side + "']").forEach(function (el) {
        el.textContent = name || (side === "0" ? "Your force" : "Opponent's force");
      });
    });
  });

  // A die typed for Out of Action means "use the dice rolled at the table".
  form.addEventListener("input", function (event) {
    var name = event.target.getAttribute && event.target.getAttribute("data-enters");
    if (!name || !event.target.value) return;
    var radio = form.querySelector("input[name='" + name + "'][value=enter]");
    if (radio) radio.checked = true;
  });

  if (form.getAttribute("data-autosave")) {
    form.addEventListener("change", function (event) {
      if (event.target.closest("[data-counter]")) return;
      enqueue({ url: form.getAttribute("data-autosave"), fields: fields(), snapshot: true,
                swap: form.getAttribute("data-swap") });
    });
  }

  // Moving on waits until every change has reached the server (in order), then goes.
  form.addEventListener("submit", function (event) {
    if (!state.items.length && !stopped) return;
    event.preventDefault();
    if (stopped) return;
    waiting = event.submitter || null;
    say("Saving " + waitingText().replace(" waiting to be sent", "") + " first…");
  });

  window.addEventListener("online", function () { failures = 0; pump(); });

  // No signal: moving on would show the browser's offline page, so stay; every field is
  // already queued on the phone.
  form.addEventListener("submit", function (event) {
    if (navigator.onLine || event.defaultPrevented) return;
    event.preventDefault();
    say("No connection: this step is kept on the phone. Tap again when the signal is back.");
  });

  // The service worker keeps this step's page for when the signal goes (wizard-sw.js).
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/wizard-sw.js").catch(function () { /* pages still work */ });
  }

  // Changes still waiting from before a reload: show them on the page, then send them.
  function restore() {
    var last = null;
    state.items.forEach(function (item) { if (item.snapshot) last = item; });
    if (!last) return;
    var names = {};
    last.fields.forEach(function (pair) { (names[pair[0]] = names[pair[0]] || []).push(pair[1]); });
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === "csrf_token" || el.name === "version" || el.disabled) return;
      var values = names[el.name] || [];
      if (el.type === "checkbox") el.checked = values.indexOf(el.value) >= 0;
      else if (!values.length || el.tagName === "BUTTON") return;
      else if (el.type === "radio") el.checked = values.indexOf(el.value) >= 0;
      else el.value = values[0];
    });
    if (size) showSize();
  }
  restore();
  showCounts();
  pump();
})();
