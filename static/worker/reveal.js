/* The training reveal: the worker's locked answer beside the gold, in words a
 * worker understands ("3 of 4 names right"), with the S1 kept small for
 * researchers. An ItemPage method (needs item.js and context.js).
 */
(function () {
  "use strict";

  var K = window.WorkerKit, el = K.el, gettext = K.gettext, ngettext = K.ngettext, interpolate = K.interpolate;
  var ItemPage = window.WorkerItem.ItemPage;
  var ContextView = window.WorkerContext.ContextView;

  // The reveal's counts in a sentence or two.
  function feedbackWords(f) {
    if (!f) return "";
    if (f.unit === "label") {
      return f.found ? gettext("Your answer matches the correct label.") : gettext("Your answer does not match the correct label.");
    }
    if (!f.gold) {
      if (!f.yours) return gettext("Right: the text contains no answer.");
      return interpolate(ngettext("The text contains no answer, but you selected %(n)s span.",
                                  "The text contains no answer, but you selected %(n)s spans.", f.yours), { n: f.yours }, true);
    }
    var text, matched;
    if (f.wordings !== undefined) {
      // Nested gold strings are one answer in several wordings, and the score counts each wording: the
      // words count wordings too, so that "partly correct" never stands beside "1 of 1 answer right".
      text = interpolate(ngettext(
        "The correct answer is accepted in %(n)s wordings (a shorter and a longer one) and full credit needs each of them: you marked %(m)s.",
        "The %(gold)s correct answers are accepted in %(n)s wordings in all (shorter and longer ones) and full credit needs each of them: you marked %(m)s.",
        f.gold), { gold: f.gold, n: f.wordings, m: f.wordings_found }, true);
      matched = f.wordings_found;
    } else {
      var words = f.unit === "name"
        ? ngettext("%(found)s of %(gold)s name right.", "%(found)s of %(gold)s names right.", f.gold)
        : ngettext("%(found)s of %(gold)s answer right.", "%(found)s of %(gold)s answers right.", f.gold);
      text = interpolate(words, { found: f.found, gold: f.gold }, true);
      matched = f.found;
    }
    var extra = f.yours - matched;
    if (extra > 0) {
      text += " " + interpolate(ngettext("%(n)s of your selections is not in the correct answer.",
                                         "%(n)s of your selections are not in the correct answer.", extra), { n: extra }, true);
    }
    return text;
  }

  ItemPage.prototype.showReveal = function (rv) {
    var box = K.$("reveal"), item = this.item;
    box.textContent = "";
    box.hidden = false;
    box.className = "reveal verdict-" + String(rv.verdict).replace(" ", "-");
    var mark = rv.verdict === "correct" ? gettext("\u2713 Correct") : rv.verdict === "incorrect" ? gettext("\u2717 Incorrect") : gettext("\u25d0 Partly correct");
    // The figure is for staff trying the study (the preview); workers read the words.
    var staff = !!document.getElementById("preview-banner");
    var score = !staff || rv.score === null || rv.score === undefined ? null : el("span", {
      class: "score",
      title: gettext("S1 is the item's score in the study's results: 1 for a full match, 0 for none."),
      text: interpolate(gettext("S1 %(score)s"), { score: rv.score.toFixed(2) }, true),
    });
    box.appendChild(el("div", { class: "verdict" }, [
      el("strong", { class: "verdict-mark", text: mark }),
      el("span", { class: "feedback-words", text: feedbackWords(rv.feedback) }),
      score,
    ]));
    if (item.answer_kind === "label") { this.revealLabels(rv, box); return; }
    var grid = el("div", { class: "reveal-grid" });
    var yours = el("div", { class: "reveal-col" }, [el("h3", { class: "yours", text: gettext("Your answer") })]);
    var golds = el("div", { class: "reveal-col" }, [el("h3", { class: "gold", text: gettext("Correct answer") })]);
    var mine = new ContextView(item.context, yours);
    mine.paint(rv.your_answer.spans.map(function (sp) { return { s: sp.utf16_start, e: sp.utf16_end }; }), "mine");
    var list = el("ul", { class: "answer-strings" });
    if (!rv.matches.length) list.appendChild(el("li", { text: rv.your_answer.status === "no_answer" ? gettext("No answer") : gettext("(nothing)") }));
    rv.matches.forEach(function (m) { list.appendChild(el("li", { class: m.in_gold ? "ok" : "bad", text: (m.in_gold ? "\u2713 " : "\u2717 ") + m.text })); });
    yours.appendChild(list);
    var theirs = new ContextView(item.context, golds);
    theirs.paint(rv.gold.spans.map(function (sp) { return { s: sp.utf16_start, e: sp.utf16_end }; }), "gold");
    var glist = el("ul", { class: "answer-strings" });
    if (rv.gold.empty) glist.appendChild(el("li", { text: gettext("No answer: the text does not contain one.") }));
    (rv.gold.wordings || rv.gold.answers.map(function (a) { return [a]; })).forEach(function (w) {
      glist.appendChild(el("li", { text: w.length > 1
        ? interpolate(gettext("%(wordings)s (one answer, each wording counts)"), { wordings: w.join(" / ") }, true)
        : w[0] }));
    });
    golds.appendChild(glist);
    grid.appendChild(yours);
    grid.appendChild(golds);
    box.appendChild(grid);
  };

  // Labels: the gold card green, a wrong choice red, each with its tag on a row of its own under the name
  // (beside it, the tags squeezed "contradiction" to a letter a line).
  ItemPage.prototype.revealLabels = function (rv, box) {
    var gold = rv.gold.answers, self = this;
    // In the item's own words: an option's text (one item's idiom), a label with its readable name.
    var shown = gold.map(function (name) { return self.choiceText(name); }).join(", ");
    box.appendChild(el("p", {}, [document.createTextNode(gettext("Your answer:") + " "), el("strong", { class: "yours", text: this.choiceText(rv.your_answer.label) })]));
    box.appendChild(el("p", {}, [document.createTextNode(gettext("Correct answer:") + " "), el("strong", { class: "gold", text: shown || gettext("(none)") })]));
    this.showOnlyRows(gold.concat([rv.your_answer.label]));
    document.querySelectorAll(".label-choice").forEach(function (c) {
      var name = c.dataset.label;
      c.classList.toggle("is-gold", gold.indexOf(name) >= 0);
      c.classList.toggle("is-wrong", name === rv.your_answer.label && gold.indexOf(name) < 0);
      var old = c.querySelector(".verdict-tag");
      if (old) old.remove();
      var tag = c.classList.contains("is-gold") ? gettext("\u2713 correct") : c.classList.contains("is-wrong") ? gettext("\u2717 your answer") : "";
      if (tag) c.appendChild(el("span", { class: "verdict-tag", text: tag }));
    });
  };

  window.WorkerReveal = { feedbackWords: feedbackWords };
})();
