/*
 * Static explorers for Executable Theory: every chapter panel explorable in the plain HTML book, no kernel.
 *
 * theorybook.widgets.live_panel precomputes the panel on a set of states when the book is built and emits
 *   <div class="tb-static-panel"> … <script type="application/json" class="tb-static-data">{…}</script></div>
 * with the JSON {controls: [{name, description, kind: "range"|"select", labels, default, liveOnly}],
 *                states: [{v: [value index per control], status, frame}], frames: [data URI], …}.
 * This script turns it into native inputs (range inputs and selects: keyboard-operable), which snap to the
 * precomputed values: moving one control picks the computed state with that value that keeps most of the other
 * controls where they are (the exact combination when it was computed), and the other controls follow it —
 * the status line then says which of the reader's settings changed and why.
 * The figure and the status line (an aria-live region; the status is also the frame's alt text) swap at once.
 *
 * The frozen ipywidget of the same output is hidden by _static/static-panels.css while the explorer is there;
 * Live Code (thebe, `make live`) re-runs the cell, which replaces both with the live panel.
 * No network, no eval: works from file:// and http://.
 */
(function () {
  "use strict";

  var uid = 0;
  var panels = 0;
  var lastSkip = null;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function setup(root) {
    if (root.getAttribute("data-tb-ready")) return;
    var script = root.querySelector("script.tb-static-data");
    if (!script) return;
    var data;
    try {
      data = JSON.parse(script.textContent);
    } catch (err) {
      console.warn("[static-panels] unreadable panel data", err);
      return;
    }
    var controls = data.controls || [];
    var states = data.states || [];
    if (!states.length) return;
    root.setAttribute("data-tb-ready", "1");
    var box = root.querySelector(".tb-static-controls");
    var status = root.querySelector(".tb-static-status");
    var img = root.querySelector("img.tb-static-frame");
    var defaults = controls.map(function (c) { return c.default; });
    var byKey = {};
    states.forEach(function (s, i) { byKey[s.v.join(",")] = i; });
    var inputs = [];
    var readouts = [];
    var current = 0;

    controls.forEach(function (c, ci) {
      var id = "tb-static-" + (++uid);
      var wrap = el("div", { "class": "tb-static-control", "data-name": c.name });
      var label = el("label", { "for": id }, c.description);
      var input;
      if (c.kind === "range" && c.labels.length > 1) {
        input = el("input", { type: "range", id: id, min: "0", max: String(c.labels.length - 1), step: "1" });
        input.addEventListener("input", function () { move(ci, +input.value); });
      } else {
        input = el("select", { id: id });
        c.labels.forEach(function (text, k) { input.appendChild(el("option", { value: String(k) }, text)); });
        input.addEventListener("change", function () { move(ci, +input.value); });
        if (c.labels.length <= 1) input.disabled = true;
      }
      input.setAttribute("data-name", c.name);
      var out = el("output", { "for": id, "class": "tb-static-readout" });
      wrap.appendChild(label);
      wrap.appendChild(input);
      wrap.appendChild(out);
      if (c.liveOnly || c.labels.length <= 1) {
        wrap.appendChild(el("span", { "class": "tb-static-liveonly" }, "live only: run live for other values"));
      }
      box.appendChild(wrap);
      inputs.push(input);
      readouts.push(out);
    });

    // The reader's choices: the value they last chose for each control (the default until they move it). Moving
    // control ci to k goes to the computed state with v[ci] = k that keeps the most of the reader's choices,
    // the primaries first (then: the most of what is shown now, then the most defaults, then the first computed);
    // the exact combination whenever it was computed.
    var primary = controls.map(function (c) { return !!c.primary; });
    var wanted = states[0].v.slice();
    function score(v, ci, here) {
      var kp = 0, ko = 0, kc = 0, home = 0;
      for (var j = 0; j < v.length; j++) {
        if (j === ci) continue;
        if (v[j] === wanted[j]) { if (primary[j]) kp++; else ko++; }
        if (v[j] === here[j]) kc++;
        if (v[j] === defaults[j]) home++;
      }
      return ((kp * 100 + ko) * 100 + kc) * 100 + home;
    }
    function pick(ci, k) {
      var exact = wanted.slice();
      exact[ci] = k;
      var hit = byKey[exact.join(",")];
      if (hit !== undefined) return hit;
      var here = states[current].v;
      var best = -1, bestScore = -1;
      for (var i = 0; i < states.length; i++) {
        var v = states[i].v;
        if (v[ci] !== k) continue;
        var sc = score(v, ci, here);
        if (sc > bestScore) { best = i; bestScore = sc; }
      }
      return best;
    }

    function show(i) {
      var s = states[i];
      current = i;
      s.v.forEach(function (k, ci) {
        inputs[ci].value = String(k);
        var text = controls[ci].labels[k];
        readouts[ci].textContent = text;
        if (inputs[ci].type === "range") inputs[ci].setAttribute("aria-valuetext", text);
      });
      var b = document.createElement("b");
      b.textContent = s.status;
      status.replaceChildren(b);
      if (img) {
        if (s.frame >= 0) {
          img.src = data.frames[s.frame];
          img.alt = s.status;
          img.hidden = false;
        } else {
          img.removeAttribute("src");
          img.alt = "";
          img.hidden = true;
        }
      }
      root.setAttribute("data-tb-state", String(i));
    }

    // When the reader's combination was not computed, say so: which of their settings the shown state changes,
    // and why (never a silent reset); and which earlier choices came back.
    var movedLine = el("p", { "class": "tb-static-moved", role: "status", "aria-live": "polite" });
    status.parentNode.insertBefore(movedLine, status.nextSibling);

    function said(j, k) { return controls[j].description + " = " + controls[j].labels[k]; }

    function explain(ci, before, after, want) {
      var changed = [], lost = [], back = [];
      for (var j = 0; j < after.length; j++) {
        if (j === ci) continue;
        if (after[j] !== want[j]) {
          changed.push(controls[j].description + (after[j] === defaults[j] ? " returned to " : " moved to ") +
                       controls[j].labels[after[j]]);
          lost.push(said(j, want[j]));
        } else if (before[j] !== after[j]) {
          back.push(controls[j].description + " back to your " + controls[j].labels[after[j]]);
        }
      }
      var text = "";
      if (changed.length) {
        text = changed.join(", ") + ": " + said(ci, after[ci]) + " with " + lost.join(", ") +
               " was not precomputed (run live for any combination).";
      }
      if (back.length) text += (text ? " " : "") + back.join(", ") + ".";
      movedLine.textContent = text;
      root.setAttribute("data-tb-moved", changed.length ? "1" : "0");
    }

    function move(ci, k) {
      var before = states[current].v.slice();
      var i = pick(ci, k);
      if (i < 0) { show(current); return; } // cannot happen: every offered value belongs to a computed state
      wanted[ci] = k;
      show(i);
      explain(ci, before, states[i].v, wanted);
    }

    // Keyboard: a link at the top of the page ("Skip to the explorer"), next to the theme's "Skip to main
    // content", puts the focus on the panel's first control, so a reader reaches it in two Tab presses whatever
    // the page holds before it (formulas are out of the tab order too: mathjax3_config in _config.yml).
    var firstInput = inputs.filter(function (e) { return !e.disabled; })[0];
    if (firstInput) {
      root.id = root.id || "tb-explorer-" + (++panels);
      var skip = el("div", { "class": "skip-link d-print-none tb-skip-explorer" });
      var link = el("a", { href: "#" + root.id }, panels > 1 ? "Skip to explorer " + panels : "Skip to the explorer");
      skip.appendChild(link);
      link.addEventListener("click", function (ev) {
        ev.preventDefault();
        root.scrollIntoView({ block: "start" });
        firstInput.focus();
      });
      var anchor = lastSkip || document.getElementById("pst-skip-link");
      if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(skip, anchor.nextSibling);
      else document.body.insertBefore(skip, document.body.firstChild);
      lastSkip = skip;
    }

    show(0);
  }

  function setupAll() {
    document.querySelectorAll(".tb-static-panel").forEach(setup);
  }

  window.theorybookStaticPanels = { setup: setupAll };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupAll);
  else setupAll();
})();
