// gpuleak HTML report: draws the JSON in #gpuleak-data. Written for this report; no third-party
// code, no network. Every string from the trace goes into the page as text, never as markup.
'use strict';
(function () {
  const errors = [];
  window.addEventListener('error', e => {
    errors.push(String(e.message || e));
    document.body.dataset.errors = String(errors.length);
  });

  const SVGNS = 'http://www.w3.org/2000/svg';
  const COLORS = ['#4e79a7', '#f28e2c', '#59a14f', '#b07aa1', '#edc949', '#76b7b2', '#9c755f',
                  '#86bcb6', '#8cd17d', '#b6992d', '#499894', '#bab0ac'];
  const LEAK_COLORS = ['#d62728', '#ff7f0e', '#c2185b', '#e377c2', '#8c2d04'];
  const LEAK_COLOR = '#c62828';
  const OTHER_COLOR = '#c9ced6';

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else e.setAttribute(k, String(v));
    }
    return e;
  }
  function bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let v = Math.abs(n), u = 0;
    if (v < 1024) return (n < 0 ? '-' : '') + v + ' B';
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    const s = v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);
    return (n < 0 ? '-' : '') + s + ' ' + units[u];
  }
  // As the text report: under a byte an iteration, over a power of ten of iterations.
  function growth(g) {
    if (g >= 1) return '+' + bytes(Math.round(g));
    let k = 10;
    while (g * k < 10 && k < 1e9) k *= 10;
    return '+' + bytes(Math.round(g * k)) + ' per ' + count(k) + ' iterations';
  }
  function seconds(s) {
    if (s < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
    if (s < 1) return (s * 1e3).toFixed(s < 1e-2 ? 2 : 1) + ' ms';
    return s.toFixed(s < 10 ? 3 : 1) + ' s';
  }
  function count(n) { return Number(n).toLocaleString('en-US'); }
  function hash(s) {
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return Math.abs(h);
  }
  function niceTicks(max, n) {
    if (!(max > 0)) return [0];
    const raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw) || raw;
    const out = [];
    for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }
  function byteTicks(max, n) {
    if (!(max > 0)) return [0];
    let unit = 1;
    while (max / unit >= 1024 * 2 && unit < 1024 ** 5) unit *= 1024;
    return niceTicks(max / unit, n).map(v => v * unit);
  }

  const data = JSON.parse(document.getElementById('gpuleak-data').textContent);
  const app = document.getElementById('app');
  app.textContent = '';

  const processes = data.processes || [];
  const header = el('header', {class: 'top'},
    el('h1', {text: 'gpuleak report'}),
    el('div', {class: 'cmd', text: processes.map(p => 'pid ' + p.pid + ': ' + p.command).join('   ·   ')}));
  app.append(header);
  const main = el('main');
  app.append(main);

  if (processes.length > 1) {
    const tabs = el('div', {class: 'tabs', id: 'process-tabs'});
    header.append(tabs);
    const views = [];
    processes.forEach((p, i) => {
      const view = el('div', {class: 'process', 'data-pid': p.pid});
      views.push(view);
      main.append(view);
      const b = el('button', {text: 'pid ' + p.pid + (p.summary.leaks ? ' · ' + p.summary.leaks + ' leak' + (p.summary.leaks > 1 ? 's' : '') : ''),
        onclick: () => {
          views.forEach((v, j) => { v.style.display = i === j ? '' : 'none'; });
          tabs.querySelectorAll('button').forEach((x, j) => x.classList.toggle('active', i === j));
          if (!view.dataset.drawn) { renderProcess(p, view); view.dataset.drawn = '1'; }
        }});
      tabs.append(b);
    });
    // The first process with a leak is shown first.
    let first = processes.findIndex(p => p.summary.leaks > 0);
    if (first < 0) first = 0;
    tabs.children[first].click();
  } else if (processes.length === 1) {
    const view = el('div', {class: 'process', 'data-pid': processes[0].pid});
    main.append(view);
    renderProcess(processes[0], view);
  } else {
    main.append(el('p', {class: 'empty', text: 'No process in this report.'}));
  }
  main.append(el('footer', {text: 'gpuleak-report · self-contained HTML, nothing is loaded from the network'}));

  // ------------------------------------------------------------------------------------------
  function renderProcess(p, root) {
    const frames = p.frames || [];
    const labels = p.labels || {};
    const siteLabel = id => {
      if (labels[id] !== undefined) return labels[id];
      const row = (p.sites || []).find(s => s.id === id);
      return row ? row.label : 'site ' + id;
    };
    const s = p.summary;
    const loopOf = id => (p.loops || []).find(l => l.id === id);
    // Colours: each band's site keeps its colour in the legend, the table and the flame graph.
    const siteColor = {};
    // Leaking sites in reds, so the band that keeps rising is the one that catches the eye.
    const bands = p.timeline ? p.timeline.bands : [];
    const leaking = new Set((p.sites || []).filter(r => r.verdict === 'leak').map(r => r.id));
    let nLeak = 0, nOther = 0;
    for (const b of bands)
      siteColor[b.site] = leaking.has(b.site) ? LEAK_COLORS[nLeak++ % LEAK_COLORS.length] : COLORS[nOther++ % COLORS.length];

    // Summary cards.
    const cards = el('div', {class: 'cards', id: 'summary-cards'});
    const card = (k, v, sub, bad) => cards.append(el('div', {class: 'card' + (bad ? ' bad' : '')},
      el('div', {class: 'k', text: k}), el('div', {class: 'v', text: v}), sub ? el('div', {class: 's', text: sub}) : null));
    card('Leaking sites', String(s.leaks), s.growth ? s.growth + ' more growing' : 'verdict "leak"', s.leaks > 0);
    card('Device peak', bytes(s.peak_bytes), 'at ' + seconds(s.peak_time_s));
    card('Live at end', bytes(s.live_bytes_end), count(s.live_count_end) + ' allocations', false);
    card('Iterations', count(s.iterations), (s.main_loop ? 'of ' + s.main_loop : 'no loop found') +
      (s.loops > 1 ? '; ' + s.loops + ' loops' : '') + (s.warmup ? ', ' + s.warmup + ' warm-up' : ''));
    card('Allocations', count(s.allocations), count(s.frees) + ' frees');
    card('Failed allocations', count(s.failed_allocations), s.failed_allocations ? 'out of memory' : 'none', s.failed_allocations > 0);
    card('Duration', seconds(s.duration_s), count(s.events) + ' events' + (s.complete ? '' : ' (trace cut short)'));
    root.append(cards);
    const notes = el('ul', {class: 'notes'});
    for (const h of p.hints || []) notes.append(el('li', {text: 'Likely cause: ' + h}));
    for (const n of p.notes || []) notes.append(el('li', {text: n}));
    for (const w of p.warnings || []) notes.append(el('li', {class: 'warn', text: 'Warning: ' + w}));
    if (notes.children.length) root.append(notes);
    // Loops: each site is judged over the iterations of its own.
    if ((p.loops || []).length) {
      const list = el('ul', {class: 'notes loops', id: 'loops'});
      const sorted = [...p.loops].sort((a, b) => (b.main - a.main) || (b.allocations - a.allocations));
      for (const l of sorted.slice(0, 12))
        list.append(el('li', {class: l.main ? 'main-loop' : '', text: (l.main ? 'Main loop: ' : 'Loop: ') + l.description}));
      if (sorted.length > 12) list.append(el('li', {text: '… ' + (sorted.length - 12) + ' more loops'}));
      root.append(list);
    }

    // Timeline.
    const tl = el('section', {id: 'timeline'}, el('h2', {text: 'Live device memory over time'}));
    root.append(tl);
    if (p.timeline) drawTimeline(tl, p, siteLabel, siteColor);
    else tl.append(el('p', {class: 'empty', text: 'No timeline in this report.'}));

    // Verdict table.
    const sec = el('section', {id: 'sites'}, el('h2', {text: 'Sites, leaks first'}));
    root.append(sec);
    drawTable(sec, p, frames, siteColor, loopOf);

    // Failed allocations.
    if ((p.ooms || []).length) {
      const o = el('section', {id: 'ooms'}, el('h2', {text: 'Failed allocations'}));
      const list = el('ul', {class: 'notes'});
      for (const x of p.ooms.slice(0, 50))
        list.append(el('li', {text: seconds(x.time_s) + ': ' + bytes(x.requested) + ' requested at ' + siteLabel(x.site) +
          ' on device ' + x.device + ', ' + bytes(x.live_bytes) + ' live' + (x.hints.length ? ' — ' + x.hints.join(' ') : '')}));
      o.append(list);
      root.append(o);
    }

    // Flame graph.
    const fsec = el('section', {id: 'flamegraph'}, el('h2', {text: 'Flame graph'}));
    root.append(fsec);
    drawFlame(fsec, p, frames);
  }

  // ------------------------------------------------------------------------------------------
  function drawTimeline(sec, p, siteLabel, siteColor) {
    const t = p.timeline;
    const n = t.buckets;
    const W = 1100, H = 330, L = 72, R = 16, T = 22, B = 34;
    const toolbar = el('div', {class: 'toolbar'},
      'Top sites stacked (value at the end of each bucket of ' + seconds(t.bucket_ns / 1e9) + '); the dark line is the maximum within each bucket. Drag to zoom, double-click to reset.');
    sec.append(toolbar);
    const box = el('div', {class: 'chart'});
    sec.append(box);
    const tip = el('div', {class: 'tip'});
    box.append(tip);
    const endNs = Math.max(t.end_ns, 1);
    // Start where memory is first allocated (a program's start-up has nothing to show).
    let firstBucket = t.total_max.findIndex(v => v > 0);
    if (firstBucket < 0) firstBucket = 0;
    const startNs = Math.max(0, firstBucket * t.bucket_ns - (endNs - firstBucket * t.bucket_ns) * 0.03);
    let view = [startNs, endNs];
    const hidden = new Set();
    const chart = svg('svg', {viewBox: `0 0 ${W} ${H}`, id: 'timeline-svg', role: 'img', 'aria-label': 'live device bytes over time'});
    box.append(chart);
    const legend = el('div', {class: 'legend', id: 'timeline-legend'});
    sec.append(legend);

    const stacked = [];
    {
      let base = new Array(n).fill(0);
      const layers = t.bands.map(b => ({site: b.site, values: b.values, color: siteColor[b.site]}));
      layers.push({site: -1, values: t.other, color: OTHER_COLOR});
      for (const layer of layers) {
        const top = new Array(n);
        for (let i = 0; i < n; i++) top[i] = base[i] + (hidden.has(layer.site) ? 0 : (layer.values[i] || 0));
        stacked.push({layer, bottom: base, top});
        base = top;
      }
    }
    function draw() {
      chart.textContent = '';
      const [v0, v1] = view;
      const b0 = Math.max(0, Math.floor(v0 / t.bucket_ns)), b1 = Math.min(n - 1, Math.ceil(v1 / t.bucket_ns));
      let ymax = 0;
      for (let i = b0; i <= b1; i++) ymax = Math.max(ymax, t.total_max[i] || 0);
      ymax = ymax * 1.08 || 1;
      const x = ns => L + (ns - v0) / (v1 - v0) * (W - L - R);
      const y = v => T + (H - T - B) * (1 - v / ymax);
      const clip = svg('clipPath', {id: 'tlclip'});
      clip.append(svg('rect', {x: L, y: T - 12, width: W - L - R, height: H - T - B + 12}));
      chart.append(clip);
      // Axes and grid.
      for (const v of byteTicks(ymax, 5)) {
        chart.append(svg('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#eceef2'}));
        chart.append(svg('text', {x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5d6675', text: bytes(v)}));
      }
      const xt = niceTicks((v1 - v0) / 1e9, 7);
      const xstep = (xt.length > 1 ? xt[1] : (v1 - v0) / 1e9) * 1e9;
      for (let ns = Math.ceil(v0 / xstep) * xstep; ns <= v1; ns += xstep) {
        chart.append(svg('line', {x1: x(ns), x2: x(ns), y1: H - B, y2: H - B + 4, stroke: '#99a'}));
        chart.append(svg('text', {x: x(ns), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11, fill: '#5d6675', text: seconds(ns / 1e9)}));
      }
      chart.append(svg('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#99a'}));
      const g = svg('g', {'clip-path': 'url(#tlclip)'});
      chart.append(g);
      // Iterations: the main loop's as grey lines, the other loops' as ticks at the top; at most
      // ~150 of each loop drawn.
      const mainLoop = (t.loops || []).find(l => l.main);
      const its = mainLoop ? mainLoop.marks.filter(m => m[0] >= v0 && m[0] <= v1) : [];
      const step = Math.max(1, Math.ceil(its.length / 150));
      for (let i = 0; i < its.length; i += step)
        g.append(svg('line', {x1: x(its[i][0]), x2: x(its[i][0]), y1: T, y2: H - B, stroke: '#dfe3ea', 'class': 'iteration-mark'}));
      let row = 0;
      for (const l of t.loops || []) {
        if (l.main) continue;
        const ms = l.marks.filter(m => m[0] >= v0 && m[0] <= v1);
        const k = Math.max(1, Math.ceil(ms.length / 150));
        const y0 = T + 2 + (row++ % 4) * 5;
        for (let i = 0; i < ms.length; i += k)
          g.append(svg('line', {x1: x(ms[i][0]), x2: x(ms[i][0]), y1: y0, y2: y0 + 4, stroke: '#9aa3b5', 'class': 'loop-mark', 'data-loop': l.loop}));
      }
      // Stacked bands, as steps over the buckets.
      for (const st of stacked) {
        if (st.layer.site !== -1 && hidden.has(st.layer.site)) continue;
        const pts = [];
        for (let i = b0; i <= b1; i++) {
          const xa = x(i * t.bucket_ns), xb = x((i + 1) * t.bucket_ns);
          pts.push(xa.toFixed(1) + ',' + y(st.top[i]).toFixed(1), xb.toFixed(1) + ',' + y(st.top[i]).toFixed(1));
        }
        for (let i = b1; i >= b0; i--) {
          const xa = x(i * t.bucket_ns), xb = x((i + 1) * t.bucket_ns);
          pts.push(xb.toFixed(1) + ',' + y(st.bottom[i]).toFixed(1), xa.toFixed(1) + ',' + y(st.bottom[i]).toFixed(1));
        }
        const poly = svg('polygon', {points: pts.join(' '), fill: st.layer.color, 'fill-opacity': 0.85,
          'class': 'band', 'data-site': st.layer.site});
        g.append(poly);
      }
      // The envelope: maximum of all devices within each bucket.
      {
        const pts = [];
        for (let i = b0; i <= b1; i++) {
          pts.push(x(i * t.bucket_ns).toFixed(1) + ',' + y(t.total_max[i]).toFixed(1));
          pts.push(x((i + 1) * t.bucket_ns).toFixed(1) + ',' + y(t.total_max[i]).toFixed(1));
        }
        g.append(svg('polyline', {points: pts.join(' '), fill: 'none', stroke: '#1d2330', 'stroke-width': 1.3, 'class': 'total-line'}));
      }
      // Per device, when there are several.
      const devs = Object.keys(t.devices || {});
      devs.forEach((d, k) => {
        const vals = t.devices[d], pts = [];
        for (let i = b0; i <= b1; i++) pts.push(x((i + 0.5) * t.bucket_ns).toFixed(1) + ',' + y(vals[i]).toFixed(1));
        g.append(svg('polyline', {points: pts.join(' '), fill: 'none', stroke: ['#333', '#7a3', '#37a', '#a37'][k % 4],
          'stroke-dasharray': '4 3', 'stroke-width': 1, 'class': 'device-line'}));
      });
      // Markers.
      for (const m of t.markers) {
        if (m[0] < v0 || m[0] > v1) continue;
        const line = svg('line', {x1: x(m[0]), x2: x(m[0]), y1: T, y2: H - B, stroke: '#8e44ad', 'stroke-dasharray': '3 3', 'class': 'marker'});
        line.append(svg('title', {text: 'marker ' + m[1] + ' at ' + seconds(m[0] / 1e9)}));
        g.append(line);
      }
      // Failed allocations.
      for (const o of t.ooms) {
        if (o[0] < v0 || o[0] > v1) continue;
        const xx = x(o[0]);
        g.append(svg('line', {x1: xx, x2: xx, y1: T, y2: H - B, stroke: LEAK_COLOR, 'stroke-width': 1.2}));
        const tri = svg('polygon', {points: `${xx - 6},${T - 10} ${xx + 6},${T - 10} ${xx},${T}`, fill: LEAK_COLOR, 'class': 'oom-mark'});
        tri.append(svg('title', {text: 'failed allocation of ' + bytes(o[2]) + ' at ' + siteLabel(o[1]) + ', ' + seconds(o[0] / 1e9)}));
        g.append(tri);
      }
      // The peak.
      const peakNs = p.summary.peak_time_s * 1e9;
      if (p.summary.peak_bytes && peakNs >= v0 && peakNs <= v1) {
        const px = x(peakNs), py = y(p.summary.peak_bytes);
        g.append(svg('circle', {cx: px, cy: py, r: 4.5, fill: '#fff', stroke: '#1d2330', 'stroke-width': 2, 'class': 'peak-mark'}));
        const right = px > W - 160;
        g.append(svg('text', {x: px + (right ? -8 : 8), y: Math.max(T + 10, py - 6), 'font-size': 11.5, 'font-weight': 600,
          'text-anchor': right ? 'end' : 'start', fill: '#1d2330', text: 'peak ' + bytes(p.summary.peak_bytes)}));
      }
      if (its.length)
        chart.append(svg('text', {x: W - R, y: 13, 'text-anchor': 'end', 'font-size': 11, fill: '#8a93a3',
          text: 'grey lines: iterations of the main loop' + (step > 1 || mainLoop.stride > 1 ? ' (every ' + step * mainLoop.stride + 'th)' : '') +
            (row ? '; ticks: other loops' : '')}));
      // Selection rectangle and hover line (drawn on top).
      const sel = svg('rect', {x: 0, y: T, width: 0, height: H - T - B, fill: 'rgba(47,95,179,.15)', visibility: 'hidden'});
      const cursor = svg('line', {x1: 0, x2: 0, y1: T, y2: H - B, stroke: '#1d2330', 'stroke-opacity': 0.35, visibility: 'hidden'});
      chart.append(sel, cursor);
      const overlay = svg('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: 'transparent'});
      chart.append(overlay);
      const toNs = evt => {
        const r = chart.getBoundingClientRect();
        const px = (evt.clientX - r.left) / r.width * W;
        return v0 + (px - L) / (W - L - R) * (v1 - v0);
      };
      let dragFrom = null;
      overlay.addEventListener('mousedown', e => { dragFrom = toNs(e); });
      overlay.addEventListener('mousemove', e => {
        const ns = Math.min(Math.max(toNs(e), v0), v1);
        cursor.setAttribute('x1', x(ns)); cursor.setAttribute('x2', x(ns)); cursor.setAttribute('visibility', 'visible');
        if (dragFrom !== null) {
          const a = Math.min(dragFrom, ns), b = Math.max(dragFrom, ns);
          sel.setAttribute('x', x(a)); sel.setAttribute('width', x(b) - x(a)); sel.setAttribute('visibility', 'visible');
        }
        const i = Math.min(n - 1, Math.max(0, Math.floor(ns / t.bucket_ns)));
        const lines = [seconds(ns / 1e9) + '   max ' + bytes(t.total_max[i])];
        const parts = stacked.map(st => [st.layer.site, st.layer.values[i] || 0]).filter(v => v[1] > 0)
          .sort((a, b) => b[1] - a[1]).slice(0, 6);
        for (const [site, v] of parts) lines.push(bytes(v) + '  ' + (site === -1 ? 'other sites' : siteLabel(site)));
        tip.textContent = lines.join('\n');
        const r = box.getBoundingClientRect();
        tip.style.display = 'block';
        const left = e.clientX - r.left + 14;
        tip.style.left = Math.min(left, r.width - 300) + 'px';
        tip.style.top = (e.clientY - r.top + 12) + 'px';
      });
      overlay.addEventListener('mouseleave', () => { tip.style.display = 'none'; cursor.setAttribute('visibility', 'hidden'); });
      overlay.addEventListener('mouseup', e => {
        if (dragFrom === null) return;
        const ns = toNs(e), a = Math.min(dragFrom, ns), b = Math.max(dragFrom, ns);
        dragFrom = null;
        sel.setAttribute('visibility', 'hidden');
        if (b - a > (v1 - v0) / 200 && b - a > t.bucket_ns) { view = [Math.max(0, a), Math.min(endNs, b)]; draw(); }
      });
      overlay.addEventListener('dblclick', () => { view = [startNs, endNs]; draw(); });
    }
    // Legend: a click hides or shows a band; a double click goes to the site's row.
    const items = t.bands.map(b => ({site: b.site, label: siteLabel(b.site), color: siteColor[b.site]}));
    items.push({site: -1, label: 'other sites', color: OTHER_COLOR});
    for (const it of items) {
      const item = el('span', {class: 'item', 'data-site': it.site, title: 'click: hide or show · double-click: go to the row'},
        el('span', {class: 'sw', style: 'background:' + it.color}), it.label);
      item.addEventListener('click', () => {
        if (it.site === -1) return;
        if (hidden.has(it.site)) hidden.delete(it.site); else hidden.add(it.site);
        item.classList.toggle('dim');
        let base = new Array(n).fill(0);
        for (const st of stacked) {
          st.bottom = base;
          st.top = base.map((v, i) => v + (hidden.has(st.layer.site) ? 0 : (st.layer.values[i] || 0)));
          base = st.top;
        }
        draw();
      });
      item.addEventListener('dblclick', () => {
        const row = document.querySelector(`.process[data-pid="${p.pid}"] tr.site-row[data-site="${it.site}"]`);
        if (row) { row.scrollIntoView({block: 'center'}); row.classList.add('flash'); setTimeout(() => row.classList.remove('flash'), 1200); }
      });
      legend.append(item);
    }
    draw();
  }

  // ------------------------------------------------------------------------------------------
  function sparkline(values, color) {
    const w = 120, h = 24;
    const s = svg('svg', {width: w, height: h, viewBox: `0 0 ${w} ${h}`, 'class': 'spark'});
    if (!values || !values.length) return s;
    const max = Math.max(...values) || 1;
    const pts = values.map((v, i) => ((values.length === 1 ? 0.5 : i / (values.length - 1)) * (w - 2) + 1).toFixed(1) + ',' +
      (h - 2 - v / max * (h - 4)).toFixed(1));
    s.append(svg('polyline', {points: pts.join(' '), fill: 'none', stroke: color, 'stroke-width': 1.5}));
    return s;
  }

  function stackView(p, ids, limit) {
    const box = el('div', {class: 'stack'});
    const frames = p.frames;
    const hasPython = ids.some(i => frames[i][4]);
    let shown = 0;
    for (const i of ids) {
      const f = frames[i];
      const [fn, loc, file, line, py, src] = f;
      if (/^(__libc_start|_start$|Py_BytesMain|Py_RunMain|pymain_main)/.test(fn)) break;
      if (shown++ >= limit) { box.append(el('div', {class: 'fr loc', text: '… ' + (ids.length - limit) + ' more frames'})); break; }
      const row = el('div', {class: 'fr' + (hasPython && !py ? ' native' : ''), title: file ? file + ':' + line : ''},
        py ? el('span', {class: 'py', text: 'py '}) : el('span', {class: 'loc', text: '   '}),
        fn + '  ', el('span', {class: 'loc', text: loc}));
      if (src) row.append(el('span', {class: 'code', text: src}));
      box.append(row);
    }
    if (!ids.length) box.append(el('div', {class: 'fr loc', text: '(no stack recorded)'}));
    return box;
  }

  function drawTable(sec, p, frames, siteColor, loopOf) {
    const rows = p.sites || [];
    const filter = el('input', {type: 'search', placeholder: 'filter by function or file', size: 30});
    const toolbar = el('div', {class: 'toolbar'}, filter,
      el('span', {text: rows.length + (p.sites_total > rows.length ? ' of ' + p.sites_total : '') + ' sites; click a row for its stack, source lines and hints'}));
    sec.append(toolbar);
    if (!rows.length) { sec.append(el('p', {class: 'empty', text: 'No allocation in this report.'})); return; }
    const table = el('table', {class: 'sites', id: 'sites-table'});
    table.append(el('thead', {}, el('tr', {},
      ...['verdict', 'site', 'growth / iteration', 'live at end', 'own peak', 'at device peak', 'allocations', 'live by iteration', 'hint']
        .map(h => el('th', {text: h})))));
    const body = el('tbody');
    table.append(body);
    for (const r of rows) {
      const head = r.headline !== null && r.headline !== undefined ? frames[r.headline] : null;
      const color = r.verdict === 'leak' ? LEAK_COLOR : siteColor[r.id] || '#5a6b8c';
      const tr = el('tr', {class: 'site-row verdict-' + r.verdict, 'data-site': r.id},
        el('td', {}, el('span', {class: 'badge ' + r.verdict, text: r.verdict})),
        el('td', {class: 'site-cell'}, siteColor[r.id] ? el('span', {class: 'sw', style: 'display:inline-block;width:9px;height:9px;margin-right:5px;background:' + siteColor[r.id]}) : null,
          el('span', {class: 'site-label', text: r.label}),
          r.source || (head && head[5]) ? el('div', {class: 'src', text: r.source || head[5]}) : null,
          r.loop >= 0 && loopOf(r.loop) ? el('div', {class: 'loop', text: 'in ' + loopOf(r.loop).description}) : null),
        el('td', {class: 'num', text: r.growth > 0 ? growth(r.growth) : ''}),
        el('td', {class: 'num', text: bytes(r.live_end) + (r.live_count_end ? ' (' + count(r.live_count_end) + ')' : '')}),
        el('td', {class: 'num', text: bytes(r.peak)}),
        el('td', {class: 'num', text: bytes(r.at_peak)}),
        el('td', {class: 'num', text: count(r.allocations)}),
        el('td', {}, sparkline(r.spark, color)),
        el('td', {class: 'hint hint-cell', text: r.hints.length ? r.hints[0] : ''}));
      let detail = null;
      tr.addEventListener('click', () => {
        if (detail) { detail.remove(); detail = null; return; }
        const td = el('td', {colspan: 9});
        td.append(el('div', {class: 'src', text: 'allocated ' + bytes(r.allocated) + ' in ' + count(r.allocations) + ' allocations' +
          (r.first_iteration >= 0 && r.loop >= 0 ? ', first in iteration ' + r.first_iteration + ' of its loop' : '') +
          (r.devices.length ? ', device ' + r.devices.join(', ') : '') +
          (r.confidence ? ', fit R² ' + r.confidence.toFixed(2) : '')}));
        for (const h of r.hints) td.append(el('div', {class: 'hint', text: 'Likely cause: ' + h}));
        td.append(stackView(p, r.frames, 40));
        detail = el('tr', {class: 'detail'}, td);
        tr.after(detail);
      });
      body.append(tr);
    }
    filter.addEventListener('input', () => {
      const q = filter.value.toLowerCase();
      for (const tr of body.querySelectorAll('tr.site-row')) {
        const r = rows.find(x => String(x.id) === tr.dataset.site);
        const text = (r.label + ' ' + r.frames.map(i => frames[i][0] + ' ' + frames[i][2]).join(' ')).toLowerCase();
        tr.style.display = !q || text.includes(q) ? '' : 'none';
      }
    });
    sec.append(table);
  }

  // ------------------------------------------------------------------------------------------
  function drawFlame(sec, p, frames) {
    const metrics = [['live at end', 2], ['at the device peak', 3], ['all allocated', 4]];
    const select = el('select', {id: 'flame-metric'}, ...metrics.map(([name, k]) => el('option', {value: k, text: name})));
    // Live at end unless nothing is live then.
    const totals = metrics.map(([, k]) => p.flame.reduce((a, f) => a + f[k], 0));
    select.value = String(totals[0] > 0 ? 2 : totals[1] > 0 ? 3 : 4);
    const crumbs = el('div', {class: 'crumbs'});
    // With Python frames, those are the user's stack: the interpreter's own frames are hidden
    // unless asked for (as in the text report).
    const hasPython = frames.some(f => f[4]);
    const pyOnly = el('input', {type: 'checkbox', id: 'flame-python-only'});
    pyOnly.checked = hasPython;
    sec.append(el('div', {class: 'toolbar'}, 'weigh by ', select,
      hasPython ? el('label', {}, pyOnly, ' Python frames only') : null,
      el('span', {text: 'outermost frame at the top; click a frame to zoom in, click the top bar to zoom out'})));
    sec.append(crumbs);
    const box = el('div', {class: 'flame', id: 'flame'});
    sec.append(box);
    const info = el('div', {class: 'framebox'});
    sec.append(info);
    let focus = [];
    const leakSites = new Set((p.sites || []).filter(r => r.verdict === 'leak').map(r => r.id));

    function build(k) {
      const root = {name: -1, value: 0, children: new Map(), leak: false};
      for (const f of p.flame) {
        const v = f[k];
        if (!v) continue;
        root.value += v;
        let node = root;
        let ids = f[1];
        if (pyOnly.checked && ids.some(i => frames[i][4])) ids = ids.filter(i => frames[i][4]);
        for (let i = ids.length - 1; i >= 0; i--) {
          let c = node.children.get(ids[i]);
          if (!c) { c = {name: ids[i], value: 0, children: new Map(), leak: false}; node.children.set(ids[i], c); }
          c.value += v;
          if (leakSites.has(f[0])) c.leak = true;
          node = c;
        }
      }
      return root;
    }
    function color(node) {
      const f = frames[node.name];
      if (node.leak) return 'hsl(' + (hash(f[0]) % 20) + ',75%,' + (62 + hash(f[1]) % 12) + '%)';
      if (f[4]) return 'hsl(' + (200 + hash(f[0]) % 30) + ',55%,' + (66 + hash(f[1]) % 14) + '%)';
      return 'hsl(' + (28 + hash(f[0]) % 28) + ',80%,' + (62 + hash(f[1]) % 14) + '%)';
    }
    function render() {
      const k = Number(select.value);
      const root = build(k);
      box.textContent = '';
      info.textContent = '';
      const width = box.clientWidth || 1100;
      const rowH = 18;
      // Focus path: frame ids from the outermost.
      let node = root;
      const path = [];
      for (const id of focus) {
        const c = node.children.get(id);
        if (!c) break;
        path.push(c);
        node = c;
      }
      crumbs.textContent = '';
      crumbs.append(el('a', {text: 'all', onclick: () => { focus = []; render(); }}));
      path.forEach((n, i) => {
        crumbs.append(' › ', el('a', {text: frames[n.name][0], onclick: () => { focus = focus.slice(0, i + 1); render(); }}));
      });
      if (!root.value) { box.append(el('p', {class: 'empty', text: 'Nothing to show for this metric.'})); box.style.height = ''; return; }
      let depth = 0;
      const place = (n, x, w, d, ancestor) => {
        if (w < 1) return;
        depth = Math.max(depth, d + 1);
        if (n.name !== -1) {
          const f = frames[n.name];
          const div = el('div', {class: 'node' + (ancestor ? ' anc' : '') + (n.leak ? ' leak' : ''), 'data-frame': n.name,
            title: f[0] + '\n' + (f[2] ? f[2] + ':' + f[3] : f[1]) + (f[5] ? '\n' + f[5] : '') + '\n' + bytes(n.value) + ' (' + (100 * n.value / root.value).toFixed(1) + '% of all)'},
            w > 28 ? f[0] : '');
          div.style.left = x + 'px';
          div.style.top = d * rowH + 'px';
          div.style.width = w + 'px';
          div.style.background = color(n);
          div.addEventListener('click', ev => {
            ev.stopPropagation();
            info.textContent = '';
            info.append(el('div', {}, el('b', {text: f[0]}), '  ', el('span', {class: 'src', text: f[2] ? f[2] + ':' + f[3] : f[1]}), '  ' + bytes(n.value)));
            if (f[5]) info.append(el('div', {class: 'src', text: f[5]}));
            // Zoom: this frame becomes the widest; clicking an ancestor zooms out to it.
            const idx = path.indexOf(n);
            if (idx >= 0) focus = focus.slice(0, idx); else focus = focus.concat(pathTo(n));
            render();
          });
          box.append(div);
        }
        let cx = x;
        const kids = [...n.children.values()].sort((a, b) => b.value - a.value);
        for (const c of kids) {
          const cw = w * c.value / n.value;
          place(c, cx, cw, d + 1, false);
          cx += cw;
        }
      };
      // Ancestors of the focus, full width, then the focus's subtree.
      const pathTo = target => {
        // The frame ids from the focused node down to `target` (a descendant).
        const stack = [];
        const find = (n) => {
          if (n === target) return true;
          for (const c of n.children.values()) { stack.push(c.name); if (find(c)) return true; stack.pop(); }
          return false;
        };
        find(node);
        return stack;
      };
      path.forEach((a, i) => {
        const f = frames[a.name];
        const div = el('div', {class: 'node anc', title: f[0] + ' (click to zoom out)'}, f[0] + ' — ' + bytes(a.value));
        div.style.left = '0px'; div.style.top = i * rowH + 'px'; div.style.width = width + 'px'; div.style.background = color(a);
        div.addEventListener('click', () => { focus = focus.slice(0, i); render(); });
        box.append(div);
      });
      const offset = path.length ? path.length - 1 : -1;
      if (path.length) {
        // The focused node itself is the last ancestor bar; its children start below it.
        let cx = 0;
        const kids = [...node.children.values()].sort((a, b) => b.value - a.value);
        for (const c of kids) { const cw = width * c.value / node.value; place(c, cx, cw, path.length, false); cx += cw; }
        depth = Math.max(depth, path.length);
      } else {
        place(root, 0, width, offset, false);
      }
      box.style.height = (Math.max(depth, 1) * rowH + 4) + 'px';
    }
    select.addEventListener('change', () => { focus = []; render(); });
    pyOnly.addEventListener('change', () => { focus = []; render(); });
    render();
    window.addEventListener('resize', () => render());
  }

  document.body.dataset.ready = '1';
  document.body.dataset.errors = String(errors.length);
})();
