// bufsim report: draws the plots described by the JSON in #bufsim-data as SVG, with hover
// tooltips and legend entries that toggle their series, and makes tables sortable by a click
// on a column header. Written for bufsim; no third-party code, nothing loaded from the network.
// When every plot is drawn the body gets data-bufsim-status="ok" (or "error: ..." if anything
// threw), which the browser test reads.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var M = { left: 70, right: 18, top: 14, bottom: 48 };

  document.body.setAttribute("data-bufsim-status", "running");
  window.addEventListener("error", function (e) {
    document.body.setAttribute("data-bufsim-status", "error: " + e.message);
  });

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // Ticks: powers of two on a log axis (every other one when they crowd), round steps else.
  function log2Ticks(lo, hi) {
    var a = Math.floor(Math.log2(lo)), b = Math.ceil(Math.log2(hi)), step = 1;
    while ((b - a) / step > 9) step *= 2;
    var t = [];
    for (var e = a; e <= b; e += step) t.push(Math.pow(2, e));
    return t;
  }
  function linTicks(lo, hi) {
    var span = hi - lo || Math.abs(hi) || 1, raw = span / 6;
    var mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    [1, 2, 2.5, 5, 10].some(function (m) { step = m * mag; return raw <= step; });
    var t = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push(+v.toPrecision(12));
    return t;
  }
  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + "G";
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
    if (a > 0 && a < 1) return v >= 0.01 || v <= -0.01 ? +v.toPrecision(3) + "" : v.toExponential(1);
    return +v.toPrecision(4) + "";
  }
  function fmtX(v) { return v >= 1 ? fmt(v) : "1/" + fmt(1 / v); }

  // Regular polygons around (x, y): n corners at radius r, the first at angle a0 (radians,
  // 0 = right, counter-clockwise as on screen with y up); a second radius makes a star.
  function ring(x, y, n, r, a0, r2) {
    var p = [], k, a, rr;
    for (k = 0; k < n; k++) {
      a = a0 + 2 * Math.PI * k / n;
      rr = r2 && k % 2 ? r2 : r;
      p.push([x + rr * Math.cos(a), y - rr * Math.sin(a)]);
    }
    return p;
  }
  // A plus (rotation 0) or a cross (rotation pi/4) of arm half-width w and length r.
  function plus(x, y, r, w, rot) {
    var pts = [[w, r], [w, w], [r, w], [r, -w], [w, -w], [w, -r], [-w, -r], [-w, -w], [-r, -w], [-r, w], [-w, w], [-w, r]];
    var c = Math.cos(rot), s = Math.sin(rot);
    return pts.map(function (q) { return [x + q[0] * c - q[1] * s, y - (q[0] * s + q[1] * c)]; });
  }

  // The markers of bufsim.plots (report.py's MARKER_SHAPES names them), filled or hollow.
  function marker(g, shape, x, y, colour, hollow) {
    var r = 3.6, fill = hollow ? "#fff" : colour, a = { fill: fill, stroke: colour, "stroke-width": 1.3 }, p;
    if (shape === "none") return;
    if (shape === "circle") { a.cx = x; a.cy = y; a.r = r; el("circle", a, g); return; }
    if (shape === "square") { a.x = x - r; a.y = y - r; a.width = 2 * r; a.height = 2 * r; el("rect", a, g); return; }
    var R = r + 1, up = Math.PI / 2;
    p = {
      "triangle": ring(x, y, 3, R, up), "triangle-down": ring(x, y, 3, R, -up),
      "triangle-left": ring(x, y, 3, R, Math.PI), "triangle-right": ring(x, y, 3, R, 0),
      "diamond": ring(x, y, 4, R, 0), "thin-diamond": ring(x, y, 4, R, 0).map(function (q, i) {
        return i % 2 ? q : [x + (q[0] - x) * 0.6, q[1]]; }),
      "pentagon": ring(x, y, 5, R, up), "hexagon": ring(x, y, 6, R, up), "hexagon-flat": ring(x, y, 6, R, 0),
      "star": ring(x, y, 10, R + 0.8, up, (R + 0.8) * 0.45),
      "plus": plus(x, y, R, 1.4, 0), "cross": plus(x, y, R, 1.4, Math.PI / 4)
    }[shape];
    if (!p) { a.cx = x; a.cy = y; a.r = r; el("circle", a, g); return; }
    a.points = p.map(function (q) { return q[0].toFixed(2) + "," + q[1].toFixed(2); }).join(" ");
    el("polygon", a, g);
  }

  function drawPlot(fig, spec) {
    // Small multiples (one sequence-size CDF per policy) get a smaller drawing, not smaller type.
    var W = spec.small ? 380 : 640, H = spec.small ? 280 : 380;
    var canvas = fig.querySelector(".canvas"), legend = fig.querySelector(".legend");
    var xs = [], ys = [];
    spec.series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": spec.title });
    canvas.appendChild(svg);
    if (!xs.length) {
      el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "empty" }, svg).textContent = "no data";
      return 0;
    }
    var xlo = Math.min.apply(null, xs), xhi = Math.max.apply(null, xs);
    var ylo = Math.min.apply(null, ys), yhi = Math.max.apply(null, ys);
    if (spec.ymin0) ylo = Math.min(0, ylo);
    if (yhi === ylo) { yhi += 1; ylo -= spec.ymin0 ? 0 : 1; }
    var pad = (yhi - ylo) * 0.04; yhi += pad; if (!spec.ymin0) ylo -= pad;
    var xt = spec.xlog ? log2Ticks(xlo, xhi) : linTicks(xlo, xhi);
    if (spec.xlog) { xlo = Math.min(xlo, xt[0]); xhi = Math.max(xhi, xt[xt.length - 1]); }
    if (xhi === xlo) { xhi = xlo * 2 || 1; }
    var X = spec.xlog
      ? function (v) { return M.left + (Math.log2(v) - Math.log2(xlo)) / (Math.log2(xhi) - Math.log2(xlo)) * (W - M.left - M.right); }
      : function (v) { return M.left + (v - xlo) / (xhi - xlo) * (W - M.left - M.right); };
    var Y = function (v) { return H - M.bottom - (v - ylo) / (yhi - ylo) * (H - M.top - M.bottom); };

    var axes = el("g", { "class": "axes" }, svg);
    el("rect", { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom, "class": "frame" }, axes);
    xt.forEach(function (t) {
      if (t < xlo * 0.999 || t > xhi * 1.001) return;
      el("line", { x1: X(t), x2: X(t), y1: M.top, y2: H - M.bottom, "class": "grid" }, axes);
      el("text", { x: X(t), y: H - M.bottom + 15, "text-anchor": "middle" }, axes).textContent = fmtX(t);
    });
    linTicks(ylo, yhi).forEach(function (t) {
      if (t < ylo || t > yhi) return;
      el("line", { x1: M.left, x2: W - M.right, y1: Y(t), y2: Y(t), "class": "grid" }, axes);
      el("text", { x: M.left - 6, y: Y(t) + 4, "text-anchor": "end" }, axes).textContent = fmt(t);
    });
    el("text", { x: (M.left + W - M.right) / 2, y: H - 10, "text-anchor": "middle", "class": "label" }, axes).textContent = spec.xlabel;
    el("text", { x: 16, y: (M.top + H - M.bottom) / 2, "text-anchor": "middle", "class": "label",
                 transform: "rotate(-90 16 " + (M.top + H - M.bottom) / 2 + ")" }, axes).textContent = spec.ylabel;

    var groups = [], drawn = 0;
    spec.series.forEach(function (s, i) {
      var g = el("g", { "class": "series", "data-series": i, "data-name": s.name, "data-marker": s.marker }, svg);
      var d = s.points.map(function (p, k) { return (k ? "L" : "M") + X(p[0]).toFixed(2) + " " + Y(p[1]).toFixed(2); }).join("");
      el("path", { d: d, fill: "none", stroke: s.colour, "stroke-width": 1.8, "stroke-dasharray": s.dash || "none",
                   "stroke-linejoin": "round" }, g);
      if (s.marker !== "none") s.points.forEach(function (p) { marker(g, s.marker, X(p[0]), Y(p[1]), s.colour, s.hollow); });
      groups.push(g);
      drawn += s.points.length;

      var li = document.createElement("li");
      li.setAttribute("data-series", i);
      li.setAttribute("role", "button");
      li.setAttribute("aria-pressed", "true");
      li.title = "click to hide or show";
      var sw = document.createElementNS(SVG, "svg");
      sw.setAttribute("width", 26); sw.setAttribute("height", 12);
      el("line", { x1: 1, x2: 25, y1: 6, y2: 6, stroke: s.colour, "stroke-width": 2, "stroke-dasharray": s.dash || "none" }, sw);
      marker(sw, s.marker, 13, 6, s.colour, s.hollow);
      li.appendChild(sw);
      li.appendChild(document.createTextNode(s.name));
      li.addEventListener("click", function () {
        var off = !g.classList.contains("off");
        g.classList.toggle("off", off);
        li.classList.toggle("off", off);
        li.setAttribute("aria-pressed", off ? "false" : "true");
      });
      legend.appendChild(li);
    });

    // Tooltip: the point nearest the pointer among visible series.
    var tip = document.createElement("div");
    tip.className = "tip";
    canvas.appendChild(tip);
    var dot = el("circle", { r: 6, "class": "hover" }, svg);
    svg.addEventListener("mousemove", function (ev) {
      var box = svg.getBoundingClientRect(), sx = W / box.width;
      var mx = (ev.clientX - box.left) * sx, my = (ev.clientY - box.top) * sx, best = null, bd = 900;
      spec.series.forEach(function (s, i) {
        if (groups[i].classList.contains("off")) return;
        s.points.forEach(function (p) {
          if (p[2] === "") return;
          var dx = X(p[0]) - mx, dy = Y(p[1]) - my, dd = dx * dx + dy * dy;
          if (dd < bd) { bd = dd; best = [s, p]; }
        });
      });
      if (!best) { tip.style.display = "none"; dot.style.display = "none"; return; }
      var s = best[0], p = best[1];
      dot.setAttribute("cx", X(p[0])); dot.setAttribute("cy", Y(p[1])); dot.setAttribute("stroke", s.colour);
      dot.style.display = "block";
      tip.textContent = "";
      var b = document.createElement("b"); b.textContent = s.name; tip.appendChild(b);
      tip.appendChild(document.createTextNode(" " + p[2] + ": " + spec.ylabel + " = " + fmt(p[1])));
      tip.style.display = "block";
      tip.style.left = Math.min(X(p[0]) / sx + 12, box.width - 220) + "px";
      tip.style.top = (Y(p[1]) / sx - 10) + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.style.display = "none"; dot.style.display = "none"; });
    return drawn;
  }

  // Sortable tables: numbers by data-value, text otherwise; a second click reverses.
  function sortable(table) {
    var heads = table.querySelectorAll("thead th");
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (r, i) { return [r, i]; });
        rows.sort(function (a, b) {
          var ca = a[0].cells[col], cb = b[0].cells[col];
          var va = ca.getAttribute("data-value"), vb = cb.getAttribute("data-value"), c;
          if (va !== null && vb !== null) c = parseFloat(va) - parseFloat(vb);
          else if (va !== null) c = -1;
          else if (vb !== null) c = 1;
          else c = ca.textContent.localeCompare(cb.textContent, undefined, { numeric: true });
          return (asc ? c : -c) || a[1] - b[1];
        });
        rows.forEach(function (r) { body.appendChild(r[0]); });
      });
    });
  }

  var data = JSON.parse(document.getElementById("bufsim-data").textContent);
  var points = 0;
  Array.prototype.forEach.call(document.querySelectorAll("figure.plot"), function (fig) {
    points += drawPlot(fig, data.plots[+fig.getAttribute("data-plot")]);
  });
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
  document.body.setAttribute("data-bufsim-points", points);
  if (document.body.getAttribute("data-bufsim-status") === "running") document.body.setAttribute("data-bufsim-status", "ok");
})();
