/* The dashboard's live updates: polls the page's live feed (data-live-url on <main>) and updates the
   progress bars, counts, status badges and notices in place: no reload, no flicker. Pauses while the
   tab is hidden; says so when the feed cannot be reached and keeps trying. */
(function () {
  "use strict";
  var main = document.querySelector("[data-live-url]");
  if (!main || !window.fetch) return;
  var url = main.getAttribute("data-live-url");
  var every = Math.max(2, Number(main.getAttribute("data-live-seconds")) || 5) * 1000;
  var stamp = document.getElementById("live-stamp");
  var shown = {};

  function setText(el, value) {
    var text = String(value);
    if (el.textContent !== text) el.textContent = text;
  }

  function updateCondition(slug, c) {
    var row = document.querySelector('[data-cond="' + slug + ":" + c.shots + '"]');
    if (!row) return;
    row.querySelectorAll("[data-f]").forEach(function (el) {
      var key = el.getAttribute("data-f");
      if (key in c) setText(el, c[key]);
    });
    var done = row.querySelector(".bar-done");
    var work = row.querySelector(".bar-work");
    if (done) done.setAttribute("width", c.completed_pct);
    if (work) {
      work.setAttribute("x", c.completed_pct);
      work.setAttribute("width", c.at_work_pct);
    }
    var svg = row.querySelector("svg.bar");
    if (svg) svg.setAttribute("aria-label", c.completed + " of " + c.slots + " completed, " + c.at_work + " at work");
    row.classList.toggle("done", c.completed >= c.slots);
  }

  function updateNotices(slug, notices) {
    var key = JSON.stringify(notices);
    if (shown[slug] === key) return;
    shown[slug] = key;
    var list = document.querySelector('[data-notices="' + slug + '"]');
    if (!list) return;
    var items = notices.map(function (n) {
      var li = document.createElement("li");
      li.className = "notice notice-" + n.level;
      li.setAttribute("data-kind", n.kind);
      li.textContent = n.text;
      return li;
    });
    list.replaceChildren.apply(list, items);
    var none = document.querySelector('[data-none-note="' + slug + '"]');
    if (none) none.hidden = notices.length > 0;
  }

  function apply(data) {
    data.studies.forEach(function (s) {
      s.conditions.forEach(function (c) { updateCondition(s.slug, c); });
      document.querySelectorAll('[data-status="' + s.slug + '"]').forEach(function (badge) {
        setText(badge, s.status_display);
        badge.className = "badge status-" + s.status;
      });
      updateNotices(s.slug, s.notices);
      document.querySelectorAll('[data-attention="' + s.slug + '"]').forEach(function (badge) {
        var n = s.needs_attention || 0;
        setText(badge, n + (n === 1 ? " needs attention" : " need attention"));
        badge.hidden = n === 0;
      });
    });
    if (stamp) setText(stamp, "Live · updated " + new Date().toLocaleTimeString());
  }

  function poll() {
    if (document.hidden) { window.setTimeout(poll, every); return; }
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(apply)
      .catch(function () { if (stamp) setText(stamp, "Live updates paused: the server did not answer; retrying"); })
      .then(function () { window.setTimeout(poll, every); });
  }

  document.querySelectorAll("[data-notices]").forEach(function (list) {
    shown[list.getAttribute("data-notices")] = null;
  });
  poll();
})();
