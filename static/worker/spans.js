/* Span answers on the item page: ItemPage methods for selecting, extending,
 * merging and removing spans with the mouse, a touch screen or the keyboard.
 *
 * A click (or tap) on a word selects that word; a click on a one-word span
 * removes it. A drag over several words selects them; a drag that reaches an
 * existing span extends it (where spans may not overlap). Two spans side by
 * side ("Amara", "Osei") stay two answers: the page offers to merge them.
 * The keyboard: arrows move the word cursor, Shift extends, A adds, M merges.
 */
(function () {
  "use strict";

  var K = window.WorkerKit, $ = K.$, el = K.el, gettext = K.gettext, interpolate = K.interpolate;
  var ItemPage = window.WorkerItem.ItemPage;
  var TOUCH_HINT = gettext("Tap a word to select it. For several words, press and hold a word, drag the handles, "
    + "then tap \u201cAdd selection\u201d.");

  function quoted(text) { return "\u201c" + text + "\u201d"; }

  ItemPage.prototype.emptyAllowed = function () { return this.item.empty_answer_allowed !== false; };

  ItemPage.prototype.bindSpans = function () {
    var self = this;
    // A drag may end outside the text: listen on the document, fromMouse checks the selection is in the text.
    // A mouse selection is added on release. A touch selection (press and hold, then drag the handles) is
    // kept as pending, shown, and added with "Add selection": on release it may still be one word.
    document.addEventListener("pointerdown", function (e) {
      self.touch = e.pointerType === "touch";  // a pen drags a selection like a mouse
      if (self.touch && self.view && self.view.box.contains(e.target)) { self.pending = null; self.paintContext(); }
    }, true);
    document.addEventListener("mouseup", function (e) { if (!self.touch && e.button === 0) self.fromMouse(e); });
    document.addEventListener("selectionchange", function () { if (self.touch) self.trackSelection(); });
    // A tap is a click without a selection; a long press selects (handles) and sends no click.
    document.addEventListener("click", function (e) {
      if (self.touch && !self.selectedRange()) self.clickWord(e.target, 1);
    });
  };

  ItemPage.prototype.renderSpanTools = function (area, item) {
    var self = this, tools = el("div", { class: "span-tools" });
    var add = el("button", { type: "button", class: "btn btn-small", id: "add-span" },
                 [document.createTextNode(gettext("Add selection") + " "), el("kbd", { text: "A" })]);
    add.addEventListener("click", function (e) { self.addKeyboardSelection(); if (e.detail) add.blur(); });
    var hint = item.overlapping_spans
      ? gettext("Select each answer in the text, and each wording of it: a shorter and a longer wording of the same answer both count, so selections may overlap.")
      : item.multiple_spans
      ? gettext("Select every answer in the text. Two selections side by side stay two answers unless you merge them.")
      : gettext("Select the answer in the text (one span).");
    var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
    hint += " " + (coarse ? TOUCH_HINT : gettext("Click a word to select it, or drag across several words."));
    tools.appendChild(el("p", { class: "span-hint", id: "span-hint", text: hint }));
    tools.appendChild(add);
    if (this.emptyAllowed()) {
      var none = el("button", { type: "button", class: "btn btn-small", id: "no-answer", "aria-pressed": "false" },
                    [document.createTextNode(gettext("No answer") + " "), el("kbd", { text: "N" })]);
      // After a mouse click the button lets go of the focus, so that Enter then submits.
      none.addEventListener("click", function (e) { self.toggleNoAnswer(); if (e.detail) none.blur(); });
      tools.appendChild(none);
    }
    area.appendChild(tools);
    area.appendChild(el("ol", { class: "span-list", id: "span-list", "aria-label": gettext("Your spans") }));
    area.appendChild(el("div", { class: "merge-offer", id: "merge-offer", role: "status", hidden: "" }));
    this.paintSpans();
  };

  ItemPage.prototype.onSpanKey = function (e, key, lower) {
    if (key === "ArrowRight" || key === "ArrowLeft") {
      e.preventDefault();
      this.moveCursor(key === "ArrowRight" ? 1 : -1, e.shiftKey);
    } else if (lower === "a") {
      e.preventDefault(); this.addKeyboardSelection();
    } else if (lower === "n" && this.emptyAllowed()) {
      e.preventDefault(); this.toggleNoAnswer();
    } else if (lower === "m" && this.adjacentPair()) {
      e.preventDefault(); this.mergeAdjacent();
    } else if (key === "Backspace" || key === "Delete") {
      if (this.spans.length) { e.preventDefault(); this.removeSpan(this.spans.length - 1); }
    }
  };

  /* -------------------------------------------------------------- mouse and touch */

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
    if (!snapped) { this.clickWord(e.target, e.detail); return; }
    window.getSelection().removeAllRanges();
    if (e.detail >= 2 && this.spanIndex(snapped) >= 0) return;  // a double click's word, added by its first click
    this.addSpan(snapped);
  };

  ItemPage.prototype.spanIndex = function (span) {
    for (var i = 0; i < this.spans.length; i++) if (this.spans[i].s === span.s && this.spans[i].e === span.e) return i;
    return -1;
  };

  // A click on a word selects it and puts the word cursor there (Shift + arrows then extend it, A adds);
  // a click on a one-word span removes it; a click inside a longer span only moves the cursor.
  ItemPage.prototype.clickWord = function (target, clicks) {
    if (this.locked || !this.view || !target || !target.closest) return;
    var node = target.closest(".tok");
    if (!node || !this.view.box.contains(node)) return;
    var s = Number(node.dataset.s), tok = null;
    this.view.tokens.forEach(function (t) { if (t.s === s) tok = t; });
    if (!tok) return;
    this.cursor = this.anchor = tok.index;
    var word = { s: tok.s, e: tok.e }, same = this.spanIndex(word);
    if (same >= 0) {
      if (clicks === 1) this.removeSpan(same); else this.paintSpans();
      return;
    }
    var inside = this.spans.some(function (sp) { return sp.s <= word.s && word.e <= sp.e; });
    if (inside && !this.item.overlapping_spans) { this.paintSpans(); return; }
    this.addSpan(word);
  };

  // Touch: follow the selection as the handles move; "Add selection" adds it.
  ItemPage.prototype.trackSelection = function () {
    var snapped = this.selectedRange();
    if (!snapped) return;  // a collapse (e.g. tapping the button) keeps the pending selection
    this.pending = snapped;
    this.paintContext();
  };

  /* -------------------------------------------------------------- the answer's spans */

  ItemPage.prototype.addSpan = function (span) {
    if (this.locked) return;
    if (this.spanIndex(span) >= 0) { this.showMessage(gettext("This span is already in your answer.")); return; }
    if (!this.item.multiple_spans) this.spans = [];
    // The server refuses overlaps where the task takes separate spans: a selection reaching over an
    // existing span extends it instead (the union replaces it), one inside a span is refused.
    if (this.item.multiple_spans && !this.item.overlapping_spans) {
      var clash = this.spans.filter(function (sp) { return sp.s < span.e && span.s < sp.e; });
      if (clash.length === 1 && clash[0].s <= span.s && span.e <= clash[0].e) {
        this.showMessage(gettext("This selection overlaps a span already in your answer (it lies inside it): "
                                 + "remove that span first to make it shorter."));
        return;
      }
      if (clash.length) {
        clash.forEach(function (sp) { span = { s: Math.min(span.s, sp.s), e: Math.max(span.e, sp.e) }; });
        this.spans = this.spans.filter(function (sp) { return clash.indexOf(sp) < 0; });
      }
    }
    if (this.item.max_spans && this.spans.length >= this.item.max_spans) {
      this.showMessage(interpolate(gettext("This answer already has %(n)s spans, the most this item takes."),
                                   { n: this.spans.length }, true));
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
    this.keptApart = {};  // what is left is a new answer: pairs are offered again
    this.paintSpans();
  };

  // The first two spans side by side (only white space between them) that the worker has not kept apart.
  ItemPage.prototype.adjacentPair = function () {
    if (this.locked || !this.view || !this.item.multiple_spans) return null;
    for (var i = 0; i + 1 < this.spans.length; i++) {
      var a = this.spans[i], b = this.spans[i + 1];
      if (a.e <= b.s && /^\s*$/.test(this.view.text.slice(a.e, b.s)) && !this.keptApart[a.s + ":" + a.e + "|" + b.s + ":" + b.e]) {
        return [a, b];
      }
    }
    return null;
  };

  ItemPage.prototype.mergeAdjacent = function () {
    var pair = this.adjacentPair();
    if (!pair) return;
    this.spans = this.spans.filter(function (sp) { return sp !== pair[0] && sp !== pair[1]; });
    this.addSpan({ s: pair[0].s, e: pair[1].e });
  };

  ItemPage.prototype.keepApart = function () {
    var pair = this.adjacentPair();
    if (!pair) return;
    this.keptApart[pair[0].s + ":" + pair[0].e + "|" + pair[1].s + ":" + pair[1].e] = true;
    this.paintSpans();
  };

  ItemPage.prototype.toggleNoAnswer = function () {
    if (this.locked || !this.view || !this.emptyAllowed()) return;
    this.noAnswer = !this.noAnswer;
    if (this.noAnswer) this.spans = [];
    this.hideMessage();
    this.paintSpans();
  };

  /* -------------------------------------------------------------- keyboard */

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
      this.showMessage(this.touch ? TOUCH_HINT : gettext("Move the word cursor with the arrow keys first (Shift extends), then press A."));
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

  /* -------------------------------------------------------------- painting */

  ItemPage.prototype.paintContext = function () {
    this.view.paint(this.spans, "mine", {
      sel: this.locked ? null : this.pending || (this.anchor !== this.cursor ? this.keyboardSelection() : null),
      cursor: this.cursor === null || this.locked ? null : this.view.tokens[this.cursor],
      focus: this.focusSpan,
    });
  };

  ItemPage.prototype.paintSpans = function () {
    if (!this.view) return;
    var self = this, text = this.view.text;
    this.paintContext();
    var list = $("span-list"), none = $("no-answer");
    if (none) {
      none.setAttribute("aria-pressed", this.noAnswer ? "true" : "false");
      none.classList.toggle("active", this.noAnswer);
      none.disabled = this.locked;
    }
    if ($("add-span")) $("add-span").disabled = this.locked;
    this.paintMergeOffer();
    if (!list) return;
    list.textContent = "";
    if (this.noAnswer) {
      list.appendChild(el("li", { class: "span-item no-answer-item", text: gettext("No answer (the text does not contain one)") }));
      return;
    }
    if (!this.spans.length) {
      list.appendChild(el("li", { class: "span-empty", text: gettext("No span selected yet.") }));
      return;
    }
    this.spans.forEach(function (sp, i) {
      var li = el("li", { class: "span-item" }, [el("span", { class: "span-text", text: text.slice(sp.s, sp.e) })]);
      if (!self.locked) {
        var rm = el("button", { type: "button", class: "remove-span", text: "\u2715",
                                "aria-label": interpolate(gettext("Remove %(span)s"), { span: text.slice(sp.s, sp.e) }, true) });
        rm.addEventListener("click", function () { self.removeSpan(i); });
        li.appendChild(rm);
      }
      li.addEventListener("mouseenter", function () { self.focusSpan = sp; self.paintContext(); });
      li.addEventListener("mouseleave", function () { self.focusSpan = null; self.paintContext(); });
      list.appendChild(li);
    });
  };

  ItemPage.prototype.paintMergeOffer = function () {
    var box = $("merge-offer"), pair = this.adjacentPair(), self = this;
    if (!box) return;
    var appearing = box.hidden && !!pair;
    box.textContent = "";
    box.hidden = !pair;
    if (!pair) return;
    var text = this.view.text;
    var question = interpolate(gettext("%(first)s and %(second)s are side by side: one answer or two?"),
                               { first: quoted(text.slice(pair[0].s, pair[0].e)), second: quoted(text.slice(pair[1].s, pair[1].e)) }, true);
    var merge = el("button", { type: "button", class: "btn btn-small", id: "merge-spans" }, [
      document.createTextNode(interpolate(gettext("Merge into %(span)s"), { span: quoted(text.slice(pair[0].s, pair[1].e)) }, true) + " "),
      el("kbd", { text: "M" }),
    ]);
    merge.addEventListener("click", function (e) { self.mergeAdjacent(); if (e.detail) merge.blur(); });
    var apart = el("button", { type: "button", class: "btn btn-small", id: "keep-apart", text: gettext("Keep two") });
    apart.addEventListener("click", function (e) { self.keepApart(); if (e.detail) apart.blur(); });
    box.appendChild(el("span", { class: "merge-question", text: question }));
    box.appendChild(merge);
    box.appendChild(apart);
    // Below a long text on a phone the question would go unseen: bring it just into view when it appears.
    // After the frame's layout: the list of spans above it may still grow in this event.
    if (appearing) requestAnimationFrame(function () {
      if (!box.hidden && box.getBoundingClientRect().bottom > window.innerHeight) box.scrollIntoView({ block: "nearest" });
    });
  };
})();
