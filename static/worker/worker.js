/* The worker pages: plain JavaScript, no build step, no external request.
 *
 * This file is on every worker page: the helpers the other scripts share
 * (window.WorkerKit), the start and finish pages, and the boot. The item page
 * adds context.js (the text), item.js (the page), spans.js (span selection)
 * and reveal.js (the training feedback), loaded after this one; all run
 * before DOMContentLoaded, when the boot below picks the page.
 *
 * Everything goes through the session API (/api/session/...). Offsets sent
 * to the server are JavaScript string offsets (UTF-16 code units) with
 * offset_unit "utf16"; the server converts them to Python indices and
 * refuses a cut through a character.
 *
 * While the server cannot reach its database it answers 503 with
 * Retry-After: the page says so and sends the same request again (persist),
 * keeping the worker's answer in the form. A repeated submit or skip is safe:
 * if the first one was stored, the server answers 409 already_locked with the
 * stored answer, which the page shows as saved.
 */
(function () {
  "use strict";

  // Django's JavaScript catalog defines these when it is loaded; until then the English text stands.
  var gettext = window.gettext || function (s) { return s; };
  var ngettext = window.ngettext || function (one, many, n) { return n === 1 ? one : many; };
  var interpolate = window.interpolate || function (fmt, obj, named) {
    if (named) return fmt.replace(/%\((\w+)\)s/g, function (m, key) { return String(obj[key]); });
    var i = 0;
    return fmt.replace(/%s/g, function () { return String(obj[i++]); });
  };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "class") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function cookie(name) {
    var m = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return m ? decodeURIComponent(m[1]) : "";
  }
  function api(method, url, body, keepalive) {
    var opts = { method: method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.headers["X-CSRFToken"] = cookie("csrftoken");
      opts.body = JSON.stringify(body);
    }
    if (keepalive) opts.keepalive = true;
    return fetch(url, opts).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        return { ok: r.ok, status: r.status, data: data, retryAfter: Number(r.headers.get("Retry-After")) || 0 };
      });
    }, function () {
      return { ok: false, status: 0, data: { error: "network", detail: gettext("No connection to the server. Please try again.") } };
    });
  }

  // 503 (the database is briefly away), 502/504 (a proxy without the app server) or no connection: send the
  // same request again after Retry-After, then longer (up to 30 s), until a real answer comes back, as long
  // as opts.wanted() (if given) says it is still wanted. opts.onWait(text) before each wait says so.
  var TRANSIENT = { 0: true, 502: true, 503: true, 504: true };
  function persist(method, url, body, opts) {
    opts = opts || {};
    var attempt = 0;
    function once() {
      return api(method, url, body, opts.keepalive).then(function (res) {
        if (!TRANSIENT[res.status]) return res;
        var seconds = Math.min(30, Math.max(res.retryAfter, 2 * Math.pow(2, attempt++)));
        seconds *= 0.8 + 0.4 * Math.random();  // many pages waiting do not all come back at once
        if (opts.onWait) {
          opts.onWait((res.status ? gettext("The study server is briefly unavailable.") : gettext("No connection to the study server."))
            + " " + (opts.kept ? opts.kept + " " : "")
            + interpolate(gettext("We\u2019ll try again in %(seconds)s s."), { seconds: Math.round(seconds) }, true));
        }
        return new Promise(function (resolve) { window.setTimeout(resolve, seconds * 1000); }).then(function () {
          return opts.wanted && !opts.wanted() ? res : once();
        });
      });
    }
    return once();
  }

  window.WorkerKit = {
    $: $, el: el, api: api, persist: persist, gettext: gettext, ngettext: ngettext, interpolate: interpolate,
  };

  /* ---------------------------------------------------------------- start + finish pages */

  function initStart(root) {
    var button = $("start-button");
    button.disabled = false;  // rendered disabled: a click before this script ran would do nothing
    button.focus({ preventScroll: true });  // the page stays at its top: the facts first
    button.addEventListener("click", function () {
      button.disabled = true;
      var msg = $("start-error");
      persist("POST", root.dataset.api, {}, { onWait: function (text) { msg.textContent = text; msg.hidden = false; } })
      .then(function (res) {
        // study_closed: the study closed while the page was open; the page says what now.
        if (res.ok || res.data.error === "study_closed") { window.location.assign(root.dataset.home); return; }
        msg.textContent = res.data.detail || gettext("Something went wrong.");
        msg.hidden = false;
        button.disabled = false;
      });
    });
  }

  // The completion code to the clipboard (shown only where the browser offers one: https or localhost).
  function initCopy() {
    var button = $("copy-code"), code = $("completion-code");
    if (!button || !code || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(code.textContent.trim()).then(function () {
        $("copy-status").textContent = gettext("Copied.");
      }, function () {
        $("copy-status").textContent = gettext("Copying failed: select the code and copy it yourself.");
      });
    });
  }

  function initFinish() {
    initCopy();
    var form = $("completion-form");
    if (form && form.dataset.autosubmit) window.setTimeout(function () { form.submit(); }, 1500);
  }

  /* ---------------------------------------------------------------- boot */

  document.addEventListener("DOMContentLoaded", function () {
    var work = $("work");
    if (work && window.WorkerItem) { window.workerPage = new window.WorkerItem.ItemPage(work); return; }
    var start = document.querySelector(".page-start");
    if (start) { initStart(start); return; }
    initFinish();
  });
})();
