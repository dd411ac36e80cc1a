// Say so when an htmx update (a counter tap, the live PL total) did not reach the server,
// so nobody at the table believes a tap was saved when the connection dropped. The next
// update that gets through clears the message.
(function () {
  function banner() { return document.getElementById("connection-status"); }
  function show(text) {
    var el = banner();
    if (el) { el.textContent = text; el.hidden = false; }
  }
  document.addEventListener("htmx:sendError", function () {
    show("Not saved: no connection. Tap again once you are back online.");
  });
  document.addEventListener("htmx:responseError", function (event) {
    show("Not saved: the server answered " + event.detail.xhr.status + ". Reload the page and try again.");
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var el = banner();
    if (el && event.detail.successful) { el.hidden = true; el.textContent = ""; }
  });
})();

// Times in the viewer's own time zone: the server writes UTC into <time data-local>.
(function () {
  function local() {
    var format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment)) return;
      el.title = el.textContent;
      el.textContent = format.format(moment);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", local);
  else local();
})();
