// gpubridge portal: refresh the calendar's free counts without a reload
// (the page works without this script; it only keeps the counts fresh).
// It listens to the portal's event stream (/portal/events, Server-Sent
// Events); where the browser has no EventSource, or the stream is refused
// or closed (signed out, too many streams), it polls /portal/free instead.
(function () {
  "use strict";
  var cal = document.getElementById("calendar");
  if (!cal || !window.fetch) { return; }
  var tenant = cal.getAttribute("data-tenant");
  var every = 5000;
  function apply(free) {
    var cells = cal.querySelectorAll("[data-key]");
    for (var i = 0; i < cells.length; i++) {
      var c = cells[i], k = c.getAttribute("data-key");
      if (!(k in free)) { continue; }
      var n = free[k];
      var span = c.querySelector(".free");
      if (span && span.textContent !== String(n)) { span.textContent = String(n); }
      c.classList.toggle("full", n <= 0);
      c.classList.toggle("some", n > 0);
    }
    cal.setAttribute("data-refreshed", new Date().toISOString());
  }
  var polling = false;
  function poll() {
    fetch("/portal/free?tenant=" + encodeURIComponent(tenant), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) { if (j && j.free) { apply(j.free); } })
      .catch(function () {})
      .then(function () { setTimeout(poll, every); });
  }
  function startPolling() {
    if (polling) { return; }
    polling = true;
    cal.setAttribute("data-live", "poll");
    setTimeout(poll, every);
  }
  if (!window.EventSource) { startPolling(); return; }
  var es = new EventSource("/portal/events?tenant=" + encodeURIComponent(tenant));
  es.addEventListener("open", function () { cal.setAttribute("data-live", "events"); });
  es.addEventListener("availability", function (e) {
    try { var j = JSON.parse(e.data); if (j && j.free) { apply(j.free); } } catch (err) { /* keep the counts shown */ }
  });
  es.addEventListener("end", function () { es.close(); startPolling(); });
  es.addEventListener("error", function () {
    // The browser reconnects by itself (CONNECTING); CLOSED is a refusal.
    if (es.readyState === 2) { startPolling(); }
  });
})();
