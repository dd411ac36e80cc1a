// What waits on this phone for the battle wizard (issue 49), said outside the wizard: on the
// campaign page ("3 changes waiting on this phone: open the battle to send them") and on the
// app's own offline page that the service worker (wizard-sw.js) shows for a page it cannot
// load without signal, with links to the wizard steps the phone keeps.
//
// The wizard's queue (wizard-queue.js) keeps each tab's waiting changes in localStorage under
// "crusade-wizard-queue:<draft address>:<tab>", and its questions (fields both screens
// changed) with them; the steps kept for no signal are in the "crusade-wizard-v3" cache.
(function () {
  "use strict";

  // Draft address -> { changes: n, step: the step the first change was made on }.
  function waiting(prefix) {
    var found = {};
    try {
      for (var i = 0; i < localStorage.length; i++) {
        var key = localStorage.key(i);
        if (key.indexOf("crusade-wizard-queue:") !== 0) continue;
        var draft = key.slice("crusade-wizard-queue:".length).replace(/:[^/:]*$/, "");
        if (prefix && draft.indexOf(prefix) !== 0) continue;
        var queue = JSON.parse(localStorage.getItem(key) || "null");
        if (!queue) continue;
        var items = (queue.items || []).concat(queue.held || []);
        if (!items.length) continue;
        var entry = found[draft] || (found[draft] = { changes: 0, step: null });
        entry.changes += items.length;
        entry.step = entry.step || items[0].page || null;
      }
    } catch (e) { /* no storage: nothing to say */ }
    return found;
  }

  function line(draft, entry) {
    var li = document.createElement("li");
    var link = document.createElement("a");
    link.href = entry.step || draft;
    link.textContent = "Open the battle in progress to send them";
    li.appendChild(document.createTextNode(entry.changes + (entry.changes === 1 ? " change" : " changes") +
      " waiting on this phone. "));
    li.appendChild(link);
    return li;
  }

  // The campaign page (and any page with the slot): what waits for this campaign's drafts.
  document.querySelectorAll("[data-waiting-for]").forEach(function (slot) {
    var found = waiting(slot.getAttribute("data-waiting-for"));
    var drafts = Object.keys(found);
    if (!drafts.length) return;
    var list = document.createElement("ul");
    drafts.forEach(function (draft) { list.appendChild(line(draft, found[draft])); });
    slot.appendChild(list);
    slot.hidden = false;
  });

  // The offline page: what waits, and every step kept on this phone.
  var offline = document.querySelector("[data-offline-waiting]");
  if (!offline) return;
  var found = waiting("");
  var list = document.createElement("ul");
  Object.keys(found).forEach(function (draft) { list.appendChild(line(draft, found[draft])); });
  if (list.children.length) {
    offline.appendChild(list);
    offline.hidden = false;
  }
  var kept = document.querySelector("[data-offline-kept]");
  if (!kept || !window.caches) return;
  caches.open("crusade-wizard-v3").then(function (cache) { return cache.keys(); }).then(function (requests) {
    var steps = requests.map(function (r) { return new URL(r.url).pathname; })
      .filter(function (path) { return /^\/campaigns\/\d+\/drafts\/\d+\/[a-z_]+$/.test(path); });
    if (!steps.length) return;
    var links = document.createElement("ul");
    steps.forEach(function (path) {
      var li = document.createElement("li");
      var link = document.createElement("a");
      link.href = path;
      link.textContent = "Battle in progress: " + path.split("/").pop().replace(/_/g, " ") + " step";
      li.appendChild(link);
      links.appendChild(li);
    });
    kept.appendChild(links);
    kept.hidden = false;
  }).catch(function () { /* only a convenience */ });
})();
