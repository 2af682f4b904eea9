import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  BUDGET_MS,
  DefinitionsCollector,
  DefinitionsHost,
  DefinitionsParams,
  definitionText,
  MAX_NAMES,
  namesNearCursor,
  Position,
  Target,
} from '../src/definitions';
import { isServerKey } from '../src/settings';

const APP = [
  'from billing import Invoice, make_invoice',
  '',
  'def unrelated(x):',
  '    return helper_far(x)',
  '',
  'def run(items, rate):',
  '    inv = make_invoice(items)',
  '    inv.apply_discount(rate)',
  '    total = compute_vat(inv, rate)',
  '    tot',
  '    return total',
];
const CURSOR = { line: 9, character: 7 };

function target(uri: string, line: number): Target {
  return { uri, range: { start: { line, character: 4 }, end: { line, character: 10 } } };
}

class FakeHost implements DefinitionsHost {
  asked: { name: string; pos: Position }[] = [];
  sent: DefinitionsParams[] = [];
  files: Record<string, string[]> = {
    'file:///ws/billing.py': ['class Invoice:', '    """A bill."""', '    def total(self): ...', 'def make_invoice(items):', '    return Invoice(items)', '', 'RATE = 0.2'],
    'file:///ws/vat.py': ['def compute_vat(inv, rate: float) -> float:', '    return inv.total() * rate', 'def other(): ...'],
  };
  where: Record<string, Target[] | 'never' | 'reject'> = {
    make_invoice: [target('file:///ws/billing.py', 3)],
    compute_vat: [target('file:///ws/vat.py', 0)],
    total: [target('file:///ws/app.py', 8)], // this file: skipped
  };
  constructor(private readonly lines = APP) {}
  definitions(uri: string, pos: Position): Promise<Target[]> {
    const line = this.lines[pos.line];
    const name = /^[A-Za-z_$][\w$]*/.exec(line.slice(pos.character))?.[0] ?? '';
    this.asked.push({ name, pos });
    const w = this.where[name];
    if (w === 'never') {
      return new Promise(() => undefined);
    }
    if (w === 'reject') {
      return Promise.reject(new Error('provider failed'));
    }
    return Promise.resolve(w ?? []);
  }
  readLines(uri: string, start: number, count: number): Promise<string[] | undefined> {
    return Promise.resolve(this.files[uri]?.slice(start, start + count));
  }
  send(params: DefinitionsParams): void {
    this.sent.push(params);
  }
}

test('names near the cursor: the enclosing function, nearest first, no keywords, members or the typed word', () => {
  const names = namesNearCursor(APP, CURSOR).map((n) => n.name);
  assert.deepEqual(names.slice(0, 3), ['total', 'compute_vat', 'inv']);
  assert.ok(names.includes('make_invoice') && names.includes('items') && names.includes('rate'));
  assert.ok(!names.includes('apply_discount'), 'a member after a dot');
  assert.ok(!names.includes('tot'), 'the word being typed');
  assert.ok(!names.includes('return') && !names.includes('def'));
  assert.ok(!names.includes('helper_far') && !names.includes('Invoice'), 'outside the enclosing function');
  const pos = namesNearCursor(APP, CURSOR).find((n) => n.name === 'compute_vat')?.pos;
  assert.deepEqual(pos, { line: 8, character: 12 });
});

test('definition text: the declaration and its deeper lines, whole lines, capped', () => {
  assert.equal(definitionText(['class Invoice:', '    """A bill."""', '', '    def total(self): ...', 'def next(): ...']),
    'class Invoice:\n    """A bill."""\n\n    def total(self): ...');
  assert.equal(definitionText(['func Total(items []Item) float {', '\treturn 0', '}', 'func Other() {}']),
    'func Total(items []Item) float {\n\treturn 0');
  assert.equal(definitionText(['RATE = 0.2', 'OTHER = 1']), 'RATE = 0.2');
  assert.equal(definitionText(['', 'x']), '');
  const long = ['def f(', ...Array.from({ length: 30 }, (_, i) => `    arg_${i}: int = ${'9'.repeat(40)},`)];
  const text = definitionText(long);
  assert.ok(text.length <= 480 && text.split('\n').length <= 8);
  assert.ok(text.split('\n').every((l) => long.includes(l)), 'never cut mid-line');
});

test('a run sends the definitions in other files, bounded in names, and does not ask twice', async () => {
  const host = new FakeHost();
  const collector = new DefinitionsCollector(host);
  const sent = await collector.run({ uri: 'file:///ws/app.py', version: 3, lines: APP, cursor: CURSOR });
  assert.ok(host.asked.length <= MAX_NAMES);
  assert.deepEqual(sent, host.sent[0]);
  assert.equal(sent?.uri, 'file:///ws/app.py');
  assert.equal(sent?.version, 3);
  assert.deepEqual(
    sent?.definitions.map((d) => [d.name, d.uri, d.range.start.line, d.text]),
    [
      ['compute_vat', 'file:///ws/vat.py', 0, 'def compute_vat(inv, rate: float) -> float:\n    return inv.total() * rate'],
      ['make_invoice', 'file:///ws/billing.py', 3, 'def make_invoice(items):\n    return Invoice(items)'],
    ],
  );
  const asked = host.asked.length;
  assert.equal(await collector.run({ uri: 'file:///ws/app.py', version: 4, lines: APP, cursor: CURSOR }), undefined);
  assert.equal(host.asked.length, asked, 'names answered before are not asked again');
  collector.forget('file:///ws/app.py');
  await collector.run({ uri: 'file:///ws/app.py', version: 5, lines: APP, cursor: CURSOR });
  assert.ok(host.asked.length > asked, 'a closed document starts afresh');
});

test('a window of the document: positions are in document coordinates', async () => {
  const host = new FakeHost(['# padding', '# padding', ...APP]);
  const collector = new DefinitionsCollector(host);
  await collector.run({
    uri: 'file:///ws/app.py', version: 1, lines: APP, firstLine: 2, cursor: { line: CURSOR.line + 2, character: CURSOR.character },
  });
  assert.deepEqual(host.asked.find((a) => a.name === 'compute_vat')?.pos, { line: 10, character: 12 });
});

test('a provider that never answers or fails costs at most the time budget; the others are sent', async () => {
  const host = new FakeHost();
  host.where.inv = 'never';
  host.where.rate = 'reject';
  const collector = new DefinitionsCollector(host);
  const t0 = Date.now();
  const sent = await collector.run({ uri: 'file:///ws/app.py', version: 1, lines: APP, cursor: CURSOR });
  const took = Date.now() - t0;
  assert.ok(took < BUDGET_MS + 200, `took ${took} ms`);
  assert.deepEqual(sent?.definitions.map((d) => d.name), ['compute_vat', 'make_invoice']);
  // The one that timed out is asked again at the next pause; the others are not.
  const before = host.asked.length;
  await collector.run({ uri: 'file:///ws/app.py', version: 2, lines: APP, cursor: CURSOR });
  assert.deepEqual(host.asked.slice(before).map((a) => a.name), ['inv']);
});

test('nothing resolved elsewhere: nothing sent', async () => {
  const host = new FakeHost();
  host.where = {};
  const sent = await new DefinitionsCollector(host).run({ uri: 'file:///ws/app.py', version: 1, lines: APP, cursor: CURSOR });
  assert.equal(sent, undefined);
  assert.equal(host.sent.length, 0);
});

test('the on/off setting is the client\'s, never forwarded to the server', () => {
  assert.equal(isServerKey('editorDefinitions.enabled'), false);
});
