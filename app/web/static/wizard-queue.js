// The battle wizard's save queue (app/web/battle_wizard.py): every tap of a − / + counter
// and every change of a wizard form is queued, sent in order one at a time, each with its
// own Idempotency-Key, and kept on the phone (localStorage) until the server has it. So a
// fast thumb on a slow link never loses a tap, a retry after a lost answer is not counted
// twice, and a dropped connection or a reload only delays what was entered.
//
// A tap is a change by one ("one more melee kill"): it applies to whatever the draft holds
// now, so it is sent without the draft's version and never conflicts.
//
// A form change is kept as what it changed (field by field, with each field's value before
// the change): it is sent as the server's last known form with those fields put on it, with
// that form's version. Every waiting form change is so put on the draft the server holds
// when it goes (issue 40): a field only this phone changed keeps its new value, a field
// only another screen changed keeps theirs, and a field both changed to different values is
// shown with both values for the player to choose (issue 21). When the server refuses a
// change because the draft changed since (another phone, another tab, or this phone's own
// older copy of the page), the step is read again and the check runs on the newer draft.
// Nothing is discarded without being asked. Typed values are queued as they are typed
// (after a short pause), not only on leaving the box, so a reload keeps them too.
//
// The phone also keeps the server's last known state of each step (version, counters, form
// fields): a step shown from the service worker's older copy (a reload without signal) is
// brought up to it, so the page shows what the server has plus what is waiting; and while
// nothing waits, the page looks every few seconds whether another screen changed the draft
// and shows what the server holds.
//
// Each tab keeps its own queue (localStorage is shared by every tab of the site): the key
// carries the tab's id, kept in sessionStorage so a reload finds its queue again. A tab
// holds a Web Lock named after its id for as long as it lives; the queue of a tab that
// was closed with taps still waiting (no signal) is adopted by the next tab of the same
// draft, under that lock, so it is sent once, in order, and never by two tabs at once; its
// form changes are checked against the server's draft like this tab's own.
//
// Both screens changed a field (issue 49): only that field waits for the player's answer,
// asked field by field and named with its army ("Ultramarines: Victory points scored —
// yours 45, theirs 40"); everything else is sent at once. A value another screen replaced
// is told on this page, with what replaced it; a counter both screens moved while apart is
// marked by the server (each tap carries this phone's screen id and the version it knew)
// and shown on both phones with its parts, to keep the sum or one screen's count. A typed
// value the field cannot take is refused on the spot with the reason, and never queued.
//
// When the battle can no longer change (the result was submitted on another screen), what
// is still waiting is listed with a link to the result and a button to drop it: the
// players correct the result from there (revert and re-record, or dispute).
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft]");
  var leftovers = document.querySelector("[data-leftovers-draft]");
  var screenId = thisScreen();
  nameScreens();
  if (!form) {
    if (leftovers) showLeftovers(leftovers);
    return;
  }
  document.documentElement.classList.add("js");
  var draft = form.getAttribute("data-draft");
  var here = window.location.pathname;
  var prefix = "crusade-wizard-queue:" + draft;
  var tabId = thisTab();
  var storeKey = prefix + ":" + tabId;
  var locks = navigator.locks && navigator.locks.request ? navigator.locks : null;
  var ready = !locks; // with Web Locks: only once this tab holds its own lock
  var versionInput = form.querySelector("input[name=version]");
  var csrfInput = form.querySelector("input[name=csrf_token]");
  var pageVersion = versionInput ? Number(versionInput.value) : null;
  var stored = readQueue();
  var state = { items: stored.items.map(upgrade), held: stored.held || [] };
  var busy = false;
  var stopped = null; // the refusal that stopped the queue (a conflict, a closed battle)
  var waiting = null; // the submit button whose click waits for the queue to empty
  var failures = 0;
  var behind = false; // a tap showed the draft changed elsewhere: read it once all is sent
  var typing = null; // the pause after typing, before the typed value is queued
  var confirmed = {}; // counter slug -> the value the server last confirmed
  var seen = null; // the version of the server's state this page shows

  // --- field values ---------------------------------------------------------------------------

  // Field values by name (a name with several values, e.g. ticked boxes, joined in order).
  function valuesOf(pairs) {
    var map = {};
    pairs.forEach(function (pair) {
      map[pair[0]] = map[pair[0]] === undefined ? pair[1] : map[pair[0]] + "\u0001" + pair[1];
    });
    return map;
  }

  function pairsOf(map) {
    var pairs = [];
    Object.keys(map).forEach(function (n) {
      if (map[n] === undefined || map[n] === null) return;
      map[n].split("\u0001").forEach(function (v) { pairs.push([n, v]); });
    });
    return pairs;
  }

  function val(map, name) {
    return map && map[name] !== undefined ? map[name] : null; // null: not sent (unticked)
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

  function put(map) {
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === "csrf_token" || el.name === "version" || el.disabled ||
          el.name === "action" || el.name === "bump" || el.tagName === "BUTTON") return;
      var values = map[el.name] === undefined || map[el.name] === null ? [] : map[el.name].split("\u0001");
      if (el.getAttribute("data-refused") !== null) return; // kept as typed, with its reason
      if (el.type === "checkbox" || el.type === "radio") el.checked = values.indexOf(el.value) >= 0;
      else if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.options, function (o) { o.selected = values.indexOf(o.value) >= 0; });
      } else if (el.type === "hidden") return;
      else el.value = values.length ? values[0] : "";
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

  // --- the server's last known state of each step -------------------------------------------

  function knownKey(page) { return "crusade-wizard-known:" + draft + ":" + page; }

  function knownFor(page) {
    try {
      var found = JSON.parse(localStorage.getItem(knownKey(page)) || "null");
      if (found && typeof found.version === "number") {
        if (Array.isArray(found.fields)) found.fields = valuesOf(found.fields); // older format
        found.fields = found.fields || {};
        found.counters = found.counters || {};
        return found;
      }
    } catch (e) { /* none */ }
    return null;
  }

  // The server's versions only grow: what another tab of the phone stored meanwhile is
  // kept when it is newer.
  function saveKnown(page, known) {
    var stored = knownFor(page);
    if (stored && stored.version > known.version) return;
    try { localStorage.setItem(knownKey(page), JSON.stringify(known)); } catch (e) { /* fine */ }
    if (page === here) {
      seen = known.version;
      if (versionInput) versionInput.value = String(known.version);
    }
  }

  // The page as served is the latest the phone knows (it came from the server just now),
  // unless the phone already knows a newer version (the page is an older copy, shown from
  // the service worker without signal): then the newer state is put on the page.
  function takeKnownState() {
    var known = knownFor(here);
    if (known && pageVersion !== null && known.version > pageVersion) {
      seen = known.version;
      if (versionInput) versionInput.value = String(known.version);
      put(known.fields);
      Object.keys(known.counters).forEach(function (slug) { confirmed[slug] = known.counters[slug]; });
      return;
    }
    if (pageVersion === null) return;
    saveKnown(here, { version: pageVersion, fields: valuesOf(formFields(form)), counters: counterValues(form) });
  }

  // The form as it will be once every waiting change of the page is in: the server's last
  // known form with the changes put on it, in order.
  function expected(page) {
    var known = knownFor(page);
    var map = Object.assign({}, known ? known.fields : {});
    state.held.forEach(function (h) { if (h.page === page) map[h.name] = h.mine; });
    state.items.forEach(function (item) {
      if (!item.change || item.page !== page) return;
      Object.keys(item.changes).forEach(function (n) { map[n] = item.changes[n]; });
    });
    return map;
  }

  // --- the queue on the phone -------------------------------------------------------------------

  function readQueue(key) {
    try {
      var found = JSON.parse(localStorage.getItem(key || storeKey) || "null");
      if (found && Array.isArray(found.items)) return found;
    } catch (e) { /* no storage, or a broken entry: start empty */ }
    return { items: [], held: [] };
  }

  function pageOf(url) { return url.replace(/\/(save|total)$/, ""); }

  // A form change kept by an older version of this script (the whole form): what differs
  // from the server's last known form is its change; its values before are unknown, so it
  // is put on the server's draft as it is.
  function upgrade(item) {
    if (!item.snapshot || item.change) return item;
    var page = pageOf(item.url);
    var known = knownFor(page);
    var mine = valuesOf(item.fields || []);
    var changes = {};
    Object.keys(mine).concat(Object.keys(known ? known.fields : {})).forEach(function (n) {
      if (val(mine, n) !== val(known && known.fields, n)) changes[n] = val(mine, n);
    });
    return { url: item.url, page: page, change: true, changes: changes, base: {}, key: item.key, swap: item.swap };
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

  // --- this phone among the screens of the battle ----------------------------------------------

  // This phone's id among the screens of a battle (every tab of the phone shares it): sent
  // with each tap, so the server tells two phones' taps on one counter apart.
  function thisScreen() {
    var id = null;
    try {
      id = localStorage.getItem("crusade-screen-id");
      if (!id) { id = newKey(); localStorage.setItem("crusade-screen-id", id); }
    } catch (e) { id = id || newKey(); }
    return id;
  }

  // A counter moved on two screens: each part is said as this phone's or another's.
  function nameScreens() {
    document.querySelectorAll("#overlaps [data-screen]").forEach(function (el) {
      var mine = el.getAttribute("data-screen") === screenId;
      var moved = Number(el.getAttribute("data-moved") || "0");
      var signed = (moved > 0 ? "+" : "") + moved;
      if (el.tagName === "BUTTON") {
        el.textContent = el.textContent.replace(/\(only .*\)$/, "(only " + (mine ? "this screen's " : "the other screen's ") + signed + ")");
      } else {
        el.textContent = signed + (mine ? " here" : " from another screen");
      }
    });
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
    flushTyping(); // a value typed just now is kept on the phone before the page goes
    try { sessionStorage.setItem("crusade-tab-left", tabId); } catch (e) { /* fine */ }
    if (channel && state.items.length) channel.postMessage("gone");
  });
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return; // back from the back/forward cache: still this tab
    try { sessionStorage.removeItem("crusade-tab-left"); } catch (e) { /* fine */ }
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") flushTyping();
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
  // were entered first), after the one on its way if any. Its form changes are checked
  // against the server's draft like this tab's own (a field both changed is asked about).
  function adopt(key) {
    var found = readQueue(key);
    try { localStorage.removeItem(key); } catch (e) { /* fine */ }
    (found.held || []).forEach(function (h) { holdOne(h); });
    if (!found.items.length) { write(); showClashes(); return; }
    var at = busy ? 1 : 0;
    state.items.splice.apply(state.items, [at, 0].concat(found.items.map(upgrade)));
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
      if (state.items.length || state.held.length) {
        localStorage.setItem(storeKey, JSON.stringify({ items: state.items, held: state.held }));
      } else localStorage.removeItem(storeKey);
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

  function enqueue(item) {
    item.key = newKey();
    state.items.push(item);
    write();
    pump();
  }

  // What the player changed on the form since what the phone holds (the server's form and
  // the changes waiting): queued as one change, each field with its value before.
  function noteChange() {
    if (typing) { clearTimeout(typing); typing = null; }
    var url = form.getAttribute("data-autosave");
    if (!url) return;
    var now = valuesOf(formFields(form));
    var before = expected(here);
    var known = knownFor(here);
    var changes = {};
    var base = {};
    var any = false;
    form.querySelectorAll("[data-refused]").forEach(function (el) { // never queued as typed
      if (val(before, el.name) === null) delete now[el.name];
      else now[el.name] = before[el.name];
    });
    Object.keys(now).concat(Object.keys(before)).forEach(function (n) {
      if (n in changes || val(now, n) === val(before, n)) return;
      changes[n] = val(now, n);
      base[n] = val(before, n);
      var held = heldAt(here, n);
      if (held >= 0) { // typed again over a question: the new value is the answer
        state.held.splice(held, 1);
        base[n] = val(known && known.fields, n);
      }
      any = true;
    });
    if (!any) return;
    showClashes();
    var words = {};
    Object.keys(changes).forEach(function (n) { words[n] = labelOf(n) + ": " + shownValue(n, changes[n]); });
    var last = state.items[state.items.length - 1];
    // A change right after another of this form, not sent yet: one change (only the latest
    // value of a field matters; its value before is the first change's).
    if (last && last.change && last.page === here && !(busy && state.items.length === 1)) {
      Object.keys(changes).forEach(function (n) {
        if (!(n in last.base) && !(n in last.changes)) last.base[n] = base[n];
        last.changes[n] = changes[n];
        (last.words = last.words || {})[n] = words[n];
      });
      last.key = newKey();
      write();
      pump();
      return;
    }
    enqueue({ url: url, page: here, change: true, changes: changes, base: base, words: words,
              swap: form.getAttribute("data-swap") });
  }

  function flushTyping() { if (typing) noteChange(); }

  function tap(button) {
    var spec = button.value; // "card:field:+1"
    var box = button.closest("[data-counter]");
    var slug = box.getAttribute("data-counter");
    var delta = spec.slice(-2) === "+1" ? 1 : -1;
    var shown = Number(box.querySelector("output").textContent) || 0;
    var top = Number(box.getAttribute("data-max") || "99");
    if (shown + delta < 0 || shown + delta > top) return; // the server would refuse it too
    flushTyping(); // in order: a value typed before the tap goes first
    var label = box.getAttribute("aria-label"); // "Ranged kills, Captain"
    var known = knownFor(here);
    enqueue({ url: form.getAttribute("data-taps"), slug: slug, delta: delta, page: here,
              fields: [["bump", spec], ["screen", screenId], ["seen", known ? String(known.version) : ""]],
              label: armyOf(box) + (label || slug) });
    showCounts();
  }

  // --- both screens changed a field --------------------------------------------------------------

  // The fields that waiting changes of the page change and the server's draft changed too,
  // to another value: for each, the first waiting change of that field (its value before
  // is what the phone had), the phone's value (the last change's) and the server's.
  function clashes(page, known) {
    var first = {};
    var list = [];
    var mine = expected(page);
    state.items.forEach(function (item) {
      if (!item.change || item.page !== page) return;
      Object.keys(item.changes).forEach(function (n) {
        if (n in first) return;
        first[n] = item;
        if (!(n in item.base)) return; // kept by an older script: no value before
        var theirs = val(known.fields, n);
        if (theirs !== item.base[n] && val(mine, n) !== theirs) {
          list.push({ name: n, item: item, mine: val(mine, n), theirs: theirs });
        }
      });
    });
    return list;
  }

  function dropEmpty() {
    state.items = state.items.filter(function (item) {
      return !item.change || Object.keys(item.changes).length > 0;
    });
  }

  function heldAt(page, name) {
    for (var i = 0; i < state.held.length; i++) {
      if (state.held[i].page === page && state.held[i].name === name) return i;
    }
    return -1;
  }

  function holdOne(h) {
    var at = heldAt(h.page, h.name);
    if (at >= 0) state.held.splice(at, 1);
    state.held.push(h);
  }

  // Only the fields both screens changed wait for the player's answer: each is taken out of
  // the waiting changes (its latest value kept with the question), and the rest goes on.
  function hold(page, found) {
    found.forEach(function (c) {
      var words = null;
      state.items.forEach(function (item) {
        if (!item.change || item.page !== page || !(c.name in item.changes)) return;
        words = (item.words && item.words[c.name]) || words;
        delete item.changes[c.name];
        delete item.base[c.name];
        if (item.words) delete item.words[c.name];
        if (item.body) item.key = newKey(); // another body from now on
      });
      holdOne({ page: page, name: c.name, mine: c.mine, theirs: c.theirs, words: words });
    });
    dropEmpty();
    write();
    showClashes();
  }

  // The fields asked about on this page, one line each: "Ultramarines: Victory points
  // scored — yours 45, theirs 40", with Keep mine / Use theirs for that field alone.
  function showClashes() {
    var el = document.getElementById("clashes");
    if (!el) return;
    var mine = state.held.filter(function (h) { return h.page === here; });
    el.textContent = "";
    el.hidden = !mine.length;
    if (!mine.length) return;
    var p = document.createElement("p");
    p.textContent = "Changed on another screen while you were entering; everything else is saved. " +
      "For each, keep yours or use theirs:";
    el.appendChild(p);
    var list = document.createElement("ul");
    mine.forEach(function (h) {
      var li = document.createElement("li");
      var label = labelOf(h.name);
      li.setAttribute("data-clash", h.name);
      li.appendChild(document.createTextNode(label + " — yours " + shownValue(h.name, h.mine) +
        ", theirs " + shownValue(h.name, h.theirs) + " "));
      li.appendChild(answerButton("Keep mine", label, false, function () { answer(h, true); }));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(answerButton("Use theirs", label, true, function () { answer(h, false); }));
      list.appendChild(li);
    });
    el.appendChild(list);
  }

  function answerButton(text, label, secondary, then) {
    var button = document.createElement("button");
    button.type = "button";
    if (secondary) button.className = "secondary";
    button.textContent = text;
    button.setAttribute("aria-label", text + ": " + label);
    button.addEventListener("click", then);
    return button;
  }

  // Keep mine: sent as a change of that field over the value the server holds now (if it
  // moved again meanwhile, the player is asked again). Use theirs: dropped.
  function answer(h, keepMine) {
    var at = heldAt(h.page, h.name);
    if (at < 0) return;
    state.held.splice(at, 1);
    if (keepMine) {
      var known = knownFor(h.page);
      var changes = {};
      var base = {};
      var words = {};
      changes[h.name] = h.mine;
      base[h.name] = val(known && known.fields, h.name);
      words[h.name] = h.words || labelOf(h.name) + ": " + shownValue(h.name, h.mine);
      state.items.push({ url: h.page + "/save", page: h.page, change: true, changes: changes,
                         base: base, words: words, key: newKey() });
    }
    write();
    showClashes();
    if (h.page === here) restore();
    showCounts();
    pump();
  }

  // --- sending, one at a time ---------------------------------------------------------------

  function pump() {
    status();
    if (busy || stopped || !ready) return;
    if (!state.items.length) {
      say("");
      if (waiting) { var button = waiting; waiting = null; form.requestSubmit(button); return; }
      if (behind) { behind = false; busy = true; refresh(here, function () { busy = false; pump(); }); }
      return;
    }
    var item = state.items[0];
    var body = new URLSearchParams();
    if (item.change) {
      var known = knownFor(item.page);
      if (!known) { // never read on this phone (a closed tab's change of another step)
        busy = true;
        refresh(item.page, function () { busy = false; pump(); });
        return;
      }
      var found = clashes(item.page, known);
      if (found.length) { hold(item.page, found); pump(); return; }
      var merged = Object.assign({}, known.fields);
      Object.keys(item.changes).forEach(function (n) { merged[n] = item.changes[n]; });
      item.sent = merged;
      pairsOf(merged).forEach(function (pair) { body.append(pair[0], pair[1]); });
      body.append("version", String(known.version));
      // Another body (put on a newer draft) is another request; the same one, sent again
      // after a lost answer, keeps its key so it is never applied twice.
      if (item.body && item.body !== body.toString()) item.key = newKey();
      item.body = body.toString();
      write();
    } else {
      item.fields.forEach(function (pair) { body.append(pair[0], pair[1]); });
    }
    busy = true;
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
    setTimeout(pump, Math.min(8000, 500 * Math.pow(2, failures)));
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
    var known = knownFor(item.page) || { version: -1, fields: {}, counters: {} };
    if (item.slug) {
      var output = doc.querySelector("output");
      var was = confirmed[item.slug];
      if (output) confirmed[item.slug] = Number(output.textContent) || 0;
      // The count moved by more than this tap: another screen moved it too.
      var other = response.ok && output && was !== undefined ? confirmed[item.slug] - was - item.delta : 0;
      if (other && item.page === here) {
        tell(item.slug, item.label + " — " + (other > 0 ? "+" : "") + other +
          " from another screen (now " + confirmed[item.slug] + ")");
      }
      if (response.headers.get("X-Draft-Overlaps")) behind = true; // the step shows them
      // A tap counts on whatever the draft holds: its new version is this page's own only
      // if the draft was still the one this page knows. Otherwise another screen changed it
      // first: the next form change is checked against theirs, and the page reads the
      // draft again once nothing waits.
      var before = response.headers.get("X-Draft-Version-Before");
      if (response.ok && version) {
        if (before !== null && Number(before) === known.version) known.version = Number(version);
        else behind = true;
        if (item.slug in confirmed) known.counters[item.slug] = confirmed[item.slug];
        saveKnown(item.page, known);
      }
    } else if (response.ok && version && item.change) {
      saveKnown(item.page, { version: Number(version), fields: item.sent || known.fields, counters: known.counters });
    }
    // The same key with another body: an earlier send of this very change reached the
    // server and was kept (applied, or refused for good), e.g. from a tab closed while it
    // was on its way. It must not be applied twice: drop it quietly, and read the draft.
    if (response.status === 422 && /idempotency_key_reused/.test(text)) {
      state.items.shift();
      behind = true;
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
    if (response.status === 409 && /draft_conflict/.test(text) && item.change) {
      busy = true; // nothing else goes out until the newer draft is read
      refresh(item.page, function () { busy = false; pump(); });
      return;
    }
    // The session ended, or the battle can no longer change: stop, keep the changes, and
    // say why.
    stopped = response.status;
    if (/draft_not_open|draft_mustered/.test(text)) {
      closed();
      return;
    }
    var detail = doc.querySelector("[data-code] p") || doc.querySelector("[data-code]");
    say(waitingText() + " and not saved: " +
        (detail ? detail.textContent.trim() : "the server answered " + response.status + "."), true);
  }

  // Read a step as the server holds it now: its version, form and counters become what the
  // phone knows; on this page, the form shows them with the changes still waiting on top.
  function refresh(page, then) {
    fetch(page, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        var moved = response.redirected && new URL(response.url).pathname !== page;
        return response.text().then(function (text) { return { text: text, moved: moved }; });
      })
      .then(function (got) {
        var doc = parse(got.text);
        var fresh = doc.querySelector("form[data-draft]");
        var freshVersion = fresh && fresh.querySelector("input[name=version]");
        if (got.moved || !fresh || !freshVersion) { // the step is closed: submitted, mustered
          stopped = 409;
          busy = false;
          closed();
          return;
        }
        // A value being typed here is queued first, against what the player saw: putting
        // the newer draft on the form must not wipe it (nor hide a clash with it).
        if (page === here) flushTyping();
        var counts = counterValues(doc);
        var freshFields = valuesOf(formFields(fresh));
        if (page === here) replaced(knownFor(page), freshFields, counts);
        saveKnown(page, { version: Number(freshVersion.value), fields: freshFields, counters: counts });
        // A field asked about shows the other screen's latest value; once both agree,
        // there is nothing left to ask.
        state.held = state.held.filter(function (h) {
          if (h.page !== page) return true;
          h.theirs = val(freshFields, h.name);
          return h.theirs !== h.mine;
        });
        write();
        if (page === here) {
          showClashes();
          swap("#overlaps", doc);
          nameScreens();
          Object.keys(counts).forEach(function (slug) { confirmed[slug] = counts[slug]; });
          restore();
          showCounts();
        }
        then();
      })
      .catch(function () { retryLater("the newer entries could not be read"); });
  }

  // --- what another screen changed -------------------------------------------------------------

  var told = {}; // field name or counter -> the line said about it

  // Said on this page until the player has read it: what another screen put in place of
  // what this page showed.
  function tell(key, line) {
    told[key] = line;
    var el = document.getElementById("changed-elsewhere");
    if (!el) return;
    el.textContent = "";
    var p = document.createElement("p");
    p.textContent = "Changed on another screen:";
    el.appendChild(p);
    var list = document.createElement("ul");
    Object.keys(told).forEach(function (k) {
      var li = document.createElement("li");
      li.textContent = told[k];
      list.appendChild(li);
    });
    el.appendChild(list);
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.textContent = "Got it";
    button.addEventListener("click", function () { told = {}; el.hidden = true; el.textContent = ""; });
    el.appendChild(button);
    el.hidden = false;
  }

  // The step read again: each field and counter another screen changed since this page
  // last knew the server's, with what replaced it (fields this phone is changing too are
  // asked about instead).
  function replaced(known, fields, counts) {
    if (!known) return;
    var mine = {};
    state.items.forEach(function (item) {
      if (item.change && item.page === here) Object.keys(item.changes).forEach(function (n) { mine[n] = true; });
    });
    state.held.forEach(function (h) { if (h.page === here) mine[h.name] = true; });
    var names = {};
    Object.keys(known.fields).concat(Object.keys(fields)).forEach(function (n) { names[n] = true; });
    Object.keys(names).forEach(function (n) {
      var before = val(known.fields, n);
      var after = val(fields, n);
      if (sameEntry(before, after) || mine[n] || n === "form") return;
      var el = form.querySelector("[name='" + n + "']");
      if (el && el.type === "radio") { // a choice among several: said once, by its group
        tell(n, armyOf(el) + radioWords(el) + " — " + shownValue(n, before) + " replaced by " + shownValue(n, after));
        return;
      }
      tell(n, labelOf(n) + " — " + shownValue(n, before) + " replaced by " + shownValue(n, after));
    });
    Object.keys(counts).forEach(function (slug) {
      var before = known.counters[slug];
      if (before === undefined || before === counts[slug]) return;
      var box = form.querySelector("[data-counter='" + slug + "']");
      var moved = counts[slug] - before;
      tell(slug, armyOf(box) + ((box && box.getAttribute("aria-label")) || slug) + " — " + (moved > 0 ? "+" : "") +
        moved + " from another screen (now " + counts[slug] + ")");
    });
  }

  // The same entry written another way (dice "4 2 6 5 3" shown back as "4 2 6 / 5 3", a
  // number's leading zero): nobody replaced it.
  function sameEntry(a, b) {
    function plain(v) {
      return v === null ? "" : String(v).replace(/[\s,\/]+/g, " ").trim().replace(/\b0+(\d)/g, "$1");
    }
    return plain(a) === plain(b);
  }

  function radioWords(el) {
    var label = el.getAttribute("aria-label") || el.name;
    return label.replace(/:.*$/, "");
  }

  // The army a field or counter belongs to, as the start of its name ("Ultramarines: ").
  function armyOf(el) {
    var side = el && el.closest("[data-army-name]");
    return side ? side.getAttribute("data-army-name") + ": " : "";
  }

  function labelOf(name) {
    var el = form.querySelector("[name='" + name + "']");
    var label = el && (el.closest("label") || (el.id && form.querySelector("label[for='" + el.id + "']")));
    var text = label ? label.textContent : (el && el.getAttribute("aria-label")) || name;
    if (el && el.getAttribute("aria-label") && (el.type === "checkbox" || el.type === "radio")) {
      text = el.getAttribute("aria-label");
    }
    return armyOf(el) + text.replace(/\s+/g, " ").trim().slice(0, 80);
  }

  function shownValue(name, value) {
    var box = form.querySelector("[name='" + name + "']");
    if ((value === null || value === undefined) && box && box.type === "checkbox") return "not ticked";
    if (value === null || value === undefined) return "none";
    return value.split("\u0001").map(function (v) {
      var el = form.querySelector("[name='" + name + "'][value='" + (window.CSS && CSS.escape ? CSS.escape(v) : v) + "']");
      if (el && (el.type === "checkbox" || el.type === "radio")) {
        if (el.type === "checkbox" && el.value === "1") return "ticked";
        var label = el.getAttribute("aria-label") || (el.closest("label") && el.closest("label").textContent) || v;
        return label.replace(/^[^:]*:\s*/, "").replace(/\s+/g, " ").trim();
      }
      return v;
    }).join(", ") || "empty";
  }

  // --- the battle can no longer change ---------------------------------------------------------

  // The fields asked about, as changes (for the list of what was not saved).
  function heldItems() {
    return state.held.map(function (h) {
      var changes = {};
      var words = {};
      changes[h.name] = h.mine;
      if (h.words) words[h.name] = h.words;
      return { change: true, changes: changes, words: words };
    });
  }

  // What waits, in words: each field changed with its value, each counter with its taps
  // (as the page said them when they were made).
  function describe(items) {
    var lines = [];
    var fields = {};
    var taps = {};
    var names = {};
    items.forEach(function (item) {
      if (item.change) {
        Object.keys(item.changes).forEach(function (n) {
          fields[n] = (item.words && item.words[n]) || n + ": " + (item.changes[n] === null ? "none" : item.changes[n]);
        });
      } else if (item.slug) {
        taps[item.slug] = (taps[item.slug] || 0) + item.delta;
        names[item.slug] = item.label || item.slug;
      }
    });
    Object.keys(fields).forEach(function (n) { lines.push(fields[n]); });
    Object.keys(taps).forEach(function (slug) {
      if (taps[slug]) lines.push(names[slug] + ": " + (taps[slug] > 0 ? "+" : "") + taps[slug]);
    });
    return lines;
  }

  function closed() {
    var el = banner();
    if (!el) return;
    el.textContent = "";
    var lines = describe(state.items.concat(heldItems()));
    var p = document.createElement("p");
    var link = document.createElement("a");
    link.href = draft;
    link.setAttribute("role", "button");
    link.textContent = "Open the battle as it is now";
    if (!lines.length) {
      p.textContent = "Another screen moved this battle on (its muster done, or its result submitted). ";
      el.appendChild(p);
      el.appendChild(link);
      el.hidden = false;
      status();
      return;
    }
    el.setAttribute("data-testid", "not-saved");
    p.textContent = "Another screen moved this battle on (its muster done, or its result submitted), so " +
      (lines.length === 1 ? "this change made here was" : "these " + lines.length + " changes made here were") +
      " not saved:";
    el.appendChild(p);
    leftoverList(el, lines);
    el.appendChild(link);
    el.appendChild(document.createTextNode(" "));
    dropButton(el, function () {
      state.items = [];
      state.held = [];
      showClashes();
      write();
      say("");
      el.removeAttribute("data-testid");
      status();
    });
    el.hidden = false;
    status();
  }

  function leftoverList(el, lines) {
    var list = document.createElement("ul");
    lines.forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      list.appendChild(li);
    });
    el.appendChild(list);
    var note = document.createElement("p");
    note.textContent = "Compare them with the result: to correct it, dispute it, or revert the " +
      "battle and record it again.";
    el.appendChild(note);
  }

  function dropButton(el, drop) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.textContent = "Drop these changes";
    button.addEventListener("click", drop);
    el.appendChild(button);
  }

  // The battle's page, once submitted: changes this phone still holds for its wizard (made
  // while another screen submitted) are listed beside the result, with a button to drop them.
  function showLeftovers(el) {
    var stem = "crusade-wizard-queue:" + el.getAttribute("data-leftovers-draft");
    var keys = [];
    var items = [];
    try {
      for (var i = 0; i < localStorage.length; i++) {
        var key = localStorage.key(i);
        if (key === stem || key.indexOf(stem + ":") === 0) keys.push(key);
      }
      keys.forEach(function (key) {
        var found = JSON.parse(localStorage.getItem(key) || "null");
        if (found && Array.isArray(found.items)) items = items.concat(found.items);
        (found && found.held || []).forEach(function (h) {
          var changes = {};
          var words = {};
          changes[h.name] = h.mine;
          if (h.words) words[h.name] = h.words;
          items.push({ change: true, changes: changes, words: words });
        });
      });
    } catch (e) { return; }
    var lines = describe(items);
    if (!lines.length) return;
    var p = document.createElement("p");
    p.textContent = (lines.length === 1 ? "A change" : lines.length + " changes") +
      " made on this phone after the result was submitted from another screen " +
      (lines.length === 1 ? "was" : "were") + " not saved:";
    el.appendChild(p);
    leftoverList(el, lines);
    dropButton(el, function () {
      keys.forEach(function (key) { try { localStorage.removeItem(key); } catch (e) { /* fine */ } });
      el.hidden = true;
    });
    el.hidden = false;
  }

  function swap(selector, doc) {
    var fresh = doc.querySelector(selector);
    var old = document.querySelector(selector);
    if (fresh && old) old.replaceWith(document.importNode(fresh, true));
  }

  // While nothing waits, look now and then whether another screen changed the draft: the
  // page shows what the server holds.
  function watch() {
    var url = form.getAttribute("data-watch");
    if (!url || busy || stopped || !ready || typing || state.items.length || !navigator.onLine ||
        document.visibilityState !== "visible") return;
    var mine = knownFor(here);
    if (mine && mine.version !== seen) { // another tab of this phone saved a newer draft
      seen = mine.version;
      Object.keys(mine.counters).forEach(function (slug) { confirmed[slug] = mine.counters[slug]; });
      restore();
      showCounts();
      if (versionInput) versionInput.value = String(mine.version);
    }
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (found) {
        var known = knownFor(here);
        if (!found || busy || stopped || state.items.length || typing) return;
        if (found.step === "finished" || (known && found.version !== known.version)) {
          busy = true;
          refresh(here, function () { busy = false; pump(); });
        }
      })
      .catch(function () { /* the next look */ });
  }
  setInterval(watch, 4000);
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

  // After the game: a warning (not a refusal) when one side's kills and the enemy units it
  // destroyed (ticked in its own call-out, issue 49) do not add up; a unit can also fall to
  // a mission rule or its own hazard.
  function checkKills() {
    form.querySelectorAll("[data-kills-check]").forEach(function (note) {
      var side = note.getAttribute("data-kills-check");
      var ours = form.querySelector("[data-side='" + side + "']");
      if (!ours) return;
      var kills = 0;
      ours.querySelectorAll("[data-counter*='-destroyed_'] output").forEach(function (o) {
        kills += Number(o.textContent) || 0;
      });
      var lost = ours.querySelectorAll("input[data-destroyed]:checked").length;
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

  // A typed number the field cannot take ("4.5", "-3", "1e2", "250") is refused on the
  // spot, with the reason beside it; it stays in the box as typed and is never queued (the
  // server keeps its last value), until it is corrected.
  function checkTyped(el) {
    if (!el || el.type !== "number" || !el.name) return;
    var min = Number(el.getAttribute("min") || "0");
    var max = Number(el.getAttribute("max") || "9999");
    var typed = el.value.trim();
    var bad = el.validity && el.validity.badInput ||
      typed !== "" && (!/^\d+$/.test(typed) || Number(typed) < min || Number(typed) > max);
    var note = document.getElementById("typed-" + el.name);
    if (!bad) {
      if (note) note.remove();
      if (el.getAttribute("data-refused") !== null) {
        el.removeAttribute("data-refused");
        el.removeAttribute("aria-invalid");
        el.removeAttribute("aria-describedby");
      }
      return;
    }
    var name = labelOf(el.name);
    var reason = name.replace(/^[^:]*: /, "") + " takes a whole number from " + min + " to " + max +
      (typed ? ": " + typed + " is not one" : "") + ". Not saved: correct it here.";
    if (!note) {
      note = document.createElement("small");
      note.id = "typed-" + el.name;
      note.className = "field-error";
      note.setAttribute("role", "alert");
      (el.closest("label") || el).insertAdjacentElement("afterend", note);
    }
    note.textContent = reason;
    el.setAttribute("data-refused", "");
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", note.id);
  }
  form.addEventListener("input", function (event) { checkTyped(event.target); });
  form.addEventListener("change", function (event) { checkTyped(event.target); });

  if (form.getAttribute("data-autosave")) {
    form.addEventListener("change", function (event) {
      if (event.target.closest("[data-counter]")) return;
      noteChange();
    });
    // A value being typed is queued after a short pause, not only on leaving the box: a
    // reload (or a closed tab) keeps it too.
    form.addEventListener("input", function (event) {
      var el = event.target;
      if (!el.name || el.closest("[data-counter]") || el.type === "checkbox" || el.type === "radio") return;
      if (typing) clearTimeout(typing);
      typing = setTimeout(noteChange, 600);
    });
  }

  // Moving on waits until every change has reached the server (in order), then goes.
  form.addEventListener("submit", function (event) {
    flushTyping();
    var asked = state.held.some(function (h) { return h.page === here; });
    var refused = form.querySelector("[data-refused]");
    if (!state.items.length && !stopped && !asked && !refused) return;
    event.preventDefault();
    if (refused) { refused.focus(); return; }
    if (asked) {
      say("Keep yours or use theirs for each field changed on another screen first (above).");
      return;
    }
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

  // A step kept on the phone and shown without signal links every step the phone holds
  // (the list was the server's when the copy was kept; steps reached since are kept too).
  function linkKeptSteps() {
    if (navigator.onLine || !window.caches) return;
    document.querySelectorAll("ol.steps li[data-step-url]").forEach(function (li) {
      if (li.querySelector("a, [aria-current]")) return;
      var url = li.getAttribute("data-step-url");
      caches.match(url, { ignoreVary: true }).then(function (kept) {
        if (!kept || li.querySelector("a")) return;
        var link = document.createElement("a");
        link.href = url;
        link.textContent = li.textContent.trim();
        li.textContent = "";
        li.appendChild(link);
      }).catch(function () { /* only a convenience */ });
    });
  }
  window.addEventListener("offline", linkKeptSteps);
  linkKeptSteps();

  // Changes still waiting (from before a reload, or adopted): the page shows the server's
  // last known form with them on top.
  function restore() {
    if (!knownFor(here)) return;
    flushTyping(); // a value being typed is a waiting change, put back on top below
    put(expected(here));
    // A battle size switched to shows its mission list only now (hidden lists are disabled
    // and skipped): put the waiting values in once more, into the list just shown.
    if (size) { showSize(); put(expected(here)); }
  }
  takeKnownState();
  restore();
  showCounts();
  if (locks) {
    // Held until the page goes: other tabs see this queue is alive. Once held, this tab's
    // stored queue is read again (a tab may have adopted it while this one was reloading).
    locks.request("crusade-wizard-tab:" + draft + ":" + tabId, function () {
      var mine = readQueue().items.map(upgrade);
      if (JSON.stringify(mine) !== JSON.stringify(state.items)) {
        state.items = mine;
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
