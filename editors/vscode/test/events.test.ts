import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SHOWN_AFTER_MS, ShownTracker, suggestionId } from '../src/events';

/** A fake clock: timers fire only when the test advances it. */
function fakeTimers() {
  let now = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  return {
    set: (fn: () => void, ms: number) => {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clear: (h: unknown) => {
      timers.delete(h as number);
    },
    advance(ms: number) {
      now += ms;
      for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (t.at <= now) {
          timers.delete(id);
          t.fn();
        }
      }
    },
  };
}

function setup() {
  const clock = fakeTimers();
  const events: string[] = [];
  const tracker = new ShownTracker((id, event) => events.push(`${event}:${id}`), clock);
  return { clock, events, tracker };
}

const U = 'file:///a.py';

test('an item is shown when not superseded for 750 ms', () => {
  const { clock, events, tracker } = setup();
  tracker.returned(U, 's1');
  clock.advance(SHOWN_AFTER_MS - 1);
  assert.deepEqual(events, []);
  clock.advance(1);
  assert.deepEqual(events, ['shown:s1']);
});

test('an item superseded within 750 ms is never shown; a continuation keeps the timer', () => {
  const { clock, events, tracker } = setup();
  tracker.returned(U, 's1');
  clock.advance(300);
  tracker.changed(U);
  tracker.returned(U, 's2'); // typed something else: s1 replaced before it counted
  clock.advance(500);
  tracker.changed(U);
  tracker.returned(U, 's2'); // typed through s2: the same suggestion
  clock.advance(250);
  assert.deepEqual(events, ['shown:s2']);
});

test('a shown item replaced after an edit is typed over; after a cursor move, dismissed', () => {
  const { clock, events, tracker } = setup();
  tracker.returned(U, 's1');
  clock.advance(SHOWN_AFTER_MS);
  tracker.changed(U);
  tracker.returned(U, undefined);
  tracker.returned(U, 's2');
  clock.advance(SHOWN_AFTER_MS);
  tracker.returned(U, 's3'); // the cursor moved: no edit
  clock.advance(SHOWN_AFTER_MS);
  tracker.closed(U);
  assert.deepEqual(events, ['shown:s1', 'typed_over:s1', 'shown:s2', 'dismissed:s2', 'shown:s3', 'dismissed:s3']);
});

test('an accepted item is not reported again, even when accepted before 750 ms', () => {
  const { clock, events, tracker } = setup();
  tracker.returned(U, 's1');
  clock.advance(100);
  tracker.accepted('s1'); // the server records the accept (and shown)
  tracker.changed(U);
  tracker.returned(U, 's2');
  clock.advance(SHOWN_AFTER_MS);
  tracker.changed(U);
  tracker.returned(U, 's1'); // a stale repeat of the accepted one
  clock.advance(SHOWN_AFTER_MS);
  assert.deepEqual(events, ['shown:s2', 'typed_over:s2']);
});

test('the id comes from the item command', () => {
  assert.equal(suggestionId({ command: { command: 'lspAssist.accepted', arguments: ['s9'] } }), 's9');
  assert.equal(suggestionId({ command: { command: 'other', arguments: ['s9'] } }), undefined);
  assert.equal(suggestionId(undefined), undefined);
});
