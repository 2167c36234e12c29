/* The worker pages: plain JavaScript, no build step, no external request.
 * Needs context.js (loaded first) on the item page.
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

  var IDLE_MS = 60000;
  var TOUCH_HINT = "Press and hold a word, drag the handles over the answer, then tap \u201cAdd selection\u201d.";
  var ContextView = window.WorkerContext && window.WorkerContext.ContextView;

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
      return { ok: false, status: 0, data: { error: "network", detail: "No connection to the server. Please try again." } };
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
          opts.onWait((res.status ? "The study server is briefly unavailable. " : "No connection to the study server. ")
            + (opts.kept ? opts.kept + " " : "") + "We\u2019ll try again in " + Math.round(seconds) + " s.");
        }
        return new Promise(function (resolve) { window.setTimeout(resolve, seconds * 1000); }).then(function () {
          return opts.wanted && !opts.wanted() ? res : once();
        });
      });
    }
    return once();
  }

  /* ---------------------------------------------------------------- start + finish pages */

  function initStart(root) {
    var button = $("start-button");
    button.focus();
    button.addEventListener("click", function () {
      button.disabled = true;
      var msg = $("start-error");
      persist("POST", root.dataset.api, {}, { onWait: function (text) { msg.textContent = text; msg.hidden = false; } })
      .then(function (res) {
        // study_closed: the study closed while the page was open; the page says what now.
        if (res.ok || res.data.error === "study_closed") { window.location.assign(root.dataset.home); return; }
        msg.textContent = res.data.detail || "Something went wrong.";
        msg.hidden = false;
        button.disabled = false;
      });
    });
  }

  function initFinish() {
    var form = $("completion-form");
    if (form && form.dataset.autosubmit) window.setTimeout(function () { form.submit(); }, 1500);
  }

  /* ---------------------------------------------------------------- the item page */

  function ItemPage(root) {
    this.root = root;
    this.urls = root.dataset;
    this.kind = root.dataset.kind;
    this.lastInput = Date.now();
    this.eventSeq = 0;
    this.reset();
    this.bind();
    this.load();
  }
  ItemPage.prototype.reset = function () {
    this.session = null;
    this.item = null;
    this.label = null;
    this.spans = [];
    this.noAnswer = false;
    this.locked = false;
    this.busy = false;
    this.view = null;
    this.cursor = null;
    this.anchor = null;
    this.focusSpan = null;
    this.pending = null;  // a touch selection waiting for "Add selection"
  };

  ItemPage.prototype.bind = function () {
    var self = this;
    $("submit-button").addEventListener("click", function () { self.submit(); });
    $("skip-button").addEventListener("click", function () { self.skip(); });
    $("next-button").addEventListener("click", function () { self.next(); });
    document.querySelectorAll("input[name=confidence]").forEach(function (input) {
      input.addEventListener("change", function () { self.hideMessage(); });
    });
    document.addEventListener("keydown", function (e) { self.onKey(e); });
    window.addEventListener("popstate", function () { self.load(); });
    // A drag may end outside the text: listen on the document, fromMouse checks the selection is in the text.
    // A mouse selection is added on release. A touch selection (press and hold, then drag the handles) is
    // kept as pending, shown, and added with "Add selection": on release it may still be one word.
    document.addEventListener("pointerdown", function (e) {
      self.touch = e.pointerType === "touch";  // a pen drags a selection like a mouse
      if (self.touch && self.view && self.view.box.contains(e.target)) { self.pending = null; self.paintContext(); }
    }, true);
    document.addEventListener("mouseup", function (e) { if (!self.touch) self.fromMouse(e); });
    document.addEventListener("selectionchange", function () { if (self.touch) self.trackSelection(); });
    ["keydown", "pointerdown", "pointermove", "scroll", "touchstart"].forEach(function (t) {
      window.addEventListener(t, function () { self.lastInput = Date.now(); }, { passive: true });
    });
    window.addEventListener("blur", function () { self.event("blur"); });
    window.addEventListener("focus", function () { self.lastInput = Date.now(); self.event("focus"); });
    var seconds = Number(this.urls.heartbeat) || 15;
    window.setInterval(function () {
      if (!document.hidden && Date.now() - self.lastInput < IDLE_MS) self.event("heartbeat");
    }, seconds * 1000);
  };

  // Sent again quietly while the server is away, until a newer event or another item replaces it.
  ItemPage.prototype.event = function (type) {
    if (!this.item || this.locked) return;
    var self = this, seq = ++this.eventSeq, item = this.item.item;
    persist("POST", this.urls.events, { item: item, type: type }, {
      keepalive: true,
      wanted: function () { return self.eventSeq === seq && self.item && self.item.item === item && !self.locked; },
    });
  };

  ItemPage.prototype.load = function () {
    var self = this, m = window.location.hash.match(/^#item=(\d+)$/);
    var wait = { onWait: function (text) { self.showMessage(text); } };
    var request = persist("GET", m ? this.urls.items + m[1] + "/" : this.urls.current, undefined, wait);
    $("item-main").setAttribute("aria-busy", "true");
    return request.then(function (res) {
      if (!res.ok && m) {
        window.history.replaceState(null, "", window.location.pathname);
        return self.load();
      }
      if (!res.ok) { self.showMessage(res.data.detail || "Could not load the item."); return; }
      var s = res.data;
      if (!s.item || (s.state !== "training" && s.state !== "test" && !s.item.locked)) {
        window.location.assign(self.urls.home);  // the step is over: the server shows the right page
        return;
      }
      self.render(s);
      if (s.item.locked) return self.showLocked(s.item.your_answer);
    });
  };

  ItemPage.prototype.render = function (s) {
    this.reset();
    this.session = s;
    this.item = s.item;
    var item = s.item, task = s.task;
    $("item-main").setAttribute("aria-busy", "false");
    this.setProgress(s.progress);
    var banner = $("phase-banner");
    banner.hidden = false;
    if (item.phase === "training") {
      banner.textContent = "Training example: after you submit, the correct answer is shown next to yours.";
      banner.className = "phase-banner training";
    } else if (s.shots > 0 && item.position === 0) {
      banner.textContent = "Training is over. From now on the correct answers are not shown.";
      banner.className = "phase-banner test";
    } else {
      banner.hidden = true;
    }
    var qtype = $("question-type");
    qtype.hidden = !item.question_type_name;
    qtype.textContent = item.question_type_name || "";
    this.renderQuestion(item.question);
    this.renderContext(item);
    this.renderAnswerArea(task, item);
    document.querySelectorAll("input[name=confidence]").forEach(function (i) { i.checked = false; i.disabled = false; });
    $("confidence").disabled = false;
    $("reveal").hidden = true;
    $("reveal").textContent = "";
    $("submit-button").hidden = false;
    $("submit-button").disabled = false;
    $("skip-button").hidden = !item.skip_allowed;
    $("skip-button").disabled = false;
    $("next-button").hidden = true;
    this.hideMessage();
    // On a phone the description and instructions fill the first screen: after the first item, go to the item.
    var narrow = window.matchMedia && window.matchMedia("(max-width: 860px)").matches;
    if (this.shownOnce && narrow) $("item-main").scrollIntoView({ block: "start" });
    else window.scrollTo(0, 0);
    this.shownOnce = true;
  };

  // ReCoRD's "@placeholder" is marked so that the blank to fill stands out.
  ItemPage.prototype.renderQuestion = function (text) {
    var q = $("question");
    q.textContent = "";
    text.split(/(@placeholder)/).forEach(function (part) {
      if (part === "@placeholder") q.appendChild(el("mark", { class: "placeholder", text: part }));
      else if (part) q.appendChild(document.createTextNode(part));
    });
  };

  ItemPage.prototype.setProgress = function (p) {
    if (!p) return;
    $("progress-text").textContent = p.text;
    var pct = p.total ? Math.round((100 * p.done) / p.total) : 0;
    $("progress-fill").style.width = pct + "%";
    $("progress-bar").setAttribute("aria-valuenow", pct);
  };

  ItemPage.prototype.renderContext = function (item) {
    var wrap = $("context-wrap"), self = this;
    wrap.textContent = "";
    if (item.context_kind === "pair") {
      ["Sentence 1", "Sentence 2"].forEach(function (title, i) {
        wrap.appendChild(el("div", { class: "sentence" }, [
          el("div", { class: "sentence-title", text: title }),
          el("div", { class: "context", text: item.context[i] }),
        ]));
      });
      return;
    }
    if (item.answer_kind === "label") {
      wrap.appendChild(el("div", { class: "context", text: item.context }));
      return;
    }
    this.view = new ContextView(item.context, wrap);
    this.view.box.setAttribute("tabindex", "0");
    this.view.box.setAttribute("aria-label", "Text: select words with the mouse, or with the arrow keys and A");
  };

  ItemPage.prototype.renderAnswerArea = function (task, item) {
    var area = $("answer-area"), self = this;
    area.textContent = "";
    if (item.answer_kind === "label") {
      var group = el("div", { class: "labels", role: "radiogroup", "aria-label": "Answer" });
      task.labels.forEach(function (label) {
        var input = el("input", { type: "radio", name: "label", value: label.name, id: "label-" + label.key });
        input.addEventListener("change", function () { self.label = label.name; self.hideMessage(); });
        var help = el("button", { type: "button", class: "help-link", text: "Help", "aria-label": "Help: " + label.name });
        help.addEventListener("click", function () { self.openHelp(label); });
        group.appendChild(el("div", { class: "label-choice", "data-label": label.name }, [
          el("label", { for: "label-" + label.key }, [input, el("kbd", { text: label.key }), el("span", { class: "label-name", text: label.name })]),
          help,
        ]));
      });
      area.appendChild(group);
      return;
    }
    var tools = el("div", { class: "span-tools" });
    var add = el("button", { type: "button", class: "btn btn-small", id: "add-span" }, [document.createTextNode("Add selection "), el("kbd", { text: "A" })]);
    add.addEventListener("click", function (e) { self.addKeyboardSelection(); if (e.detail) add.blur(); });
    var none = el("button", { type: "button", class: "btn btn-small", id: "no-answer", "aria-pressed": "false" }, [document.createTextNode("No answer "), el("kbd", { text: "N" })]);
    // After a mouse click the button lets go of the focus, so that Enter then submits.
    none.addEventListener("click", function (e) { self.toggleNoAnswer(); if (e.detail) none.blur(); });
    var hint = item.multiple_spans ? "Select every answer in the text (several allowed)." : "Select the answer in the text (one span).";
    if (window.matchMedia && window.matchMedia("(pointer: coarse)").matches) hint += " " + TOUCH_HINT;
    tools.appendChild(el("span", { class: "span-hint", text: hint }));
    tools.appendChild(add);
    if (item.empty_answer_allowed !== false) tools.appendChild(none);  // a task whose gold is never empty: no "No answer"
    area.appendChild(tools);
    area.appendChild(el("ol", { class: "span-list", id: "span-list", "aria-label": "Your spans" }));
    this.paintSpans();
  };

  /* -------------------------------------------------------------- spans */

  // The browser's selection in the context, snapped to whole words; null if there is none there.
  ItemPage.prototype.selectedRange = function () {
    if (this.locked || !this.view) return null;
    var sel = window.getSelection();
    if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (!this.view.box.contains(range.startContainer) && !this.view.box.contains(range.endContainer)) return null;
    var s = this.view.box.contains(range.startContainer) ? this.view.offsetOf(range.startContainer, range.startOffset, false) : 0;
    var e = this.view.box.contains(range.endContainer) ? this.view.offsetOf(range.endContainer, range.endOffset, true) : this.view.text.length;
    if (s === null || e === null) return null;
    return this.view.snap(s, e);
  };

  ItemPage.prototype.fromMouse = function (e) {
    var snapped = this.selectedRange();
    if (!snapped) { if (e) this.placeCursor(e.target); return; }
    window.getSelection().removeAllRanges();
    this.addSpan(snapped);
  };

  // A plain click on a word puts the word cursor there (then Shift + arrows extend it, A adds it).
  ItemPage.prototype.placeCursor = function (target) {
    if (this.locked || !this.view || !target || !target.closest) return;
    var node = target.closest(".tok");
    if (!node || !this.view.box.contains(node)) return;
    var s = Number(node.dataset.s), found = null;
    this.view.tokens.forEach(function (t) { if (t.s === s) found = t; });
    if (!found) return;
    this.cursor = this.anchor = found.index;
    this.paintContext();
  };

  // Touch: follow the selection as the handles move; "Add selection" adds it.
  ItemPage.prototype.trackSelection = function () {
    var snapped = this.selectedRange();
    if (!snapped) return;  // a collapse (e.g. tapping the button) keeps the pending selection
    this.pending = snapped;
    this.paintContext();
  };

  ItemPage.prototype.addSpan = function (span) {
    if (this.locked) return;
    var exists = this.spans.some(function (sp) { return sp.s === span.s && sp.e === span.e; });
    if (exists) { this.showMessage("This span is already in your answer."); return; }
    if (!this.item.multiple_spans) this.spans = [];
    // The server refuses these too (overlapping_spans, too_many_spans); saying so here loses no work.
    if (this.item.multiple_spans && !this.item.overlapping_spans) {
      var clash = this.spans.filter(function (sp) { return sp.s < span.e && span.s < sp.e; })[0];
      if (clash) {
        this.showMessage("This selection overlaps a span already in your answer: remove that one first.");
        return;
      }
    }
    if (this.item.max_spans && this.spans.length >= this.item.max_spans) {
      this.showMessage("This answer already has " + this.spans.length + " spans, the most this item takes.");
      return;
    }
    this.spans.push(span);
    this.spans.sort(function (a, b) { return a.s - b.s || a.e - b.e; });
    this.noAnswer = false;
    this.pending = null;
    this.hideMessage();
    this.paintSpans();
  };

  ItemPage.prototype.removeSpan = function (index) {
    if (this.locked) return;
    this.spans.splice(index, 1);
    this.focusSpan = null;
    this.paintSpans();
  };

  ItemPage.prototype.toggleNoAnswer = function () {
    if (this.locked || !this.view || this.item.empty_answer_allowed === false) return;
    this.noAnswer = !this.noAnswer;
    if (this.noAnswer) this.spans = [];
    this.hideMessage();
    this.paintSpans();
  };

  ItemPage.prototype.keyboardSelection = function () {
    if (this.cursor === null) return null;
    var a = this.view.tokens[Math.min(this.anchor, this.cursor)], b = this.view.tokens[Math.max(this.anchor, this.cursor)];
    return { s: a.s, e: b.e };
  };

  ItemPage.prototype.addKeyboardSelection = function () {
    if (this.locked) return;
    if (this.pending) {
      var pending = this.pending;
      if (window.getSelection()) window.getSelection().removeAllRanges();
      this.addSpan(pending);
      return;
    }
    var sel = this.keyboardSelection();
    if (!sel) {
      this.showMessage(this.touch ? TOUCH_HINT : "Move the word cursor with the arrow keys first (Shift extends), then press A.");
      return;
    }
    this.addSpan(sel);
    this.anchor = this.cursor;
    this.paintSpans();
  };

  ItemPage.prototype.moveCursor = function (delta, extend) {
    if (!this.view || !this.view.tokens.length || this.locked) return;
    var n = this.view.tokens.length;
    if (this.cursor === null) { this.cursor = delta > 0 ? 0 : n - 1; this.anchor = this.cursor; }
    else {
      this.cursor = Math.max(0, Math.min(n - 1, this.cursor + delta));
      if (!extend) this.anchor = this.cursor;
    }
    this.paintSpans();
    var node = this.view.tokens[this.cursor].el;
    if (node.scrollIntoView) node.scrollIntoView({ block: "nearest" });
  };

  ItemPage.prototype.paintContext = function () {
    this.view.paint(this.spans, "mine", {
      sel: this.locked ? null : this.pending || this.keyboardSelection(),
      cursor: this.cursor === null || this.locked ? null : this.view.tokens[this.cursor],
      focus: this.focusSpan,
    });
  };

  ItemPage.prototype.paintSpans = function () {
    if (!this.view) return;
    var self = this;
    this.paintContext();
    var list = $("span-list"), none = $("no-answer");
    if (none) {
      none.setAttribute("aria-pressed", this.noAnswer ? "true" : "false");
      none.classList.toggle("active", this.noAnswer);
      none.disabled = this.locked;
    }
    if ($("add-span")) $("add-span").disabled = this.locked;
    if (!list) return;
    list.textContent = "";
    if (this.noAnswer) {
      list.appendChild(el("li", { class: "span-item no-answer-item", text: "No answer (the text does not contain one)" }));
      return;
    }
    if (!this.spans.length) {
      list.appendChild(el("li", { class: "span-empty", text: "No span selected yet." }));
      return;
    }
    this.spans.forEach(function (sp, i) {
      var li = el("li", { class: "span-item" }, [el("span", { class: "span-text", text: self.view.text.slice(sp.s, sp.e) })]);
      if (!self.locked) {
        var rm = el("button", { type: "button", class: "remove-span", "aria-label": "Remove " + self.view.text.slice(sp.s, sp.e), text: "✕" });
        rm.addEventListener("click", function () { self.removeSpan(i); });
        li.appendChild(rm);
      }
      li.addEventListener("mouseenter", function () { self.focusSpan = sp; self.paintContext(); });
      li.addEventListener("mouseleave", function () { self.focusSpan = null; self.paintContext(); });
      list.appendChild(li);
    });
  };

  /* -------------------------------------------------------------- labels, help, confidence */

  ItemPage.prototype.chooseLabel = function (key) {
    var input = $("label-" + key);
    if (!input || input.disabled) return;
    input.checked = true;
    this.label = input.value;
    input.focus();
    this.hideMessage();
  };

  ItemPage.prototype.openHelp = function (label) {
    if (!label) {
      var labels = this.session.task.labels, chosen = this.label;
      label = labels.filter(function (l) { return l.name === chosen; })[0] || labels[0];
    }
    if (!label) return;
    $("help-title").textContent = label.name;
    $("help-definition").textContent = label.definition;
    $("help-example").textContent = label.example;
    var dialog = $("help-dialog");
    if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
    $("help-close").focus();
  };

  ItemPage.prototype.confidence = function () {
    var checked = document.querySelector("input[name=confidence]:checked");
    return checked ? Number(checked.value) : null;
  };
  ItemPage.prototype.setConfidence = function (value) {
    var input = document.querySelector("input[name=confidence][value='" + value + "']");
    if (input && !input.disabled) { input.checked = true; this.hideMessage(); }
  };

  /* -------------------------------------------------------------- keyboard */

  ItemPage.prototype.onKey = function (e) {
    if ($("help-dialog").open || e.ctrlKey || e.metaKey || e.altKey || !this.item) return;
    var key = e.key, tag = e.target && e.target.tagName;
    if (key === "Enter") {
      if (tag === "BUTTON" || tag === "A") return;  // the focused button's own click
      e.preventDefault();
      if (this.locked) this.next(); else this.submit();
      return;
    }
    if (this.locked) return;
    var confidenceKeys = { q: 1, w: 2, e: 3, r: 4, t: 5 };
    var lower = key.length === 1 ? key.toLowerCase() : key;
    if (confidenceKeys[lower] && !e.shiftKey) { e.preventDefault(); this.setConfidence(confidenceKeys[lower]); return; }
    if (lower === "s" && this.item.skip_allowed) { e.preventDefault(); this.skip(); return; }
    if (this.item.answer_kind === "label") {
      if (/^[1-9]$/.test(key)) { e.preventDefault(); this.chooseLabel(key); return; }
      if (lower === "h") { e.preventDefault(); this.openHelp(null); }
      return;
    }
    if (key === "ArrowRight" || key === "ArrowLeft") {
      e.preventDefault();
      this.moveCursor(key === "ArrowRight" ? 1 : -1, e.shiftKey);
    } else if (lower === "a") {
      e.preventDefault(); this.addKeyboardSelection();
    } else if (lower === "n") {
      e.preventDefault(); this.toggleNoAnswer();
    } else if (key === "Backspace" || key === "Delete") {
      if (this.spans.length) { e.preventDefault(); this.removeSpan(this.spans.length - 1); }
    }
  };

  /* -------------------------------------------------------------- submit, skip, reveal */

  ItemPage.prototype.payload = function () {
    var confidence = this.confidence(), body = { item: this.item.item, confidence: confidence };
    if (this.item.answer_kind === "label") {
      if (!this.label) return { error: "Choose a label first (keys 1 to " + this.session.task.labels.length + ")." };
      body.label = this.label;
    } else if (this.noAnswer) {
      body.no_answer = true;
    } else {
      if (!this.spans.length) return { error: "Select the answer in the text, or choose “No answer” (N)." };
      var text = this.view.text;
      body.offset_unit = "utf16";
      body.spans = this.spans.map(function (sp) { return { start: sp.s, end: sp.e, text: text.slice(sp.s, sp.e) }; });
    }
    if (!confidence) return { error: "Rate how confident you are in your answer (keys Q W E R T)." };
    return { body: body };
  };

  ItemPage.prototype.setBusy = function (busy) {
    this.busy = busy;
    $("submit-button").disabled = busy;
    $("skip-button").disabled = busy;
  };

  ItemPage.prototype.submit = function () {
    if (this.busy || this.locked || !this.item) return;
    var p = this.payload();
    if (p.error) { this.showMessage(p.error); return; }
    this.send(this.urls.submit, p.body);
  };

  ItemPage.prototype.skip = function () {
    if (this.busy || this.locked || !this.item || !this.item.skip_allowed) return;
    this.send(this.urls.skip, { item: this.item.item, confidence: this.confidence() || undefined });
  };

  ItemPage.prototype.send = function (url, body) {
    var self = this;
    this.setBusy(true);
    persist("POST", url, body, {
      kept: url === this.urls.skip ? "Your skip is kept." : "Your answer is kept as you sent it.",
      onWait: function (text) { self.showMessage(text); },
    }).then(function (res) {
      self.setBusy(false);
      if (res.ok) return self.afterLock(res.data);
      if (res.status === 409 && res.data.error === "already_locked") return self.showLocked(res.data.answer);
      // The study has closed and its grace period is over: the page shows the completion code.
      if (res.status === 409 && res.data.error === "study_closed") { window.location.assign(self.urls.home); return; }
      self.showMessage(res.data.detail || "The answer could not be saved.");
    });
  };

  ItemPage.prototype.afterLock = function (data) {
    if (data.reveal) {
      window.history.replaceState(null, "", window.location.pathname + "#item=" + this.item.item);
      this.session.state = data.state;
      var p = this.session.progress;
      if (p) this.setProgress({ text: p.text, total: p.total, done: Math.min(p.total, p.done + 1) });
      this.showLocked(data.answer, data.reveal);
      return;
    }
    if (data.state !== "test") { window.location.assign(this.urls.home); return; }
    // The response carries the next test item: show it without another round trip.
    if (data.next) {
      var s = this.session;
      this.render({ state: data.state, shots: s.shots, task: s.task, progress: data.next.progress,
                    item: data.next.item, completion: null });
      return;
    }
    this.load();
  };

  // Show the locked answer in the inputs, disabled; in training, the reveal beside it.
  ItemPage.prototype.showLocked = function (answer, reveal) {
    var self = this;
    this.locked = true;
    this.cursor = null;
    document.querySelectorAll("input[name=label], input[name=confidence]").forEach(function (i) {
      i.disabled = true;
      i.checked = (i.name === "label" && i.value === answer.label) || (i.name === "confidence" && Number(i.value) === answer.confidence);
    });
    if (this.view) {
      this.spans = answer.spans.map(function (sp) { return { s: sp.utf16_start, e: sp.utf16_end }; });
      this.noAnswer = answer.status === "no_answer";
      this.paintSpans();
    }
    $("submit-button").hidden = true;
    $("skip-button").hidden = true;
    $("next-button").hidden = false;
    this.hideMessage();
    if (answer.phase === "training") {
      if (reveal) this.showReveal(reveal);
      else api("GET", this.urls.items + answer.item + "/reveal/").then(function (res) { if (res.ok) self.showReveal(res.data); });
    } else {
      var box = $("reveal");
      box.hidden = false;
      box.className = "reveal locked-note";
      box.textContent = answer.status === "skipped" ? "You skipped this item." : "Your answer to this item is saved and cannot be changed.";
    }
    $("next-button").focus();
  };

  ItemPage.prototype.showReveal = function (rv) {
    var box = $("reveal"), item = this.item;
    box.textContent = "";
    box.hidden = false;
    box.className = "reveal verdict-" + rv.verdict.replace(" ", "-");
    var mark = rv.verdict === "correct" ? "✓ Correct" : rv.verdict === "incorrect" ? "✗ Incorrect" : "◐ Partly correct";
    box.appendChild(el("div", { class: "verdict" }, [
      el("strong", { class: "verdict-mark", text: mark }),
      el("span", { class: "score", text: "Score (S1) for this item: " + rv.score.toFixed(2) }),
    ]));
    if (item.answer_kind === "label") {
      var gold = rv.gold.answers;
      box.appendChild(el("p", {}, [document.createTextNode("Your answer: "), el("strong", { class: "yours", text: rv.your_answer.label })]));
      box.appendChild(el("p", {}, [document.createTextNode("Correct answer: "), el("strong", { class: "gold", text: gold.join(", ") || "(none)" })]));
      document.querySelectorAll(".label-choice").forEach(function (c) {
        var name = c.dataset.label;
        c.classList.toggle("is-gold", gold.indexOf(name) >= 0);
        c.classList.toggle("is-wrong", name === rv.your_answer.label && gold.indexOf(name) < 0);
        var old = c.querySelector(".verdict-tag");
        if (old) old.remove();
        var tag = c.classList.contains("is-gold") ? "\u2713 correct" : c.classList.contains("is-wrong") ? "\u2717 your answer" : "";
        if (tag) c.insertBefore(el("span", { class: "verdict-tag", text: tag }), c.querySelector(".help-link"));
      });
      return;
    }
    var grid = el("div", { class: "reveal-grid" });
    var yours = el("div", { class: "reveal-col" }, [el("h3", { class: "yours", text: "Your answer" })]);
    var golds = el("div", { class: "reveal-col" }, [el("h3", { class: "gold", text: "Correct answer" })]);
    var mine = new ContextView(item.context, yours);
    mine.paint(rv.your_answer.spans.map(function (sp) { return { s: sp.utf16_start, e: sp.utf16_end }; }), "mine");
    var list = el("ul", { class: "answer-strings" });
    if (!rv.matches.length) list.appendChild(el("li", { text: rv.your_answer.status === "no_answer" ? "No answer" : "(nothing)" }));
    rv.matches.forEach(function (m) { list.appendChild(el("li", { class: m.in_gold ? "ok" : "bad", text: (m.in_gold ? "✓ " : "✗ ") + m.text })); });
    yours.appendChild(list);
    var theirs = new ContextView(item.context, golds);
    theirs.paint(rv.gold.spans.map(function (sp) { return { s: sp.utf16_start, e: sp.utf16_end }; }), "gold");
    var glist = el("ul", { class: "answer-strings" });
    if (rv.gold.empty) glist.appendChild(el("li", { text: "No answer: the text does not contain one." }));
    rv.gold.answers.forEach(function (a) { glist.appendChild(el("li", { text: a })); });
    golds.appendChild(glist);
    grid.appendChild(yours);
    grid.appendChild(golds);
    box.appendChild(grid);
  };

  ItemPage.prototype.next = function () {
    if (this.busy) return;
    var state = this.session && this.session.state;
    // Leaving the step (training done, excluded, finished): the server renders the next page.
    if (!this.item || state !== this.item.phase) { window.location.assign(this.urls.home); return; }
    if (window.location.hash) window.history.pushState(null, "", window.location.pathname);
    this.load();
  };

  ItemPage.prototype.showMessage = function (text) {
    var m = $("message");
    m.textContent = text;
    m.hidden = false;
  };
  ItemPage.prototype.hideMessage = function () { $("message").hidden = true; };

  /* ---------------------------------------------------------------- boot */

  document.addEventListener("DOMContentLoaded", function () {
    var work = $("work");
    if (work) { window.workerPage = new ItemPage(work); return; }
    var start = document.querySelector(".page-start");
    if (start) { initStart(start); return; }
    initFinish();
  });
})();
