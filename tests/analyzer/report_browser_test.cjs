// report.html in headless Chromium (CTest report_html_browser, no GPU). Usage:
//   node report_browser_test.cjs FIXTURE_DIR CHROMIUM NODE_MODULES
// FIXTURE_DIR holds report/ and scaling/ written by make_report_fixture, whose traces give the
// expected counts below. Checks: no console errors or page errors, every roofline point drawn,
// the phase filter hides the other phases, the hostile kernel name shown as text, the scaling
// section present for two traces. Screenshots go to FIXTURE_DIR/*.png.
'use strict';
const path = require('path');
const [fixture, chromium, nodeModules] = process.argv.slice(2).map((a) => path.resolve(a));
const { chromium: pw } = require(path.resolve(nodeModules, 'playwright-core'));

const failures = [];
function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
  if (!cond) failures.push(what);
}

async function open(browser, dir) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => errors.push('page error: ' + e.message));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push('network: ' + r.url()); });
  await page.goto('file://' + path.join(fixture, dir, 'report.html'));
  await page.waitForFunction(() => window.rfReport && window.rfReport.ready);
  await page.evaluate(() => window.rfReport.ready);
  return { page, errors };
}

/// Drawn roofline points (the circles of the rf_points_* layers) in the page.
const points = (page) => page.locator('#rf-roofline g[class*="rf_points_"] path').count();

/// Roof labels are drawn after the points (on top), outlined in white, and no two overlap.
async function checkRoofLabels(page, what) {
  const boxes = await page.evaluate(() => {
    const root = document.querySelector('#rf-roofline svg');
    const all = [...root.querySelectorAll('g[class*="rf_roof_labels_"] text, g[class*="rf_points_"] path')];
    const lastPoint = all.map((e) => e.tagName).lastIndexOf('path');
    return all.map((e, i) => ({ text: e.tagName === 'text' ? e.textContent : null, box: e.getBoundingClientRect().toJSON(),
                                 halo: getComputedStyle(e).paintOrder.startsWith('stroke'), afterPoints: i > lastPoint }))
      .filter((e) => e.text && e.text.endsWith('FLOP/s'));
  });
  check(boxes.length >= 3 && boxes.every((b) => b.afterPoints && b.halo), what + ': roof labels drawn over the points, outlined: ' + boxes.length);
  const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const clashes = boxes.filter((a, i) => boxes.some((b, j) => j < i && overlap(a.box, b.box))).map((b) => b.text);
  check(clashes.length === 0, what + ': roof labels overlap: ' + clashes.join(' | '));
}

