// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// spanprof view: the span table, the span-name figures and the flame graph, from /api/*.
'use strict';

const $ = (sel) => document.querySelector(sel);
const state = { sort: 'wall', asc: false, namesKey: 'wall_ns', namesAsc: false, names: [],
  tree: null, mode: 'wall', zoom: null, search: '', selected: null, spanSeq: 0, profileSeq: 0 };

function ms(ns) {
  const v = ns / 1e6;
  if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
  return v >= 10 ? v.toFixed(1) + ' ms' : v.toFixed(2) + ' ms';
}

function when(ns) {
  if (!ns) return '—';
  const d = new Date(ns / 1e6);
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

async function api(path) {
  const r = await fetch(path, { cache: 'no-store' });
  if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + (await r.text()).trim());
  return r.json();
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

// ---- status and skipped files ----
function showStatus(st) {
  $('#status').textContent = `${st.dir}: ${st.spans} spans from ${st.span_logs} span logs, ` +
    `${st.profiles} profiles` + (st.spans_dropped ? `, ${st.spans_dropped} spans over the limit not loaded` : '') +
    (st.files_skipped ? `, ${st.files_skipped} files over the limit not listed` : '') +
    ` (read in ${st.load_ms} ms)`;
  const box = $('#problems');
  box.hidden = !st.problems_total;
  $('#problems-summary').textContent = `${st.problems_total} file(s) skipped or read in part`;
  const ul = $('#problems-list');
  ul.textContent = '';
  for (const p of st.problems) {
    const li = document.createElement('li');
    li.textContent = `${p.file}: ${p.why}`;
    ul.appendChild(li);
  }
}

async function refreshStatus() {
  showStatus(await api('/api/status'));
}

// ---- spans ----
async function loadSpans() {
  const q = new URLSearchParams({ sort: state.sort, order: state.asc ? 'asc' : 'desc', limit: '500',
    service: $('#f-service').value, name: $('#f-name').value.trim(), trace: $('#f-trace').value.trim() });
  const seq = ++state.spanSeq;
  const res = await api('/api/spans?' + q);
  if (seq !== state.spanSeq) return; // a newer query is on its way
  const tbody = $('#spans tbody');
  tbody.textContent = '';
  for (const s of res.rows) {
    const tr = document.createElement('tr');
    tr.className = 'span-row';
    tr.dataset.spanId = s.span_id;
    cell(tr, s.service); cell(tr, s.name); cell(tr, s.trace_id, 'id'); cell(tr, s.span_id, 'id');
    cell(tr, when(s.start_ns)); cell(tr, ms(s.wall_ns), 'num wall'); cell(tr, ms(s.cpu_ns), 'num');
    cell(tr, ms(s.off_cpu_ns), 'num');
    tr.addEventListener('click', () => {
      selectRow(tr);
      openProfile('span_id=' + s.span_id, `${s.name} — span ${s.span_id}`,
        `${s.service}, trace ${s.trace_id}: wall ${ms(s.wall_ns)}, CPU ${ms(s.cpu_ns)}, off-CPU ${ms(s.off_cpu_ns)}`);
    });
    tbody.appendChild(tr);
  }
  if (!res.total) {
    const tr = document.createElement('tr');
    cell(tr, 'No span records here: the agent writes <service>.spans.jsonl beside its profiles ' +
      'when off-CPU profiling and span times are on (the default).', 'empty');
    tr.firstChild.colSpan = 8;
    tbody.appendChild(tr);
  }
  $('#matched').textContent = `${res.matched} of ${res.total} spans` +
    (res.matched > res.rows.length ? ` (first ${res.rows.length} shown)` : '');
  for (const th of document.querySelectorAll('#spans th[data-sort]')) {
    th.classList.toggle('sorted', th.dataset.sort === state.sort);
    th.classList.toggle('asc', th.dataset.sort === state.sort && state.asc);
  }
  document.body.dataset.spansReady = '1';
  markPainted('spans-painted');
}

// A performance mark once the browser painted what was just drawn (the frame after the next
// animation frame): what the benchmark reads.
function markPainted(name) {
  requestAnimationFrame(() => setTimeout(() => performance.mark(name), 0));
}

function selectRow(tr) {
  for (const r of document.querySelectorAll('tr.selected')) r.classList.remove('selected');
  tr.classList.add('selected');
}

// ---- span names ----
async function loadNames() {
  state.names = (await api('/api/names')).rows;
  const sel = $('#f-service');
  const keep = sel.value;
  const services = [...new Set(state.names.map((n) => n.service))].sort();
  sel.length = 1;
  for (const s of services) sel.add(new Option(s, s));
  sel.value = services.includes(keep) ? keep : '';
  renderNames();
}

function renderNames() {
  const k = state.namesKey, dir = state.namesAsc ? 1 : -1;
  const rows = [...state.names].sort((a, b) => (a[k] < b[k] ? -dir : a[k] > b[k] ? dir : 0));
  const tbody = $('#names tbody');
  tbody.textContent = '';
  for (const n of rows) {
    const tr = document.createElement('tr');
    tr.className = 'name-row';
    cell(tr, n.service); cell(tr, n.name); cell(tr, String(n.count), 'num');
    cell(tr, ms(n.wall_p50_ns), 'num'); cell(tr, ms(n.wall_p95_ns), 'num');
    cell(tr, ms(n.cpu_ns), 'num'); cell(tr, ms(n.off_cpu_ns), 'num');
    tr.addEventListener('click', () => {
      selectRow(tr);
      openProfile(new URLSearchParams({ service: n.service, name: n.name }).toString(),
        `${n.name} — all ${n.count} spans`, `${n.service}: CPU ${ms(n.cpu_ns)}, off-CPU ${ms(n.off_cpu_ns)} in total`);
    });
    tbody.appendChild(tr);
  }
  for (const th of document.querySelectorAll('#names th[data-key]')) {
    th.classList.toggle('sorted', th.dataset.key === k);
    th.classList.toggle('asc', th.dataset.key === k && state.namesAsc);
  }
}

// ---- a profile: fetch, then the flame graph ----
async function openProfile(query, title, info) {
  $('#profile').hidden = false;
  $('#profile-title').textContent = title;
  $('#profile-info').textContent = 'loading…';
  delete document.body.dataset.profileReady;
  const seq = ++state.profileSeq;
  let res;
  try {
    res = await api('/api/profile?' + query);
  } catch (e) {
    $('#profile-info').textContent = e.message;
    return;
  }
  if (seq !== state.profileSeq) return;
  state.tree = decodeTree(res.tree);
  state.zoom = null;
  $('#profile-info').textContent = `${info} — ${res.tree.samples} stacks from ${res.files} of ` +
    `${res.files_listed} profile files` + (res.tree.truncated ? `, ${res.tree.truncated} stacks cut at the node limit` : '');
  renderFlame();
  refreshStatus(); // profiles read now may have been skipped as bad
  $('#profile').scrollIntoView({ block: 'nearest' });
}

// [name, file, line, cpu, off, children] in pre-order -> nested nodes.
function decodeTree(t) {
  let i = 0;
  const s = t.strings;
  function next(parent) {
    const [name, file, line, cpu, off, n] = t.nodes[i++];
    const node = { name: s[name], file: s[file], line, cpu, off, parent, children: [] };
    for (let c = 0; c < n; c++) node.children.push(next(node));
    node.children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return node;
  }
  return next(null);
}

function value(n) {
  return state.mode === 'cpu' ? n.cpu : state.mode === 'off' ? n.off : n.cpu + n.off;
}

function hash(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h);
}

