// rfprof report.html page script (analyzer/report/report.js), inlined by rfanalyze. Reads the page
// data (<script id="rf-data">, schema in docs/analyzer-outputs.md) and draws it with Vega-Lite. Every
// string from the data reaches the page through textContent or Vega's escaped tooltips only.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('rf-data').textContent);
  // The filters' "every value" choice: null, which no phase or NVTX range name can equal (a range
  // named "(all)" was indistinguishable from it); shown as "(all)".
  const ALL = null, ALL_LABEL = '(all)';
  const fmt = (v, unit) => {
    if (v === null || v === undefined || !isFinite(v)) return '';
    const a = Math.abs(v);
    const p = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']].find(([s]) => a >= s);
    return (p ? (v / p[0]).toPrecision(4) + ' ' + p[1] : v.toPrecision(4) + ' ') + (unit || '');
  };
  const ms = (ns) => (ns === null || ns === undefined ? '' : (ns / 1e6).toFixed(4));

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  // Roofline panel size (px) and the text metrics used to place roof labels (10 px font).
  const WIDTH = 420, HEIGHT = 300, CHAR_PX = 5.6, LINE_PX = 13, END_DY = -7;

  // Phase colours: roofline.svg's, from the page data (phase_colours; grey for a phase it lacks).
  const phaseColour = (phase) =>
    (data.phase_colours && Object.prototype.hasOwnProperty.call(data.phase_colours, phase)
      ? data.phase_colours[phase] : '#7f7f7f');

  /// A table cell for a name; a kernel name rfanalyze folded (`kernel_short`, fold_kernel_name in
  /// terminal_summary.h) shows folded, the whole name one click away.
  function nameCell(name, short) {
    const td = el('td', undefined, 'name');
    if (!short || short === name) { td.textContent = name; return td; }
    const d = el('details');
    d.appendChild(el('summary', short));
    d.appendChild(el('div', name));
    td.appendChild(d);
    return td;
  }

  /// A table: columns [{title, get, name?, short?}] over rows; `name` columns go through nameCell.
  function table(target, columns, rows) {
    const t = el('table');
    const head = el('tr');
    columns.forEach((c) => head.appendChild(el('th', c.title)));
    t.appendChild(head);
    rows.forEach((r) => {
      const tr = el('tr');
      columns.forEach((c) => tr.appendChild(c.name ? nameCell(c.get(r), c.short && c.short(r)) : el('td', c.get(r))));
      t.appendChild(tr);
    });
    document.getElementById(target).appendChild(t);
  }
  const sumColumns = [
    { title: 'launches', get: (r) => r.launches },
    { title: 'GPU time (ms)', get: (r) => ms(r.duration_ns) },
    { title: 'FLOP', get: (r) => fmt(r.flop) },
    { title: 'DRAM bytes', get: (r) => fmt(r.dram_bytes, 'B') },
    { title: 'FLOP/byte', get: (r) => fmt(r.arithmetic_intensity) },
    { title: 'FLOP/s', get: (r) => fmt(r.flop_per_s, 'FLOP/s') },
  ];

  // "; 71% of it in memory-bound kernels, 20% compute-bound" (summary.json totals.by_bound).
  function boundShare(totals) {
    const b = totals.by_bound;
    if (!b || !totals.duration_ns) return '';
    const pct = (k) => Math.round((100 * b[k].duration_ns) / totals.duration_ns);
    if (!b.memory.launches && !b.compute.launches) return '';
    return `; ${pct('memory')}% of it in memory-bound kernels, ${pct('compute')}% compute-bound`;
  }

  // Header.
  document.getElementById('rf-meta').textContent =
    `${data.tool} ${data.version}: ${data.traces.length} trace(s), ${data.totals.launches} launch(es), ` +
    `${data.totals.duration_ns === null ? '-' : ms(data.totals.duration_ns)} ms GPU time` + boundShare(data.totals) +
    (data.above_roof_count ? `; ${data.above_roof_count} launch(es) above their roof (see summary.json)` : '');

  // Tensor-core work the trace's metrics do not count as FLOP (summary.json uncounted_tensor_work).
  const uncounted = data.uncounted_tensor_work;
  if (uncounted) {
    const el = document.getElementById('rf-uncounted-tensor');
    el.textContent = `${uncounted.launches} launch(es)` +
      (uncounted.share_of_gpu_time == null ? '' : ` (${(100 * uncounted.share_of_gpu_time).toFixed(1)}% of the GPU time)`) +
      ' ran tensor-core instructions that the collected metrics do not count as FLOP' +
      (uncounted.kernels.length ? ` (e.g. ${uncounted.kernels[0]})` : '') +
      `: their FLOP/s and roofline points leave tensor-core work out; ${uncounted.hint}.`;
    el.hidden = false;
  }

  // Roofline: one panel per (trace, device) that has points; ceilings of the device as roofs.
  const phases = [...new Set(data.points.map((p) => p.phase))].sort();
  // Points summed over NVTX paths (points_merged_over_ranges: too many kernel groups) have no range.
  const ranges = [...new Set(data.points.filter((p) => p.range !== null).map((p) => p.range))].sort();
  const plotted = data.points.filter((p) => p.arithmetic_intensity > 0 && p.flop_per_s > 0);
  document.getElementById('rf-unplotted').textContent =
    (plotted.length < data.points.length
      ? `${data.points.length - plotted.length} kernel group(s) without FLOP, DRAM bytes or time are not plotted. `
      : '') +
    (data.points_merged_over_ranges
      ? `The run has ${data.points_merged_over_ranges} kernel groups (kernel, phase, NVTX range): each point ` +
        'sums its kernel over NVTX ranges (ranges.csv and kernels.csv have them apart).'
      : '');
  // Smallest and largest of many values: Math.min(...v) throws RangeError past about 125,000.
  const least = (v) => v.reduce((a, b) => (b < a ? b : a), Infinity);
  const most = (v) => v.reduce((a, b) => (b > a ? b : a), -Infinity);
  const panelKeys = [...new Set(data.points.map((p) => p.trace_index + ':' + p.device_index))];
  const panels = panelKeys.map((key, i) => {
    const [ti, di] = key.split(':').map(Number);
    const dev = di >= 0 ? data.devices[di] : null;
    const pts = plotted
      .filter((p) => p.trace_index === ti && p.device_index === di)
      .map((p) => ({ ...p, time_ms: p.duration_ns / 1e6, bytes: p.dram_bytes }));
    // Compute roofs with one value (e.g. tensor FP16 and BF16) are drawn once, names joined.
    const compute = [];
    (dev ? dev.roofs.filter((r) => r.kind === 'compute') : []).forEach((r) => {
      const same = compute.find((c) => c.value === r.value);
      const name = r.name.replace(/_flop_per_s$/, '');
      if (same) same.name += ' / ' + name;
      else compute.push({ ...r, name });
    });
    const bandwidth = dev ? dev.roofs.filter((r) => r.kind === 'bandwidth') : [];
    const dram = bandwidth.find((r) => r.name.startsWith('dram')) || bandwidth[0];
    const peak = Math.max(...compute.map((r) => r.value), 0);
    const xs = pts.map((p) => p.arithmetic_intensity);
    const ys = pts.map((p) => p.flop_per_s);
    compute.forEach((c) => { if (dram) xs.push(c.value / dram.value); ys.push(c.value); });
    // A decade bound; intensities far below any real one (4.9e-324 from corrupt counters) are
    // held at 1e-300, so that a log axis never gets 0 (svg_roofline's decade_range does the same).
    const dec = (v, up) => Math.pow(10, (up ? Math.ceil : Math.floor)(Math.log10(Math.max(v, 1e-300))));
    const xmin = xs.length ? dec(least(xs) / 2, false) : 0.01;
    const xmax = xs.length ? dec(most(xs) * 2, true) : 1000;
    const ymin = ys.length ? dec(least(ys) / 2, false) : 1e9;
    const ymax = ys.length ? dec(most(ys) * 2, true) : 1e15;
    const roofs = [];
    const ridges = [];
    compute.forEach((c) => {
      if (dram) {
        const ridge = c.value / dram.value;
        roofs.push({ roof: c.name, order: 0, ai: xmin, y: Math.min(c.value, dram.value * xmin) });
        if (ridge > xmin) roofs.push({ roof: c.name, order: 1, ai: ridge, y: c.value });
        ridges.push({ roof: c.name + ' / ' + dram.name, ridge_ai: ridge, peak: c.value });
      } else {
        roofs.push({ roof: c.name, order: 0, ai: xmin, y: c.value });
      }
      roofs.push({ roof: c.name, order: 2, ai: xmax, y: c.value });
    });
    bandwidth.filter((b) => b !== dram && peak > 0).forEach((b) => {
      roofs.push({ roof: b.name, order: 0, ai: xmin, y: b.value * xmin });
      roofs.push({ roof: b.name, order: 1, ai: peak / b.value, y: peak });
    });
    // No compute ceiling (a device no entry names: CUPTI's DRAM bandwidth only): the bandwidth
    // slopes across the chart, the roof kernels.csv places its launches under.
    if (peak === 0) bandwidth.forEach((b) => {
      roofs.push({ roof: b.name, order: 0, ai: xmin, y: b.value * xmin });
      roofs.push({ roof: b.name, order: 1, ai: xmax, y: b.value * xmax });
    });
    const x = { type: 'quantitative', scale: { type: 'log', domain: [xmin, xmax] },
                title: 'arithmetic intensity (FLOP/byte, DRAM)' };
    const y = { type: 'quantitative', scale: { type: 'log', domain: [ymin, ymax] }, title: 'performance (FLOP/s)',
                axis: { format: '~s' } };
    // Roof labels. A compute roof's ends just left of its ridge point, on the roof: above the
    // memory slope, where no kernel can be (attainable FLOP/s <= intensity x bandwidth); where
    // that does not fit, at the roof's right end. Labels closer than a line of text are stacked
    // apart (as roofline.svg does). Bandwidth roofs: at their left end.
    const pxPerDecade = (px, lo, hi) => px / (Math.log10(hi) - Math.log10(lo));
    const xpx = pxPerDecade(WIDTH, xmin, xmax), ypx = pxPerDecade(HEIGHT, ymin, ymax);
    const labels = compute.map((c) => {
      const text = c.name + ' ' + fmt(c.value, 'FLOP/s');
      const ridge = dram ? c.value / dram.value : 0;
      const room = ridge > xmin ? (Math.log10(ridge) - Math.log10(xmin)) * xpx - 8 : 0;
      return room > text.length * CHAR_PX ? { ai: ridge, y: c.value, text, kind: 'ridge' } : { ai: xmax, y: c.value, text, kind: 'end' };
    });
    // Stacked in pixels (up = smaller), the label's centre: 'end' labels sit END_DY above their roof.
    const centre = (l) => -Math.log10(l.y) * ypx + (l.kind === 'end' ? END_DY : 0);
    labels.sort((a, b) => centre(b) - centre(a));
    const centres = labels.map(centre);
    for (let k = 1; k < labels.length; ++k) centres[k] = Math.min(centres[k], centres[k - 1] - LINE_PX);
    // A stack that rose above the plot starts at its top and goes down instead (stack_labels).
    const top = -Math.log10(ymax) * ypx + LINE_PX / 2;
    if (labels.length && centres[labels.length - 1] < top) {
      centres[labels.length - 1] = top;
      for (let k = labels.length - 2; k >= 0; --k) centres[k] = Math.max(centres[k], centres[k + 1] + LINE_PX);
    }
    labels.forEach((l, k) => { l.y = Math.pow(10, -(centres[k] - (l.kind === 'end' ? END_DY : 0)) / ypx); });
    // A bandwidth label where its slope enters the plot: the left edge, or the bottom one when the
    // slope is below the chart there (it was drawn under the x axis); none when it never enters.
    labels.push(...bandwidth.map((b) => {
      const ai = Math.max(xmin, ymin / b.value) * 1.1;
      return { ai, y: b.value * ai, kind: 'bandwidth',
               text: b.name.replace(/_per_s$/, '/s').replace(/_/g, ' ') + ' ' + fmt(b.value, 'B/s') };
    }).filter((l) => l.ai < xmax && l.y < ymax));
    const trace = data.traces[ti];
    return {
      title: { text: (dev ? dev.name : 'unknown device') + ' — ' + trace.label, limit: 420 },
      width: WIDTH,
      height: HEIGHT,
      layer: [
        { data: { values: roofs }, mark: { type: 'line', clip: true, strokeWidth: 1.5 },
          encoding: { x: { ...x, field: 'ai' }, y: { ...y, field: 'y' }, detail: { field: 'roof' },
                      order: { field: 'order' }, color: { value: '#777' },
                      tooltip: [{ field: 'roof', title: 'roof' }] } },
        { data: { values: ridges }, mark: { type: 'point', shape: 'diamond', filled: true, clip: true },
          encoding: { x: { ...x, field: 'ridge_ai' }, y: { ...y, field: 'peak' }, color: { value: '#333' },
                      tooltip: [{ field: 'roof', title: 'ridge point' },
                                { field: 'ridge_ai', title: 'FLOP/byte', format: '.3~g' },
                                { field: 'peak', title: 'peak FLOP/s', format: '.4~s' }] } },
        { name: 'rf_points_' + i, data: { values: pts },
          transform: [{ filter: '(phase_filter === null || datum.phase === phase_filter) && ' +
                                '(range_filter === null || datum.range === range_filter)' }],
          mark: { type: 'circle', opacity: 0.75, clip: true },
          encoding: {
            x: { ...x, field: 'arithmetic_intensity' }, y: { ...y, field: 'flop_per_s' },
            size: { field: 'time_ms', type: 'quantitative', title: 'GPU time (ms)', scale: { range: [30, 1200] } },
            color: { field: 'phase', type: 'nominal', scale: { domain: phases, range: phases.map(phaseColour) }, title: 'phase' },
            tooltip: [
              { field: 'kernel', title: 'kernel' },
              { field: 'phase', title: 'phase' },
              { field: 'range', title: 'NVTX range' },
              { field: 'launches', title: 'launches' },
              { field: 'time_ms', title: 'GPU time (ms)', format: '.4~f' },
              { field: 'flop', title: 'FLOP', format: '.4~s' },
              { field: 'bytes', title: 'DRAM bytes', format: '.4~s' },
              { field: 'arithmetic_intensity', title: 'FLOP/byte', format: '.4~g' },
              { field: 'flop_per_s', title: 'FLOP/s', format: '.4~s' },
              { field: 'bound', title: 'bound' },
              { field: 'roof_fraction', title: 'of its roof', format: '.1%' },
            ] } },
        // Labels last, over everything (report.html's style gives them a white outline).
        ...['ridge', 'end', 'bandwidth'].map((kind) => {
          const [align, dx, dy] = { ridge: ['right', -8, 0], end: ['right', -2, END_DY], bandwidth: ['left', 2, -6] }[kind];
          return { name: `rf_roof_labels_${kind}_${i}`, data: { values: labels.filter((l) => l.kind === kind) },
                   mark: { type: 'text', align, dx, dy, baseline: kind === 'bandwidth' ? 'alphabetic' : 'middle', fontSize: 10, color: '#444' },
                   encoding: { x: { ...x, field: 'ai' }, y: { ...y, field: 'y' }, text: { field: 'text' } } };
        }),
      ],
    };
  });
  const rooflineSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    params: [
      { name: 'phase_filter', value: ALL,
        bind: { input: 'select', options: [ALL, ...phases], labels: [ALL_LABEL, ...phases], name: 'phase ' } },
      { name: 'range_filter', value: ALL,
        bind: { input: 'select', options: [ALL, ...ranges], labels: [ALL_LABEL, ...ranges], name: 'NVTX range ' } },
    ],
    concat: panels,
    columns: 2,
    resolve: { scale: { color: 'shared', size: 'shared', x: 'independent', y: 'independent' } },
  };
  window.rfReport = { data, views: {} };
  const embed = (id, spec) =>
    vegaEmbed('#' + id, spec, { renderer: 'svg', actions: { export: true, source: false, compiled: false, editor: false } })
      .then((r) => { window.rfReport.views[id] = r.view; })
      .catch((e) => {
        document.getElementById(id).appendChild(el('p', 'chart failed: ' + e.message, 'error'));
        console.error(e);
      });
  const ready = [];
  if (panels.length) ready.push(embed('rf-roofline', rooflineSpec));
  else document.getElementById('rf-roofline').textContent = 'No kernel launches.';

  // Scaling across traces (two or more traces).
  if (data.traces.length > 1) {
    document.getElementById('rf-scaling-section').hidden = false;
    table('rf-scaling-table', [
      { title: 'trace', get: (t) => t.label, name: true },
      { title: 'batch size', get: (t) => t.batch_size ?? '' },
      { title: 'iterations', get: (t) => t.iterations ?? '' },
      { title: 'launches', get: (t) => t.launches },
      { title: 'GPU time (ms)', get: (t) => ms(t.duration_ns) },
      { title: 'FLOP/s', get: (t) => fmt(t.flop_per_s, 'FLOP/s') },
      { title: 'FLOP/byte', get: (t) => fmt(t.arithmetic_intensity) },
      { title: 'throughput (samples/s)', get: (t) => fmt(t.throughput_samples_per_s) },
    ], data.traces);
    const byBatch = data.traces.every((t) => t.batch_size);
    const rows = [];
    data.traces.forEach((t) => {
      [['FLOP/s', t.flop_per_s], ['FLOP/byte', t.arithmetic_intensity],
       ['throughput (samples/s)', t.throughput_samples_per_s]].forEach(([m, v]) => {
        if (v !== null && v > 0) rows.push({ label: t.label, batch_size: t.batch_size, measure: m, value: v });
      });
    });
    const xEnc = byBatch
      ? { field: 'batch_size', type: 'quantitative', scale: { type: 'log' }, title: 'batch size' }
      : { field: 'label', type: 'nominal', sort: null, title: 'trace' };
    ready.push(embed('rf-scaling-chart', {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      data: { values: rows },
      facet: { field: 'measure', type: 'nominal', title: null },
      columns: 3,
      resolve: { scale: { y: 'independent' } },
      spec: { width: 260, height: 180, mark: { type: 'line', point: true },
              encoding: { x: xEnc, y: { field: 'value', type: 'quantitative', scale: { type: 'log' }, title: null },
                          tooltip: [{ field: 'label' }, { field: 'value', format: '.4~s' }] } },
    }));
  }

  // Top kernels by GPU time (summed over phases, ranges and devices).
  const kernels = new Map();
  data.points.forEach((p) => {
    const k = kernels.get(p.kernel) ||
      { kernel: p.kernel, kernel_short: p.kernel_short, launches: 0, duration_ns: null, flop: null, dram_bytes: null,
        rate_flop: null, rate_ns: 0, roof_weighted: 0, roof_ns: 0, bound_ns: {} };
    k.launches += p.launches;
    if (p.duration_ns !== null) k.duration_ns = (k.duration_ns || 0) + p.duration_ns;  // null: no launch timed
    // % of roof: the points' achieved / attainable FLOP/s, weighted by the GPU time it is over
    // (rate_ns: the launches with FLOP and a duration); the bound with the most GPU time.
    if (p.roof_fraction != null) {
      k.roof_weighted += p.roof_fraction * p.rate_ns;
      k.roof_ns += p.rate_ns;
    }
    if (p.bound) k.bound_ns[p.bound] = (k.bound_ns[p.bound] || 0) + p.duration_ns;
    if (p.flop !== null) k.flop = (k.flop || 0) + p.flop;
    if (p.dram_bytes !== null) k.dram_bytes = (k.dram_bytes || 0) + p.dram_bytes;
    if (p.rate_flop !== null && p.rate_flop !== undefined) {
      k.rate_flop = (k.rate_flop || 0) + p.rate_flop;
      k.rate_ns += p.rate_ns;
    }
    kernels.set(p.kernel, k);
  });
  const top = [...kernels.values()].sort((a, b) => b.duration_ns - a.duration_ns).slice(0, 25);
  const total = data.totals.duration_ns || 1;
  // FLOP/s over the launches with FLOP and a duration (each point's rate_flop and rate_ns), as
  // kernels.csv and the other tables: not all FLOP over all GPU time.
  top.forEach((k) => {
    k.arithmetic_intensity = k.flop !== null && k.dram_bytes ? k.flop / k.dram_bytes : null;
    k.flop_per_s = k.rate_flop !== null && k.rate_ns ? k.rate_flop / (k.rate_ns * 1e-9) : null;
  });
  const boundOf = (k) => Object.keys(k.bound_ns).sort((a, b) => k.bound_ns[b] - k.bound_ns[a])[0] || '';
  table('rf-top-kernels', [{ title: 'kernel', get: (k) => k.kernel, short: (k) => k.kernel_short, name: true },
    { title: '% GPU time', get: (k) => (k.duration_ns === null ? '' : ((100 * k.duration_ns) / total).toFixed(1)) },
    ...sumColumns,
    { title: 'bound', get: boundOf },
    { title: '% of roof', get: (k) => (k.roof_ns ? ((100 * k.roof_weighted) / k.roof_ns).toFixed(1) : '') }], top);
  // Peak GPU memory (RFPROF_MEMORY traces only): the column is shown when a row has a value.
  const memoryColumn = (rows) => (rows.some((r) => r.peak_memory_bytes != null)
    ? [{ title: 'peak GPU memory', get: (r) => fmt(r.peak_memory_bytes, 'B') }] : []);
  table('rf-phases', [{ title: 'phase', get: (r) => r.phase, name: true }, ...sumColumns,
    ...memoryColumn(data.phases)], data.phases);
  table('rf-ranges', [{ title: 'NVTX range', get: (r) => r.range || '(outside every range)', name: true },
    ...sumColumns, ...memoryColumn(data.ranges)], data.ranges);
  if (data.ranges_not_shown)
    document.getElementById('rf-ranges').appendChild(el('p',
      `${data.ranges_not_shown} more NVTX range(s), each with less GPU time than those above, are in ranges.csv.`));

  // Forward/backward by op and by layer (summary.json "ops", when present).
  const aggFlop = (a) => {
    if (!a) return null;
    let f = null;
    ['fp64_flop', 'fp32_flop', 'fp16_flop'].forEach((k) => { if (a[k] !== null && a[k] !== undefined) f = (f || 0) + a[k]; });
    Object.values(a.tensor || {}).forEach((t) => ['dense', 'sparse'].forEach((k) => { if (t[k] != null) f = (f || 0) + t[k]; }));
    return f;
  };
  const aggBytes = (a) => {
    if (!a || (a.dram_read_bytes == null && a.dram_write_bytes == null)) return null;
    return (a.dram_read_bytes || 0) + (a.dram_write_bytes || 0);
  };
  const ratio = (v) => (v === null || v === undefined ? '' : Number(v).toFixed(2));
  if (data.ops) {
    document.getElementById('rf-ops-section').hidden = false;
    const fb = (key, title) => [
      { title, get: (r) => r[key], name: true },
      { title: 'fwd time (ms)', get: (r) => ms(r.forward && r.forward.duration_ns) },
      { title: 'bwd time (ms)', get: (r) => ms(r.backward && r.backward.duration_ns) },
      { title: 'fwd FLOP', get: (r) => fmt(aggFlop(r.forward)) },
      { title: 'bwd FLOP', get: (r) => fmt(aggFlop(r.backward)) },
      { title: 'fwd DRAM bytes', get: (r) => fmt(aggBytes(r.forward), 'B') },
      { title: 'bwd DRAM bytes', get: (r) => fmt(aggBytes(r.backward), 'B') },
      { title: 'bwd/fwd FLOP', get: (r) => ratio(r.flop_ratio_backward_to_forward) },
      { title: 'bwd/fwd time', get: (r) => ratio(r.time_ratio_backward_to_forward) },
    ];
    if (data.ops.overall) table('rf-ops-overall', fb('name', 'overall'), [{ name: 'all ops', ...data.ops.overall }]);
    table('rf-ops', fb('op', 'op'), data.ops.by_op || []);
    table('rf-layers', fb('layer', 'layer'), data.ops.by_layer || []);
  }
  window.rfReport.ready = Promise.all(ready);
})();
