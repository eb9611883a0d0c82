"use strict";
/* mutexlab report: draws the view model in #data. Everything is windowed: at most
   D.max_arrows arrows are drawn at once and the note says how many were left out.
   After every render the page writes what it drew into #selfcheck (for tests). */
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                 "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d"];
  var PROC_COLORS = ["#6baed6", "#fd8d3c", "#74c476", "#9e9ac8", "#c49c94", "#f7b6d2", "#9edae5", "#dbdb8d",
                     "#c7c7c7", "#a1d99b", "#fdae6b", "#bcbddc"];
  var KIND_COLORS = {cs: "#6f42c1", reed: "#8a4b08", flower: "#e377c2", pins: "#17becf", poison: "#2ca02c",
                     contract: "#ff7f0e"};
  var NOTE_COLORS = ["#000000", "#b8860b", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];  // no red: red means violation
  var NAMED_NOTES = {egg: "#b8860b", death: "#000000", retire: "#7f7f7f", request: "#000000", contract_done: "#2ca02c",
                     round: "#9467bd"};
  function noteColor(i) { return NAMED_NOTES[D.note_names[i]] || NOTE_COLORS[i % NOTE_COLORS.length]; }
  var LEFT0 = 112, LEFT = LEFT0, RIGHT = 24, TOP = 28, ROW = 46, LANE = 11;
  var MAX_ARROWS = D.max_arrows || 2000, MAX_BARS = 4000, MAX_NOTES = 4000, MAX_SEGS = 4000;

  var procs = D.procs, msgs = D.msgs, ivs = D.ivs, notes = D.notes;
  // one arrow per receipt: each message's first, then every later one (the network's copies)
  var copies = D.copies || [], arrowRows = msgs.concat(copies);
  var kinds = [];
  ivs.forEach(function (iv) { var k = kindOf(iv[1]); if (kinds.indexOf(k) < 0) kinds.push(k); });
  kinds.sort();
  // hidden: message types the legend hides; focus: the one process shown (arrows to and from it)
  var state = {axis: "t", win: {}, hidden: {}, focus: null};

  function kindOf(resource) { return String(resource).split(":")[0]; }
  function kindColor(k) { return KIND_COLORS[k] || PALETTE[(kinds.indexOf(k) + 5) % PALETTE.length]; }
  function typeColor(i) { return PALETTE[i % PALETTE.length]; }
  function procColor(i) { return PROC_COLORS[i % PROC_COLORS.length]; }
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function count(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function fmt(x) {
    if (x === null || x === undefined) return "–";
    if (typeof x !== "number") return String(x);
    return String(Math.round(x * 1000) / 1000);
  }
  function widen(r) {
    var a = r[0], b = r[1];
    if (!(b > a)) { b = a + 1; }
    var pad = (b - a) * 0.02;
    return [a - pad, b + pad];
  }
  var full = {t: widen(D.range.t), lamport: widen(D.range.lamport)};
  state.win = {t: full.t.slice(), lamport: full.lamport.slice()};

  // ---- the initial window: the whole run (a violation's "show on diagram" zooms to it; the
  // legend and the focus thin a crowded run out; at most MAX_ARROWS arrows are drawn at once) ----
  function initialWindow() {
    // A link may pin the view: #axis=lamport&from=10&to=20
    var hash = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("="); if (p[0]) hash[p[0]] = decodeURIComponent(p[1] || "");
    });
    if (hash.axis === "lamport" || hash.axis === "t") {
      state.axis = hash.axis;
      Array.prototype.forEach.call(document.querySelectorAll("input[name=axis]"), function (r) { r.checked = r.value === hash.axis; });
    }
    var f = parseFloat(hash.from), t = parseFloat(hash.to);
    if (t > f) state.win[state.axis] = [f, t];
    return hash;
  }

  // ---- header, verdict, legend, statistics: drawn once ----
  function drawStatic() {
    var s = D.stats;
    var params = Object.keys(D.params).map(function (k) {
      var v = JSON.stringify(D.params[k]);
      return k + "=" + (v.length > 40 ? v.slice(0, 37) + "…" : v);
    }).join(", ");
    document.getElementById("summary").textContent =
      (D.algorithm || D.subject || "unknown algorithm") + (params ? " (" + params + ")" : "") + " · " +
      count(procs.length, "participant", "participants") + " · " + count(s.messages, "message", "messages") + " · " +
      count(s.total_entries, "entry", "entries") + " · t from " +
      fmt(D.range.t[0]) + " to " + fmt(D.range.t[1]) + (D.t_origin ? " s after " + D.t_origin + " (wall clock)" : "");

    if (D.window) {
      var win = document.getElementById("window");
      win.hidden = false;
      win.textContent = D.window;
    }

    var v = D.verdict, box = document.getElementById("verdict");
    box.className = v.status.toLowerCase();
    h("div", v.status === "SAFE" ? "SAFE — no violation found" : v.head +
      (v.status === "INCOMPLETE" ? " — no safety violation in what the trace shows; " + v.unfinished_note : ""),
      box, "head");
    h("div", "checked: " + v.checks.join(", "), box, "sub");
    if (v.not_checked && v.not_checked.length) h("div", "not checked: " + v.not_checked.join("; "), box, "sub");
    if (v.violations.length) {
      var ul = h("ul", null, box);
      v.violations.forEach(function (viol, n) {
        var li = h("li", null, ul);
        // The kind said once: the bees' rule "unfinished" read "unfinished [unfinished] bee-3 …".
        var kindWord = viol.kind === "progress" ? "unfinished" : "undecided";
        if (viol.kind !== "safety" && viol.rule !== kindWord) h("span", kindWord + " ", li, "kind");
        h("b", "[" + viol.rule + "] ", li);
        h("span", viol.message + " ", li);
        var mine = ivs.filter(function (iv) { return viol.lines.indexOf(iv[7]) >= 0 || viol.lines.indexOf(iv[8]) >= 0; });
        if (mine.length) {
          var btn = h("button", "show on diagram", li);
          btn.addEventListener("click", function () { focusIntervals(mine); });
          h("div", mine.map(function (iv) {
            return procs[iv[0]] + " holds " + iv[1] + (iv[2] !== 1 ? " ×" + iv[2] : "") + " t " + fmt(iv[3]) +
              " → " + fmt(iv[5]) + " (lines " + iv[7] + "–" + (iv[8] === null ? "end" : iv[8]) + ")";
          }).join(" · "), li, "ivlist");
        } else if (viol.lines.length) {
          h("div", (viol.lines.length > 1 ? "trace lines " : "trace line ") + viol.lines.join(", "), li, "ivlist");
        }
      });
    }

    if (D.stall) {
      var stall = document.getElementById("stall");
      stall.hidden = false;
      h("div", "STALLED — the run ended with processes still waiting", stall, "head");
      h("pre", D.stall, stall);
    }

    var legend = document.getElementById("legend");
    D.types.forEach(function (t, i) {   // a message type's key is a toggle: click hides or shows it
      var item = h("button", null, legend, "type"); var sw = h("span", null, item, "sw");
      item.setAttribute("data-type", t);
      item.setAttribute("aria-pressed", "true");
      item.title = "show or hide the " + t + " messages";
      sw.style.background = typeColor(i); h("span", t, item);
      item.addEventListener("click", function () {
        state.hidden[i] = !state.hidden[i];
        item.setAttribute("aria-pressed", state.hidden[i] ? "false" : "true");
        schedule();
      });
    });
    kinds.forEach(function (k) {
      var item = h("span", null, legend); var sw = h("span", null, item, "box");
      sw.style.background = kindColor(k); h("span", "holds " + k, item);
    });
    D.note_names.forEach(function (name, i) {
      var item = h("span", null, legend); var sw = h("span", null, item, "dot");
      sw.style.background = noteColor(i); h("span", name, item);
    });
    if (!v.safe) {
      var item = h("span", null, legend); var sw = h("span", null, item, "box");
      sw.style.background = "#d62728"; h("span", "violation", item);
    }

    var focus = document.getElementById("focus");
    procs.forEach(function (p, i) { var o = h("option", p, focus); o.value = String(i); });
    focus.addEventListener("change", function () {
      state.focus = focus.value === "" ? null : +focus.value;
      schedule();
    });

    var st = document.getElementById("stats");
    var t1 = h("table", null, st, "stats");
    var hr = h("tr", null, t1); h("th", "message type", hr); h("th", "count", hr);
    D.types.forEach(function (t, i) {
      var tr = h("tr", null, t1); var td = h("td", null, tr);
      var sw = h("span", null, td); sw.style.cssText = "display:inline-block;width:14px;height:4px;vertical-align:middle;margin-right:6px;background:" + typeColor(i);
      h("span", t, td); h("td", String(s.by_type[t] || 0), tr, "n");
    });
    var tt = h("tr", null, t1); h("th", "total", tt); h("td", String(s.messages), tt, "n");
    var t2 = h("table", null, st, "stats");
    function row(label, value, note) {
      var tr = h("tr", null, t2), th = h("th", label, tr);
      if (note) h("div", note, th, "help");
      h("td", value, tr, "n");
    }
    row("messages delivered", String(s.delivered));
    row("still in flight at the end", String(s.in_flight));
    if (s.copies) row("deliveries again (the network duplicated messages)", String(s.copies));
    if (s.unmatched_recvs) row("receives without a send in the trace", String(s.unmatched_recvs));
    if (s.requests) row("requests (request events)", String(s.requests));
    Object.keys(s.entries).forEach(function (k) { row("entries: " + k, String(s.entries[k])); });
    row("messages per entry (this run)", s.per_entry === null ? "no entries" : fmt(s.per_entry));
    Object.keys(s.per_kind).forEach(function (k) {
      var pk = s.per_kind[k];
      row("messages per " + k + " entry", fmt(pk.per_entry), pk.types.join(", "));
    });
    row("messages per entry (literature)", s.literature === null || s.literature === undefined ? "not known here" : String(s.literature));
    if (!s.bodies) row("message bodies", "omitted (trace too large); hover shows id, type and times");
  }

  // ---- geometry ----
  var svg = document.getElementById("diagram");
  function width() { return Math.max(svg.getBoundingClientRect().width || 0, 700); }
  function scale(win, w) {
    var a = win[0], b = win[1], k = (w - LEFT - RIGHT) / (b - a);
    return function (x) { return LEFT + (x - a) * k; };
  }
  // The first process's line sits low enough that its stacked holding lanes (one per resource
  // kind: a bee's reed and flower, an elf's contract, pins and poison) stay below the axis labels.
  function firstY() { return TOP + Math.max(22, 6 + kinds.length * (LANE + 1)); }
  function rowY(i) { return firstY() + i * ROW; }
  function ticks(a, b, n, integer) {
    var span = b - a, step = Math.pow(10, Math.floor(Math.log10(span / n)));
    [1, 2, 5, 10].some(function (m) { if (span / (step * m) <= n) { step *= m; return true; } return false; });
    if (integer) step = Math.max(1, Math.round(step));
    var out = [], x = Math.ceil(a / step) * step;
    for (; x <= b + 1e-9 && out.length < 50; x += step) out.push(+x.toFixed(10));
    return out;
  }
  function drawAxis(g, win, w, y0, y1, integer) {
    var x = scale(win, w), axis = el("g", {"class": "axis"}, g);
    ticks(win[0], win[1], Math.max(4, Math.floor(w / 120)), integer).forEach(function (v) {
      var px = x(v);
      el("line", {x1: px, x2: px, y1: y0, y2: y1}, axis);
      var t = el("text", {x: px, y: y0 - 4, "text-anchor": "middle"}, axis); t.textContent = fmt(v);
    });
  }

  // The names' column is as wide as the widest name, at least LEFT0 and at most a third of the
  // diagram: a long name ("worker on alpha.example.org") never runs under the arrows; one longer
  // still is cut with "…" (whole in its tooltip). Sets LEFT; returns the names as shown.
  function fitNames(w) {
    var probe = el("text", {"class": "proc-name", x: 0, y: -100}, svg), widest = 0;
    function wide(text) { probe.textContent = text; return probe.getComputedTextLength(); }
    procs.forEach(function (p) { widest = Math.max(widest, wide(p)); });
    LEFT = Math.max(LEFT0, Math.min(Math.ceil(widest) + 16, Math.floor(w / 3)));
    var shown = procs.map(function (p) { return cut(p, LEFT - 14, wide); });
    svg.removeChild(probe);
    return shown;
  }

  // ``text`` as drawn in ``room`` pixels (``wide`` measures): whole, or its longest start that
  // fits followed by "…", cut between characters (code points: an emoji is never split in half).
  function cut(text, room, wide) {
    if (wide(text) <= room) return text;
    var chars = Array.from(text), n = chars.length;
    while (n > 1 && wide(chars.slice(0, n).join("") + "…") > room) n--;
    return chars.slice(0, n).join("") + "…";
  }

  // One label per run of bars that overlap in a process's lane (a philosopher's two forks, held
  // at once, share the fork lane): "fork:2, fork:3", where it fits, never two labels on one spot.
  function barLabels(bars) {
    var out = [], rows = {};
    bars.forEach(function (b) { (rows[b.row] = rows[b.row] || []).push(b); });
    Object.keys(rows).forEach(function (r) {
      var run = null;
      rows[r].sort(function (a, b) { return a.x0 - b.x0; }).concat([null]).forEach(function (b) {
        if (run && b && b.x0 < run.x1) {
          run.x1 = Math.max(run.x1, b.x1);
          if (run.texts.indexOf(b.text) < 0) run.texts.push(b.text);
          return;
        }
        if (run) {  // "fork:2, fork:3", or "fork:2,3" where only that fits
          var kind = /^([^:]*):/.exec(run.texts[0]), same = kind && run.texts.every(function (t) { return t.indexOf(kind[0]) === 0; });
          [run.texts.join(", "), same ? kind[0] + run.texts.map(function (t) { return t.slice(kind[0].length); }).join(",") : ""]
            .some(function (text) {
              if (!text || run.x1 - run.x0 <= 7 * text.length + 6) return false;
              out.push([run.x0 + 3, run.y + LANE - 2, text]);
              return true;
            });
        }
        run = b && {x0: b.x0, x1: b.x1, y: b.y, texts: [b.text]};
      });
    });
    return out;
  }

  // ---- the space-time diagram ----
  var counts = {}, selftests = {};  // selftests survive later renders
  function render() {
    var axis = state.axis, win = state.win[axis], w = width();
    var x = scale(win, w), A = win[0], B = win[1];
    var sIdx = axis === "t" ? 3 : 4, rIdx = axis === "t" ? 5 : 6;
    var height = firstY() + procs.length * ROW;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var shownNames = fitNames(w);
    x = scale(win, w);
    svg.setAttribute("viewBox", "0 0 " + w + " " + height);
    svg.setAttribute("height", height);
    var defs = el("defs", {}, svg);
    D.types.forEach(function (t, i) {
      var m = el("marker", {id: "m" + i, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7,
                            orient: "auto-start-reverse"}, defs);
      el("path", {d: "M0,0 L10,5 L0,10 z", fill: typeColor(i)}, m);
    });
    var mb = el("marker", {id: "mbad", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto"}, defs);
    el("path", {d: "M0,0 L10,5 L0,10 z", fill: "#d62728"}, mb);
    var clip = el("clipPath", {id: "plot"}, defs);
    el("rect", {x: LEFT, y: 0, width: w - LEFT - RIGHT + 1, height: height}, clip);
    drawAxis(svg, win, w, TOP, height, axis === "lamport");

    var lines = el("g", {}, svg);
    var F = state.focus, off = function (p) { return F !== null && p !== F; };  // not the focused one
    procs.forEach(function (p, i) {
      var y = rowY(i), cls = F === i ? " focus" : off(i) ? " dim" : "";
      el("line", {"class": "proc-line" + cls, x1: LEFT, x2: w - RIGHT, y1: y, y2: y, "data-proc": i}, lines);
      var t = el("text", {"class": "proc-name" + cls, x: 6, y: y}, lines); t.textContent = shownNames[i];
      if (shownNames[i] !== p) el("title", {}, t).textContent = p;  // cut to fit: whole on hover
    });
    var plot = el("g", {"clip-path": "url(#plot)"}, svg);

    // violation bands (behind everything): from the last enter to the first exit of each bad set
    var bands = el("g", {}, plot), nBad = 0;
    D.verdict.violations.forEach(function (viol) {
      if (viol.kind !== "safety") return;   // unfinished is not unsafe: no red
      var mine = ivs.filter(function (iv) { return viol.lines.indexOf(iv[7]) >= 0; });
      if (!mine.length) return;
      var ins = mine.map(function (iv) { return iv[sIdx === 3 ? 3 : 4]; });
      var outs = mine.map(function (iv) { var o = iv[sIdx === 3 ? 5 : 6]; return o === null ? B : o; });
      var a = Math.max.apply(null, ins), b = Math.min.apply(null, outs);
      if (!(b > a)) { a = Math.min.apply(null, ins); b = Math.max.apply(null, outs); }
      if (b < A || a > B) return;
      el("rect", {"class": "bad-band bad", x: x(a), y: TOP, width: Math.max(x(b) - x(a), 3), height: height - TOP}, bands);
      nBad++;
    });

    // holding intervals
    var bars = el("g", {}, plot), nBars = 0, barsCut = 0, barsIn = 0, labels = [];
    var iS = axis === "t" ? 3 : 4, iE = axis === "t" ? 5 : 6;
    for (var k = 0; k < ivs.length; k++) {
      var iv = ivs[k], a = iv[iS], b = iv[iE];
      if (typeof a !== "number") continue;
      var open = b === null || b === undefined;
      if (open) b = B;
      if (b < A || a > B) continue;
      barsIn++;
      if (nBars >= MAX_BARS) { barsCut++; continue; }
      var lane = kinds.indexOf(kindOf(iv[1])), y = rowY(iv[0]) - 5 - lane * (LANE + 1) - LANE;
      var x0 = Math.max(x(a), LEFT - 5), x1 = Math.min(x(b), w);
      var r = el("rect", {"class": "iv" + (open ? " open" : "") + (iv[9] ? " bad" : "") + (off(iv[0]) ? " dim" : ""), x: x0, y: y,
                          width: Math.max(x1 - x0, 2), height: LANE, fill: kindColor(kindOf(iv[1])), "data-k": "i" + k}, bars);
      nBars++;
      if (iv[9]) nBad++;
      labels.push({row: iv[0] + ":" + lane, x0: x0, x1: x1, y: y, text: iv[1] + (iv[2] !== 1 ? " ×" + iv[2] : "")});
    }
    labels = barLabels(labels);

    // messages. Invariant: every arrow ends on its receiver's line. One received after the window,
    // or still in flight (dashed), ends at the window's right edge on that line ("beyond": the
    // edge stands for later) rather than clipped part-way, where it would point at another process.
    var arrows = el("g", {}, plot), nArrows = 0, inWin = 0, cut = 0, hidden = 0, edge = w - RIGHT;
    for (var j = 0; j < arrowRows.length; j++) {
      var m = arrowRows[j], s = m[sIdx], rcv = m[rIdx];
      if (typeof s !== "number") continue;
      var flying = rcv === null || rcv === undefined;
      var end = flying ? Math.max(B, s) : rcv;
      if (end < A || s > B) continue;
      if (state.hidden[m[2]] || (F !== null && m[0] !== F && m[1] !== F)) { hidden++; continue; }
      inWin++;
      if (nArrows >= MAX_ARROWS) { cut++; continue; }
      var y1 = rowY(m[0]), y2 = rowY(m[1]), beyond = flying || rcv > B;
      el("line", {"class": "msg" + (j >= msgs.length ? " copy" : "") + (flying ? " inflight" : "") + (beyond ? " beyond" : "") + (m[9] ? " bad" : ""),
                  x1: x(s), y1: y1, x2: beyond ? edge : x(rcv), y2: y2, stroke: typeColor(m[2]),
                  "marker-end": m[9] ? "url(#mbad)" : "url(#m" + m[2] + ")", "data-k": "m" + j,
                  "data-from": m[0], "data-to": m[1]}, arrows);
      nArrows++;
      if (m[9]) nBad++;
    }
    // the bars' labels above the arrows: dark on a white halo, readable on any bar and arrow
    var labs = el("g", {"class": "iv-labels"}, plot);
    labels.forEach(function (l) { el("text", {"class": "iv-label", x: l[0], y: l[1]}, labs).textContent = l[2]; });

    // scenario notes (egg, death, ...)
    var dots = el("g", {}, plot), nNotes = 0, notesCut = 0;
    var nI = axis === "t" ? 1 : 2;
    for (var q = 0; q < notes.length; q++) {
      var n = notes[q], at = n[nI];
      if (typeof at !== "number" || at < A || at > B) continue;
      if (nNotes >= MAX_NOTES) { notesCut++; continue; }
      el("circle", {"class": "note" + (n[6] ? " bad" : ""), cx: x(at), cy: rowY(n[0]), r: 3.5,
                    fill: noteColor(n[3]), "data-k": "n" + q}, dots);
      nNotes++;
      if (n[6]) nBad++;
    }

    var note = document.getElementById("note");
    var outside = arrowRows.length - inWin - hidden;
    var parts = ["window " + (axis === "t" ? "t" : "Lamport") + " " + fmt(A) + " → " + fmt(B) + ": " +
                 nArrows + " of " + arrowRows.length + " message arrows drawn"];
    if (cut) parts.push(cut + " more in this window omitted (at most " + MAX_ARROWS + " arrows at once — zoom in to see them)");
    if (outside) parts.push(outside + " outside the window (pan or zoom out)");
    if (hidden) parts.push(hidden + " hidden by the legend or the focus on one process");
    if (barsCut) parts.push(barsCut + " holding intervals omitted");
    if (notesCut) parts.push(notesCut + " notes omitted");
    note.textContent = parts.join("; ");
    note.className = cut || barsCut || notesCut ? "cut" : "";
    document.getElementById("wfrom").value = +A.toFixed(4);
    document.getElementById("wto").value = +B.toFixed(4);
    counts = {lines: lines.querySelectorAll(".proc-line").length, arrows: arrows.querySelectorAll(".msg").length,
              bars: bars.querySelectorAll(".iv").length, notes: dots.querySelectorAll(".note").length,
              highlighted: svg.querySelectorAll(".bad").length, bad_intervals: bars.querySelectorAll(".iv.bad").length, messages_total: msgs.length,
              arrows_total: arrowRows.length, copies: copies.length,
              messages_in_window: inWin, omitted_in_window: cut, outside_window: outside, hidden: hidden,
              axis: axis, window: [A, B], width: w, left: LEFT, right: RIGHT};
    renderOccupancy();
    selfcheck();
  }

  // ---- occupancy step charts (always in time t) ----
  function renderOccupancy() {
    var box = document.getElementById("occupancy"), win = state.win.t;
    while (box.firstChild) box.removeChild(box.firstChild);
    if (!D.occ.length) { h("div", "no resource was ever held in this trace", box, "help"); return; }
    var w = width(), x = scale(win, w), A = win[0], B = win[1], H = 30, nCharts = 0, segsCut = 0, labelsOver = 0;
    D.occ.forEach(function (c) {
      var g = el("svg", {"class": "occ", viewBox: "0 0 " + w + " " + (H + 6), height: H + 6}, null);
      box.appendChild(g);
      nCharts++;
      el("rect", {"class": "frame", x: LEFT, y: 2, width: w - LEFT - RIGHT, height: H}, g);
      var label = el("text", {x: 4, y: 14}, g);
      label.textContent = c.name;
      var info = el("text", {x: 4, y: 28, fill: "#57606a"}, g);
      var clipId = "oc" + nCharts, cp = el("clipPath", {id: clipId}, g);
      el("rect", {x: LEFT, y: 0, width: w - LEFT - RIGHT, height: H + 6}, cp);
      var plot = el("g", {"clip-path": "url(#" + clipId + ")"}, g);
      var S = c.series, top = Math.max(c.cap || 0, c.peak || 0, 1), single = c.cap === 1 && !c.aggregate;
      var yOf = function (v) { return 2 + H - (H - 2) * v / top; };
      var drawn = 0;
      for (var i = 0; i < S.length; i++) {
        var a = S[i][0], b = i + 1 < S.length ? S[i + 1][0] : Math.max(B, a), v = S[i][1];
        if (v <= 0 || b < A || a > B) continue;
        if (drawn >= MAX_SEGS) { segsCut++; continue; }
        var x0 = Math.max(x(a), LEFT - 2), x1 = Math.min(x(b), w), over = c.cap !== null && v > c.cap;
        var hold = S[i][2].map(function (p) { return procs[p]; }).join(", ");
        var attrs = {x: x0, width: Math.max(x1 - x0, 1), "data-k": "o" + (nCharts - 1) + ":" + i};
        if (single && !over) {
          attrs.y = 5; attrs.height = H - 6; attrs.fill = procColor(S[i][2][0] || 0); attrs["class"] = "seg";
          el("rect", attrs, plot);
          if (x1 - x0 > 44) {  // its holder, cut to the bar (whole on hover): never over the next bar
            var t = el("text", {x: x0 + 3, y: H / 2 + 6, "pointer-events": "none"}, plot);
            t.textContent = cut(hold, x1 - x0 - 6, function (s) { t.textContent = s; return t.getComputedTextLength(); });
            if (t.getComputedTextLength() > x1 - x0 - 6) labelsOver++;
          }
        } else {
          attrs.y = over ? 3 : yOf(v); attrs.height = over ? H - 2 : 2 + H - yOf(v); attrs["class"] = over ? "over bad" : "use";
          el("rect", attrs, plot);
        }
        drawn++;
      }
      if (c.cap !== null && c.cap !== undefined && !single) {
        el("line", {"class": "cap", x1: LEFT, x2: w - RIGHT, y1: yOf(c.cap), y2: yOf(c.cap)}, g);
      }
      var infoText = c.cap !== null && c.cap !== undefined ? "peak " + c.peak + " of " + c.cap :
        (c.resources ? c.resources + " res., peak " + c.peak : "peak " + c.peak);
      if (c.cocoons && c.cocoons.length) {
        var C = c.cocoons, cmax = Math.max(c.cocoon_cap || 1, C[C.length - 1][1]);
        var cy = function (v) { return 2 + H - (H - 4) * v / cmax; };
        var d = "M" + x(Math.min(C[0][0], A)) + "," + cy(0);
        C.forEach(function (p) { d += " H" + x(p[0]) + " V" + cy(p[1]); });
        d += " H" + x(Math.max(B, C[C.length - 1][0]));
        el("path", {"class": "coc", d: d}, plot);
        var upto = C.filter(function (p) { return p[0] <= B; });
        infoText = "cocoons " + (upto.length ? upto[upto.length - 1][1] : 0) + (c.cocoon_cap ? "/" + c.cocoon_cap : "");
        info.setAttribute("fill", "#8a4b08");
      }
      info.textContent = infoText;
    });
    counts.occupancy_charts = nCharts;
    counts.occupancy_segments_omitted = segsCut;
    counts.occupancy_labels_overflowing = labelsOver;  // a holder's name wider than its bar (none)
  }

  function selfcheck() {
    var out = {};
    for (var k in counts) out[k] = counts[k];
    for (var k2 in selftests) out[k2] = selftests[k2];
    out.participants = procs.length;
    out.safe = D.verdict.safe;
    out.status = D.verdict.status;
    out.errors = window.__errors.slice();
    out.rendered = true;
    document.getElementById("selfcheck").textContent = JSON.stringify(out);
  }

  // ---- interaction ----
  var pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  }
  function setWindow(a, b) {
    var f = full[state.axis], span = f[1] - f[0];
    if (!(b > a)) return;
    var minSpan = span * 1e-6;
    if (b - a < minSpan) { var mid = (a + b) / 2; a = mid - minSpan / 2; b = mid + minSpan / 2; }
    var lo = f[0] - span * 0.05, hi = f[1] + span * 0.05;
    if (b - a > hi - lo) { a = lo; b = hi; }
    if (a < lo) { b += lo - a; a = lo; }
    if (b > hi) { a -= b - hi; b = hi; }
    state.win[state.axis] = [a, b];
    schedule();
  }
  function zoom(factor, centerPx) {
    var win = state.win[state.axis], w = width();
    var frac = centerPx === undefined ? 0.5 : Math.min(1, Math.max(0, (centerPx - LEFT) / (w - LEFT - RIGHT)));
    var c = win[0] + (win[1] - win[0]) * frac, span = (win[1] - win[0]) * factor;
    setWindow(c - span * frac, c + span * (1 - frac));
  }
  function focusIntervals(list) {
    var axis = state.axis, s = axis === "t" ? 3 : 4, e = axis === "t" ? 5 : 6;
    var a = Math.min.apply(null, list.map(function (iv) { return iv[s]; }));
    var b = Math.max.apply(null, list.map(function (iv) { return iv[e] === null ? iv[s] : iv[e]; }));
    var pad = Math.max((b - a) * 0.5, (full[axis][1] - full[axis][0]) * 0.002);
    setWindow(a - pad, b + pad);
    svg.scrollIntoView({block: "center"});
  }
  function svgX(ev) {
    var r = svg.getBoundingClientRect();
    return (ev.clientX - r.left) * (width() / r.width);
  }
  document.getElementById("zin").addEventListener("click", function () { zoom(0.5); });
  document.getElementById("zout").addEventListener("click", function () { zoom(2); });
  document.getElementById("fit").addEventListener("click", function () {
    var f = full[state.axis]; state.win[state.axis] = f.slice(); schedule();
  });
  function fromInputs() {
    setWindow(parseFloat(document.getElementById("wfrom").value), parseFloat(document.getElementById("wto").value));
  }
  document.getElementById("wfrom").addEventListener("change", fromInputs);
  document.getElementById("wto").addEventListener("change", fromInputs);
  Array.prototype.forEach.call(document.querySelectorAll("input[name=axis]"), function (r) {
    r.addEventListener("change", function () { if (r.checked) { state.axis = r.value; schedule(); } });
  });
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    zoom(ev.deltaY < 0 ? 1 / 1.25 : 1.25, svgX(ev));
  }, {passive: false});
  var drag = null;
  svg.addEventListener("mousedown", function (ev) { drag = {x: svgX(ev), win: state.win[state.axis].slice()}; svg.classList.add("drag"); });
  window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("drag"); });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var w = width(), per = (drag.win[1] - drag.win[0]) / (w - LEFT - RIGHT), dx = (svgX(ev) - drag.x) * per;
    setWindow(drag.win[0] - dx, drag.win[1] - dx);
  });
  window.addEventListener("resize", schedule);

  // ---- hover details ----
  var tip = document.getElementById("tip");
  function describe(key) {
    var kind = key[0], i = parseInt(key.slice(1), 10), lines = [];
    if (kind === "m") {
      var m = arrowRows[i], at = i < msgs.length ? i : m[10], body = msgs[at][8];
      var again = copies.filter(function (c) { return c[10] === at; });
      lines.push(D.types[m[2]] + "  " + procs[m[0]] + " → " + procs[m[1]] + "   id " + m[7]);
      lines.push("sent     t " + fmt(m[3]) + "   Lamport " + fmt(m[4]));
      lines.push(m[5] === null ? "still in flight at the end of the trace" : "received t " + fmt(m[5]) + "   Lamport " + fmt(m[6]));
      if (again.length) lines.push("delivery " + (again.indexOf(m) + 2) + " of " + (again.length + 1) + ": the network delivered this message more than once");
      if (body) Object.keys(body).forEach(function (f) { lines.push("  " + f + ": " + JSON.stringify(body[f])); });
      if (m[9]) lines.push("part of a violation");
    } else if (kind === "i") {
      var iv = ivs[i];
      lines.push(procs[iv[0]] + " holds " + iv[1] + (iv[2] !== 1 ? " (" + iv[2] + " units)" : ""));
      lines.push("enter t " + fmt(iv[3]) + "   Lamport " + fmt(iv[4]) + "   line " + iv[7]);
      lines.push(iv[5] === null ? "never left (held at the end)" : "exit  t " + fmt(iv[5]) + "   Lamport " + fmt(iv[6]) + "   line " + iv[8]);
      if (iv[9]) lines.push("VIOLATION: see the verdict above");
    } else if (kind === "n") {
      var n = notes[i];
      lines.push(D.note_names[n[3]] + " at " + procs[n[0]] + "   t " + fmt(n[1]) + "   Lamport " + fmt(n[2]) + "   line " + n[5]);
      Object.keys(n[4]).forEach(function (f) { lines.push("  " + f + ": " + JSON.stringify(n[4][f])); });
    } else if (kind === "o") {
      var parts = key.slice(1).split(":"), c = D.occ[+parts[0]], j = +parts[1], S = c.series[j];
      lines.push(c.name + ": " + S[1] + (c.cap !== null ? " of " + c.cap : "") + " in use");
      lines.push("from t " + fmt(S[0]) + (j + 1 < c.series.length ? " to " + fmt(c.series[j + 1][0]) : " to the end"));
      if (S[2].length) lines.push("held by " + S[2].map(function (p) { return procs[p]; }).join(", "));
    }
    return lines.join("\n");
  }
  document.addEventListener("mousemove", function (ev) {
    var t = ev.target, key = t && t.getAttribute ? t.getAttribute("data-k") : null;
    if (!key || drag) { tip.style.display = "none"; return; }
    tip.textContent = describe(key);
    tip.style.display = "block";
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = x + "px"; tip.style.top = y + "px";
  });

  // #selftest=hover: hover the first arrow and bar, and record the details shown (for tests)
  function hoverSelfTest() {
    var shown = {};
    [".msg", ".iv"].forEach(function (sel) {
      var target = svg.querySelector(sel);
      if (!target) return;
      var r = target.getBoundingClientRect();
      target.dispatchEvent(new MouseEvent("mousemove", {bubbles: true, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2}));
      shown[sel.slice(1)] = tip.style.display === "block" ? tip.textContent : null;
    });
    selftests.hover = shown;
    selfcheck();
  }

  // #selftest=zoom: one wheel notch towards the middle of the plot, then a drag to the right
  function zoomSelfTest() {
    var r = svg.getBoundingClientRect(), cx = r.left + r.width * (LEFT + (width() - LEFT - RIGHT) / 2) / width();
    var before = state.win[state.axis].slice(), arrowsBefore = counts.arrows;
    svg.dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: cx, clientY: r.top + 40, bubbles: true, cancelable: true}));
    render();
    var zoomed = state.win[state.axis].slice(), arrowsZoomed = counts.arrows;
    svg.dispatchEvent(new MouseEvent("mousedown", {clientX: cx, clientY: r.top + 40, bubbles: true}));
    window.dispatchEvent(new MouseEvent("mousemove", {clientX: cx + 100, clientY: r.top + 40}));
    window.dispatchEvent(new MouseEvent("mouseup", {clientX: cx + 100, clientY: r.top + 40}));
    render();
    selftests.zoom = {before: before, zoomed: zoomed, panned: state.win[state.axis].slice(),
                   arrows_before: arrowsBefore, arrows_zoomed: arrowsZoomed};
    selfcheck();
  }

  try {
    var hash = initialWindow();
    drawStatic();
    render();
    if (hash.selftest === "hover") hoverSelfTest();
    if (hash.selftest === "zoom") zoomSelfTest();
  } catch (e) {
    window.__errors.push(String(e && e.stack || e));
    selfcheck();
    throw e;
  }
})();
