/* The study page's rehearsals: polls the status of each unfinished one (data-rehearsal-url on its row) and
   updates its status, progress and last line in place; when it ends, shows its report links or its error. */
(function () {
  "use strict";
  if (!window.fetch) return;
  var every = 5000;

  function set(row, key, text) {
    var el = row.querySelector('[data-r="' + key + '"]');
    if (el && el.textContent !== text) el.textContent = text;
    return el;
  }

  function apply(row, job) {
    set(row, "status_display", job.status_display);
    var done = job.progress ? job.progress.done : 0;
    set(row, "steps", done ? done + (done === 1 ? " step" : " steps") : "");
    set(row, "last_line", job.last_line);
    row.className = "status-" + job.status;
    if (job.status === "done") {
      var links = row.querySelector('[data-r="links"]');
      if (links) {
        var verdict = document.createElement("span");
        verdict.textContent = job.passed ? "every invariant holds · " : "some invariants fail · ";
        if (!job.passed) verdict.className = "error";
        links.prepend(verdict);
        links.hidden = false;
      }
    } else if (job.status === "failed") {
      set(row, "error", job.error);
    }
    return job.status === "queued" || job.status === "running";
  }

  function poll(row) {
    var url = row.getAttribute("data-rehearsal-url");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (job) { return apply(row, job); })
      .catch(function () { return true; })  /* the server did not answer: try again */
      .then(function (more) { if (more) window.setTimeout(function () { poll(row); }, every); });
  }

  document.querySelectorAll("[data-rehearsal-url]").forEach(poll);
})();
