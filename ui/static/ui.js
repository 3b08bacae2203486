// The web interface's script. Everything works without it; it only adds
// a live list of variables while a plain version is typed, and shortcuts:
// "/" focuses the search, Ctrl+Enter (or Cmd+Enter) submits the form
// being typed in.
(function () {
  "use strict";

  // A variable is {{name}}, spaces allowed inside the braces; a name is a
  // letter or "_" then letters, digits and "_" (as the server reads it).
  var VAR = /\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}/g;

  function variables(text) {
    var seen = {}, out = [], m;
    VAR.lastIndex = 0;
    while ((m = VAR.exec(text)) !== null) {
      if (!seen[m[1]]) { seen[m[1]] = true; out.push(m[1]); }
    }
    // Sorted by code point, as the server sorts them.
    return out.sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
  }

  function liveVariables() {
    var src = document.querySelector("[data-variables-source]");
    var list = document.getElementById(src && src.getAttribute("data-variables-source"));
    if (!src || !list) { return; }
    var none = document.getElementById(list.getAttribute("data-none"));
    var shown = null;
    function update() {
      // Only a plain template's variables are read here; a dotprompt
      // template's are the server's to say ("Show variables").
      var format = src.form && src.form.querySelector("input[name=template_format]:checked");
      if (format && format.value !== "plain") { return; }
      var names = variables(src.value), key = names.join(" ");
      if (key === shown) { return; } // unchanged: nothing to announce
      shown = key;
      while (list.firstChild) { list.removeChild(list.firstChild); }
      names.forEach(function (n) {
        var li = document.createElement("li");
        li.textContent = n;
        list.appendChild(li);
      });
      if (none) { none.hidden = names.length > 0; }
    }
    var timer = 0;
    src.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, 150);
    });
    update();
  }

  function shortcuts() {
    document.addEventListener("keydown", function (e) {
      var t = e.target, tag = t && t.tagName;
      var typing = tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (t && t.isContentEditable);
      if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        var q = document.querySelector("input[type=search]");
        if (q) { e.preventDefault(); q.focus(); q.select(); }
      }
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && t && t.form && tag === "TEXTAREA") {
        e.preventDefault();
        if (t.form.requestSubmit) { t.form.requestSubmit(); } else { t.form.submit(); }
      }
    });
  }

  function start() {
    liveVariables();
    shortcuts();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
