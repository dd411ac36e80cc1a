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
// recorder sees the confirmation arrive without touching anything. Once the player has
// tapped away the watcher stands down: a reload then would cancel the page they asked for.
(function () {
  var el = document.querySelector("[data-watch-battle]");
  if (!el || !window.fetch) return;
  var url = "/api/v1/battles/" + el.getAttribute("data-watch-battle");
  var was = el.getAttribute("data-watch-status");
  var leaving = false;
  var timer = setInterval(function () {
    if (document.hidden || leaving) return;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (battle) {
        if (leaving) return;
        if (battle && battle.status && battle.status !== was) {
          clearInterval(timer);
          window.location.reload();
        }
      })
      .catch(function () {});
  }, 5000);
  // beforeunload comes as a navigation starts (a link, a form, an address typed). A page
  // still here 10 s later was not left after all (a download, a refused form): watch again,
  // as on a page back from the back/forward cache.
  window.addEventListener("beforeunload", function () {
    leaving = true;
    setTimeout(function () { leaving = false; }, 10000);
  });
  window.addEventListener("pageshow", function (event) { if (event.persisted) leaving = false; });
})();

// The battle page's photo form: send the photos with a progress bar (a phone's photos are
// several MB each, on the venue's signal). Without script the form posts as usual. The
// answer is the battle page, with the new photos or the refusal: its photo section replaces
// this one (the listener is on the document, so the new section's form works the same).
(function () {
  if (!window.XMLHttpRequest || !window.FormData || !window.DOMParser) return;
  document.addEventListener("submit", function (event) {
    var form = event.target.closest && event.target.closest("form[data-upload-progress]");
    var input = form && form.querySelector("input[type=file]");
    if (!input || !input.files.length) return;  // the browser's own "choose a file"
    event.preventDefault();
    var status = form.querySelector("[data-upload-status]");
    var bar = form.querySelector("progress");
    var button = form.querySelector("button[type=submit]");
    var what = input.files.length === 1 ? "1 photo" : input.files.length + " photos";
    bar.hidden = false;
    bar.value = 0;
    button.disabled = true;
    status.textContent = "Uploading " + what + "…";
    var request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.upload.addEventListener("progress", function (e) {
      if (!e.lengthComputable) return;
      var done = Math.round((100 * e.loaded) / e.total);
      bar.value = done;
      status.textContent = done < 100
        ? "Uploading " + what + ": " + done + " %"
        : "Resizing " + what + " and removing their location data…";
    });
    request.addEventListener("load", function () {
      var page = new DOMParser().parseFromString(request.responseText, "text/html");
      var fresh = page.getElementById("photos");
      var here = document.getElementById("photos");
      if (fresh && here) {
        here.replaceWith(fresh);
        if (request.status < 400) {
          var note = fresh.querySelector("[data-upload-status]");
          if (note) note.textContent = (what.charAt(0).toUpperCase() + what.slice(1)) + " added.";
        }
        return;
      }
      bar.hidden = true;
      button.disabled = false;
      status.textContent = "The upload was refused (" + request.status + "). Reload the page and try again.";
    });
    request.addEventListener("error", function () {
      bar.hidden = true;
      button.disabled = false;
      status.textContent = "No connection: the photos were not sent. Try again when you have signal.";
    });
    request.send(new FormData(form));
  });
})();

// After the game: ★ Marked for Greatness is one unit per army. Tapping the ticked ★ again
// unticks it (the army's hidden "nobody" choice is picked), as a player expects of a toggle.
(function () {
  var wasChecked = null;
  document.addEventListener("pointerdown", function (event) {
    var star = event.target.closest && event.target.closest(".unit-line label.star");
    var input = star && star.querySelector("input[type=radio]");
    wasChecked = input && input.checked ? input : null;
  });
  document.addEventListener("click", function (event) {
    var input = event.target;
    if (!input || input !== wasChecked || input.type !== "radio") return;
    wasChecked = null;
    var nobody = input.form && input.form.querySelector('input[name="' + input.name + '"][value=""]');
    if (!nobody) return;
    nobody.checked = true;
    nobody.dispatchEvent(new Event("change", { bubbles: true }));
  });
})();

// Add units: a new line starts as INFANTRY (most units are); ticking a unit type a unit is
// instead (VEHICLE, MONSTER, BIKER, ...) unticks INFANTRY on that line, so a vehicle costs
// one tap, not two. Without script the player unticks it.
(function () {
  document.addEventListener("change", function (event) {
    var box = event.target;
    var form = box && box.form;
    if (!form || !box.checked || !form.hasAttribute("data-not-infantry")) return;
    if (form.getAttribute("data-not-infantry").split(",").indexOf(box.value) < 0) return;
    var line = box.closest(".unit-entry-line");
    var infantry = line && line.querySelector('input[type=checkbox][value="INFANTRY"]');
    if (infantry) infantry.checked = false;
  });
})();

// A Battle Honour on one page (issue 40): picking an entry of a kind picks that kind, so a
// chosen honour is two taps (the entry, "Answer"); opening a kind's fold picks it too and
// folds the others. Without script the player picks both.
(function () {
  document.addEventListener("toggle", function (event) {
    var fold = event.target;
    if (!fold || !fold.matches || !fold.matches("details[data-kind-entries]") || !fold.open) return;
    var radio = fold.querySelector("input[name=category]");
    if (radio) radio.checked = true;
    var form = fold.closest("form");
    if (!form) return;
    form.querySelectorAll("details[data-kind-entries][open]").forEach(function (other) {
      if (other !== fold) other.open = false;
    });
  }, true);
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box || !box.checked || box.name === "category") return;
    var kind = box.closest && box.closest("[data-kind-entries]");
    var radio = kind && kind.querySelector("input[name=category]");
    if (radio) radio.checked = true;
  });
})();