function colour(n) {
  const h = hash(n.name);
  const warm = `hsl(${12 + (h % 34)}, 85%, ${56 + (h % 9)}%)`;
  const cool = `hsl(${200 + (h % 24)}, 68%, ${60 + (h % 9)}%)`;
  if (state.mode === 'cpu') return warm;
  if (state.mode === 'off') return cool;
  if (!n.off) return warm;
  if (!n.cpu) return cool;
  const p = (100 * n.cpu / (n.cpu + n.off)).toFixed(1);
  return `linear-gradient(90deg, ${warm} ${p}%, ${cool} ${p}%)`;
}

const ROW = 18, MAX_FRAMES = 6000;

function renderFlame() {
  const box = $('#flame');
  box.textContent = '';
  $('#tooltip').hidden = true; // its frame is gone; no mouseleave will come
  const root = state.tree, zoom = state.zoom || root;
  const width = box.clientWidth || 1000;
  const total = value(zoom);
  if (!root || !value(root)) {
    box.style.height = 'auto';
    box.innerHTML = '<div class="empty">No samples of this kind for it (a short span may hold no CPU sample; try the span name, or another view).</div>';
    finishRender(0);
    return;
  }
  const frames = [];
  const chain = [];
  for (let a = zoom; a; a = a.parent) chain.unshift(a);
  chain.forEach((a, d) => frames.push({ n: a, x: 0, w: width, d, dim: a !== zoom }));
  let depth = chain.length - 1;
  const stack = [{ n: zoom, x: 0, w: width, d: depth }];
  while (stack.length && frames.length < MAX_FRAMES) {
    const f = stack.pop();
    depth = Math.max(depth, f.d);
    let x = f.x;
    for (const c of f.n.children) {
      const w = f.w * value(c) / (value(f.n) || 1);
      if (w >= 0.5) {
        const cf = { n: c, x, w, d: f.d + 1 };
        frames.push(cf);
        stack.push(cf);
      }
      x += w;
    }
  }
  box.style.height = (depth + 1) * ROW + 'px';
  const term = state.search.toLowerCase();
  let matched = 0;
  const frag = document.createDocumentFragment();
  for (const f of frames) {
    const el = document.createElement('div');
    el.className = 'frame' + (f.dim ? ' dim' : '');
    el.style.cssText = `left:${f.x}px;top:${f.d * ROW}px;width:${f.w}px;background:${colour(f.n)}`;
    el.textContent = f.n.name;
    el.dataset.name = f.n.name;
    el.dataset.kind = f.n.cpu && f.n.off ? 'both' : f.n.off ? 'off' : 'cpu';
    if (term && f.n.name.toLowerCase().includes(term)) {
      el.classList.add('match');
      if (!f.dim && !hasMatchingAncestor(f.n, zoom, term)) matched += value(f.n);
    }
    el.addEventListener('click', () => { state.zoom = f.n === root ? null : f.n; renderFlame(); });
    el.addEventListener('mousemove', (e) => showTip(e, f.n, total));
    el.addEventListener('mouseleave', () => { $('#tooltip').hidden = true; });
    frag.appendChild(el);
  }
  box.appendChild(frag);
  $('#search-info').textContent = term ? `${(100 * matched / total).toFixed(1)}% of the shown time matches` : '';
  finishRender(frames.length);
}

