// gpubridge portal: refresh the calendar's free counts without a reload
// (the page works without this script; it only keeps the counts fresh).
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
  function poll() {
    fetch("/portal/free?tenant=" + encodeURIComponent(tenant), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) { if (j && j.free) { apply(j.free); } })
      .catch(function () {})
      .then(function () { setTimeout(poll, every); });
  }
  setTimeout(poll, every);
})();
