/* Search results a reader can read (issue 59): Sphinx builds each hit's snippet from the page's text, where the
   maths is still raw TeX (MathJax typesets it only on the page itself) and table cells run together
   ("apterpaper claims reproduceddiffer…"). This wraps Sphinx's Search.htmlToText: each table cell, list item and
   block ends with a space, and inline maths is shown as plain symbols (t^-1/(k-2), β₁ …) instead of \( … \). */
(function () {
  "use strict";
  var GREEK = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", eta: "η", theta: "θ",
    kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ", psi: "ψ",
    omega: "ω", pi: "π", xi: "ξ", zeta: "ζ", chi: "χ", Delta: "Δ", Gamma: "Γ", Lambda: "Λ", Sigma: "Σ", Phi: "Φ",
    Psi: "Ψ", Omega: "Ω", Theta: "Θ", ell: "ℓ", infty: "∞", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠",
    neq: "≠", approx: "≈", sim: "~", times: "×", cdot: "·", to: "→", in: "∈", sum: "Σ", prod: "Π", sqrt: "√",
    nabla: "∇", partial: "∂", pm: "±", top: "ᵀ", ast: "*", star: "*", ldots: "…", dots: "…", cdots: "…"};

  var FONT = /\\(?:mathrm|mathbf|mathbb|mathcal|operatorname|text|textrm|boldsymbol|mathit|hat|tilde|bar)\s*\{([^{}]*)\}/g;

  function plainTex(tex) {
    var t = tex.replace(/\\\|/g, "‖").replace(/\\([{}])/g, "$1").replace(/\\(?:left|right|big|Big|bigg|Bigg|displaystyle|,|;|!|quad|qquad)/g, " ");
    for (var i = 0; i < 4; i++) {  // innermost first: \frac{\eta}{\sqrt{T}} → (η)/(√T)
      t = t.replace(FONT, "$1")
        .replace(/\\sqrt\s*\{([^{}]*)\}/g, function (m, x) { return x.length > 1 ? "√(" + x + ")" : "√" + x; })
        .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)");
    }
    return t
      .replace(/\\([A-Za-z]+)/g, function (m, name) { return GREEK[name] !== undefined ? GREEK[name] : name; })
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ")
      .trim();
  }

  function clean(htmlString) {
    var doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".math, span.math, div.math").forEach(function (el) {
      var tex = el.textContent.replace(/^\s*(\\\(|\\\[|\$\$?)/, "").replace(/(\\\)|\\\]|\$\$?)\s*$/, "");
      el.textContent = " " + plainTex(tex) + " ";
    });
    doc.querySelectorAll("td, th, li, dt, dd, p, caption, summary, h1, h2, h3, h4, h5, h6, pre, tr, div")
      .forEach(function (el) { el.append(" "); });
    return "<!DOCTYPE html>" + doc.documentElement.outerHTML;
  }

  function patch() {
    // searchtools.js declares `const Search` at the top level: a global binding, not a property of window
    var S = typeof Search !== "undefined" ? Search : window.Search;
    if (!S || typeof S.htmlToText !== "function" || S.htmlToText.theorybookClean) return;
    var original = S.htmlToText;
    var wrapped = function (htmlString, anchor) {
      var text = original.call(S, clean(htmlString), anchor);
      return typeof text === "string" ? text.replace(/\s+/g, " ") : text;
    };
    wrapped.theorybookClean = true;
    S.htmlToText = wrapped;
  }
  window.theorybookPlainTex = plainTex;
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
