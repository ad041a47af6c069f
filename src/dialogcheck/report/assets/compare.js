/* dialogcheck compare page: filter the keys by status and by text. */
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#keys tbody tr"));
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  var status = "";
  function apply() {
    var text = search.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var visible = (!status || row.getAttribute("data-status") === status) && (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
      row.classList.toggle("hidden", !visible);
      if (visible) count += 1;
    });
    shown.textContent = count + " of " + rows.length + " keys shown";
  }
  document.querySelectorAll(".statuses button").forEach(function (button) {
    button.addEventListener("click", function () {
      status = button.getAttribute("data-status");
      document.querySelectorAll(".statuses button").forEach(function (b) { b.setAttribute("aria-pressed", String(b === button)); });
      apply();
    });
  });
  search.addEventListener("input", apply);
  function showTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var row = id && document.getElementById(id);
    if (row && row.classList.contains("hidden")) {
      status = "";
      search.value = "";
      document.querySelectorAll(".statuses button").forEach(function (b) { b.setAttribute("aria-pressed", String(b.getAttribute("data-status") === "")); });
      apply();
      row.scrollIntoView({ block: "center" });
    }
  }
  window.addEventListener("hashchange", showTarget);
  apply();
})();
