// The ops console's review page (issue 27): lays the boxes of the values
// read over the page images, highlights a field's box as it gets focus,
// re-runs the template's arithmetic checks as the person types (the same
// rules as pkg/template/checks.go, in exact rational arithmetic like its
// big.Rat), and gives the keyboard shortcuts. The server decides again on
// approval; this file only helps the person see it coming.
'use strict';

(function () {
  // ---- exact decimals: [numerator, denominator] as BigInt, denominator > 0

  function gcd(a, b) {
    a = a < 0n ? -a : a;
    b = b < 0n ? -b : b;
    while (b) { [a, b] = [b, a % b]; }
    return a || 1n;
  }
  function norm(n, d) {
    if (d < 0n) { n = -n; d = -d; }
    const g = gcd(n, d);
    return [n / g, d / g];
  }
  // parse reads the xsd:decimal lexical space the result JSON holds (as
  // order.CanonicalDecimal accepts it); null for "" or anything else.
  function parse(s) {
    s = (s || '').trim();
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(s)) return null;
    const neg = s[0] === '-';
    s = s.replace(/^[+-]/, '');
    const [i, f = ''] = s.split('.');
    const n = BigInt((i || '0') + f);
    return norm(neg ? -n : n, 10n ** BigInt(f.length));
  }
  const add = (a, b) => norm(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
  const sub = (a, b) => norm(a[0] * b[1] - b[0] * a[1], a[1] * b[1]);
  const mul = (a, b) => norm(a[0] * b[0], a[1] * b[1]);
  const quo = (a, b) => norm(a[0] * b[1], a[1] * b[0]);
  const abs = (a) => [a[0] < 0n ? -a[0] : a[0], a[1]];
  const cmp = (a, b) => { const d = sub(a, b)[0]; return d < 0n ? -1 : d > 0n ? 1 : 0; };
  const ZERO = [0n, 1n], ONE = [1n, 1n], HUNDRED = [100n, 1n];
  // fmt writes a decimal without trailing zeros, up to 12 places (as the
  // checks' dec does).
  function fmt(a) {
    const neg = a[0] < 0n;
    let n = neg ? -a[0] : a[0];
    const whole = n / a[1];
    let rest = n % a[1], frac = '';
    for (let i = 0; i < 12 && rest; i++) { rest *= 10n; frac += String(rest / a[1]); rest %= a[1]; }
    frac = frac.replace(/0+$/, '');
    const s = whole.toString() + (frac ? '.' + frac : '');
    return neg && s !== '0' ? '-' + s : s;
  }

  // ---- the form

  const form = document.getElementById('approve-form');
  const byRole = (root, role) => root.querySelector('[data-role="' + role + '"]');
  const value = (el) => (el ? el.value.trim() : '');

  // boxOf is the field's box (a header field, or an item's cell): its
  // input, marks and messages.
  const boxOf = (el) => el && el.closest('.field, td');
  function liveOf(el) {
    const box = boxOf(el);
    return box && box.querySelector('.live');
  }
  // quiet hides the server's word on a field's old value (what failed,
  // what the order's checks flagged): the person changed it.
  function quiet(el) {
    const box = boxOf(el);
    if (box) box.querySelectorAll('.problem, .warning, .mark').forEach((s) => { s.hidden = true; });
  }
  function mark(el, text) {
    const live = liveOf(el);
    if (!el || !live) return;
    live.textContent = text || '';
    live.title = text || '';
    el.classList.toggle('off', !!text);
  }

  function rows() {
    return Array.from(form.querySelectorAll('tr.item')).filter((tr) => {
      const del = tr.querySelector('input.del');
      const blank = Array.from(tr.querySelectorAll('input:not(.del)')).every((i) => !i.value.trim());
      tr.classList.toggle('deleted', !!(del && del.checked));
      return !(del && del.checked) && !blank;
    });
  }

  // checks runs the template's checks on the form's values and marks what
  // fails; it returns the failures in words.
  function checks() {
    const on = new Set((form.dataset.checks || '').split(' ').filter(Boolean));
    const tol = parse(form.dataset.tolerance) || [1n, 200n];
    const fails = [];
    form.querySelectorAll('input[data-role]').forEach((el) => mark(el, ''));
    form.querySelectorAll('input.num').forEach((el) => {
      if (el.value.trim() && parse(el.value) === null) {
        mark(el, 'not a number: write it without grouping, with a dot (1234.50)');
        fails.push((el.getAttribute('aria-label') || el.name) + ': not a number');
      }
    });
    const compare = (check, got, how, printed, el, exact) => {
      const d = abs(sub(got, printed));
      if (cmp(d, exact ? ZERO : tol) > 0) {
        const text = how + ' = ' + fmt(got) + ', printed ' + fmt(printed) + ' (difference ' + fmt(d) + ')';
        fails.push(check + ': ' + text);
        mark(el, text);
      }
    };
    const items = rows();
    let sum = ZERO, everyAmount = items.length > 0, quantities = ZERO, everyQuantity = true;
    items.forEach((tr, i) => {
      const q = parse(value(byRole(tr, 'quantity'))), p = parse(value(byRole(tr, 'price')));
      const basis = parse(value(byRole(tr, 'basis'))), amountEl = byRole(tr, 'amount'), a = parse(value(amountEl));
      if (q === null) everyQuantity = false; else quantities = add(quantities, q);
      if (a === null) { everyAmount = false; return; }
      sum = add(sum, a);
      if (!on.has('line_amount') || q === null || p === null) return;
      let want = mul(q, p);
      if (basis && basis[0] !== 0n) want = quo(want, basis);
      const dp = parse(tr.dataset.discountPercent), da = parse(tr.dataset.discountAmount);
      if (dp) want = mul(want, sub(ONE, quo(dp, HUNDRED)));
      if (da) want = sub(want, da);
      compare('line_amount', want, 'line ' + (i + 1) + ': ' + fmt(q) + ' × ' + fmt(p), a, amountEl);
    });
    totals(on, items, sum, everyAmount, quantities, everyQuantity, compare);
    summary(fails);
    return fails;
  }

  function totals(on, items, sum, everyAmount, quantities, everyQuantity, compare) {
    const netEl = byRole(form, 'net'), taxEl = byRole(form, 'tax'), grossEl = byRole(form, 'gross');
    const net = parse(value(netEl)), tax = parse(value(taxEl)), gross = parse(value(grossEl));
    const d = form.dataset;
    const lines = parse(d.linesAmount), charges = parse(d.charges) || ZERO, allowances = parse(d.allowances) || ZERO;
    const extra = parse(d.extraCharges), printedQuantity = parse(d.totalQuantity);
    const adjusted = (base) => sub(add(base, charges), allowances);
    if (on.has('quantity_total') && items.length && everyQuantity && printedQuantity) {
      compare('quantity_total', quantities, 'sum of ' + items.length + ' item quantities', printedQuantity, null, true);
    }
    if (on.has('net_total') && everyAmount) {
      if (lines) compare('net_total', sum, 'sum of ' + items.length + ' line amounts', lines, netEl);
      else if (net) compare('net_total', adjusted(sum), 'sum of ' + items.length + ' line amounts', net, netEl);
    }
    if (on.has('net_total') && lines && net) compare('net_total', adjusted(lines), 'lines total', net, netEl);
    if (on.has('gross_total') && net && tax && gross) {
      let got = add(net, tax);
      if (extra) got = add(got, extra);
      compare('gross_total', got, 'net + tax' + (extra ? ' + extra charges' : ''), gross, grossEl);
    }
  }

  function summary(fails) {
    const box = document.getElementById('checks');
    box.textContent = '';
    const p = document.createElement('p');
    if (!fails.length) {
      p.className = 'ok';
      p.id = 'closes';
      p.textContent = 'The order closes: every check passes.';
      box.appendChild(p);
      return;
    }
    p.className = 'problem';
    p.id = 'does-not-close';
    p.textContent = 'Does not close (approve needs “confirm the difference” and a comment):';
    const ul = document.createElement('ul');
    fails.forEach((f) => { const li = document.createElement('li'); li.textContent = f; ul.appendChild(li); });
    box.append(p, ul);
  }

  // ---- boxes on the page images

  function layBoxes() {
    document.querySelectorAll('figure.page').forEach((fig) => {
      const img = fig.querySelector('img');
      if (img && fig.dataset.w && fig.dataset.h) img.style.aspectRatio = fig.dataset.w + ' / ' + fig.dataset.h;
      if (img) img.addEventListener('error', () => fig.classList.add('failed'));
    });
    document.querySelectorAll('.box').forEach((b) => {
      const [l, t, w, h] = b.dataset.box.split(',').map(Number);
      Object.assign(b.style, { left: l + '%', top: t + '%', width: w + '%', height: h + '%' });
      b.addEventListener('click', () => {
        const el = document.getElementById(b.dataset.for);
        if (el) el.focus();
      });
    });
  }

  function highlight(id) {
    let first = null;
    document.querySelectorAll('.box').forEach((b) => {
      const on = b.dataset.for === id;
      b.classList.toggle('hl', on);
      if (on && !first) first = b;
    });
    if (first) first.scrollIntoView({ block: 'center', inline: 'nearest' });
  }

  // ---- rows and keys

  function addRow() {
    const body = form.querySelector('#items tbody');
    const last = body.querySelector('tr.item:last-child');
    const count = document.getElementById('items-count');
    const n = Number(count.value);
    const row = last.cloneNode(true);
    row.id = 'item-' + n;
    row.dataset.index = String(n);
    row.dataset.discountPercent = '';
    row.dataset.discountAmount = '';
    row.classList.remove('accepted', 'deleted');
    row.querySelectorAll('.problem, .warning, .mark').forEach((s) => s.remove());
    row.querySelectorAll('td').forEach((td) => td.classList.remove('bad', 'warned'));
    row.querySelectorAll('input').forEach((i) => {
      i.name = i.name.replace(/^i\d+\./, 'i' + n + '.');
      if (i.id) i.id = i.id.replace(/^f-i\d+-/, 'f-i' + n + '-');
      i.value = '';
      i.checked = false;
      i.classList.remove('off');
    });
    row.querySelectorAll('.live').forEach((s) => { s.textContent = ''; });
    body.appendChild(row);
    count.value = String(n + 1);
    return row;
  }

  function firstInput(el) { return el && el.querySelector('input:not([type=hidden]):not(.del)'); }

  // accept marks the row as looked at and goes to the next one (a new one
  // after the last).
  function accept(row) {
    row.classList.add('accepted');
    const next = row.nextElementSibling || addRow();
    const input = firstInput(next);
    if (input) input.focus();
  }

  function nextField(el) {
    const all = Array.from(form.querySelectorAll('input:not([type=hidden]), textarea, button'));
    const i = all.indexOf(el);
    if (i >= 0 && i + 1 < all.length) all[i + 1].focus();
  }

  // The form is sent only when the person asked to approve (the button or
  // a shortcut), and once: Enter in a field accepts it instead of sending
  // the form, however the browser delivers the key.
  let intent = false, sent = false;

  function approve() {
    const fails = checks();
    const confirm = document.getElementById('confirm'), comment = document.getElementById('comment');
    if (fails.length && !(confirm.checked && comment.value.trim())) {
      (confirm.checked ? comment : confirm).focus();
      return false;
    }
    return true;
  }

  function keys(e) {
    const key = e.key.toLowerCase();
    if ((e.key === 'Enter' && (e.ctrlKey || e.metaKey)) || (e.altKey && key === 'a')) {
      e.preventDefault();
      intent = true;
      form.requestSubmit(document.getElementById('approve'));
    } else if (e.altKey && key === 'n') {
      e.preventDefault();
      firstInput(addRow()).focus();
    } else if (e.altKey && key === 'r') {
      e.preventDefault();
      document.getElementById('release-form').requestSubmit();
    } else if (e.altKey && key === 'd') {
      e.preventDefault();
      submitBy(document.getElementById('draft'));
    } else if (learnKeys(e)) {
      // a mapping's key
    } else if (e.key === 'Enter' && e.target.tagName === 'INPUT' && e.target.type !== 'submit' && form.contains(e.target)) {
      e.preventDefault();
      const row = e.target.closest('tr.item');
      if (row) accept(row); else nextField(e.target);
    }
  }

  // submitBy sends the form of button as that button does (its own
  // action, for the draft and mapping buttons).
  function submitBy(button) {
    if (button && button.form) button.form.requestSubmit(button);
  }

  // learnKeys: Enter in a mapping's field adds that mapping; Alt+M goes to
  // the first unknown key. It reports whether it took the key.
  function learnKeys(e) {
    const n = e.target.dataset ? e.target.dataset.map : undefined;
    const inMapping = e.target.closest && e.target.closest('.mapping');
    if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey && inMapping && e.target.tagName === 'INPUT') {
      e.preventDefault();
      const add = inMapping.querySelector('button[name=map]');
      submitBy(add || document.getElementById('map-' + n + '-add'));
      return true;
    }
    if (e.altKey && e.key.toLowerCase() === 'm') {
      const first = document.querySelector('[data-map]');
      if (first) {
        e.preventDefault();
        first.focus();
        return true;
      }
    }
    return false;
  }

  function finishedKeys(e) {
    const sample = document.getElementById('sample-form');
    const key = e.key.toLowerCase();
    if (sample && e.altKey && key === 's') {
      e.preventDefault();
      sample.requestSubmit();
    } else if (e.altKey && key === 'd' && document.getElementById('draft-form')) {
      e.preventDefault();
      document.getElementById('draft-form').requestSubmit();
    } else if (e.altKey && key === 'p' && document.getElementById('push-form')) {
      e.preventDefault();
      submitBy(document.querySelector('#push-form button[name=scope]'));
    } else {
      learnKeys(e);
    }
  }

  function start() {
    layBoxes();
    if (!form) {
      document.addEventListener('keydown', finishedKeys);
      // A document waiting for a mapping: start at the first one.
      const waiting = document.querySelector('#map-form [data-map]');
      if (waiting) waiting.focus();
      return;
    }
    form.addEventListener('focusin', (e) => { if (e.target.id) highlight(e.target.id); });
    form.addEventListener('input', (e) => {
      // The server's word on the old values: on this field, and on every
      // amount, whose checks the page now runs live.
      if (e.target.dataset.map !== undefined || /^map-/.test(e.target.name)) return; // a mapping's own input
      quiet(e.target);
      form.querySelectorAll('input[data-role]').forEach((el) => {
        const box = boxOf(el);
        if (box) box.querySelectorAll('.problem, .mark.err').forEach((s) => { s.hidden = true; });
      });
      checks();
    });
    form.addEventListener('change', checks);
    // A click on the button (mouse, or Enter/Space on the focused button);
    // not the click a browser fires at it for Enter in a text field.
    const button = document.getElementById('approve');
    button.addEventListener('click', (e) => { intent = e.detail > 0 || document.activeElement === button; });
    form.addEventListener('submit', (e) => {
      if (e.submitter && e.submitter.hasAttribute('formaction')) {
        // Draft or map: the values go along as they are, not approved.
        if (sent) e.preventDefault();
        sent = true;
        return;
      }
      const go = intent && !sent && approve();
      intent = false;
      if (!go) {
        e.preventDefault();
        return;
      }
      sent = true;
    });
    document.addEventListener('keydown', keys);
    document.getElementById('add-row').addEventListener('click', () => firstInput(addRow()).focus());
    const release = document.getElementById('release-form');
    release.addEventListener('submit', (e) => {
      if (!window.confirm('Release the rejection? The client is told the document was rejected.')) e.preventDefault();
    });
    checks();
    // Start where the work is: the first field something failed at.
    const first = form.querySelector('.field.bad input, td.bad input') || firstInput(form);
    if (first) first.focus();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
