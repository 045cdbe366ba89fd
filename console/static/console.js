// Conveniences only: every page works without this script.
(function () {
  "use strict";

  // Times in the viewer's own zone, with the zone named.
  var fmt = new Intl.DateTimeFormat(undefined, {
    weekday: "short", day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", timeZoneName: "short"
  });
  // Times marked data-zone="keep" stay in their own zone (a schedule's) and
  // get the local time as a tooltip instead.
  document.querySelectorAll("time[datetime]").forEach(function (t) {
    var d = new Date(t.getAttribute("datetime"));
    if (isNaN(d)) { return; }
    if (t.getAttribute("data-zone") === "keep") {
      t.title = "Your time: " + fmt.format(d);
      return;
    }
    t.title = t.textContent;
    t.textContent = fmt.format(d);
  });

  // A live description of each cron expression as it is typed.
  document.querySelectorAll("input[data-cron]").forEach(function (input) {
    var out = document.getElementById(input.getAttribute("data-cron"));
    var timer;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        if (!input.value.trim()) { out.textContent = ""; return; }
        fetch("/console/cron?expr=" + encodeURIComponent(input.value), { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.text() : ""; })
          .then(function (text) { out.textContent = text; })
          .catch(function () {});
      }, 250);
    });
  });

  // The metric picker inserts f:executeMetric('…') at the cursor.
  document.querySelectorAll("select[data-insert]").forEach(function (sel) {
    sel.addEventListener("change", function () {
      var target = document.getElementById(sel.getAttribute("data-insert"));
      if (!sel.value || !target) { return; }
      var start = target.selectionStart || target.value.length, end = target.selectionEnd || start;
      target.value = target.value.slice(0, start) + sel.value + target.value.slice(end);
      target.focus();
      sel.value = "";
    });
  });

  // Ask before destroying.
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (!window.confirm(f.getAttribute("data-confirm"))) { e.preventDefault(); }
    });
  });

  // The channel form shows the chosen kind's fields only.
  var kinds = document.querySelectorAll("input[data-kind]");
  function showKind() {
    var chosen = document.querySelector("input[data-kind]:checked");
    document.querySelectorAll("[data-kind-fields]").forEach(function (fs) {
      var on = chosen && fs.getAttribute("data-kind-fields") === chosen.value;
      fs.hidden = !on;
      fs.disabled = !on;
    });
  }
  kinds.forEach(function (k) { k.addEventListener("change", showKind); });
  if (kinds.length) { showKind(); }
})();
