/* The context of a span item, rendered so that every character keeps its offset.
 *
 * The text is cut into segments (Intl.Segmenter words: words, punctuation and
 * emoji are selectable tokens, white space is not) and each segment is a
 * <span> with its UTF-16 offsets in data-s / data-e. Spans are painted as
 * layered highlights, so nested and overlapping spans stay visible.
 * Exposes window.WorkerContext = { ContextView, segmentsOf, piecesOf }.
 */
(function () {
  "use strict";

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "class") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    return node;
  }

  // Segments of a string in UTF-16 offsets: words, punctuation and emoji are
  // tokens (selectable), runs of white space are not. Intl.Segmenter keeps
  // user-perceived characters (ZWJ emoji, flags, combining marks) whole.
  // A possessive or clitic ("Babbage's") is split off so that "Babbage" alone can be selected.
  function pushSegment(out, piece, start) {
    var token = !/^\s+$/.test(piece);
    var parts = token ? piece.split(/(?=['\u2019])/) : [piece];
    parts.forEach(function (part) {
      out.push({ s: start, e: start + part.length, token: token });
      start += part.length;
    });
  }
  function segmentsOf(text, base) {
    var out = [];
    if (window.Intl && Intl.Segmenter) {
      var seg = new Intl.Segmenter(undefined, { granularity: "word" });
      Array.from(seg.segment(text)).forEach(function (s) { pushSegment(out, s.segment, base + s.index); });
    } else {
      var re = /\s+|[\p{L}\p{N}\p{M}]+|[\s\S]/gu, m;
      while ((m = re.exec(text)) !== null) pushSegment(out, m[0], base + m.index);
    }
    return out;
  }

  // ReCoRD marks summary lines with "@highlight" lines: they are shown as a
  // bullet list while every character keeps its offset in the stored string.
  function piecesOf(text) {
    var re = /(^|\n)@highlight\n/g, pieces = [], last = 0, m, inBullet = false;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last || !inBullet) pieces.push({ kind: inBullet ? "bullet" : "body", s: last, e: m.index });
      pieces.push({ kind: "hidden", s: m.index, e: m.index + m[0].length });
      last = m.index + m[0].length;
      inBullet = true;
    }
    pieces.push({ kind: inBullet ? "bullet" : "body", s: last, e: text.length });
    return pieces;
  }

  function ContextView(text, container) {
    this.text = text;
    this.segs = [];
    this.tokens = [];
    var self = this, list = null;
    var box = el("div", { class: "context", "data-context": "1" });
    piecesOf(text).forEach(function (p) {
      var holder;
      if (p.kind === "hidden") {
        holder = el("span", { class: "ctx-hidden", "aria-hidden": "true" });
        self._fill(holder, p.s, p.e, false);
        box.appendChild(holder);
        return;
      }
      if (p.kind === "bullet") {
        if (!list) { list = el("ul", { class: "ctx-highlights" }); box.appendChild(list); }
        holder = el("li");
        list.appendChild(holder);
      } else {
        holder = el("div", { class: "ctx-body" });
        box.appendChild(holder);
      }
      self._fill(holder, p.s, p.e, true);
    });
    container.appendChild(box);
    this.box = box;
  }
  ContextView.prototype._fill = function (holder, s, e, visible) {
    var self = this;
    segmentsOf(this.text.slice(s, e), s).forEach(function (g) {
      var node = el("span", { class: g.token ? "seg tok" : "seg", "data-s": g.s, "data-e": g.e });
      node.textContent = self.text.slice(g.s, g.e);
      holder.appendChild(node);
      var rec = { s: g.s, e: g.e, el: node, token: g.token && visible };
      self.segs.push(rec);
      if (rec.token) { rec.index = self.tokens.length; self.tokens.push(rec); }
    });
  };
  // Paint spans as layered highlights: depth = how many spans cover a segment.
  ContextView.prototype.paint = function (spans, tone, extra) {
    extra = extra || {};
    this.segs.forEach(function (g) {
      var depth = 0, first = false, last = false;
      spans.forEach(function (sp) {
        if (sp.s <= g.s && g.e <= sp.e) { depth++; if (sp.s === g.s) first = true; if (sp.e === g.e) last = true; }
      });
      var cls = g.token ? "seg tok" : "seg";
      if (depth) cls += " hl " + tone + " d" + Math.min(depth, 3) + (first ? " hl-first" : "") + (last ? " hl-last" : "");
      if (extra.sel && extra.sel.s <= g.s && g.e <= extra.sel.e) cls += " kbd-sel";
      if (extra.cursor === g) cls += " kbd-cursor";
      if (extra.focus && extra.focus.s <= g.s && g.e <= extra.focus.e) cls += " hl-focus";
      g.el.className = cls;
    });
  };
  // Snap a UTF-16 range to whole tokens (words, punctuation, emoji).
  ContextView.prototype.snap = function (s, e) {
    var first = null, last = null;
    this.tokens.forEach(function (t) {
      if (t.e > s && t.s < e) { if (!first) first = t; last = t; }
    });
    return first ? { s: first.s, e: last.e } : null;
  };
  ContextView.prototype.offsetOf = function (node, offset, atEnd) {
    if (node.nodeType === 3) {
      var seg = node.parentNode;
      if (seg && seg.dataset && seg.dataset.s !== undefined) return Number(seg.dataset.s) + offset;
      return null;
    }
    var kids = node.childNodes, probe;
    if (offset < kids.length) {
      probe = kids[offset];
      var s = probe.nodeType === 1 && probe.matches("[data-s]") ? probe : (probe.querySelector ? probe.querySelector("[data-s]") : null);
      if (s) return Number(s.dataset.s);
    }
    var all = node.querySelectorAll ? node.querySelectorAll("[data-s]") : [];
    if (all.length) return atEnd ? Number(all[all.length - 1].dataset.e) : Number(all[0].dataset.s);
    return null;
  };

  window.WorkerContext = { ContextView: ContextView, segmentsOf: segmentsOf, piecesOf: piecesOf };
})();
