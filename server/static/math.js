// Render the TeX in .math elements with the vendored KaTeX auto-render, loading KaTeX (about
// 300 KB with its stylesheet) only when the page holds TeX at all: most listing pages have
// none. Text that is not valid TeX stays as it was; nothing here is needed to read a page.
// <html> gets the class math-rendered when the work is done (or there was none).
(function () {
  "use strict";
  var script = document.currentScript;
  var options = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false }
    ],
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
    errorCallback: function () {},
    strict: "ignore"
  };
  var TEX = /\$|\\\(|\\\[/;
  function done() {
    document.documentElement.classList.add("math-rendered");
  }
  function load(src, next) {
    var s = document.createElement("script");
    s.src = src;
    s.onload = next;
    s.onerror = done;
    document.head.appendChild(s);
  }
  function render(nodes) {
    if (typeof window.renderMathInElement === "function") {
      for (var i = 0; i < nodes.length; i++) window.renderMathInElement(nodes[i], options);
    }
    done();
  }
  function start() {
    var all = document.querySelectorAll(".math");
    var nodes = [];
    for (var i = 0; i < all.length; i++) {
      if (TEX.test(all[i].textContent)) nodes.push(all[i]);
    }
    if (!nodes.length || !script) return done();
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = script.getAttribute("data-css");
    document.head.appendChild(css);
    load(script.getAttribute("data-katex"), function () {
      load(script.getAttribute("data-autorender"), function () { render(nodes); });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
