/* The item page: loads items from the session API, renders the question, the
 * context and the answer area (label cards or the span selector), takes the
 * confidence, submits or skips, and in training shows the reveal.
 * Needs worker.js (WorkerKit) and context.js; choices.js (the label choice, marked
 * text), spans.js and reveal.js add their methods to ItemPage.prototype;
 * signals.js (if loaded) records the integrity signals sent with each answer.
 * Exposes window.WorkerItem = { ItemPage }.
 */
(function () {
  "use strict";

  var K = window.WorkerKit, $ = K.$, el = K.el, gettext = K.gettext, interpolate = K.interpolate;
  var IDLE_MS = 60000;
  var SKIP_CONFIRM_MS = 4000;  // a second S or click within this confirms the skip
  var NARROW = "(max-width: 860px)";
  var ContextView = window.WorkerContext && window.WorkerContext.ContextView;

  function narrow() { return !!(window.matchMedia && window.matchMedia(NARROW).matches); }

  function ItemPage(root) {
    this.root = root;
    this.urls = root.dataset;
    this.kind = root.dataset.kind;
    this.lastInput = Date.now();
    this.eventSeq = 0;
    this.signals = window.WorkerSignals ? new window.WorkerSignals.Tracker($("item-main")) : null;
    this.reset();
    this.bind();
    this.load();
  }
  ItemPage.prototype.reset = function () {
    this.session = null;
    this.item = null;
    this.label = null;
    this.choices = null;
    this.listMode = false;
    this.activeRow = null;
    this.spans = [];
    this.noAnswer = false;
    this.locked = false;
    this.busy = false;
    this.view = null;
    this.cursor = null;
    this.anchor = null;
    this.focusSpan = null;
    this.pending = null;  // a touch selection waiting for "Add selection"
    this.keptApart = {};  // adjacent span pairs the worker chose to keep as two answers
    this.cancelSkip();
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
    // A press anywhere but on the skip button cancels a skip waiting for its confirmation.
    document.addEventListener("pointerdown", function (e) {
      if (self.skipArmed && !$("skip-button").contains(e.target)) self.cancelSkip(true);
    }, true);
    this.bindSpans();
    this.fitScale();
    window.addEventListener("resize", function () { self.fitScale(); });
    if (document.fonts) document.fonts.ready.then(function () { self.fitScale(); });
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
    K.persist("POST", this.urls.events, { item: item, type: type }, {
      keepalive: true,
      wanted: function () { return self.eventSeq === seq && self.item && self.item.item === item && !self.locked; },
    });
  };

  ItemPage.prototype.load = function () {
    var self = this, m = window.location.hash.match(/^#item=(\d+)$/);
    var wait = { onWait: function (text) { self.showMessage(text); } };
    var request = K.persist("GET", m ? this.urls.items + m[1] + "/" : this.urls.current, undefined, wait);
    $("item-main").setAttribute("aria-busy", "true");
    return request.then(function (res) {
      if (!res.ok && m) {
        window.history.replaceState(null, "", window.location.pathname);
        return self.load();
      }
      if (!res.ok) { self.showMessage(res.data.detail || gettext("Could not load the item.")); return; }
      var s = res.data;
      if (!s.item || (s.state !== "training" && s.state !== "test" && !s.item.locked)) {
        window.location.assign(self.urls.home);  // the step is over: the server shows the right page
        return;
      }
      self.render(s);
      if (s.item.locked) return self.showLocked(s.item.your_answer);
    });
  };

  // The worker's very first item of the session: training item 1, or test item 1 without training.
  ItemPage.prototype.isFirstItem = function () {
    return this.item.position === 0 && (this.item.phase === "training" || !this.session.shots);
  };

  ItemPage.prototype.render = function (s) {
    this.reset();
    this.session = s;
    this.item = s.item;
    var item = s.item, task = s.task;
    if (this.signals) this.signals.start(item.locked ? null : item.item);
    $("item-main").setAttribute("aria-busy", "false");
    this.setProgress(s.progress);
    var banner = $("phase-banner");
    banner.hidden = false;
    if (item.phase === "training") {
      banner.textContent = gettext("Training example: after you submit, the correct answer is shown next to yours.");
      banner.className = "phase-banner training";
    } else if (s.shots > 0 && item.position === 0) {
      banner.textContent = gettext("Training is over. From now on the correct answers are not shown.");
      banner.className = "phase-banner test";
    } else {
      banner.hidden = true;
    }
    var qtype = $("question-type");
    qtype.hidden = !item.question_type_name;
    qtype.textContent = item.question_type_name || "";
    this.renderQuestion(item.question, item.marks);
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
    this.foldGuidance();
  };

  // On a phone the description and instructions fill the first screen. After the first item they are
  // folded once (one tap opens them again) and the page goes to the item.
  ItemPage.prototype.foldGuidance = function () {
    var small = narrow(), first = this.isFirstItem();
    if (small && !first && !this.folded) {
      this.folded = true;
      ["task-description", "instructions-box"].forEach(function (id) { if ($(id)) $(id).open = false; });
    }
    if (small && !first) $("item-main").scrollIntoView({ block: "start" });
    else window.scrollTo(0, 0);
  };

  // ReCoRD's "@placeholder" is marked so that the blank to fill stands out; a question that names the
  // context's blank by its token (CHID's "#idiom#") shows the blank's line instead of the token.
  ItemPage.prototype.renderQuestion = function (text, marks) {
    var q = $("question");
    q.textContent = "";
    var blank = (marks || []).filter(function (m) { return m.role === "blank" && m.text; })[0];
    if (blank && window.WorkerChoices) text = text.split(blank.text).join(window.WorkerChoices.BLANK);
    text.split(/(@placeholder)/).forEach(function (part) {
      if (part === "@placeholder") q.appendChild(el("mark", { class: "placeholder", text: part }));
      else if (part) q.appendChild(document.createTextNode(part));
    });
  };

  // The number is that of the item shown (a reloaded, locked item too); the bar counts the items done.
  ItemPage.prototype.setProgress = function (p, done) {
    if (!p) return;
    this.progress = p;
    if (done === undefined) done = p.done;
    var number = this.item ? Math.min(this.item.position + 1, p.total) : p.number;
    var fmt = p.phase === "training" ? gettext("Training item %(number)s of %(total)s") : gettext("Item %(number)s of %(total)s");
    $("progress-text").textContent = interpolate(fmt, { number: number, total: p.total }, true);
    var pct = p.total ? Math.round((100 * Math.min(done, p.total)) / p.total) : 0;
    $("progress-fill").style.width = pct + "%";
    $("progress-bar").setAttribute("aria-valuenow", pct);
  };

  ItemPage.prototype.renderContext = function (item) {
    var wrap = $("context-wrap");
    wrap.textContent = "";
    // A list context (a pair, a text and its keywords): each part under the task's title for it.
    if (Array.isArray(item.context)) {
      var titles = item.segment_titles || [];
      item.context.forEach(function (part, i) {
        var title = titles[i] || interpolate(gettext("Sentence %(number)s"), { number: i + 1 }, true);
        wrap.appendChild(el("div", { class: "sentence" }, [
          el("div", { class: "sentence-title", text: title }),
          el("div", { class: "context", text: part }),
        ]));
      });
      return;
    }
    if (item.answer_kind === "label") {
      if (item.marks && item.marks.length) { this.renderMarked(item, wrap); return; }
      wrap.appendChild(el("div", { class: "context", text: item.context }));
      return;
    }
    this.view = new ContextView(item.context, wrap);
    this.view.box.setAttribute("tabindex", "0");
    this.view.box.setAttribute("aria-label", gettext("Text: click a word to select it, drag over several words, or use the arrow keys and A"));
  };

  ItemPage.prototype.renderAnswerArea = function (task, item) {
    var area = $("answer-area");
    area.textContent = "";
    // No "No answer" where the answer always exists (ReCoRD); absent = allowed, as before the flag.
    document.querySelectorAll("[data-shortcut='N']").forEach(function (node) {
      node.hidden = item.empty_answer_allowed === false;
    });
    if (item.answer_kind !== "label") { this.renderSpanTools(area, item); return; }
    this.renderChoices(area, task, item);
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
      // The chosen label's help, else the first label's; an item's own options have none.
      var helps = (this.choices || []).map(function (c) { return c.help; }).filter(Boolean);
      label = this.helpFor(this.label) || (this.label ? null : helps[0]);
    }
    if (!label) return;
    $("help-title").textContent = label.text || label.name;
    $("help-definition").textContent = label.definition;
    $("help-example").textContent = label.example;
    var dialog = $("help-dialog");
    if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
    $("help-close").focus();
  };

  // The confidence words in five columns, or one point a row where a word does not fit its column.
  ItemPage.prototype.fitScale = function () {
    var scale = document.querySelector("#confidence .scale");
    if (!scale) return;
    scale.classList.remove("stacked");
    var tooWide = Array.prototype.some.call(scale.querySelectorAll(".scale-point"), function (point) {
      return point.scrollWidth > point.clientWidth + 1;
    });
    scale.classList.toggle("stacked", tooWide);
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
    // Typing a label's name: the list's own keys (choices.js); Enter there submits once the label is chosen.
    if (e.target && e.target.id === "label-filter" && key !== "Enter") return;
    var lower = key.length === 1 ? key.toLowerCase() : key;
    // Any other key cancels a skip waiting for its confirmation (and then does what it does).
    if (this.skipArmed && lower !== "s" && key !== "Shift") this.cancelSkip(true);
    if (key === "Enter") {
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY") return;  // the focused control's own click
      e.preventDefault();
      if (this.locked) this.next(); else this.submit();
      return;
    }
    if (this.locked) return;
    var confidenceKeys = { q: 1, w: 2, e: 3, r: 4, t: 5 };
    if (confidenceKeys[lower] && !e.shiftKey) { e.preventDefault(); this.setConfidence(confidenceKeys[lower]); return; }
    if (lower === "s" && this.item.skip_allowed) { e.preventDefault(); if (!e.repeat) this.skip(); return; }
    if (this.item.answer_kind === "label") {
      if (/^[1-9]$/.test(key)) { e.preventDefault(); this.chooseLabel(key); return; }
      if (lower === "h") { e.preventDefault(); this.openHelp(null); }
      return;
    }
    this.onSpanKey(e, key, lower);
  };

  /* -------------------------------------------------------------- submit, skip */

  ItemPage.prototype.payload = function () {
    var confidence = this.confidence(), body = { item: this.item.item, confidence: confidence };
    if (this.item.answer_kind === "label") {
      if (!this.label) {
        if (this.listMode) return { error: gettext("Choose a label first: type part of its name, then Enter.") };
        return { error: interpolate(gettext("Choose a label first (keys 1 to %(n)s)."), { n: this.choices.length }, true) };
      }
      body.label = this.label;
    } else if (this.noAnswer) {
      body.no_answer = true;
    } else {
      if (!this.spans.length) {
        return { error: this.emptyAllowed() ? gettext("Select the answer in the text, or choose \u201cNo answer\u201d (N).")
                                            : gettext("Select the answer in the text.") };
      }
      var text = this.view.text;
      body.offset_unit = "utf16";
      body.spans = this.spans.map(function (sp) { return { start: sp.s, end: sp.e, text: text.slice(sp.s, sp.e) }; });
    }
    if (!confidence) return { error: gettext("Rate how confident you are in your answer (keys Q W E R T).") };
    body.signals = this.signals ? this.signals.read() : undefined;
    return { body: body };
  };

  ItemPage.prototype.setBusy = function (busy) {
    this.busy = busy;
    $("submit-button").disabled = busy;
    $("skip-button").disabled = busy;
  };

  ItemPage.prototype.submit = function () {
    if (this.busy || this.locked || !this.item) return;
    this.cancelSkip(false);
    var p = this.payload();
    if (p.error) { this.showMessage(p.error); return; }
    this.send(this.urls.submit, p.body);
  };

  // A skip costs the item: the first S or click asks, a second one within a few seconds skips.
  ItemPage.prototype.skip = function () {
    if (this.busy || this.locked || !this.item || !this.item.skip_allowed) return;
    if (!this.skipArmed) {
      var self = this;
      this.skipArmed = window.setTimeout(function () { self.cancelSkip(true); }, SKIP_CONFIRM_MS);
      var button = $("skip-button");
      button.classList.add("confirming");
      button.querySelector(".btn-text").textContent = gettext("Confirm skip");
      this.showMessage(gettext("Press S again (or click Confirm skip) to skip this item."), "notice");
      return;
    }
    this.cancelSkip(false);
    this.send(this.urls.skip, { item: this.item.item, confidence: this.confidence() || undefined,
                                signals: this.signals ? this.signals.read() : undefined });
  };

  ItemPage.prototype.cancelSkip = function (say) {
    if (!this.skipArmed) return;
    window.clearTimeout(this.skipArmed);
    this.skipArmed = null;
    var button = $("skip-button");
    button.classList.remove("confirming");
    button.querySelector(".btn-text").textContent = gettext("Skip");
    if (say) this.hideMessage();
  };

  // Whether the stored answer is the one this page sent (the same label, skip or span texts, and confidence).
  function sameAnswer(body, answer) {
    if (!answer || (body.confidence || null) !== (answer.confidence || null)) return false;
    if (body.label !== undefined) return answer.label === body.label;
    if (body.no_answer) return answer.status === "no_answer";
    if (!body.spans) return answer.status === "skipped";
    var sent = body.spans.map(function (sp) { return sp.text; }).sort().join("\n");
    return sent === (answer.spans || []).map(function (sp) { return sp.text; }).sort().join("\n");
  }

  ItemPage.prototype.send = function (url, body) {
    var self = this;
    this.setBusy(true);
    K.persist("POST", url, body, {
      kept: url === this.urls.skip ? gettext("Your skip is kept.") : gettext("Your answer is kept as you sent it."),
      onWait: function (text) { self.showMessage(text); },
    }).then(function (res) {
      self.setBusy(false);
      if (res.ok) return self.afterLock(res.data);
      if (res.status === 409 && res.data.error === "already_locked") {
        // A retry whose first attempt got through stores this very answer: only another answer is news.
        return self.showLocked(res.data.answer, null, !sameAnswer(body, res.data.answer));
      }
      // The study has closed and its grace period is over: the page shows the completion code.
      if (res.status === 409 && res.data.error === "study_closed") { window.location.assign(self.urls.home); return; }
      self.showMessage(res.data.detail || gettext("The answer could not be saved."));
    });
  };

  ItemPage.prototype.afterLock = function (data) {
    if (data.reveal) {
      window.history.replaceState(null, "", window.location.pathname + "#item=" + this.item.item);
      this.session.state = data.state;
      var p = this.progress;
      if (p) this.setProgress(p, p.done + 1);
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

  // Show the locked answer in the inputs, disabled; in training, the reveal beside it. ``elsewhere``: the
  // server refused this tab's answer because another tab (or an earlier click) had locked one: say so.
  ItemPage.prototype.showLocked = function (answer, reveal, elsewhere) {
    var self = this;
    this.locked = true;
    this.cursor = null;
    this.cancelSkip(false);
    document.querySelectorAll("input[name=label], input[name=confidence]").forEach(function (i) {
      i.disabled = true;
      i.checked = (i.name === "label" && i.value === answer.label) || (i.name === "confidence" && Number(i.value) === answer.confidence);
    });
    if (this.item.answer_kind === "label") this.lockChoices(answer.label);
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
      else K.api("GET", this.urls.items + answer.item + "/reveal/").then(function (res) { if (res.ok) self.showReveal(res.data); });
    } else {
      var box = $("reveal");
      box.hidden = false;
      box.className = "reveal locked-note";
      box.textContent = answer.status === "skipped" ? gettext("You skipped this item.")
                                                    : gettext("Your answer to this item is saved and cannot be changed.");
    }
    if (elsewhere) {
      this.showMessage(gettext("This item was already answered, probably in another tab or window. The answer shown is the one saved there; this page's answer was not saved."));
    }
    $("next-button").focus();
  };

  ItemPage.prototype.next = function () {
    if (this.busy) return;
    var state = this.session && this.session.state;
    // Leaving the step (training done, excluded, finished): the server renders the next page.
    if (!this.item || state !== this.item.phase) { window.location.assign(this.urls.home); return; }
    if (window.location.hash) window.history.pushState(null, "", window.location.pathname);
    this.load();
  };

  // kind "notice": a question or a note, not an error.
  ItemPage.prototype.showMessage = function (text, kind) {
    var m = $("message");
    m.textContent = text;
    m.className = "message" + (kind ? " " + kind : "");
    m.hidden = false;
  };
  ItemPage.prototype.hideMessage = function () { $("message").hidden = true; };

  window.WorkerItem = { ItemPage: ItemPage };
})();
