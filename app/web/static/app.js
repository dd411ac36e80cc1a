// Times in the viewer's own time zone: the server writes UTC into <time data-local>
// (data-local="day": the date alone).
(function () {
  var formats = {};
  function format(kind) {
    if (!formats[kind]) {
      formats[kind] = new Intl.DateTimeFormat(
        undefined, kind === "day" ? { dateStyle: "medium" } : { dateStyle: "medium", timeStyle: "short" });
    }
    return formats[kind];
  }
  function local(root) {
    (root || document).querySelectorAll("time[data-local]:not([data-shown])").forEach(function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment)) return;
      el.title = el.textContent;
      el.textContent = format(el.getAttribute("data-local")).format(moment);
      el.setAttribute("data-shown", "");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { local(); });
  else local();
})();

// The recorder's phone, showing the QR code for the opponent's own phone: check the battle
// every few seconds and reload once its status changes (confirmed, disputed), so the
// recorder sees the confirmation arrive without touching anything.
(function () {
  var el = document.querySelector("[data-watch-battle]");
  if (!el || !window.fetch) return;
  var url = "/api/v1/battles/" + el.getAttribute("data-watch-battle");
  var was = el.getAttribute("data-watch-status");
  var timer = setInterval(function () {
    if (document.hidden) return;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (battle) {
        if (battle && battle.status && battle.status !== was) {
          clearInterval(timer);
          window.location.reload();
        }
      })
      .catch(function () {});
  }, 5000);
})();
