/* dialogcheck HTML report: highlight a check's evidence, filter to failures, open linked runs. */
(function () {
  "use strict";
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
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    var inner = el.querySelector("details");
    if (inner) inner.open = true;
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var box = document.getElementById("failures-only");
  var shown = document.getElementById("shown");
  function apply() {
    document.body.classList.toggle("failures-only", box.checked);
    var runs = document.querySelectorAll(".run");
    var visible = Array.prototype.filter.call(runs, function (r) { return r.offsetParent !== null; }).length;
    shown.textContent = "showing " + visible + " of " + runs.length + " " + (document.body.getAttribute("data-noun") || "run") + "s";
  }
  box.addEventListener("change", apply);
  apply();
})();
