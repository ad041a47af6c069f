/* dialogcheck HTML report: list the entries from the page's data (failing and flaky first, a page at a time),
   filter and search them, sort the checks table, highlight a check's evidence, open linked entries.
   Text from the data is only ever set as textContent; the markup taken as is comes from the page's
   templates, which the report escaped when it wrote them. */
(function () {
  "use strict";
  var PAGE = 100;
  var OUTCOME = { p: "pass", f: "fail", e: "error", s: "skip", u: "suspect" };
  var WORD = { pass: "PASS", fail: "FAIL", error: "ERROR", skip: "SKIP", suspect: "SUSPECT" };
  var GROUP_NAME = { a: "Assertions", s: "SOP steps", c: "Criteria" };
  var RANK = { fail: 0, error: 1, suspect: 1, pass: 3, skip: 4 };

  var meta = JSON.parse(document.getElementById("dc-meta").textContent);
  var noun = meta.noun;
  var groups = meta.groups.map(function (g) { return { anchor: g[0], slug: g[1], name: g[2], tags: g[3], passed: 0, failed: 0 }; });
  var checks = meta.checks.map(function (c) { return { kind: c[0], label: c[1], group: c[2], values: [] }; });
  var shapes = meta.shapes;
  var where = shapes.map(function (shape) {  // per shape: check -> its place in a record's tokens
    var at = new Map();
    shape.forEach(function (check, i) { at.set(check, i); });
    return at;
  });

  /* Records, in input order. A token is a value's number in its check's table, or (the first time) the value. */
  var entries = [], title = "";
  document.querySelectorAll("script.dc-entries").forEach(function (block) {
    JSON.parse(block.textContent).forEach(function (r) {
      var shape = shapes[r[3]], tokens = r[4];
      title = typeof r[0] === "string" ? r[0] : title.slice(0, r[0][0]) + r[0][1];
      for (var i = 0; i < tokens.length; i++) {
        if (typeof tokens[i] === "string") {
          var values = checks[shape[i]].values;
          values.push(tokens[i]);
          tokens[i] = values.length - 1;
        }
      }
      var e = { i: entries.length, title: title, verdict: OUTCOME[r[1]], group: r[2], shape: r[3], vals: tokens, more: r[5] || {} };
      e.number = e.more.n !== undefined ? e.more.n : e.i + 1;
      if (e.verdict === "pass") groups[e.group].passed++;
      if (e.verdict === "fail") groups[e.group].failed++;
      entries.push(e);
    });
  });
  function anchor(e) { return "run-" + groups[e.group].anchor + "-" + e.number; }
  function value(e, i) { return checks[shapes[e.shape][i]].values[e.vals[i]]; }
  function rank(e) {
    var g = groups[e.group];
    return e.verdict === "pass" && meta.repeated && g.passed && g.failed ? 2 : RANK[e.verdict];
  }
  var ordered = entries.slice().sort(function (a, b) { return rank(a) - rank(b) || a.i - b.i; });

  /* Filters */
  var box = document.getElementById("failures-only");
  var shown = document.getElementById("shown");
  var list = document.getElementById("entries");
  var pagers = document.querySelectorAll(".pager");
  var f = {
    verdict: document.getElementById("f-verdict"), group: document.getElementById("f-group"),
    check: document.getElementById("f-check"), tag: document.getElementById("f-tag"), text: document.getElementById("f-text"),
  };
  function option(select, val, text) {
    var o = document.createElement("option");
    o.value = val;
    o.textContent = text;
    select.appendChild(o);
  }
  groups.forEach(function (g, i) { option(f.group, String(i), g.slug + (g.name && g.name !== g.slug ? " (" + g.name + ")" : "")); });
  if (groups.length < 2) document.getElementById("f-group-label").hidden = true;
  checks.forEach(function (c, i) {
    if (c.values.some(function (v) { return v[0] === "f"; })) option(f.check, String(i), (groups.length > 1 ? groups[c.group].slug + ": " : "") + c.label);
  });
  var tags = Array.from(new Set([].concat.apply([], groups.map(function (g) { return g.tags; })))).sort();
  tags.forEach(function (t) { option(f.tag, t, t); });
  if (!tags.length) document.getElementById("f-tag-label").hidden = true;

  var page = 0, matching = ordered, search = null;
  function searchFor(text) {
    /* Which check labels and values hold the text: each value is looked at once, not once per entry. */
    var q = text.toLowerCase();
    return {
      q: q,
      labels: checks.map(function (c) { return c.label.toLowerCase().indexOf(q) >= 0; }),
      values: checks.map(function (c) { return c.values.map(function (v) { return v.toLowerCase().indexOf(q, 1) >= 0; }); }),
    };
  }
  function hasTemplate(e) {
    /* A run has its body in a template of its own; a checked conversation, its transcript and the review of its user. */
    return e.more.n !== undefined || e.more.t !== undefined;
  }
  function templateText(e) {
    /* A run's transcript, events and errors, as text (its template is parsed, never shown, until the run is drawn). */
    if (e.text === undefined) {
      var template = hasTemplate(e) && document.getElementById("dc-t-" + e.i);
      e.text = template ? template.content.textContent.toLowerCase() : "";
    }
    return e.text;
  }
  function found(e, s) {
    var g = groups[e.group];
    if ((e.title + "\n" + (e.more.id || "") + "\n" + g.slug + "\n" + g.name).toLowerCase().indexOf(s.q) >= 0) return true;
    if (templateText(e).indexOf(s.q) >= 0) return true;
    var shape = shapes[e.shape];
    for (var i = 0; i < shape.length; i++) {
      var c = shape[i];
      if (s.values[c][e.vals[i]]) return true;
      if (s.labels[c] && checks[c].values[e.vals[i]][0] !== "p") return true;
    }
    return false;
  }
  function matches(e) {
    if (box.checked && e.verdict === "pass") return false;
    if (f.verdict.value && e.verdict !== f.verdict.value) return false;
    if (f.group.value && e.group !== +f.group.value) return false;
    if (f.tag.value && groups[e.group].tags.indexOf(f.tag.value) < 0) return false;
    if (f.check.value) {
      var at = where[e.shape].get(+f.check.value);
      if (at === undefined || value(e, at)[0] !== "f") return false;
    }
    return !search || found(e, search);
  }
  function apply() {
    var text = f.text.value.trim();
    search = text ? searchFor(text) : null;
    matching = ordered.filter(matches);
    page = 0;
    draw();
  }

  /* Drawing an entry */
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function badge(outcome) { return el("span", "badge " + outcome, WORD[outcome]); }
  function checkList(e, id) {
    var box = document.createDocumentFragment(), shape = shapes[e.shape], ul = null, kind = null;
    var evidence = e.more.ev || [];
    for (var i = 0; i < shape.length; i++) {
      var c = checks[shape[i]], v = value(e, i), outcome = OUTCOME[v[0]], detail = v.slice(1);
      if (c.kind !== kind) {
        kind = c.kind;
        box.appendChild(el("h4", null, GROUP_NAME[kind] + (kind === "s" && e.more.score ? " · score " + e.more.score : "")));
        ul = box.appendChild(el("ul", "checks"));
      }
      var li = ul.appendChild(el("li", "check"));
      li.tabIndex = 0;
      li.setAttribute("data-outcome", outcome);
      li.setAttribute("data-ev", evidence[i] || "");
      li.append(badge(outcome), " ", el("span", "check-label", c.label));
      var events = evidence[i] ? evidence[i].split(" ") : [];
      if (detail || events.length) {
        var why = li.appendChild(el("div", "check-detail", detail));
        if (events.length) {
          var span = why.appendChild(el("span", "check-evidence", (detail ? " " : "") + "· events "));
          events.forEach(function (n, k) {
            if (k) span.append(", ");
            var a = span.appendChild(el("a", null, "#" + n));
            a.href = "#" + id + "-ev-" + n;
          });
        }
      }
    }
    if (!shape.length) box.appendChild(el("p", "none", "No checks were run."));
    return box;
  }
  function section(e) {
    var id = anchor(e), g = groups[e.group];
    var sec = el("section", "run");
    sec.id = id;
    sec.setAttribute("data-verdict", e.verdict);
    sec.setAttribute("data-slug", g.slug);
    var details = sec.appendChild(el("details"));
    details.open = e.verdict !== "pass";
    var summary = details.appendChild(el("summary"));
    var link = el("a", "link", "#");
    link.href = "#" + id;
    link.setAttribute("aria-label", "link to " + e.title);
    summary.append(badge(e.verdict), el("h3", null, e.title), link);
    var body = details.appendChild(el("div", "run-body"));
    var template = hasTemplate(e) && document.getElementById("dc-t-" + e.i);
    if (template && e.more.n !== undefined) {
      body.appendChild(template.content.cloneNode(true));
    } else {
      var facts = [g.name, e.more.id ? "conversation " + e.more.id : ""].filter(Boolean).join(" · ");
      body.appendChild(el("p", "meta", facts));
      var grid = el("div", "run-grid single");
      grid.appendChild(el("div", "run-checks"));
      if (template) {
        /* the review of its simulated user, above; its transcript, beside its checks */
        var content = template.content.cloneNode(true), timeline = content.querySelector(".run-timeline");
        if (timeline) { grid.className = "run-grid"; grid.appendChild(timeline); }
        body.appendChild(content);
      }
      body.appendChild(grid);
    }
    body.querySelector(".run-checks").appendChild(checkList(e, id));
    return sec;
  }

  /* Pages */
  function draw() {
    var pages = Math.max(1, Math.ceil(matching.length / PAGE));
    page = Math.min(page, pages - 1);
    var frag = document.createDocumentFragment();
    matching.slice(page * PAGE, (page + 1) * PAGE).forEach(function (e) { frag.appendChild(section(e)); });
    list.textContent = "";
    list.appendChild(frag);
    if (!matching.length) list.appendChild(el("p", "none", "No " + noun + "s match."));
    shown.textContent = "showing " + matching.length + " of " + entries.length + " " + noun + "s";
    pagers.forEach(function (nav) {
      nav.textContent = "";
      if (pages < 2) return;
      var prev = nav.appendChild(el("button", "prev", "‹ previous"));
      prev.type = "button";
      prev.disabled = page === 0;
      nav.appendChild(el("span", "page-no", " page " + (page + 1) + " of " + pages + " "));
      var next = nav.appendChild(el("button", "next", "next ›"));
      next.type = "button";
      next.disabled = page === pages - 1;
    });
  }
  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest(".pager button");
    if (!button) return;
    page += button.classList.contains("next") ? 1 : -1;
    draw();
    document.getElementById("runs").scrollIntoView({ block: "start" });
  });

  /* The checks table: sort by a column */
  var table = document.getElementById("check-table");
  if (table) {
    table.querySelectorAll("thead button").forEach(function (button) {
      button.addEventListener("click", function () {
        var th = button.parentElement, col = +button.getAttribute("data-col"), num = button.hasAttribute("data-num");
        var up = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.from(body.rows).map(function (row, i) {
          var cell = row.cells[col];
          return { row: row, i: i, key: num ? parseFloat(cell.getAttribute("data-v")) : cell.textContent.toLowerCase() };
        });
        rows.sort(function (a, b) { return (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i) * (up ? 1 : -1); });
        rows.forEach(function (r) { body.appendChild(r.row); });
      });
    });
  }

  /* Evidence: a check highlights the events it points to */
  function highlight(check, scroll) {
    var run = check.closest(".run");
    if (!run) return;
    run.querySelectorAll(".ev.hl").forEach(function (row) { row.classList.remove("hl"); });
    run.querySelectorAll(".check.active").forEach(function (c) { c.classList.remove("active"); });
    check.classList.add("active");
    var first = null;
    (check.getAttribute("data-ev") || "").split(" ").forEach(function (i) {
      var row = i && document.getElementById(run.id + "-ev-" + i);
      if (row) { row.classList.add("hl"); first = first || row; }
    });
    if (scroll && first) first.scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("focusin", function (e) {
    var check = e.target.closest && e.target.closest(".check");
    if (check) highlight(check, false);
  });
  document.addEventListener("click", function (e) {
    var check = e.target.closest && e.target.closest(".check");
    if (check && !e.target.closest("a")) highlight(check, true);
  });
  document.addEventListener("keydown", function (e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.classList && e.target.classList.contains("check")) {
      e.preventDefault();
      highlight(e.target, true);
    }
  });

  /* Links: #check-N lists what failed check N; #run-... (or an event of it) shows that entry, opened */
  var byAnchor = null;
  function clearFilters() {
    box.checked = false;
    Object.keys(f).forEach(function (k) { f[k].value = ""; });
  }
  function show(e) {
    if (!matches(e)) { clearFilters(); apply(); }
    var at = matching.indexOf(e);
    if (Math.floor(at / PAGE) !== page || !document.getElementById(anchor(e))) {
      page = Math.floor(at / PAGE);
      draw();
    }
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var check = /^check-(\d+)$/.exec(id);
    if (check) {
      clearFilters();
      f.check.value = check[1];
      apply();
      document.getElementById("runs").scrollIntoView({ block: "start" });
      return;
    }
    if (!document.getElementById(id)) {
      if (!byAnchor) {
        byAnchor = new Map();
        entries.forEach(function (e) { byAnchor.set(anchor(e), e); });
      }
      var e = byAnchor.get(id) || byAnchor.get(id.replace(/-(ev|turn)-\d+$/, ""));
      if (e) show(e);
    }
    var target = document.getElementById(id);
    if (!target) return;
    for (var d = target.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    var inner = target.querySelector("details");
    if (inner) inner.open = true;
    target.scrollIntoView({ block: "start" });
  }
  box.addEventListener("change", apply);
  ["verdict", "group", "check", "tag"].forEach(function (k) { f[k].addEventListener("change", apply); });
  var typing = null;
  f.text.addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(apply, 200);
  });
  document.getElementById("f-clear").addEventListener("click", function () { clearFilters(); apply(); });
  window.addEventListener("hashchange", openTarget);
  apply();
  openTarget();
})();
