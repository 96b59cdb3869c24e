// Render the TeX in .math elements with the vendored KaTeX auto-render, loading KaTeX (about
// 300 KB with its stylesheet) only when a element holding TeX comes near the viewport: most
// listing pages have none, and on a long list the TeX is often far down (a researcher's
// 128 papers), where rendering it at load only blocked the main thread (Lighthouse's total
// blocking time on phones). Text that is not valid TeX stays as it was; nothing here is
// needed to read a page. <html> gets the class math-rendered once the TeX in view at load
// is rendered (at once when there is none in view).
(function () {
  "use strict";
  var script = document.currentScript;
  var options = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false },
      // The environments KaTeX typesets in display mode (core/katex_math.py ENVIRONMENTS).
      { left: "\\begin{equation}", right: "\\end{equation}", display: true },
      { left: "\\begin{equation*}", right: "\\end{equation*}", display: true },
      { left: "\\begin{align}", right: "\\end{align}", display: true },
      { left: "\\begin{align*}", right: "\\end{align*}", display: true },
      { left: "\\begin{gather}", right: "\\end{gather}", display: true },
      { left: "\\begin{gather*}", right: "\\end{gather*}", display: true }
    ],
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
    errorCallback: function () {},
    strict: "ignore",
    macros: authorMacros()
  };
  var TEX = /\$|\\\(|\\\[|\\begin\{/;

  // Shorthands authors define in their papers and leave in the metadata, which KaTeX does
  // not know (it has \R, \N, \Z): at 663k papers \C 1,637 times, \eps 934, \Q 280, \bbR
  // 86, \calC 20. Unknown, each showed as raw TeX ("acting freely on $\bbR^n$-trees").
  function authorMacros() {
    var m = { "\\C": "\\mathbb{C}", "\\Q": "\\mathbb{Q}", "\\eps": "\\varepsilon" };
    for (var i = 0; i < 26; i++) {
      var letter = String.fromCharCode(65 + i);
      m["\\bb" + letter] = "\\mathbb{" + letter + "}";
      m["\\cal" + letter] = "\\mathcal{" + letter + "}";
    }
    return m;
  }
  var queue = [];
  var state = "idle"; // idle -> loading -> ready (or failed)

  function done() {
    document.documentElement.classList.add("math-rendered");
  }
  function load(src, next) {
    var s = document.createElement("script");
    s.src = src;
    s.onload = next;
    s.onerror = function () { state = "failed"; done(); };
    document.head.appendChild(s);
  }
  function flush() {
    if (!queue.length || state === "failed") return;
    if (state === "ready") {
      var nodes = queue;
      queue = [];
      if (typeof window.renderMathInElement === "function") {
        for (var i = 0; i < nodes.length; i++) window.renderMathInElement(nodes[i], options);
      }
      done();
      return;
    }
    if (state === "loading") return;
    state = "loading";
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = script.getAttribute("data-css");
    document.head.appendChild(css);
    load(script.getAttribute("data-katex"), function () {
      load(script.getAttribute("data-autorender"), function () {
        state = "ready";
        flush();
      });
    });
  }
  function start() {
    var all = document.querySelectorAll(".math");
    var nodes = [];
    for (var i = 0; i < all.length; i++) {
      if (TEX.test(all[i].textContent)) nodes.push(all[i]);
    }
    if (!nodes.length || !script) return done();
    if (!("IntersectionObserver" in window)) {
      queue = nodes;
      return flush();
    }
    var first = true;
    var observer = new IntersectionObserver(function (entries) {
      for (var j = 0; j < entries.length; j++) {
        if (entries[j].isIntersecting) {
          observer.unobserve(entries[j].target);
          queue.push(entries[j].target);
        }
      }
      // The first call reports every element: none in view means nothing to wait for.
      if (first && !queue.length) done();
      first = false;
      flush();
    }, { rootMargin: "300px 0px" });
    for (var k = 0; k < nodes.length; k++) observer.observe(nodes[k]);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
