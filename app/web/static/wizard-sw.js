// The battle wizard's service worker (served as /wizard-sw.js by app/web/battle_wizard.py):
// no signal at the table must never bring up the browser's "no internet" page mid-battle.
// A wizard step fetched while online is kept here (with the site's CSS and scripts) and
// shown from here when the network is gone; the page's save queue (wizard-queue.js) keeps
// the taps and changes on the phone and sends them, in order, when the link is back.
// Only the wizard's step pages are kept: no other page of a logged-in user is stored. Any
// other page that cannot load without signal gets the app's own offline page (issue 49),
// which says what waits on this phone and links the steps kept here (wizard-waiting.js);
// the "Resume" address of a battle in progress (/campaigns/1/drafts/2) shows its step kept
// furthest along.
"use strict";
var CACHE = "crusade-wizard-v3";
var ASSETS = [
  "/static/app.css",
  "/static/app.js",
  "/static/wizard-queue.js",
  "/static/wizard-waiting.js",
  "/static/vendor/pico.min.css",
  "/static/favicon.svg",
];
var STEP = /^\/campaigns\/\d+\/drafts\/\d+\/(setup|muster|after|out_of_action|review)$/;
var RESUME = /^\/campaigns\/\d+\/drafts\/\d+$/;
var STEPS_LAST_FIRST = ["review", "out_of_action", "after", "muster", "setup"];

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(CACHE).then(function (cache) { return cache.addAll(ASSETS); })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(self.clients.claim());
});

function offline() {
  var page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">" +
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
    "<title>No connection · Crusade tracker</title>" +
    "<link rel=\"stylesheet\" href=\"/static/vendor/pico.min.css\">" +
    "<link rel=\"stylesheet\" href=\"/static/app.css\"></head>" +
    "<body><main class=\"container\" data-testid=\"offline-page\"><h1>No connection</h1>" +
    "<p>This page cannot be loaded without signal, and it is not kept on this phone. " +
    "Try again when the signal is back.</p>" +
    "<section data-offline-waiting hidden><h2>Waiting on this phone</h2>" +
    "<p>What you entered in the battle wizard is kept here and sent when the signal is back.</p>" +
    "</section>" +
    "<section data-offline-kept hidden><h2>Kept on this phone</h2>" +
    "<p>These steps of your battle open without signal:</p></section>" +
    "</main><script src=\"/static/wizard-waiting.js\"></script></body></html>";
  return new Response(page, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
}

// The "Resume" address of a draft, without signal: its step kept furthest along.
function keptResume(url) {
  var tries = STEPS_LAST_FIRST.map(function (step) { return url.pathname + "/" + step; });
  function next(i) {
    if (i >= tries.length) return Promise.resolve(null);
    return caches.match(tries[i], { ignoreVary: true }).then(function (kept) { return kept || next(i + 1); });
  }
  return next(0);
}

// The copies this worker is still writing. Chrome takes a step's older copy out as soon as a
// newer one starts to be written, so a page reloaded offline meanwhile (the page's own copy
// and this worker's racing for the same step) must wait for the write, not miss the step.
var writing = Promise.resolve();

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") return; // changes go through the page's queue
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  var step = STEP.test(url.pathname);
  var asset = ASSETS.indexOf(url.pathname) >= 0;
  if (!step && !asset) {
    if (request.mode !== "navigate") return;
    // Another page: from the network as ever, never kept; without signal, the kept step
    // for a "Resume" address, else the app's own offline page.
    event.respondWith(fetch(request).catch(function () {
      return (RESUME.test(url.pathname) ? keptResume(url) : Promise.resolve(null))
        .then(function (kept) { return kept || offline(); });
    }));
    return;
  }
  event.respondWith(
    fetch(request).then(function (response) {
      if (response.ok && !response.redirected && response.type === "basic") {
        var copy = response.clone();
        var written = caches.open(CACHE)
          .then(function (cache) { return cache.put(url.pathname, copy); })
          .catch(function () { /* a copy is only a convenience */ });
        writing = Promise.all([writing, written]);
        event.waitUntil(written);
      }
      return response;
    }).catch(function () {
      return writing.then(function () { return keptCopy(url, request, 4); })
        .then(function (kept) { return kept || offline(); });
    })
  );
});

// The kept copy of a step: by its address (how both this worker and the page store it),
// else by the request itself; a stored Vary header never hides it. A copy the page itself
// is writing at that moment shows up a moment later: look again a few times (about a
// second in all) before saying the step was never kept.
function keptCopy(url, request, tries) {
  return caches.match(url.pathname, { ignoreVary: true })
    .then(function (kept) { return kept || caches.match(request, { ignoreVary: true }); })
    .then(function (kept) {
      if (kept || tries <= 0) return kept;
      return new Promise(function (wake) { setTimeout(wake, 250); })
        .then(function () { return keptCopy(url, request, tries - 1); });
    });
}
