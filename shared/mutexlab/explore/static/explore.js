"use strict";
/* mutexlab explore: draws GET /api/state and sends every click to the JSON API.
   The server holds the session; this page only shows it. No library, nothing fetched but
   this server's own API and files. h() (make an element) comes from /dom.js, the report's. */
(function () {
  var S = null;            // the last state from the server
  var busy = false;

  function $(id) { return document.getElementById(id); }

  // A process name is never broken inside (browsers break "elf-4" after its hyphen): in every text
  // the page shows, each name, or a link "a→b", goes into a span.nm that does not wrap.
  var NAMES = null;        // a pattern matching the session's process names, set by draw()
  function namePattern(procs) {
    var names = procs.map(function (p) { return p.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); })
      .sort(function (a, b) { return b.length - a.length; }).join("|");
    return names ? new RegExp("(?:" + names + ")(?:→(?:" + names + "))?(?![\\w])", "g") : null;
  }
  function named(tag, text, parent, cls) {
    var e = h(tag, null, parent, cls), s = String(text), last = 0, m;
    if (NAMES) {
      NAMES.lastIndex = 0;
      while ((m = NAMES.exec(s))) {
        if (m.index > last) e.appendChild(document.createTextNode(s.slice(last, m.index)));
        h("span", m[0], e, "nm");
        last = m.index + m[0].length;
      }
    }
    if (last < s.length) e.appendChild(document.createTextNode(s.slice(last)));
    return e;
  }
  function fill(e, text) { clear(e); Array.prototype.slice.call(named("span", text).childNodes).forEach(function (c) { e.appendChild(c); }); }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }

  function showError(message) {
    var box = $("error");
    if (!message) { box.hidden = true; box.textContent = ""; return; }
    box.textContent = message;
    box.hidden = false;
  }

  // Every call: JSON in, JSON out; a 4xx/5xx shows its message and leaves the page as it was.
  function api(method, path, body) {
    var init = {method: method, headers: {}};
    if (method === "POST") {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body || {});
    }
    return fetch(path, init).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data && data.error ? data.error : ("HTTP " + r.status));
        return data;
      });
    });
  }
  function act(method, path, body) {
    if (busy) return Promise.resolve();
    busy = true;
    setEnabled();
    return api(method, path, body).then(function (state) {
      showError(null);
      if (state && state.procs) { draw(state); shared(""); }  // this tab's own move: nothing to announce
      return state;
    }).catch(function (e) { showError(String(e.message || e)); })
      .then(function (x) { busy = false; setEnabled(); return x; });
  }

  function setEnabled() {
    var pos = S ? S.position : 0, ahead = S ? S.redo.length : 0;
    $("undo").disabled = busy || !pos;
    $("reset").disabled = busy;
    $("redo").disabled = busy || !ahead;
    $("forward").disabled = busy || !ahead;
    $("random").disabled = busy || !S || !S.steps.length;
    $("run").disabled = busy || !S || !S.steps.some(function (s) { return !s.extra; });
    Array.prototype.forEach.call(document.querySelectorAll("#steps button"), function (b) { b.disabled = busy; });
  }

  // ---- drawing ----
  function draw(state) {
    S = state;
    NAMES = namePattern(state.procs);
    $("algorithm").textContent = state.algorithm;
    document.title = "mutexlab explore — " + state.algorithm;
    var opts = Object.keys(state.options || {}).map(function (k) { return k + "=" + JSON.stringify(state.options[k]); });
    // the header counts the cards it shows: the elves' P counts the elves, not the mayor
    var others = state.procs.filter(function (p) { return !/-\d+$/.test(p.name); }).map(function (p) { return p.name; });
    $("config").textContent = state.procs.length + " processes" +
      (state.procs.length !== state.processes ? " (P = " + state.processes + (others.length ? ", and " + others.join(", ") : "") + ")" : "") +
      (opts.length ? "; " + opts.join(", ") : "") +
      "; capacities " + Object.keys(state.capacities || {}).map(function (r) { return r + "=" + state.capacities[r]; }).join(", ") +
      (state.free ? "; nodes act only when told (new requests are steps)" : "");
    drawClocks(state);
    drawKey(state);
    $("position").textContent = state.position;
    $("ahead").textContent = state.redo.length ? " (" + state.redo.length + " ahead)" : "";
    drawStatus(state.findings);
    drawSteps(state.steps);
    drawHistory(state);
    drawProcs(state);
    drawLinks(state.links);
    drawCapacity(state.findings.capacity);
    setEnabled();
    var frame = $("diagram");
    frame.src = "/diagram?at=" + state.position + "&n=" + (++drawn);
  }
  var drawn = 0;

  // Why the clocks start where they do: the bees draw theirs from the seed; a setup may give
  // others (the option initial_clocks, a solution's own); else they start at 0.
  function drawClocks(state) {
    var given = (state.params || {}).initial_clocks;
    var mayor = state.procs.some(function (p) { return p.name === "mayor"; });
    var text = "Lamport clocks start at 0 and tick with each event a process records" +
      (mayor ? " (the mayor's is 1 at once: it opens the first round and sends the contracts)." : ".");
    var set = state.procs.some(function (p) { return p.start_clock; });
    if (set && !given) {
      text = "Lamport clocks start at " + state.procs.map(function (p) {
        return p.name + " " + p.start_clock;
      }).join(", ") + " (as the setup gives them: the option initial_clocks, or the algorithm's own" +
        " choice) and tick with each event a process records.";
    }
    if (given) {
      var byPid = {};
      state.procs.forEach(function (p) { byPid[p.pid] = p.name; });
      text = "Lamport clocks start at " + Object.keys(given).map(function (pid) {
        return (byPid[pid] || pid) + " " + given[pid];
      }).join(", ") + ": each bee's is drawn at random from 0 … 100·P − 1 by the run's seed (or given" +
        " with the option initial_clocks), so the order of requests is not the order of the pids; equal" +
        " stamps are broken by the pid.";
    }
    fill($("clocks"), text);
  }

  // The key explains the notation this page shows, in its own words: an entry only when its
  // notation is on the page (stamped requests, units, the bees' live acknowledgements, a family
  // of resources), the processes named as the cards name them.
  function drawKey(state) {
    var key = clear($("key")), shown = [], fieldNames = {};
    state.procs.forEach(function (p) {
      p.fields.forEach(function (f) { fieldNames[f[0]] = 1; shown.push(String(f[1])); });
      shown = shown.concat(p.pending);
    });
    state.links.forEach(function (l) { l.messages.forEach(function (m) { shown.push(m.text); }); });
    shown = shown.join("\n");
    function entry(term, text, code) {
      var dt = h("dt", null, key);
      if (code) h("code", term, dt); else dt.textContent = term;
      named("dd", text, key);
    }
    var one = state.procs.filter(function (p) { return p.pid === 1; })[0];
    var who = one ? one.name : "pid 1";
    if (/\d@\d/.test(shown)) {
      entry("100@1", "a request of " + who + " (pid 1) stamped with Lamport time 100 (ts@pid); requests are " +
            "ordered by time, then pid", true);
    }
    var units = Object.keys(state.capacities).filter(function (r) { return !/:\*$/.test(r) && state.capacities[r] > 1; });
    if (/\d@\d+ ×\d/.test(shown)) {
      entry("20@1 ×2", who + "'s request stamped 20, for 2 units" + (units.length ? " of " + units.join(" or ") : ""), true);
    }
    if (/live \d+ of \d+ needed/.test(shown)) {
      entry("live 1 of 2 needed", "acknowledgements counted from processes still in the run, of those needed to go on");
    }
    if (fieldNames["not gone"]) {
      entry("not gone", "the pids of the processes that have not died or retired: only their acknowledgements count");
    }
    Object.keys(state.capacities).forEach(function (r) {
      var m = /^(.*):\*$/.exec(r);
      if (m) {
        entry(r + " " + state.capacities[r], "every " + m[1] + " its own resource (" + m[1] + ":1, " + m[1] +
              ":2, …), each of capacity " + state.capacities[r], true);
      }
    });
    entry("Lamport clock", "the process's logical clock now; above, where it started and why");
  }

  function drawStatus(f) {
    var box = $("status");
    box.setAttribute("data-status", f.status);
    fill($("summary"), f.summary);
    fill($("entered"), "entered, in order: " + (f.entered.join(", ") || "nobody yet"));
    var ul = clear($("violations"));
    f.violations.forEach(function (v) { named("li", v.text, ul, "bad"); });
    f.end_violations.forEach(function (v) { named("li", "at the end: " + v.text, ul, "bad"); });
    f.incomplete.forEach(function (v) { named("li", "incomplete: " + v.text, ul, "open"); });
    var open = $("open"), list = clear($("openlist"));
    open.hidden = !f.open_at_end.length;
    $("opensum").textContent = f.open_at_end.length + " end-of-run check(s) still open (judged when the path ends, not faults yet)";
    f.open_at_end.forEach(function (v) { named("li", v.message, list, "open"); });
    var pre = $("deadlock");
    pre.hidden = !f.deadlock;
    fill(pre, f.deadlock || "");
    $("checks").textContent = "checked: " + f.checks.join(", ");
  }

  function drawSteps(steps) {
    var box = clear($("steps"));
    $("nsteps").textContent = "(" + steps.length + ")";
    if (!steps.length) { h("div", "none: the path has ended", box, "none"); return; }
    var lastKind = null;
    steps.forEach(function (s) {
      var kind = s.extra ? "new requests (nodes act only when told)" :
        s.op === "deliver" ? "deliver the oldest message of a link" : "local decisions";
      if (kind !== lastKind) { h("div", kind, box, "kind"); lastKind = kind; }
      var b = named("button", s.label, box, (s.op === "deliver" ? "deliver" : "local") + (s.extra ? " extra" : ""));
      b.setAttribute("data-step-id", s.id);
      b.title = "step id " + s.id;
      b.addEventListener("click", function () { act("POST", "/api/step", {id: s.id}); });
    });
  }

  function drawHistory(state) {
    var ol = clear($("history"));
    var start = h("li", "start", ol, state.position === 0 ? "current" : "");
    start.setAttribute("data-n", 0);
    start.addEventListener("click", function () { act("POST", "/api/jump", {to: 0}); });
    state.history.forEach(function (e) {
      var li = named("li", e.label, ol, e.n === state.position ? "current" : "");
      li.setAttribute("data-n", e.n);
      li.title = "jump back to after step " + e.n;
      li.addEventListener("click", function () { act("POST", "/api/jump", {to: e.n}); });
    });
    state.redo.forEach(function (id, i) {
      var n = state.position + i + 1;
      var li = named("li", "ahead: " + id, ol, "ahead");
      li.setAttribute("data-n", n);
      li.title = "jump forward to after step " + n;
      li.addEventListener("click", function () { act("POST", "/api/jump", {to: n}); });
    });
    var cur = ol.querySelector(".current");
    if (cur && cur.scrollIntoView) cur.scrollIntoView({block: "nearest"});
  }

  function drawProcs(state) {
    var box = clear($("procs"));
    var bad = {};
    state.findings.capacity.forEach(function (c) { if (c.over) c.holders.forEach(function (x) { bad[x.name] = 1; }); });
    state.procs.forEach(function (p) {
      var card = h("div", null, box, "card" + (p.holds.length ? " holder" : "") + (p.finished ? " finished" : "") +
                   (bad[p.name] ? " bad" : ""));
      card.setAttribute("data-pid", p.pid);
      card.setAttribute("data-name", p.name);
      var head = h("div", null, card);
      h("span", p.name, head, "name");
      h("span", p.state, head, "state");
      h("div", "Lamport clock " + p.clock, card, "clock");
      if (p.holds.length) h("div", "holds " + p.holds.join(", "), card, "holds");
      var waits = Object.keys(p.waiting);
      if (waits.length) {
        named("div", "waits for " + waits.map(function (w) {
          return w + (p.waiting[w].length ? " from " + p.waiting[w].join(", ") : "");
        }).join("; "), card, "waits");
      }
      var table = h("table", null, card);
      p.fields.forEach(function (f) {
        var tr = h("tr", null, table);
        h("td", f[0], tr);
        named("td", f[1], tr);
      });
      if (p.pending.length) {
        var tr = h("tr", null, table);
        h("td", "pending", tr);
        named("td", p.pending.join(", "), tr);
      }
    });
  }

  function drawLinks(links) {
    var box = clear($("links"));
    if (!links.length) { h("div", "nothing in flight", box, "none"); return; }
    links.forEach(function (l) {
      var row = h("div", null, box, "link");
      row.setAttribute("data-link", l.from + "-" + l.to);
      named("span", l.label, row, "lname");
      // the messages wrap in a column of their own, never under the link's name
      var chips = h("span", null, row, "chips");
      l.messages.forEach(function (m, i) {
        var chip = named("span", m.text, chips, "chip" + (i === 0 ? " head" : ""));
        chip.title = "message " + m.id + (i === 0 ? " (head: deliverable)" : "");
      });
    });
  }

  function drawCapacity(capacity) {
    var box = clear($("capacity"));
    if (!capacity.length) { h("div", "nobody holds anything", box, "none"); return; }
    var table = h("table", null, box);
    var tr = h("tr", null, table);
    ["resource", "in use / capacity", "held by"].forEach(function (t) { h("th", t, tr); });
    capacity.forEach(function (c) {
      var row = h("tr", null, table, c.over ? "over" : "");
      h("td", c.resource, row);
      h("td", c.in_use + " / " + c.capacity + (c.over ? "  OVER CAPACITY" : ""), row);
      named("td", c.holders.map(function (x) { return x.name + (x.units !== 1 ? " ×" + x.units : ""); }).join(", "), row);
    });
  }

  // ---- the diagram frame: as tall as the report inside it ----
  $("diagram").addEventListener("load", function () {
    var frame = $("diagram");
    try {
      var doc = frame.contentDocument;
      if (doc && doc.body) frame.style.height = Math.max(200, doc.documentElement.scrollHeight + 8) + "px";
    } catch (e) { /* another origin: keep the default height */ }
  });

  // ---- toolbar ----
  function intOf(id, fallback) {
    var v = parseInt($(id).value, 10);
    return isNaN(v) || v < 0 ? fallback : v;
  }
  $("reset").addEventListener("click", function () { act("POST", "/api/reset"); });
  $("undo").addEventListener("click", function () { act("POST", "/api/undo"); });
  $("redo").addEventListener("click", function () { act("POST", "/api/redo"); });
  $("forward").addEventListener("click", function () {
    if (S) act("POST", "/api/jump", {to: S.position + S.redo.length});
  });
  $("count").addEventListener("input", function () { $("nlabel").textContent = intOf("count", 10); });
  $("random").addEventListener("click", function () {
    act("POST", "/api/random", {n: Math.max(1, intOf("count", 10)), seed: intOf("seed", 0)});
  });
  $("run").addEventListener("click", function () { act("POST", "/api/run", {seed: intOf("seed", 0)}); });
  $("export").addEventListener("click", function () {
    api("GET", "/api/scenario").then(function (scenario) {
      var blob = new Blob([JSON.stringify(scenario, null, 1) + "\n"], {type: "application/json"});
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = String(scenario.algorithm).replace(/[^A-Za-z0-9_.-]/g, "_") + "-" + scenario.steps.length + "-steps.json";
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    }).catch(function (e) { showError(String(e.message || e)); });
  });
  $("import").addEventListener("change", function (ev) {
    var file = ev.target.files && ev.target.files[0];
    if (!file) return;
    var reader = new FileReader();
    reader.onload = function () {
      var data;
      try { data = JSON.parse(reader.result); } catch (e) { showError(file.name + " is not JSON: " + e.message); return; }
      act("POST", "/api/scenario", data);
    };
    reader.readAsText(file);
    ev.target.value = "";
  });
  $("examples").addEventListener("change", function (ev) {
    var name = ev.target.value;
    ev.target.value = "";
    if (!name) return;
    api("GET", "/api/examples/" + encodeURIComponent(name)).then(function (scenario) {
      return act("POST", "/api/scenario", scenario);
    }).catch(function (e) { showError(String(e.message || e)); });
  });

  api("GET", "/api/examples").then(function (list) {
    var sel = $("examples");
    list.forEach(function (x) {
      var o = h("option", x.name + (x.algorithm ? " (" + x.algorithm + ", " + x.steps + " steps)" : ""), sel);
      o.value = x.name;
    });
  }).catch(function (e) { showError(String(e.message || e)); });
  // One session per server: every tab shows and moves the same path. A tab that opens on a path
  // already walked says so, and a tab shown again after another moved the path says that too.
  function pathOf(state) { return state.position + ":" + state.history.map(function (e) { return e.id; }).join(",") + ":" + state.redo.join(","); }
  function shared(text) { var box = $("shared"); box.hidden = !text; box.textContent = text || ""; }
  function refresh() {
    if (busy || !S || document.hidden) return;
    api("GET", "/api/state").then(function (state) {
      if (pathOf(state) !== pathOf(S)) {
        draw(state);
        shared("Another tab or window moved this explorer's one shared session: now at step " + state.position + ".");
      }
    }).catch(function () { /* the server stopped: the next click says so */ });
  }
  document.addEventListener("visibilitychange", refresh);
  window.addEventListener("focus", refresh);
  api("GET", "/api/state").then(function (state) {
    draw(state);
    // a path walked (a scenario's steps ahead, at step 0, are no one's walk: `explore --scenario`)
    if (state.position) {
      shared("This tab shares the explorer's one session, at step " + state.position + " where it was left" +
             " (every tab shows and moves the same path; ⟲ reset starts over).");
    }
  }).catch(function (e) { showError(String(e.message || e)); });
})();
