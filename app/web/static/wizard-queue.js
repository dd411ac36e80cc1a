// The battle wizard's save queue (app/web/battle_wizard.py): every tap of a − / + counter
// and every change of a wizard form is queued, sent in order one at a time, each with its
// own Idempotency-Key, and kept on the phone (localStorage) until the server has it. So a
// fast thumb on a slow link never loses a tap, a retry after a lost answer is not counted
// twice, and a dropped connection or a reload only delays what was entered.
//
// A tap is a change by one ("one more melee kill"): it applies to whatever the draft holds
// now, so it is sent without the draft's version and never conflicts. A form change carries
// the version; the answer gives the next one. When the server refuses it because the draft
// changed since (another phone, another tab, or this phone's own older copy of the page),
// the step is fetched again: fields only this phone changed are re-applied to the newer
// draft (rebased); a field both screens changed is shown with both values and the player
// keeps theirs or takes the other (issue 21). Nothing is discarded without being asked.
//
// The phone also keeps the server's last known state of the step (version, counters, form
// fields): a step shown from the service worker's older copy (a reload without signal) is
// brought up to it, so the page shows what the server has plus what is waiting.
//
// Each tab keeps its own queue (localStorage is shared by every tab of the site): the key
// carries the tab's id, kept in sessionStorage so a reload finds its queue again. A tab
// holds a Web Lock named after its id for as long as it lives; the queue of a tab that
// was closed with taps still waiting (no signal) is adopted by the next tab of the same
// draft, under that lock, so it is sent once, in order, and never by two tabs at once.
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft]");
  if (!form) return;
  document.documentElement.classList.add("js");
  var draft = form.getAttribute("data-draft");
  var prefix = "crusade-wizard-queue:" + draft;
  var tabId = thisTab();
  var storeKey = prefix + ":" + tabId;
  var locks = navigator.locks && navigator.locks.request ? navigator.locks : null;
  var ready = !locks; // with Web Locks: only once this tab holds its own lock
  var versionInput = form.querySelector("input[name=version]");
  var csrfInput = form.querySelector("input[name=csrf_token]");
  var pageVersion = versionInput ? Number(versionInput.value) : null;
  var stored = read();
  var state = { version: null, items: stored.items };
  var knownKey = "crusade-wizard-known:" + draft + ":" + window.location.pathname;
  var known = readKnown();
  var busy = false;
  var stopped = null; // the refusal that stopped the queue (a conflict), if any
  var waiting = null; // the submit button whose click waits for the queue to empty
  var failures = 0;
  var confirmed = {}; // counter slug -> the value the server last confirmed

  // --- the server's last known state of this step -----------------------------------------

  function readKnown() {
    try {
      var found = JSON.parse(localStorage.getItem(knownKey) || "null");
      if (found && typeof found.version === "number") return found;
    } catch (e) { /* none */ }
    return null;
  }

  function saveKnown() {
    try { localStorage.setItem(knownKey, JSON.stringify(known)); } catch (e) { /* fine */ }
  }

  // Field values by name (a name with several values, e.g. ticked boxes, joined in order).
  function valuesOf(pairs) {
    var map = {};
    pairs.forEach(function (pair) {
      map[pair[0]] = map[pair[0]] === undefined ? pair[1] : map[pair[0]] + "\u0001" + pair[1];
    });
    return map;
  }

  // The fields of a form element (this page's, or one parsed from a fetched page), as a
  // snapshot would send them.
  function formFields(element) {
    var list = [];
    Array.prototype.forEach.call(element.elements, function (el) {
      if (!el.name || el.disabled || el.name === "action" || el.name === "bump" ||
          el.name === "version" || el.name === "csrf_token" || el.tagName === "BUTTON") return;
      if ((el.type === "checkbox" || el.type === "radio") && !el.checked) return;
      if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.selectedOptions, function (o) { list.push([el.name, o.value]); });
        return;
      }
      list.push([el.name, el.value]);
    });
    return list;
  }

  function put(pairs) {
    var names = {};
    pairs.forEach(function (pair) { (names[pair[0]] = names[pair[0]] || []).push(pair[1]); });
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === "csrf_token" || el.name === "version" || el.disabled) return;
      var values = names[el.name] || [];
      if (el.type === "checkbox") el.checked = values.indexOf(el.value) >= 0;
      else if (!values.length || el.tagName === "BUTTON") return;
      else if (el.type === "radio") el.checked = values.indexOf(el.value) >= 0;
      else el.value = values[0];
    });
  }

  function counterValues(root) {
    var values = {};
    root.querySelectorAll("[data-counter]").forEach(function (box) {
      var output = box.querySelector("output");
      if (output) values[box.getAttribute("data-counter")] = Number(output.textContent) || 0;
    });
    return values;
  }

  // The page as served is the latest the phone knows (it came from the server just now),
  // unless the phone already knows a newer version (the page is an older copy, shown from
  // the service worker without signal): then the newer state is put on the page.
  function takeKnownState() {
    if (known && pageVersion !== null && known.version > pageVersion) {
      pageVersion = known.version;
      if (versionInput) versionInput.value = String(known.version);
      put(known.fields || []);
      Object.keys(known.counters || {}).forEach(function (slug) { confirmed[slug] = known.counters[slug]; });
      return;
    }
    if (pageVersion === null) return;
    known = { version: pageVersion, fields: formFields(form), counters: counterValues(form) };
    saveKnown();
  }

  function read(key) {
    try {
      var found = JSON.parse(localStorage.getItem(key || storeKey) || "null");
      if (found && Array.isArray(found.items)) return found;
    } catch (e) { /* no storage, or a broken entry: start empty */ }
    return { version: null, items: [] };
  }

  // This tab's id: kept through a reload (sessionStorage, marked on the way out), new for
  // a new tab and for a duplicated one (which copies sessionStorage but is no reload).
  function thisTab() {
    var id = null;
    try {
      id = sessionStorage.getItem("crusade-tab-id");
      if (!id || sessionStorage.getItem("crusade-tab-left") !== id) {
        id = newKey();
        sessionStorage.setItem("crusade-tab-id", id);
      }
      sessionStorage.removeItem("crusade-tab-left");
    } catch (e) { id = id || newKey(); }
    return id;
  }

  // Tabs of this draft tell each other when one goes, so its waiting taps are taken over.
  var channel = window.BroadcastChannel ? new BroadcastChannel(prefix) : null;
  if (channel) {
    channel.onmessage = function () {
      setTimeout(adoptOrphans, 300); // once the closed tab has let go of its lock
      setTimeout(adoptOrphans, 2000);
    };
  }

  window.addEventListener("pagehide", function () {
    try { sessionStorage.setItem("crusade-tab-left", tabId); } catch (e) { /* fine */ }
    if (channel && state.items.length) channel.postMessage("gone");
  });
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return; // back from the back/forward cache: still this tab
    try { sessionStorage.removeItem("crusade-tab-left"); } catch (e) { /* fine */ }
  });

  function otherQueues() {
    var keys = [];
    try {
      for (var i = 0; i < localStorage.length; i++) {
        var key = localStorage.key(i);
        if (key !== storeKey && (key === prefix || key.indexOf(prefix + ":") === 0)) keys.push(key);
      }
    } catch (e) { /* no storage */ }
    return keys;
  }

  // Take over the queue of a tab that is gone: its items go before this tab's own (they
  // were entered first), after the one on its way if any.
  function adopt(key) {
    var found = read(key);
    try { localStorage.removeItem(key); } catch (e) { /* fine */ }
    if (!found.items.length) return;
    var at = busy ? 1 : 0;
    state.items.splice.apply(state.items, [at, 0].concat(found.items));
    if (state.version === null || state.version === undefined) state.version = found.version;
    write();
    restore();
    showCounts();
    pump();
  }

  function adoptOrphans() {
    otherQueues().forEach(function (key) {
      var other = key === prefix ? "legacy" : key.slice(prefix.length + 1);
      if (!locks) { if (other === "legacy") adopt(key); return; }
      // A live tab holds its lock: only a gone tab's queue is free to take.
      locks.request("crusade-wizard-tab:" + draft + ":" + other, { ifAvailable: true }, function (lock) {
        if (lock) adopt(key);
      });
    });
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
      // The waiting changes stay on the phone through the reload: nothing is thrown away.
      button.addEventListener("click", function () { window.location.reload(); });
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

  function fields() { return formFields(form); }

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
    if (busy || stopped || !ready) return;
    if (!state.items.length) {
      say("");
      if (waiting) { var button = waiting; waiting = null; form.requestSubmit(button); }
      return;
    }
    busy = true;
    var item = state.items[0];
    var body = new URLSearchParams();
    item.fields.forEach(function (pair) { body.append(pair[0], pair[1]); });
    // A tap counts from whatever the draft holds now: no version, so it never conflicts.
    if (!item.slug && state.version !== null && state.version !== undefined) {
      body.append("version", String(state.version));
    }
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
    // A tap counts on whatever the draft holds: its new version is this page's own only if
    // the draft was still the one this page knows. Otherwise another screen changed it
    // first, and keeping the older version makes the next form change be rebased on theirs.
    var before = item.slug ? response.headers.get("X-Draft-Version-Before") : null;
    if (item.slug && (before === null || Number(before) !== state.version)) version = null;
    if (version) {
      state.version = Number(version);
      if (versionInput) versionInput.value = version;
    }
    if (item.slug) {
      var output = doc.querySelector("output");
      if (output) confirmed[item.slug] = Number(output.textContent) || 0;
    }
    if (response.ok && version) {
      known = {
        version: Number(version),
        fields: item.snapshot ? item.fields : (known ? known.fields : formFields(form)),
        counters: Object.assign({}, known ? known.counters : {}, confirmed),
      };
      saveKnown();
    }
    // The same key with another body: an earlier send of this very change reached the
    // server and was kept (applied, or refused for good), e.g. from a tab closed while it
    // was on its way. It must not be applied twice: drop it quietly.
    if (response.status === 422 && /idempotency_key_reused/.test(text)) {
      state.items.shift();
      write();
      showCounts();
      pump();
      return;
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
    if (response.status === 409 && /draft_conflict/.test(text) && item.snapshot) {
      busy = true; // nothing else goes out until the newer draft is read
      rebase(item);
      return;
    }
    // The session ended, or the battle can no longer change: stop, keep the changes, and
    // say why.
    stopped = response.status;
    var detail = doc.querySelector("[data-code] p") || doc.querySelector("[data-code]");
    say(waitingText() + " and not saved: " +
        (detail ? detail.textContent.trim() : "the server answered " + response.status + "."), true);
  }

  // The draft changed since this phone last saw it: read the step again and put this
  // phone's own changes on the newer draft. A field only this phone changed keeps its new
  // value; a field only the other screen changed takes theirs (shown at once); a field both
  // changed to different values is the player's to decide.
  function rebase(item) {
    fetch(window.location.pathname, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (text) {
        var doc = parse(text);
        var fresh = doc.querySelector("form[data-draft]");
        var freshVersion = fresh && fresh.querySelector("input[name=version]");
        if (!fresh || !freshVersion) throw new Error("no form");
        var theirs = formFields(fresh);
        var base = valuesOf(known ? known.fields : []);
        var mine = valuesOf(item.fields);
        var other = valuesOf(theirs);
        var names = {};
        Object.keys(mine).concat(Object.keys(other)).forEach(function (n) { names[n] = true; });
        var clashes = Object.keys(names).filter(function (n) {
          return mine[n] !== base[n] && other[n] !== base[n] && mine[n] !== other[n];
        });
        var merged = {};
        Object.keys(names).forEach(function (n) {
          merged[n] = mine[n] !== base[n] ? mine[n] : other[n];
        });
        Object.keys(counterValues(doc)).forEach(function (slug) {
          confirmed[slug] = counterValues(doc)[slug];
        });
        var version = Number(freshVersion.value);
        known = { version: version, fields: theirs, counters: Object.assign({}, confirmed) };
        saveKnown();
        state.version = version;
        if (versionInput) versionInput.value = String(version);
        if (!clashes.length) {
          settle(item, merged);
          return;
        }
        ask(item, merged, clashes, mine, other, fresh);
      })
      .catch(function () { retryLater("the newer entries could not be read"); });
  }

  function pairsOf(map) {
    var pairs = [];
    Object.keys(map).forEach(function (n) {
      if (map[n] === undefined) return;
      map[n].split("\u0001").forEach(function (v) { pairs.push([n, v]); });
    });
    return pairs;
  }

  // Send the merged form on the newer draft, and show it.
  function settle(item, merged) {
    item.fields = pairsOf(merged);
    item.key = newKey(); // another body: a new request
    put(item.fields);
    write();
    busy = false;
    stopped = null;
    say("");
    showCounts();
    pump();
  }

  function labelOf(name, fresh) {
    var el = form.querySelector("[name='" + name + "']") || fresh.querySelector("[name='" + name + "']");
    var label = el && (el.closest("label") || (el.id && form.querySelector("label[for='" + el.id + "']")));
    var text = label ? label.textContent : (el && el.getAttribute("aria-label")) || name;
    return text.replace(/\s+/g, " ").trim().slice(0, 80);
  }

  function shown(value) {
    return value === undefined ? "none" : value.split("\u0001").join(", ") || "empty";
  }

  // Both screens changed the same field: show both values; the player keeps theirs or
  // takes the other screen's. The queue waits meanwhile; nothing is dropped.
  function ask(item, merged, clashes, mine, other, fresh) {
    stopped = 409;
    busy = false;
    var el = banner();
    if (!el) return;
    el.textContent = "Changed on another screen while you were entering: ";
    var list = document.createElement("ul");
    clashes.forEach(function (n) {
      var li = document.createElement("li");
      li.textContent = labelOf(n, fresh) + ": yours " + shown(mine[n]) + ", the other screen's " + shown(other[n]);
      list.appendChild(li);
    });
    el.appendChild(list);
    function choice(text, keepMine) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = keepMine ? "" : "secondary";
      button.textContent = text;
      button.addEventListener("click", function () {
        clashes.forEach(function (n) { merged[n] = keepMine ? mine[n] : other[n]; });
        settle(item, merged);
      });
      el.appendChild(button);
      el.appendChild(document.createTextNode(" "));
    }
    choice("Keep mine", true);
    choice("Use theirs", false);
    el.hidden = false;
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
      block.querySelectorAll("select, input").forEach(function (el) { el.disabled = !shown; });
    });
  }
  if (size) size.addEventListener("change", showSize);

  // An army's Agenda fold says what is ticked, as it is ticked.
  form.querySelectorAll("details.agenda-choice").forEach(function (fold) {
    var said = fold.querySelector("[data-chosen-agendas]");
    if (!said) return;
    fold.addEventListener("change", function () {
      var names = Array.prototype.map.call(fold.querySelectorAll("input:checked"), function (box) {
        return box.parentNode.textContent.trim();
      });
      said.textContent = names.length ? names.join(", ") : "none chosen yet";
      // Folded once the battle size's number is ticked: the other army's list comes up.
      var chosenSize = size && size.querySelector("input:checked");
      var needed = chosenSize ? Number(chosenSize.getAttribute("data-agendas")) : 0;
      if (needed && names.length === needed) fold.open = false;
    });
  });

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
      var entered = kills + (kills === 1 ? " kill" : " kills") + " entered here";
      var marked = lost + " enemy " + (lost === 1 ? "unit" : "units") + " marked destroyed (☠)";
      var text = "";
      if (kills > lost) {
        // more kills than losses: the kills need their enemy units ticked (ruling 43)
        text = entered + ", " + marked + ": tick the enemy units that were destroyed.";
      } else if (kills < lost) {
        text = marked + ", " + entered + ": fine if something else destroyed them " +
          "(a mission rule, their own hazard); otherwise add the kills.";
      }
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

  window.addEventListener("online", function () { failures = 0; if (ready) adoptOrphans(); pump(); });

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
    // A step opened before the service worker looked after this page (the first wizard page
    // of the visit, or one reached through "Resume") is kept for later from here: the same
    // cache the service worker keeps steps in (wizard-sw.js), under the step's address.
    if (!navigator.serviceWorker.controller && window.caches && navigator.onLine) {
      caches.open("crusade-wizard-v3").then(function (cache) {
        return cache.add(window.location.pathname);
      }).catch(function () { /* only a convenience */ });
    }
  }

  // Changes still waiting from before a reload: show them on the page, then send them.
  function restore() {
    var last = null;
    state.items.forEach(function (item) { if (item.snapshot) last = item; });
    if (!last) return;
    put(last.fields);
    // A battle size switched to shows its mission list only now (hidden lists are disabled
    // and skipped): put the waiting values in once more, into the list just shown.
    if (size) { showSize(); put(last.fields); }
  }
  takeKnownState();
  // Waiting changes were made on the page as the phone knew it: they go with that version.
  state.version = stored.items.length && stored.version !== null ? stored.version : pageVersion;
  restore();
  showCounts();
  if (locks) {
    // Held until the page goes: other tabs see this queue is alive. Once held, this tab's
    // stored queue is read again (a tab may have adopted it while this one was reloading).
    locks.request("crusade-wizard-tab:" + draft + ":" + tabId, function () {
      var mine = read();
      if (JSON.stringify(mine.items) !== JSON.stringify(state.items)) {
        state.items = mine.items;
        if (mine.items.length) state.version = mine.version;
        restore();
        showCounts();
      }
      ready = true;
      pump();
      adoptOrphans();
      setTimeout(adoptOrphans, 1500); // a tab closed just now lets go of its lock late
      return new Promise(function () { /* never: the lock lives as long as the page */ });
    });
  } else {
    adoptOrphans();
  }
  pump();
})();
