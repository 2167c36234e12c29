/* What a label item offers, driven by the item's data, never by a task's name:
 *   - its own options (item.options: e.g. one item's seven idioms; label "i" names options[i]) or else the
 *     task's labels;
 *   - up to MANY_LABELS choices as cards (keys 1-9), more as a searchable list: type to filter (a label's
 *     name and its definition, which holds its readable and short names), arrow keys and Enter to choose,
 *     the chosen label's description behind a Help button;
 *   - marked spans of the text (item.marks) as <mark> elements named for screen readers ("span 1").
 * ItemPage methods (needs worker.js, item.js). Exposes window.WorkerChoices = { MANY_LABELS, matches }.
 */
(function () {
  "use strict";

  var K = window.WorkerKit, $ = K.$, el = K.el, gettext = K.gettext, ngettext = K.ngettext, interpolate = K.interpolate;
  var ItemPage = window.WorkerItem.ItemPage;
  var MANY_LABELS = 12;  // more than this: a searchable list (the page's data-many-labels: presentation.MANY_LABELS)
  var GLOSS_MAX = 24;  // a definition this short is a readable name, shown beside the label's name

  // The choices of this item: {name, text, gloss, help}; help is the task label (its definition and example).
  ItemPage.prototype.choicesOf = function (task, item) {
    if (item.options && item.options.length) {
      return item.options.map(function (o) { return { name: o.name, key: o.key, text: o.text, gloss: "", help: null }; });
    }
    return task.labels.map(function (l) {
      // The badge's word in the page's language (l.text); the answer stays the label's own name.
      var word = l.text || l.name;
      var short = l.definition && l.definition !== word && l.definition.length <= GLOSS_MAX ? l.definition : "";
      return { name: l.name, key: l.key, text: word, gloss: short, help: l };
    });
  };

  // What a label says on this item, for messages and the reveal.
  ItemPage.prototype.choiceText = function (name) {
    var c = (this.choices || []).filter(function (x) { return x.name === name; })[0];
    if (!c) return name;
    return c.gloss ? c.text + " \u00b7 " + c.gloss : c.text;
  };

  ItemPage.prototype.renderChoices = function (area, task, item) {
    this.choices = this.choicesOf(task, item);
    this.listMode = this.choices.length > (Number(this.root.dataset.manyLabels) || MANY_LABELS);
    if (this.listMode) { this.renderLabelSearch(area); return; }
    var self = this;
    var group = el("div", { class: "labels", role: "radiogroup", "aria-label": gettext("Answer") });
    this.choices.forEach(function (c) {
      var input = el("input", { type: "radio", name: "label", value: c.name, id: "label-" + c.key });
      input.addEventListener("change", function () { self.label = c.name; self.hideMessage(); });
      var name = el("span", { class: "label-name", text: c.text });
      var words = el("span", { class: "label-words" }, [name, c.gloss ? el("span", { class: "label-gloss", text: c.gloss }) : null]);
      var help = null;
      if (c.help) {
        help = el("button", { type: "button", class: "help-link", text: gettext("Help"),
                              "aria-label": interpolate(gettext("Help: %(label)s"), { label: c.text }, true) });
        help.addEventListener("click", function () { self.openHelp(c.help); });
      }
      group.appendChild(el("div", { class: "label-choice" + (c.help ? "" : " own-option"), "data-label": c.name }, [
        el("label", { for: "label-" + c.key }, [input, el("kbd", { text: c.key }), words]),
        help,
      ]));
    });
    area.appendChild(group);
  };

  /* -------------------------------------------------------------- the searchable list */

  // Case-insensitive substring of the name, the shown text or the definition (Chinese name, short name, code).
  function matches(choice, query) {
    if (!query) return true;
    var hay = [choice.name, choice.text, choice.gloss, choice.help ? choice.help.definition : ""].join("\n").toLowerCase();
    return hay.indexOf(query.toLowerCase()) >= 0;
  }

  ItemPage.prototype.renderLabelSearch = function (area) {
    var self = this;
    var filter = el("input", {
      type: "search", id: "label-filter", class: "label-filter", autocomplete: "off", spellcheck: "false",
      role: "combobox", "aria-controls": "label-list", "aria-expanded": "true", "aria-autocomplete": "list",
      placeholder: gettext("Type part of a label"),
    });
    var list = el("ul", { id: "label-list", class: "label-list", role: "listbox", "aria-label": gettext("Labels") });
    var count = el("p", { class: "label-count", id: "label-count", "aria-live": "polite" });
    var help = el("button", { type: "button", class: "help-link", id: "label-help", text: gettext("Describe this label"), hidden: "" });
    help.addEventListener("click", function () { self.openHelp(null); });
    var chosen = el("p", { class: "label-chosen", id: "label-chosen" }, [
      el("span", { class: "label-chosen-title", text: gettext("Your answer:") + " " }),
      el("strong", { id: "label-chosen-text", text: gettext("(none yet)") }),
      help,
    ]);
    this.choices.forEach(function (c, i) {
      // The definition beside the name, unless it only says the name again (IFLYTEK's "打车" is both).
      var gloss = c.gloss || (c.help && c.help.definition !== c.name && c.help.definition !== c.text ? c.help.definition : "");
      var row = el("li", { class: "label-choice label-row", role: "option", id: "label-option-" + i,
                           "data-label": c.name, "aria-selected": "false", tabindex: "-1" }, [
        el("span", { class: "label-words" }, [
          el("span", { class: "label-name", text: c.text }),
          gloss ? el("span", { class: "label-gloss", text: gloss }) : null,
        ]),
      ]);
      row.addEventListener("click", function () { if (!self.locked) self.pickRow(row, true); });
      list.appendChild(row);
    });
    filter.addEventListener("input", function () { self.filterRows(filter.value.trim()); });
    filter.addEventListener("keydown", function (e) { self.onFilterKey(e); });
    area.appendChild(el("div", { class: "label-search" }, [
      el("label", { for: "label-filter", class: "label-filter-title", text: gettext("Find the label") }),
      filter, count, list, chosen,
    ]));
    this.filterRows("");
    if (!window.matchMedia || !window.matchMedia("(pointer: coarse)").matches) filter.focus({ preventScroll: true });
  };

  // Scroll the list, never the page, so that the active row is visible.
  function keepInView(list, row) {
    var top = row.offsetTop, bottom = top + row.offsetHeight;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
  }

  ItemPage.prototype.rows = function () { return Array.prototype.slice.call(document.querySelectorAll(".label-row")); };
  ItemPage.prototype.visibleRows = function () { return this.rows().filter(function (r) { return !r.hidden; }); };

  ItemPage.prototype.filterRows = function (query) {
    var self = this, shown = 0;
    this.rows().forEach(function (row, i) {
      row.hidden = !matches(self.choices[i], query);
      if (!row.hidden) shown++;
    });
    $("label-count").textContent = interpolate(ngettext("%(n)s label", "%(n)s labels", shown), { n: shown }, true);
    var first = this.visibleRows()[0] || null;
    this.setActive(first);
  };

  ItemPage.prototype.setActive = function (row) {
    this.rows().forEach(function (r) { r.classList.toggle("is-active", r === row); });
    var filter = $("label-filter");
    if (row) { filter.setAttribute("aria-activedescendant", row.id); keepInView($("label-list"), row); }
    else filter.removeAttribute("aria-activedescendant");
    this.activeRow = row;
  };

  // The list's own keys: arrows move, Enter chooses (Enter on the row already chosen submits, as elsewhere).
  ItemPage.prototype.onFilterKey = function (e) {
    if (this.locked) return;
    var rows = this.visibleRows(), at = rows.indexOf(this.activeRow);
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      e.stopPropagation();
      if (!rows.length) return;
      var next = e.key === "ArrowDown" ? Math.min(at + 1, rows.length - 1) : Math.max(at - 1, 0);
      this.setActive(rows[next]);
    } else if (e.key === "Enter" && this.activeRow && this.activeRow.dataset.label !== this.label) {
      e.preventDefault();
      e.stopPropagation();
      this.pickRow(this.activeRow, true);
    } else if (e.key === "Escape" && e.target.value) {
      e.preventDefault();
      e.stopPropagation();
      e.target.value = "";
      this.filterRows("");
    }
  };

  // Choose a row; the focus leaves the filter so that Q..T (confidence) and Enter (submit) work at once.
  ItemPage.prototype.pickRow = function (row, focus) {
    var name = row.dataset.label;
    this.label = name;
    this.rows().forEach(function (r) { r.setAttribute("aria-selected", r === row ? "true" : "false"); r.classList.toggle("is-chosen", r === row); });
    this.setActive(row);
    $("label-chosen-text").textContent = this.choiceText(name);
    $("label-help").hidden = !this.helpFor(name);
    this.hideMessage();
    if (focus) row.focus({ preventScroll: true });
  };

  ItemPage.prototype.helpFor = function (name) {
    var c = (this.choices || []).filter(function (x) { return x.name === name; })[0];
    return c ? c.help : null;
  };

  // A locked answer: the list shows the worker's choice (and in training the reveal adds the gold).
  ItemPage.prototype.lockChoices = function (label) {
    if (!this.listMode) return;
    var filter = $("label-filter");
    filter.value = "";
    filter.disabled = true;
    var row = this.rows().filter(function (r) { return r.dataset.label === label; })[0];
    if (row) this.pickRow(row, false);
    this.showOnlyRows([label]);
  };

  // After the lock only the rows that matter stay: the worker's answer and the gold.
  ItemPage.prototype.showOnlyRows = function (names) {
    if (!this.listMode) return;
    var shown = 0;
    this.rows().forEach(function (r) { r.hidden = names.indexOf(r.dataset.label) < 0; if (!r.hidden) shown++; });
    $("label-count").textContent = interpolate(ngettext("%(n)s label", "%(n)s labels", shown), { n: shown }, true);
  };

  /* -------------------------------------------------------------- marked spans */

  var BLANK = "\uff3f\uff3f\uff3f\uff3f";  // what a blank to fill shows: a line (fullwidth low lines)

  // "span1" -> "span 1", "blank" -> "blank to fill" (translated); another role is read as it is.
  function roleName(role) {
    var m = /^span(\d+)$/.exec(role || "");
    if (m) return interpolate(gettext("span %(n)s"), { n: m[1] }, true);
    if (role === "blank") return gettext("blank to fill");
    return String(role || gettext("marked"));
  }

  // The text with its marks: plain text nodes between <mark> elements (textContent only: nothing is parsed
  // as HTML). Each mark says its role to screen readers and shows its number.
  ItemPage.prototype.renderMarked = function (item, wrap) {
    var text = item.context, box = el("div", { class: "context has-marks" }), at = 0;
    item.marks.forEach(function (m) {
      if (m.utf16_start < at) return;  // overlapping marks are refused at import; never paint one twice
      if (m.utf16_start > at) box.appendChild(document.createTextNode(text.slice(at, m.utf16_start)));
      var number = (/^span(\d+)$/.exec(m.role) || [])[1];
      box.appendChild(el("mark", { class: "ctx-mark", "data-role": m.role }, [
        el("span", { class: "visually-hidden", text: interpolate(gettext("%(role)s: "), { role: roleName(m.role) }, true) }),
        // A blank shows as a line to fill, never the data's token (CHID's "#idiom#").
        el("span", { class: "mark-text", text: m.role === "blank" ? BLANK : text.slice(m.utf16_start, m.utf16_end) }),
        number ? el("sup", { class: "mark-tag", "aria-hidden": "true", text: number }) : null,
      ]));
      at = m.utf16_end;
    });
    if (at < text.length) box.appendChild(document.createTextNode(text.slice(at)));
    wrap.appendChild(box);
  };

  window.WorkerChoices = { MANY_LABELS: MANY_LABELS, BLANK: BLANK, matches: matches, roleName: roleName };
})();
