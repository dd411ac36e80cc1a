// The battle wizard's service worker (served as /wizard-sw.js by app/web/battle_wizard.py):
// no signal at the table must never bring up the browser's "no internet" page mid-battle.
// A wizard step fetched while online is kept here (with the site's CSS and scripts) and
// shown from here when the network is gone; the page's save queue (wizard-queue.js) keeps
// the taps and changes on the phone and sends them, in order, when the link is back.
// Only the wizard's step pages are kept: no other page of a logged-in user is stored.
"use strict";
var CACHE = "crusade-wizard-v3";
var ASSETS = [
  "/static/app.css",
  "/static/app.js",
  "/static/wizard-queue.js",
  "/static/vendor/pico.min.css",
  "/static/favicon.svg",
];
var STEP = /^\/campaigns\/\d+\/drafts\/\d+\/(setup|muster|after|out_of_action|review)$/;

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
    "<title>Offline · Crusade tracker</title>" +
    "<link rel=\"stylesheet\" href=\"/static/vendor/pico.min.css\"></head>" +
    "<body><main class=\"container\"><h1>No connection</h1>" +
    "<p>This page was not opened on this phone before the signal went. Everything you " +
    "entered in the battle wizard is kept on the phone and is sent when the connection " +
    "is back: go back to the page you were on.</p></main></body></html>";
  return new Response(page, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
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
  if (!step && !asset) return;
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