(async () => {
  const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
  const browser = await pw.launch({ executablePath: chromium, headless: true, args });
  try {
    // One trace: 5 kernel groups (gemm forward, hostile name forward, gemm backward,
    // the long-named relu backward, adam_step), 2 of them in phase forward, 1 in range "step/optimizer".
    const one = await open(browser, 'report');
    check((await points(one.page)) === 5, 'one trace: 5 roofline points drawn, got ' + (await points(one.page)));
    check((await one.page.locator('#rf-roofline g[class*="rf_points_"]').count()) === 1, 'one roofline chart');
    check((await one.page.locator('#rf-roofline path[aria-roledescription="line mark"], #rf-roofline g.mark-line path').count()) > 0,
          'roofs drawn as lines');
    // Hover: the tooltip of the adam_step point (the only optimizer group) names kernel and numbers.
    const adam = one.page.locator('#rf-roofline g[class*="rf_points_"] path[aria-label*="adam_step"]');
    check((await adam.count()) === 1, 'adam_step point found by its aria label');
    await adam.hover();
    const tip = one.page.locator('#vg-tooltip-element');
    await tip.waitFor({ state: 'visible', timeout: 5000 }).catch(() => {});
    const tipText = (await tip.count()) ? await tip.textContent() : '';
    check(tipText.includes('adam_step') && tipText.includes('optimizer') && tipText.includes('FLOP/s') &&
          tipText.includes('DRAM bytes') && tipText.includes('GPU time'), 'hover tooltip: ' + tipText);
    // Every point has its phase's colour from the page data (roofline.svg's, phase_colours).
    const wrong = await one.page.evaluate(() => {
      const colours = window.rfReport.data.phase_colours;
      return [...document.querySelectorAll('#rf-roofline g[class*="rf_points_"] path')]
        .map((p) => [((p.getAttribute('aria-label') || '').match(/phase: ([^;]*)/) || [])[1], p.getAttribute('fill')])
        .filter(([phase, fill]) => !phase || colours[phase] !== fill);
    });
    check(wrong.length === 0, 'points in their phase_colours colour: ' + JSON.stringify(wrong));
    // Phase colours are roofline.svg's: optimizer green, forward blue, backward red.
    check((await adam.getAttribute('fill')) === '#2ca02c', 'optimizer point in roofline.svg\'s green, got ' + (await adam.getAttribute('fill')));
    const fills = await one.page.locator('#rf-roofline g[class*="rf_points_"] path').evaluateAll(
      (ps) => ps.map((p) => (p.getAttribute('aria-label') || '').includes('phase: forward') ? p.getAttribute('fill') : null).filter(Boolean));
    check(fills.length === 2 && fills.every((f) => f === '#1f77b4'), 'forward points in blue: ' + fills);
    await checkRoofLabels(one.page, 'one trace');
    // The hostile name's tooltip shows it as text: no <b> element made from it.
    const relu = one.page.locator('#rf-roofline g[class*="rf_points_"] path[aria-label*="relu<"]');
    check((await relu.count()) === 1, 'hostile-name point found');
    await relu.hover();
    await one.page.waitForFunction(() => (document.getElementById('vg-tooltip-element') || {}).textContent?.includes('relu'));
    check((await tip.textContent()).includes('relu</script><b>&amp;') && (await tip.locator('b').count()) === 0,
          'hostile name in the tooltip as text');
    await one.page.screenshot({ path: path.join(fixture, 'report.png'), fullPage: true });
    const selects = one.page.locator('.vega-bindings select');
    check((await selects.count()) === 2, 'phase and range selects');
    await selects.nth(0).selectOption('forward');
    await one.page.waitForTimeout(200);
    check((await points(one.page)) === 2, 'phase filter forward: 2 points, got ' + (await points(one.page)));
    await one.page.screenshot({ path: path.join(fixture, 'report-forward.png'), fullPage: true });
    await selects.nth(0).selectOption('(all)');
    await selects.nth(1).selectOption('step/optimizer');
    await one.page.waitForTimeout(200);
    check((await points(one.page)) === 1, 'range filter step/optimizer: 1 point, got ' + (await points(one.page)));
    const hostile = 'relu</script><b>&amp;';
    check((await one.page.locator('#rf-top-kernels td', { hasText: hostile }).count()) === 1,
          'hostile kernel name shown as text in the top kernels table');
    check((await one.page.locator('#rf-top-kernels b').count()) === 0, 'no element injected by a kernel name');
    check((await one.page.locator('#rf-top-kernels tr').count()) === 5, 'top kernels: header + 4 kernels');
    // Each kernel's bound and how close it gets to its roof (the page data's points).
    const heads = await one.page.locator('#rf-top-kernels th').allTextContents();
    const rowsOf = await one.page.locator('#rf-top-kernels tr').evaluateAll((trs) =>
      trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const boundCol = heads.indexOf('bound'), roofCol = heads.indexOf('% of roof');
    check(boundCol > 0 && roofCol > 0, 'bound and % of roof columns: ' + heads.join('|'));
    const expected = await one.page.evaluate(() => {
      const by = {};
      for (const p of window.rfReport.data.points) {
        if (p.roof_fraction == null) continue;
        const e = by[p.kernel] || (by[p.kernel] = { w: 0, ns: 0 });
        e.w += p.roof_fraction * p.rate_ns;  // weighted by the time each fraction is over
        e.ns += p.rate_ns;
      }
      return Object.fromEntries(Object.entries(by).map(([k, e]) => [k, (100 * e.w / e.ns).toFixed(1)]));
    });
    const gemmRow = rowsOf.find((r) => r[0].startsWith('gemm<float>'));
    check(gemmRow && gemmRow[roofCol] === expected['gemm<float>'] && ['memory', 'compute'].includes(gemmRow[boundCol]),
          'gemm: bound and % of roof from its points: ' + JSON.stringify(gemmRow) + ' vs ' + expected['gemm<float>']);
    // A long name is folded, its whole text one click away.
    const folded = one.page.locator('#rf-top-kernels td.name details');
    check((await folded.count()) === 1, 'one long kernel name folded, got ' + (await folded.count()));
    check((await folded.locator('summary').textContent()) ===
          'void at::native::elementwise_kernel<128, 4, at::native::threshold_kernel_impl<…>(…)::{lambda(…)#1}>(…)',
          'folded name: ' + (await folded.locator('summary').textContent()));
    check(!(await folded.locator('div').isVisible()), 'the whole name hidden until asked for');
    await folded.locator('summary').click();
    check((await folded.locator('div').textContent()).startsWith('void at::native::elementwise_kernel<128, 4,') &&
          (await folded.locator('div').isVisible()), 'the whole name shown on a click');
    check((await one.page.locator('#rf-phases tr').count()) === 4, 'phases table: header + 3 phases');
    check((await one.page.locator('#rf-phases th', { hasText: 'peak GPU memory' }).count()) === 1,
          'phases table: peak GPU memory column (trace with memory records)');
    check((await one.page.locator('#rf-ranges th', { hasText: 'peak GPU memory' }).count()) === 1,
          'ranges table: peak GPU memory column');
    check(await one.page.locator('#rf-scaling-section').isHidden(), 'no scaling section for one trace');
    // Its metric list has no sm__inst_executed_pipe_tensor.sum: no uncounted tensor work, no note.
    check(await one.page.locator('#rf-uncounted-tensor').isHidden(), 'one trace: no uncounted tensor work note');
    check(one.errors.length === 0, 'one trace: no console/page errors ' + JSON.stringify(one.errors));

    // Two traces (batch 8 and 32): two rooflines side by side and the scaling section.
    const two = await open(browser, 'scaling');
    check((await two.page.locator('#rf-roofline g[class*="rf_points_"]').count()) === 2, 'two roofline charts');
    check((await points(two.page)) === 10, 'two traces: 10 points, got ' + (await points(two.page)));
    check(await two.page.locator('#rf-scaling-section').isVisible(), 'scaling section shown');
    check((await two.page.locator('#rf-scaling-table tr').count()) === 3, 'scaling table: header + 2 traces');
    check((await two.page.locator('#rf-phases th', { hasText: 'peak GPU memory' }).count()) === 0,
          'no peak GPU memory column without memory records');
    // FLOP/s, FLOP/byte and throughput against batch size: one line each.
    check((await two.page.locator('#rf-scaling-chart g.mark-line path').count()) === 3, 'scaling chart: 3 lines');
    await two.page.screenshot({ path: path.join(fixture, 'scaling.png'), fullPage: true });
    check(two.errors.length === 0, 'two traces: no console/page errors ' + JSON.stringify(two.errors));

    // User ceilings with FP32 = FP16 = 60 TFLOP/s: one roof for both; FP64 (null in the file)
    // from the datasheet (34 TFLOP/s), as are the datasheet's tensor roofs (each drawn once).
    const meas = await open(browser, 'measured');
    const roofLabels = await meas.page.locator('#rf-roofline g.mark-text text').allTextContents();
    const roofTexts = roofLabels.filter((t) => t.endsWith(' TFLOP/s'));
    check(roofTexts.includes('fp32 / fp16 60.00 TFLOP/s') && roofTexts.includes('fp64 34.00 TFLOP/s') &&
          roofTexts.includes('tensor_fp16 / tensor_bf16 989.4 TFLOP/s') &&
          roofTexts.filter((t) => t.startsWith('fp32')).length === 1,
          'measured: roofs fp64, "fp32 / fp16" once, tensor: ' + JSON.stringify(roofTexts));
    check(roofLabels.some((t) => t.startsWith('dram bytes/s 3.000 TB/s')), 'measured: DRAM roof label');
    // FP32/FP16 60, tensor FP64 67 TFLOP/s: 1.5 px apart on the axis, their labels stacked apart.
    await checkRoofLabels(meas.page, 'measured');
    check(meas.errors.length === 0, 'measured: no console/page errors ' + JSON.stringify(meas.errors));

    // 6,000 kernel groups (one NVTX range per launch): points summed over ranges, 2 drawn; the
    // range table lists the 1,000 ranges with the most GPU time; the device has only CUPTI's DRAM
    // bandwidth, drawn as a slope across the chart with its label inside the plot.
    const many = await open(browser, 'many');
    check((await points(many.page)) === 2, 'many ranges: 2 points (summed over ranges), got ' + (await points(many.page)));
    check((await many.page.locator('#rf-unplotted').textContent()).includes('6000 kernel groups'),
          'many ranges: the page says points are summed over ranges');
    const rangeOptions = await many.page.locator('.vega-bindings select').nth(1).locator('option').count();
    check(rangeOptions === 1, 'many ranges: the range select offers (all) only, got ' + rangeOptions);
    check((await many.page.locator('#rf-ranges tr').count()) === 1001, 'many ranges: header + 1,000 ranges');
    check((await many.page.locator('#rf-ranges p').textContent()).startsWith('5000 more NVTX range(s)'),
          'many ranges: the ranges left out are counted');
    const manyRows = await many.page.locator('#rf-top-kernels tr').evaluateAll((trs) =>
      trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const manyHeads = await many.page.locator('#rf-top-kernels th').allTextContents();
    const half = manyRows.find((r) => r[0] === 'half_counted');
    check(half && half[manyHeads.indexOf('FLOP/s')] === '2.000 TFLOP/s',
          'half_counted: FLOP/s over its launches with FLOP, 2.000 TFLOP/s: ' + JSON.stringify(half));
    check((await many.page.locator('#rf-roofline g.mark-line path').count()) > 0, 'bandwidth-only device: its slope drawn');
    const dramLabel = await many.page.evaluate(() => {
      const t = [...document.querySelectorAll('#rf-roofline g.mark-text text')].find((e) => e.textContent.startsWith('dram bytes/s'));
      // The x axis title, below the tick labels: the label was drawn on it, under the axis.
      const title = [...document.querySelectorAll('#rf-roofline text')].find((e) => e.textContent.startsWith('arithmetic intensity'));
      return t ? { label: t.getBoundingClientRect().toJSON(), title: title ? title.getBoundingClientRect().toJSON() : null } : null;
    });
    check(dramLabel && dramLabel.title && dramLabel.label.bottom <= dramLabel.title.top - 12,
          'bandwidth-only device: DRAM label inside the plot: ' + JSON.stringify(dramLabel));
    await many.page.screenshot({ path: path.join(fixture, 'many.png'), fullPage: true });
    check(many.errors.length === 0, 'many ranges: no console/page errors ' + JSON.stringify(many.errors));

    // An NVTX range named "(all)": the filter's own "(all)" is another choice (it was the same
    // value, so choosing the range showed every point).
    const named = await open(browser, 'allnamed');
    const rangeSelect = named.page.locator('.vega-bindings select').nth(1);
    const labels = await rangeSelect.locator('option').allTextContents();
    check(JSON.stringify(labels) === '["(all)","(all)","other"]', 'allnamed: range choices ' + JSON.stringify(labels));
    check((await points(named.page)) === 2, 'allnamed: 2 points at first, got ' + (await points(named.page)));
    await rangeSelect.selectOption({ index: 1 });
    await named.page.waitForTimeout(200);
    check((await points(named.page)) === 1, 'allnamed: the range "(all)" alone: 1 point, got ' + (await points(named.page)));
    await rangeSelect.selectOption({ index: 0 });
    await named.page.waitForTimeout(200);
    check((await points(named.page)) === 2, 'allnamed: every range again: 2 points, got ' + (await points(named.page)));
    check(named.errors.length === 0, 'allnamed: no console/page errors ' + JSON.stringify(named.errors));

    // An "ops" section (summary.json of emit_nvtx() traces): op and layer tables with ratios.
    const ops = await open(browser, 'ops');
    check(await ops.page.locator('#rf-ops-section').isVisible(), 'ops section shown');
    const opRows = await ops.page.locator('#rf-ops tr').allTextContents();
    check(opRows.length === 3, 'ops table: header + 2 ops');
    check(opRows.some((r) => r.includes('aten::conv2d') && r.includes('2.50')), 'conv2d backward/forward ratio 2.50');
    // conv2d: forward 2e9 FLOP, DRAM bytes 1e9 (read 5e8 + write 5e8); backward 2.5e9 bytes.
    check(opRows.some((r) => r.includes('aten::conv2d') && r.includes('1.000 GB') && r.includes('2.500 GB')),
          'conv2d DRAM bytes forward 1 GB, backward 2.5 GB');
    check(opRows.some((r) => r.includes('aten::relu<&>') && r.includes('1.00')), 'relu FLOP ratio 1.00, name as text');
    check((await ops.page.locator('#rf-layers tr').count()) === 2, 'layers table: header + 1 layer');
    check((await ops.page.locator('#rf-ops-overall td', { hasText: '2.00' }).count()) === 2, 'overall ratios 2.00');
    // Its data has an uncounted_tensor_work object (make_report_fixture): shown, with the numbers.
    const tensorNote = ops.page.locator('#rf-uncounted-tensor');
    const tensorText = (await tensorNote.isVisible()) ? await tensorNote.textContent() : '';
    check(tensorText.startsWith('14 launch(es) (21.3% of the GPU time) ran tensor-core instructions') &&
          tensorText.includes('(e.g. sm90_xmma_wgrad_<b>)') && tensorText.includes('rfprof --set roofline-tensor'),
          'uncounted tensor work note: ' + tensorText);
    await ops.page.screenshot({ path: path.join(fixture, 'ops.png'), fullPage: true });
    check(ops.errors.length === 0, 'ops page: no console/page errors ' + JSON.stringify(ops.errors));
  } finally {
    await browser.close();
  }
  if (failures.length) {
    console.error(failures.length + ' check(s) failed');
    process.exit(1);
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