function finishRender(n) {
  document.body.dataset.profileReady = String(n);
  markPainted('flame-painted');
}

function hasMatchingAncestor(n, stop, term) {
  for (let a = n.parent; a && a !== stop.parent; a = a.parent)
    if (a.name.toLowerCase().includes(term)) return true;
  return false;
}

function showTip(e, n, total) {
  const tip = $('#tooltip');
  const where = n.file ? `${n.file}${n.line ? ':' + n.line : ''}` : '(no file name)';
  tip.innerHTML = '<div class="fn"></div><div class="loc"></div><div class="vals"></div>';
  tip.querySelector('.fn').textContent = n.name;
  tip.querySelector('.loc').textContent = where;
  tip.querySelector('.vals').textContent = `CPU ${ms(n.cpu)}, waiting ${ms(n.off)}, ` +
    `${(100 * value(n) / (total || 1)).toFixed(1)}% of the shown ${state.mode === 'cpu' ? 'CPU' : state.mode === 'off' ? 'waiting' : 'wall'} time`;
  tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + 'px';
  tip.style.top = (e.clientY + 16) + 'px';
}

// ---- wiring ----
function debounce(fn, ms) {
  let t;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

function report(e) {
  $('#status').textContent = 'error: ' + e.message;
}

function init() {
  for (const th of document.querySelectorAll('#spans th[data-sort]'))
    th.addEventListener('click', () => {
      state.asc = state.sort === th.dataset.sort ? !state.asc : false;
      state.sort = th.dataset.sort;
      loadSpans().catch(report);
    });
  for (const th of document.querySelectorAll('#names th[data-key]'))
    th.addEventListener('click', () => {
      state.namesAsc = state.namesKey === th.dataset.key ? !state.namesAsc : false;
      state.namesKey = th.dataset.key;
      renderNames();
    });
  for (const b of document.querySelectorAll('.tab'))
    b.addEventListener('click', () => {
      for (const t of document.querySelectorAll('.tab')) t.classList.toggle('active', t === b);
      $('#tab-spans').hidden = b.dataset.tab !== 'spans';
      $('#tab-names').hidden = b.dataset.tab !== 'names';
    });
  for (const b of document.querySelectorAll('.mode'))
    b.addEventListener('click', () => {
      for (const m of document.querySelectorAll('.mode')) m.classList.toggle('active', m === b);
      state.mode = b.dataset.mode;
      renderFlame();
    });
  const reload = debounce(() => loadSpans().catch(report), 200);
  $('#f-service').addEventListener('change', reload);
  $('#f-name').addEventListener('input', reload);
  $('#f-trace').addEventListener('input', reload);
  $('#filters').addEventListener('submit', (e) => e.preventDefault());
  $('#search').addEventListener('input', debounce(() => { state.search = $('#search').value; if (state.tree) renderFlame(); }, 150));
  $('#reset-zoom').addEventListener('click', () => { state.zoom = null; if (state.tree) renderFlame(); });
  $('#reload').addEventListener('click', async () => {
    try {
      showStatus(await api('/api/reload'));
      await Promise.all([loadNames(), loadSpans()]);
    } catch (e) { report(e); }
  });
  window.addEventListener('resize', debounce(() => { if (state.tree) renderFlame(); }, 150));
  Promise.all([refreshStatus(), loadSpans(), loadNames()]).catch(report);
}

init();
