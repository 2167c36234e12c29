/* Integrity signals: what the page records about one item, sent with its answer (submit or skip).
 *
 * Exactly four figures per item (annotation/services/session/signals.py; docs/studies.md, "Integrity signals"):
 * visible_ms (time the item was visible: the page not hidden), hidden_count and hidden_ms (how often and
 * how long the page was away: unfocused or hidden), copy_count (how often text of the item was copied).
 * Nothing else: no keys pressed, never what was copied, no pointer positions.
 *
 * The figures count from when the page shows the item; a reload starts them again.
 * Exposes window.WorkerSignals = { Tracker }; item.js starts one per item (start) and reads it (read).
 */
(function () {
  "use strict";

  function now() { return window.performance && performance.now ? performance.now() : Date.now(); }
  function away() { return document.hidden || !document.hasFocus(); }

  // root: the element holding the item's text (a copy counts when the selection lies in it).
  function Tracker(root) {
    var self = this;
    this.root = root;
    this.item = null;
    document.addEventListener("visibilitychange", function () { self.update(); });
    window.addEventListener("blur", function () { self.update(); });
    window.addEventListener("focus", function () { self.update(); });
    document.addEventListener("copy", function (e) { self.onCopy(e); });
  }

  Tracker.prototype.start = function (itemId) {
    var t = now();
    this.item = itemId;
    this.visibleMs = 0;
    this.hiddenMs = 0;
    this.copies = 0;
    this.visibleSince = document.hidden ? null : t;
    this.awaySince = away() ? t : null;
    this.hiddenCount = this.awaySince === null ? 0 : 1;  // shown while away (a tab opened in the background)
  };

  // Close or open the running periods after a focus or visibility change.
  Tracker.prototype.update = function () {
    if (this.item === null) return;
    var t = now();
    if (document.hidden && this.visibleSince !== null) { this.visibleMs += t - this.visibleSince; this.visibleSince = null; }
    if (!document.hidden && this.visibleSince === null) this.visibleSince = t;
    if (away() && this.awaySince === null) { this.awaySince = t; this.hiddenCount += 1; }
    if (!away() && this.awaySince !== null) { this.hiddenMs += t - this.awaySince; this.awaySince = null; }
  };

  Tracker.prototype.onCopy = function (e) {
    if (this.item === null) return;
    var sel = document.getSelection(), root = this.root;
    var inItem = (sel && sel.rangeCount && (root.contains(sel.anchorNode) || root.contains(sel.focusNode)))
      || (e.target && e.target.nodeType === 1 && root.contains(e.target));
    if (inItem) this.copies += 1;
  };

  // The figures so far for the item (the running periods counted up to now), or undefined before start.
  Tracker.prototype.read = function () {
    if (this.item === null) return undefined;
    var t = now();
    var visible = this.visibleMs + (this.visibleSince !== null ? t - this.visibleSince : 0);
    var hidden = this.hiddenMs + (this.awaySince !== null ? t - this.awaySince : 0);
    return { visible_ms: Math.round(visible), hidden_count: this.hiddenCount, hidden_ms: Math.round(hidden), copy_count: this.copies };
  };

  window.WorkerSignals = { Tracker: Tracker };
})();
