// cascade-hub's web console (docs/console.md).
//
// One page per hash route (#/services, #/service/NAME/GROUP, #/topology,
// #/isolated, #/switches, #/audit), each built once when it is shown and then
// refreshed every 2 s from the hub's HTTP admin API (schemas/hub-http-api.md),
// the only thing this script talks to. A refresh updates the page in place:
// rows are kept by key and only text that changed is rewritten, so nothing
// flickers, a button under the pointer stays where it is and an editor keeps
// its text.
//
// Everything the API returns is shown as text (textContent, never innerHTML):
// service names, instance ids and reasons come from the network. Handlers are
// functions attached here, never attributes built from data.
//
// Operator commands ask for a bearer token once; it is kept in this tab's
// sessionStorage and sent as `Authorization: Bearer` on every request (reads
// from other hosts need it too). A 401 forgets it, so the next command asks
// again.
(() => {
  'use strict';

  const POLL_MS = 2000;
  const API = '../api/v1'; // the page is /ui/: the API is beside it, wherever the hub is mounted
  const TOKEN_KEY = 'cascade-hub-token';

  // --- DOM -----------------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  // el('a', {href: '#/x', class: 'y'}, 'text', child): strings become text
  // nodes; `on*` props must be functions (addEventListener).
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') {
        node.addEventListener(key.slice(2), value);
      } else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  // Rewrites a node's text only when it changed (no relayout, selection kept).
  function setText(node, value) {
    const text = value === null || value === undefined ? '' : String(value);
    if (node.textContent !== text) node.textContent = text;
  }

  function setClass(node, className) {
    if (node.className !== className) node.className = className;
  }

  // Makes `parent`'s children one per item, in order, reusing the child made
  // for the same key before: `create(item)` makes a new one, `update(node,
  // item)` fills it. Children of keys no longer present are removed.
  function syncChildren(parent, items, keyOf, create, update) {
    const old = new Map();
    for (const child of parent.children) old.set(child.dataset.key, child);
    let cursor = parent.firstElementChild;
    for (const item of items) {
      const key = String(keyOf(item));
      let node = old.get(key);
      if (node) {
        old.delete(key);
      } else {
        node = create(item);
        node.dataset.key = key;
      }
      update(node, item);
      if (node === cursor) cursor = cursor.nextElementSibling;
      else parent.insertBefore(node, cursor);
    }
    for (const node of old.values()) node.remove();
  }

  // A table with these column headers, its rows kept by key (syncChildren);
  // `empty` is shown instead when there are no rows.
  function dataTable(headers, { caption, empty = 'None.', className = '' } = {}) {
    const tbody = el('tbody');
    const table = el('table', { class: `data ${className}`.trim() },
      caption ? el('caption', { text: caption }) : null,
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col', text: h })))),
      tbody);
    const wrap = el('div', { class: 'table-wrap' }, table);
    const none = el('p', { class: 'empty', text: empty, hidden: true });
    return {
      root: el('div', {}, wrap, none),
      // build(row, item, cells): once per new row (links, buttons); fill(cells, item): every time.
      sync(items, keyOf, fill, build) {
        syncChildren(tbody, items, keyOf, (item) => {
          const cells = headers.map(() => el('td'));
          const row = el('tr', {}, cells);
          if (build) build(row, item, cells);
          return row;
        }, (row, item) => fill(Array.from(row.cells), item, row));
        wrap.hidden = items.length === 0;
        none.hidden = items.length > 0;
      },
    };
  }

  // A <dl> of label/value pairs whose values are rewritten in place.
  function facts() {
    const dl = el('dl', { class: 'facts' });
    return {
      root: dl,
      show(pairs) {
        syncChildren(dl, pairs, ([label]) => label,
          ([label]) => el('div', {}, el('dt', { text: label }), el('dd')),
          (node, [, value]) => setText(node.lastElementChild, value));
      },
    };
  }

  // A small label whose class says what it means ("badge up").
  function badge(node, text, kind) {
    setText(node, text);
    setClass(node, `badge ${kind}`);
  }

  // --- values ----------------------------------------------------------------

  const pad = (n) => String(n).padStart(2, '0');
  const plural = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;

  function duration(ms) {
    if (ms === null || ms === undefined) return '—';
    if (ms < 1000) return `${ms} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    const s = Math.round(ms / 1000);
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  }

  function clockTime(date) {
    return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  }

  function wallTime(ms) {
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clockTime(d)}`;
  }

  const enc = encodeURIComponent;
  const serviceHash = (service, group) => `#/service/${enc(service)}/${enc(group || 'default')}`;
  const servicePath = (service, group) => `/services/${enc(service)}?group=${enc(group)}`;
  const kindOfStatus = (status) => ({ UP: 'up', OUT_OF_SERVICE: 'out', DOWN: 'down' }[status] || 'other');
  const kindOfHealth = (health) => ({ ok: 'up', isolated: 'down', unconfirmed: 'warn' }[health] || 'other');

  function serviceLink(service, group) {
    return el('a', { href: serviceHash(service, group), text: service });
  }

  // --- the API -------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message, details = {}) {
      super(message);
      this.status = status; // 0: no answer
      this.code = code;
      this.details = details; // the error object of the answer (rule, column)
    }
    get text() {
      return this.status ? `${this.status} ${this.code}: ${this.message}` : this.message;
    }
  }

  const tokens = {
    get() {
      try {
        return sessionStorage.getItem(TOKEN_KEY) || '';
      } catch {
        return '';
      }
    },
    set(token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      showTokenState();
    },
    forget() {
      sessionStorage.removeItem(TOKEN_KEY);
      showTokenState();
    },
  };

  async function request(method, path, body) {
    const headers = { Accept: 'application/json' };
    const token = tokens.get();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(API + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'same-origin',
      });
    } catch (e) {
      throw new ApiError(0, 'unreachable', `the hub did not answer (${e.message})`);
    }
    const text = await response.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!response.ok) {
      const error = (json && json.error) || {};
      throw new ApiError(response.status, error.code || `http_${response.status}`,
        error.message || text || response.statusText, error);
    }
    return json;
  }

  const read = (path) => request('GET', path);

  // An operator command: asks for the token first when this tab has none.
  // @return the API's answer; throws ApiError (status 0 when nothing was sent).
  async function command(method, path, body) {
    const token = tokens.get() || (await askToken());
    if (!token) throw new ApiError(0, 'no_token', 'no token given: nothing was sent');
    try {
      return await request(method, path, body);
    } catch (e) {
      if (e.status === 401) {
        tokens.forget();
        e.message += ' (the token was forgotten: the next command asks for one)';
      }
      throw e;
    }
  }

  // A command whose outcome is shown in the page's action line; the page is
  // refreshed at once either way. @return the answer, or null on failure.
  async function act(method, path, body) {
    try {
      const answer = await command(method, path, body);
      showResult(true, (answer && answer.message) || 'done');
      return answer;
    } catch (e) {
      showResult(false, e.text);
      return null;
    } finally {
      refreshSoon();
    }
  }

  function showResult(ok, text) {
    const line = $('action-result');
    line.hidden = false;
    setClass(line, `action-result ${ok ? 'ok' : 'error'}`);
    setText(line, text);
  }

  function hideResult() {
    $('action-result').hidden = true;
  }

  // --- the token -------------------------------------------------------------

  let tokenAnswer = null; // resolves the pending askToken()

  function askToken() {
    const dialog = $('token-dialog');
    if (tokenAnswer) tokenAnswer(null);
    return new Promise((resolve) => {
      tokenAnswer = resolve;
      $('token-input').value = '';
      if (!dialog.open) dialog.showModal();
      $('token-input').focus();
    });
  }

  function answerToken(token) {
    const resolve = tokenAnswer;
    tokenAnswer = null;
    if ($('token-dialog').open) $('token-dialog').close();
    if (resolve) resolve(token);
  }

  function setUpTokenDialog() {
    $('token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const token = $('token-input').value.trim();
      if (!token) return;
      tokens.set(token);
      answerToken(token);
    });
    $('token-cancel').addEventListener('click', () => answerToken(null));
    $('token-dialog').addEventListener('close', () => answerToken(null)); // Escape
    $('forget-token').addEventListener('click', () => {
      tokens.forget();
      showResult(true, 'token forgotten');
    });
    showTokenState();
  }

  function showTokenState() {
    const has = tokens.get() !== '';
    setText($('token-state'), has ? 'operator token set' : 'no token (asked for at the first command)');
    $('forget-token').hidden = !has;
  }

  // --- pages -------------------------------------------------------------------
  // A page is {title, nav, root, refresh()}: root is built once; refresh()
  // reads the API and updates root in place (it throws ApiError).

  function showIdentity(hub) {
    const zone = hub.zone ? ` · zone ${hub.zone}` : '';
    setText($('hub-identity'), `${hub.hub_id} · tier ${hub.tier}${zone}`);
  }

  function servicesPage() {
    const summary = facts();
    const table = dataTable(
      ['Service', 'Group', 'Instances', 'Up', 'Isolated', 'Unconfirmed', 'Out of service', 'Routing rules'],
      { empty: 'No services yet: none registered here, none with routing rules.', className: 'services' });
    const root = el('section', { 'aria-labelledby': 'services-title' },
      el('h1', { id: 'services-title', text: 'Services' }),
      summary.root, table.root);
    return {
      title: 'Services',
      nav: 'services',
      root,
      async refresh() {
        const [status, services] = await Promise.all([read('/status'), read('/services')]);
        showIdentity(status);
        const by = status.instances_by_state || {};
        summary.show([
          ['Hub', status.hub_id], ['Tier', status.tier], ['Zone', status.zone || '—'],
          ['Up for', duration(status.uptime_ms)], ['Security', status.security],
          ['Nodes', status.nodes], ['Child hubs', status.child_hubs],
          ['Services', status.services], ['Instances', status.instances],
          ['Up', by.up], ['Isolated', by.isolated], ['Unconfirmed', by.unconfirmed],
          ['Out of service', by.out_of_service], ['Static', by.static],
        ]);
        table.sync(services, (s) => `${s.service}\n${s.group}`, (cells, s) => {
          const counts = [s.group, s.instances, s.up, s.isolated, s.unconfirmed, s.out_of_service, s.routes];
          counts.forEach((value, i) => setText(cells[i + 1], value));
          setClass(cells[4], s.isolated ? 'count alert' : 'count');
          setClass(cells[5], s.unconfirmed ? 'count warn' : 'count');
          setClass(cells[6], s.out_of_service ? 'count muted' : 'count');
        }, (row, s, cells) => cells[0].append(serviceLink(s.service, s.group)));
      },
    };
  }

  // Splits a set-routes argument "[PRIORITY][,force]:RULE" as the hub does
  // (common/admin_request.cpp): where the rule text starts.
  function ruleTextOffset(arg) {
    const colon = arg.indexOf(':');
    if (colon < 0) return 0;
    let prefix = arg.slice(0, colon);
    let force = false;
    if (prefix === 'force') {
      force = true;
      prefix = '';
    } else if (prefix.endsWith(',force')) {
      force = true;
      prefix = prefix.slice(0, -6);
    }
    const isPrefix = prefix === '' ? force : /^-?\d+$/.test(prefix);
    return isPrefix ? colon + 1 : 0;
  }

  // The routing rules editor of a service: loaded with the hub's rules, left
  // alone by refreshes once edited, checked by the API's dry run before it is
  // saved; a parse error is shown under it with the rule and column.
  function routesEditor(service, group) {
    const path = `/services/${enc(service)}/routes?group=${enc(group)}`;
    const text = el('textarea', {
      id: 'routes-text', rows: 5, spellcheck: 'false', autocomplete: 'off',
      'aria-describedby': 'routes-help routes-state',
    });
    const state = el('p', { id: 'routes-state', class: 'editor-state', role: 'status' });
    const errorBox = el('div', { class: 'rule-error', role: 'alert', hidden: true });
    const valid = el('p', { class: 'valid', hidden: true });
    const parsed = el('ol', { class: 'parsed', hidden: true });
    let hubRules = null; // the rules last read from the hub, one per line
    let edited = false;

    const lines = () => text.value.split('\n').map((l) => l.trim()).filter((l) => l !== '');

    function showState() {
      const hubText = (hubRules || []).join('\n');
      if (!edited) setText(state, hubRules && hubRules.length ? 'The hub\'s rules.' : 'No rules: every instance is served to every consumer.');
      else if (lines().join('\n') === hubText) setText(state, 'Edited, same as the hub\'s rules.');
      else setText(state, 'Edited, not saved.');
    }

    function clearOutcome() {
      valid.hidden = true;
      errorBox.hidden = true;
      errorBox.replaceChildren();
      parsed.hidden = true;
      parsed.replaceChildren();
    }

    // Shows the API's error under the editor, pointing at the rule and column
    // it names, and selects that rule in the text.
    function showError(e) {
      clearOutcome();
      errorBox.append(el('p', { class: 'message', text: e.text }));
      const rule = e.details && e.details.rule;
      const all = lines();
      if (rule && all[rule - 1] !== undefined) {
        const line = all[rule - 1];
        const column = e.details.column || 0;
        const caret = column > 0 ? `${' '.repeat(ruleTextOffset(line) + column - 1)}^` : '^'.repeat(line.length);
        errorBox.append(el('p', { text: `Rule ${rule}${column ? `, column ${column}` : ''}:` }),
          el('pre', {}, el('code', { text: `${line}\n${caret}` })));
        const start = text.value.indexOf(line);
        if (start >= 0) text.setSelectionRange(start, start + line.length);
      }
      errorBox.hidden = false;
    }

    function showParsed(answer) {
      clearOutcome();
      const rules = answer.rules || [];
      parsed.append(...rules.map((r) => el('li', {},
        el('code', { text: r.text }),
        ` priority ${r.priority}${r.force ? ', force' : ''}${r.denies_all ? ', denies every instance' : ''}`)));
      parsed.hidden = rules.length === 0;
    }

    async function dryRun() {
      const answer = await command('PUT', `${path}&dry_run=1`, { rules: lines() });
      showParsed(answer);
      return answer;
    }

    async function check() {
      try {
        const answer = await dryRun();
        const count = (answer.rules || []).length;
        setText(valid, `Valid: ${plural(count, 'rule')}, as the agents will read ${count === 1 ? 'it' : 'them'} (nothing was saved).`);
        valid.hidden = false;
      } catch (e) {
        showError(e);
      }
    }

    async function save() {
      try {
        await dryRun();
      } catch (e) {
        showError(e);
        return;
      }
      const answer = await act('PUT', path, { rules: lines() });
      if (answer) {
        edited = false;
        hubRules = null; // loaded again by the refresh act() asked for
        clearOutcome();
      }
    }

    function revert() {
      edited = false;
      text.value = (hubRules || []).join('\n');
      clearOutcome();
      showState();
    }

    text.addEventListener('input', () => {
      edited = true;
      showState();
    });

    const root = el('section', { class: 'routes-editor', 'aria-labelledby': 'routes-editor-title' },
      el('h3', { id: 'routes-editor-title', text: 'Edit the rules' }),
      el('p', { id: 'routes-help', class: 'help' },
        'One rule a line, as ', el('code', { text: 'cascadectl set-routes' }), ' takes them: ',
        el('code', { text: '[PRIORITY][,force]:CONSUMER => PROVIDERS' }), ', e.g. ',
        el('code', { text: '10:zone = dc1 => zone = dc1' }),
        '. Saving replaces every rule of the service; an empty editor removes them all.'),
      el('label', { for: 'routes-text', class: 'visually-hidden', text: 'Routing rules' }),
      text, state,
      el('p', { class: 'buttons' },
        el('button', { type: 'button', dataset: { action: 'check-routes' }, onclick: check, text: 'Check' }),
        el('button', { type: 'button', dataset: { action: 'save-routes' }, class: 'primary', onclick: save, text: 'Save' }),
        el('button', { type: 'button', dataset: { action: 'revert-routes' }, onclick: revert, text: 'Revert to the hub\'s rules' })),
      errorBox, valid, parsed);

    return {
      root,
      // The hub's rules now: into the editor unless the operator edited it.
      update(rules) {
        const changed = hubRules === null || rules.join('\n') !== hubRules.join('\n');
        hubRules = rules.slice();
        if (!edited && changed) text.value = rules.join('\n');
        showState();
      },
    };
  }

  function servicePage(service, group) {
    const summary = facts();
    const instancePath = (id) => `/services/${enc(service)}/instances/${enc(id)}`;
    const groupArg = `?group=${enc(group)}`;
    const notFound = el('p', { class: 'empty', hidden: true });
    const instances = dataTable(
      ['Instance', 'Address', 'Served', 'Reported', 'Health', 'Reason', 'Tier', 'Zone', 'Weight',
        'Lease left', 'Owner', 'Operator'],
      { empty: 'No instances.', className: 'instances' });
    const rules = dataTable(['#', 'Rule', 'Priority', 'Force', 'Enabled'],
      { empty: 'No routing rules.', className: 'rules' });
    const editor = routesEditor(service, group);

    function buildRow(row, instance, cells) {
      const id = instance.id;
      const button = (action, label, method, suffix) => el('button', {
        type: 'button', dataset: { action }, text: label,
        onclick: () => act(method, `${instancePath(id)}/${suffix}${groupArg}`),
      });
      cells[11].append(el('span', { class: 'buttons' },
        button('out-of-service', 'Out of service', 'POST', 'out-of-service'),
        button('in-service', 'In service', 'DELETE', 'out-of-service'),
        button('readmit', 'Readmit', 'POST', 'readmit')));
      cells[2].append(el('span'));
      cells[4].append(el('span'));
    }

    function fillRow(cells, i, row) {
      setText(cells[0], i.id);
      setText(cells[1], i.address);
      badge(cells[2].firstChild, i.status, kindOfStatus(i.status));
      setText(cells[3], i.reported_status);
      badge(cells[4].firstChild, i.health, kindOfHealth(i.health));
      setText(cells[5], i.health_reason);
      setText(cells[6], i.tier);
      setText(cells[7], i.zone || '—');
      setText(cells[8], i.weight);
      setText(cells[9], i.static ? 'static' : i.held ? 'held (eviction protection)' : duration(i.lease_ms));
      setText(cells[10], i.static ? '(static)' : i.owner);
      const [out, back, readmit] = cells[11].firstChild.children;
      out.disabled = i.out_of_service;
      back.disabled = !i.out_of_service;
      readmit.disabled = i.health !== 'isolated';
      row.dataset.status = i.status;
    }

    const root = el('section', { 'aria-labelledby': 'service-title' },
      el('p', { class: 'crumbs' }, el('a', { href: '#/services', text: 'Services' }), ' / '),
      el('h1', { id: 'service-title' }, el('span', { text: service }),
        group === 'default' ? null : el('span', { class: 'group', text: ` (group ${group})` })),
      notFound, summary.root,
      el('h2', { text: 'Instances' }), instances.root,
      el('h2', { text: 'Routing rules' }), rules.root, editor.root);

    return {
      title: service,
      nav: 'services',
      root,
      async refresh() {
        let s;
        try {
          s = await read(`${servicePath(service, group)}&all=1`);
          notFound.hidden = true;
        } catch (e) {
          if (e.code !== 'unknown_service') throw e;
          // Rules may come before any instance: the editor still works.
          s = await read(`/services/${enc(service)}/routes?group=${enc(group)}`);
          s.instances = [];
          setText(notFound, `The hub has no instance of ${service} in group ${group} (yet).`);
          notFound.hidden = false;
        }
        summary.show([
          ['Version', s.version], ['Up', s.up ?? 0], ['Isolated', s.isolated ?? 0],
          ['Unconfirmed', s.unconfirmed ?? 0], ['Out of service', s.out_of_service ?? 0],
        ]);
        instances.sync(s.instances, (i) => i.id, fillRow, buildRow);
        const routes = (s.routes || []).map((r, n) => ({ ...r, n: n + 1 }));
        rules.sync(routes, (r) => `${r.n}\n${r.text}`, (cells, r) => {
          [r.n, r.text, r.priority, r.force ? 'yes' : 'no', r.enabled ? 'yes' : 'no']
            .forEach((value, n) => setText(cells[n], value));
        });
        editor.update(s.rules || []);
      },
    };
  }

  // The hub in its tree: its upstreams above it, its child hubs and agents below.
  function topologyPage() {
    const card = (className) => el('div', { class: `node ${className}` },
      el('p', { class: 'name' }), el('p', { class: 'detail' }));
    const upstreams = el('ul', { class: 'upstreams' });
    const self = card('self');
    const children = el('ul', { class: 'children' });
    const agents = el('li', { class: 'leaf' });
    const childHubs = el('ul', { class: 'hubs' });
    children.append(el('li', { class: 'child-hubs' }, childHubs), agents);
    const selfItem = el('li', {}, self, children);
    const below = el('ul', {}, selfItem);
    const upstreamLevel = el('li', { class: 'upstream-level' }, upstreams, below);
    const tree = el('ul', { class: 'tree', 'aria-label': 'Hub tree' });
    const extra = facts();

    const fill = (node, name, detail) => {
      setText(node.querySelector('.name'), name);
      setText(node.querySelector('.detail'), detail);
    };

    const root = el('section', { 'aria-labelledby': 'topology-title' },
      el('h1', { id: 'topology-title', text: 'Topology' }),
      el('p', { class: 'help', text: 'Upper tiers at the top, this hub in the middle, lower-tier hubs and agents that beat here below it.' }),
      tree, extra.root);

    return {
      title: 'Topology',
      nav: 'topology',
      root,
      async refresh() {
        const t = await read('/topology');
        showIdentity(t);
        syncChildren(upstreams, t.upstreams, (u) => u.endpoint,
          () => el('li', {}, card('upstream')),
          (li, u) => {
            const state = [u.current ? 'current' : 'standby', u.reachable ? 'reachable' : 'unreachable'];
            setClass(li.firstChild, `node upstream ${u.reachable ? 'reachable' : 'unreachable'}`);
            fill(li.firstChild, `${u.hub_id ?? '(no answer yet)'} · upper tier`,
              `${u.endpoint} · ${state.join(', ')} · last reply ${u.last_reply_ms === null ? 'never' : `${duration(u.last_reply_ms)} ago`} · lease ${duration(u.lease_ms)}`);
          });
        // With upstreams this hub hangs below them, else it is the root.
        if (t.upstreams.length) {
          if (selfItem.parentNode !== below) below.append(selfItem);
          if (tree.firstChild !== upstreamLevel) tree.replaceChildren(upstreamLevel);
        } else if (tree.firstChild !== selfItem) {
          tree.replaceChildren(selfItem);
        }
        fill(self, `${t.hub_id} · tier ${t.tier}${t.zone ? ` · zone ${t.zone}` : ''} · this hub`,
          `epoch ${t.epoch} · ${plural(t.children.length, 'child hub')} · ${plural(t.agents, 'agent')}`);
        childHubs.parentNode.hidden = t.children.length === 0;
        syncChildren(childHubs, t.children, (c) => c.hub_id,
          () => el('li', {}, card('child')),
          (li, c) => {
            setClass(li.firstChild, `node child${c.held ? ' held' : ''}`);
            fill(li.firstChild, `${c.hub_id} · tier ${c.tier}`,
              `${c.instances} instances · lease ${c.held ? 'held by eviction protection' : duration(c.lease_ms)}`);
          });
        setText(agents, `${plural(t.agents, 'agent')} beating here`);
        extra.show([['Services cached from the upper tier', t.cross_tier_entries]]);
      },
    };
  }

  function isolatedPage() {
    const isolated = dataTable(
      ['Service', 'Group', 'Instance', 'Address', 'Reason', 'Owner', 'Readmitted in', 'Operator'],
      { empty: 'No instance is isolated by this hub.', className: 'isolated' });
    const unconfirmed = dataTable(
      ['Service', 'Group', 'Instance', 'Address', 'Reason', 'Owner', 'Held for', 'Hold'],
      { empty: 'No instance is held by eviction protection.', className: 'unconfirmed' });
    const isolatedCount = el('p', { class: 'count-line' });
    const unconfirmedCount = el('p', { class: 'count-line' });
    const counted = (node, list, what) => setText(node,
      `${list.total} ${what}${list.truncated ? ` (the first ${list.instances.length} shown)` : ''}`);
    const key = (i) => `${i.service}\n${i.group}\n${i.id}`;

    const root = el('section', { 'aria-labelledby': 'isolated-title' },
      el('h1', { id: 'isolated-title', text: 'Isolated and unconfirmed instances' }),
      el('h2', { text: 'Isolated' }),
      el('p', { class: 'help', text: 'Callers reported them failing; this hub serves them isolated until they are readmitted. Isolations a lower tier holds are listed by that hub.' }),
      isolatedCount, isolated.root,
      el('h2', { text: 'Unconfirmed' }),
      el('p', { class: 'help', text: 'Their owner\'s lease ran out while eviction protection holds it: served unconfirmed, not expired.' }),
      unconfirmedCount, unconfirmed.root);

    return {
      title: 'Isolated',
      nav: 'isolated',
      root,
      async refresh() {
        const [iso, unc] = await Promise.all([read('/isolated'), read('/unconfirmed')]);
        counted(isolatedCount, iso, 'isolated');
        counted(unconfirmedCount, unc, 'unconfirmed');
        isolated.sync(iso.instances, key, (cells, i) => {
          [i.group, i.id, i.address, i.reason, i.node, duration(i.readmit_in_ms)]
            .forEach((value, n) => setText(cells[n + 1], value));
        }, (row, i, cells) => {
          cells[0].append(serviceLink(i.service, i.group));
          cells[7].append(el('button', {
            type: 'button', dataset: { action: 'readmit' }, text: 'Readmit',
            onclick: () => act('POST', `/services/${enc(i.service)}/instances/${enc(i.id)}/readmit?group=${enc(i.group)}`),
          }));
        });
        unconfirmed.sync(unc.instances, key, (cells, i) => {
          [i.group, i.id, i.address, i.reason, i.node, duration(i.held_for_ms), i.hold]
            .forEach((value, n) => setText(cells[n + 1], value));
        }, (row, i, cells) => cells[0].append(serviceLink(i.service, i.group)));
      },
    };
  }

  function switchesPage() {
    const protectionState = el('span');
    const notifyState = el('span');
    const share = el('input', { id: 'notify-share', type: 'number', min: 1, max: 100, step: 1, value: 10 });
    let shareEdited = false;
    share.addEventListener('input', () => { shareEdited = true; });

    const protection = (enabled) => act('PUT', '/switches/eviction-protection', { enabled });
    const notify = async (enabled) => {
      const body = { enabled };
      if (enabled) {
        const percent = Number(share.value);
        if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
          showResult(false, 'the share is a whole percentage from 1 to 100');
          return;
        }
        body.share_percent = percent;
      }
      if (await act('PUT', '/switches/notify', body)) shareEdited = false;
    };
    const onOff = (action, handler) => [
      el('button', { type: 'button', dataset: { action: `${action}-on` }, text: 'Turn on', onclick: () => handler(true) }),
      el('button', { type: 'button', dataset: { action: `${action}-off` }, text: 'Turn off', onclick: () => handler(false) }),
    ];
    const protectionButtons = onOff('eviction-protection', protection);
    const notifyButtons = onOff('notify', notify);

    const root = el('section', { 'aria-labelledby': 'switches-title' },
      el('h1', { id: 'switches-title', text: 'Switches' }),
      el('section', { class: 'switch', 'aria-labelledby': 'protection-title' },
        el('h2', { id: 'protection-title' }, 'Eviction protection ', protectionState),
        el('p', { class: 'help', text: 'On: a node whose lease runs out is held (its instances served unconfirmed) while expiring it would take a service or the registry over its share of expiries, or while its source looks cut off. Off: leases expire when they run out, and held nodes are released.' }),
        el('p', { class: 'buttons' }, protectionButtons)),
      el('section', { class: 'switch', 'aria-labelledby': 'notify-title' },
        el('h2', { id: 'notify-title' }, 'Notify switch ', notifyState),
        el('p', { class: 'help', text: 'On: isolations are pushed to only a share of a service\'s consumers per push; the others learn at their next beat. Off: every consumer is told at once.' }),
        el('p', {}, el('label', { for: 'notify-share', text: 'Share of consumers per push (%) ' }), share),
        el('p', { class: 'buttons' }, notifyButtons)));

    return {
      title: 'Switches',
      nav: 'switches',
      root,
      async refresh() {
        const s = await read('/switches');
        const ep = s['eviction-protection'];
        const n = s.notify;
        badge(protectionState, ep.enabled ? 'on' : 'off', ep.enabled ? 'up' : 'out');
        badge(notifyState, n.enabled ? `on, ${n.share_percent}% per push` : 'off', n.enabled ? 'up' : 'out');
        protectionButtons[0].disabled = ep.enabled;
        protectionButtons[1].disabled = !ep.enabled;
        notifyButtons[1].disabled = !n.enabled;
        if (!shareEdited && document.activeElement !== share) share.value = String(n.share_percent);
      },
    };
  }

  function auditPage() {
    const table = dataTable(
      ['#', 'Time', 'Actor', 'Operation', 'Service', 'Instance', 'Outcome', 'Answer', 'Key', 'Peer'],
      { empty: 'No operator command yet.', className: 'audit' });
    let befores = [null]; // the `before` of each page shown so far: the last is this one
    let nextBefore = null;
    const pageLabel = el('span', { class: 'page-label' });
    const limit = el('select', { id: 'audit-limit' },
      [10, 20, 50, 100, 500].map((n) => el('option', { value: n, text: n, selected: n === 50 })));
    const newest = el('button', { type: 'button', dataset: { action: 'audit-newest' }, text: 'Newest' });
    const newer = el('button', { type: 'button', dataset: { action: 'audit-newer' }, text: '← Newer' });
    const older = el('button', { type: 'button', dataset: { action: 'audit-older' }, text: 'Older →' });
    newest.addEventListener('click', () => { befores = [null]; refreshSoon(); });
    newer.addEventListener('click', () => { if (befores.length > 1) befores.pop(); refreshSoon(); });
    older.addEventListener('click', () => { if (nextBefore !== null) befores.push(nextBefore); refreshSoon(); });
    limit.addEventListener('change', () => { befores = [null]; refreshSoon(); });

    const root = el('section', { 'aria-labelledby': 'audit-title' },
      el('h1', { id: 'audit-title', text: 'Audit log' }),
      el('p', { class: 'help', text: 'Every operator command, accepted or refused, from cascadectl or this API, newest first.' }),
      el('p', { class: 'pager' }, newest, newer, older, pageLabel,
        el('label', { for: 'audit-limit', text: ' per page ' }), limit),
      table.root);

    return {
      title: 'Audit log',
      nav: 'audit',
      root,
      async refresh() {
        const before = befores[befores.length - 1];
        const query = `?limit=${enc(limit.value)}${before === null ? '' : `&before=${enc(before)}`}`;
        const page = await read(`/audit${query}`);
        nextBefore = page.next_before;
        newest.disabled = befores.length === 1;
        newer.disabled = befores.length === 1;
        older.disabled = nextBefore === null;
        setText(pageLabel, ` page ${befores.length}`);
        table.sync(page.records, (r) => r.id, (cells, r) => {
          [r.id, wallTime(r.at_ms), r.actor, r.op,
            r.service === null ? '—' : `${r.service}${r.group && r.group !== 'default' ? ` (${r.group})` : ''}`,
            r.instance_id ?? '—', r.ok ? 'done' : 'refused', r.detail, r.key || '—', r.peer]
            .forEach((value, n) => setText(cells[n], value));
          setClass(cells[6], r.ok ? 'outcome ok' : 'outcome refused');
        });
      },
    };
  }

  // #/config: the groups this hub serves. #/config/GROUP: its values with
  // where each was set, a form to set a key, and this hub's history of the
  // group with a rollback to each version.
  const configHash = (group) => `#/config/${enc(group)}`;
  const configValue = (e) => (e.binary ? `0x${e.value_hex}` : e.value);

  function configPage() {
    const table = dataTable(['Group', 'Version', 'Keys', 'Set here', 'Bytes', 'Followers'],
      { empty: 'No config groups: set one with cascadectl config set GROUP KEY VALUE.', className: 'config' });
    const root = el('section', { 'aria-labelledby': 'config-title' },
      el('h1', { id: 'config-title', text: 'Config' }),
      el('p', { class: 'help', text: 'Groups of keys and values this hub serves to the instances that follow them: its own keys over those of the tier above.' }),
      table.root);
    return {
      title: 'Config',
      nav: 'config',
      root,
      async refresh() {
        const list = await read('/config');
        table.sync(list.groups, (g) => g.group, (cells, g) => {
          [g.version, g.keys, g.own_keys, g.bytes, g.followers].forEach((v, i) => setText(cells[i + 1], v));
        }, (row, g, cells) => cells[0].append(el('a', { href: configHash(g.group), text: g.group })));
      },
    };
  }

  function configGroupPage(group) {
    const path = `/config/${enc(group)}`;
    const summary = facts();
    const values = dataTable(['Key', 'Value', 'Tier', 'Set at hub', 'Version', ''],
      { empty: 'The group holds no key.', className: 'config-values' });
    const changesTable = dataTable(['Version', 'Time', 'Key', 'Before', 'After', 'Author', ''],
      { empty: 'No change of this group at this hub.', className: 'config-history' });
    const key = el('input', { id: 'config-key', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const value = el('input', { id: 'config-value', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const set = async (event) => {
      event.preventDefault();
      if (!key.value) {
        showResult(false, 'name the key to set');
        return;
      }
      if (await act('PUT', `${path}/keys/${enc(key.value)}`, { value: value.value })) value.value = '';
    };
    const form = el('form', { class: 'config-set', onsubmit: set },
      el('label', { for: 'config-key', text: 'Key ' }), key, ' ',
      el('label', { for: 'config-value', text: 'Value ' }), value, ' ',
      el('button', { type: 'submit', class: 'primary', dataset: { action: 'config-set' }, text: 'Set here' }));
    const root = el('section', { 'aria-labelledby': 'config-group-title' },
      el('p', { class: 'crumbs' }, el('a', { href: '#/config', text: 'Config' }), ' / '),
      el('h1', { id: 'config-group-title', text: group }),
      summary.root, values.root,
      el('h2', { text: 'Set a key at this hub' }), form,
      el('h2', { text: 'History at this hub' }), changesTable.root);
    return {
      title: `Config ${group}`,
      nav: 'config',
      root,
      async refresh() {
        let got;
        try {
          got = await read(path);
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 404) throw e;
          got = { version: 0, entries: [] };
        }
        const changes = await read(`${path}/history`);
        summary.show([['Served version', got.version || '—'], ['Keys', got.entries.length]]);
        values.sync(got.entries, (e) => e.key, (cells, e) => {
          [configValue(e), e.tier, e.hub, e.version].forEach((v, i) => setText(cells[i + 1], v));
        }, (row, e, cells) => {
          setText(cells[0], e.key);
          cells[5].append(el('button', {
            type: 'button', dataset: { action: 'config-remove' }, text: 'Remove here',
            onclick: () => act('DELETE', `${path}/keys/${enc(e.key)}`),
          }));
        });
        const shown = (v) => (v === null ? '(unset)' : v);
        changesTable.sync(changes.history, (c) => `${c.version}\n${c.key}`, (cells, c) => {
          [c.version, c.wall_ms ? wallTime(c.wall_ms) : '—', c.key, shown(c.old), shown(c.new), c.author]
            .forEach((v, i) => setText(cells[i], v));
        }, (row, c, cells) => cells[6].append(el('button', {
          type: 'button', dataset: { action: 'config-rollback' }, text: 'Roll back to this',
          onclick: () => act('POST', `${path}/rollback`, { version: c.version }),
        })));
      },
    };
  }

  function notFoundPage(hash) {
    return {
      title: 'No such page',
      nav: '',
      root: el('section', {}, el('h1', { text: 'No such page' }),
        el('p', {}, `The console has no page ${hash}. `, el('a', { href: '#/services', text: 'Services' }))),
      async refresh() {},
    };
  }

  // #/services, #/service/NAME[/GROUP], #/topology, #/isolated, #/switches,
  // #/audit, #/config[/GROUP]
  function pageFor(hash) {
    let parts;
    try {
      parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    } catch {
      return notFoundPage(hash);
    }
    const [name, ...rest] = parts;
    switch (name) {
      case '':
      case 'services': return servicesPage();
      case 'service':
        if (rest[0]) return servicePage(rest[0], rest[1] || 'default');
        break;
      case 'topology': return topologyPage();
      case 'isolated': return isolatedPage();
      case 'switches': return switchesPage();
      case 'audit': return auditPage();
      case 'config':
        return rest[0] ? configGroupPage(rest[0]) : configPage();
      default: break;
    }
    return notFoundPage(hash);
  }

  // --- the refresh loop ----------------------------------------------------------
  // One refresh at a time, of the page shown; the next one POLL_MS after it
  // ends (or at once when a command or a new page asks for it).

  const view = { page: null, timer: 0, busy: false, again: false };

  function schedule(delay) {
    clearTimeout(view.timer);
    view.timer = setTimeout(tick, delay);
  }

  function refreshSoon() {
    schedule(0);
  }

  async function tick() {
    if (view.busy) {
      view.again = true;
      return;
    }
    if (document.hidden) {
      schedule(POLL_MS); // a tab nobody looks at does not poll
      return;
    }
    const page = view.page;
    view.busy = true;
    try {
      await page.refresh();
      if (page === view.page) showRefresh(null);
    } catch (e) {
      if (!(e instanceof ApiError)) console.error(e); // a bug of this script: say so loudly
      if (page === view.page) showRefresh(e instanceof ApiError ? e : new ApiError(0, 'bug', String(e)));
    } finally {
      view.busy = false;
    }
    const again = view.again || page !== view.page;
    view.again = false;
    schedule(again ? 0 : POLL_MS);
  }

  function showRefresh(error) {
    const line = $('refresh-state');
    const button = $('refresh-token');
    if (!error) {
      setClass(line, 'refresh');
      setText($('refresh-text'), `Up to date, ${clockTime(new Date())}`);
      button.hidden = true;
      return;
    }
    setClass(line, 'refresh error');
    const hint = error.status === 401 ? ' (reads from this address need a token)' : '';
    setText($('refresh-text'), `Not refreshed: ${error.text}${hint}`);
    button.hidden = error.status !== 401;
  }

  function show() {
    const page = pageFor(location.hash);
    view.page = page;
    document.title = `${page.title} · cascade hub`;
    $('page').replaceChildren(page.root);
    for (const link of document.querySelectorAll('nav a[data-page]')) {
      if (link.dataset.page === page.nav) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    hideResult();
    refreshSoon();
  }

  function start() {
    setUpTokenDialog();
    const line = $('refresh-state');
    line.replaceChildren(el('span', { id: 'refresh-text', text: 'Loading…' }), ' ',
      el('button', {
        id: 'refresh-token', type: 'button', hidden: true, text: 'Enter a token',
        onclick: async () => { if (await askToken()) refreshSoon(); },
      }));
    window.addEventListener('hashchange', show);
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshSoon(); });
    if (!location.hash) history.replaceState(null, '', '#/services');
    read('/status').then(showIdentity, () => {}); // the refresh line says why when it fails
    show();
  }

  start();
})();
