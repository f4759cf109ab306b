// The pipeline walks PIPELINE_STAGES in the list's order, and the parse stage is a stage
// like the others: it emits its event, for every call of a turn, before any call runs.
import { describe, expect, it } from 'vitest';
import { PIPELINE_STAGES } from '../src/index.js';
import { call, engine, tool } from './helpers.js';

describe('the pipeline walk', () => {
  it('every stage of a successful call is entered once, in the declared order', async () => {
    const events: string[] = [];
    await engine([tool('t')], { guards: [() => undefined], observers: { onStage: ({ stage }) => events.push(stage) } }).run([call('t')]);
    expect(events).toEqual([...PIPELINE_STAGES]);
  });

  it('the parse stage reports every call of the turn before the first call runs', async () => {
    const events: string[] = [];
    const calls = [call('t', {}, 'a'), call('t', {}, 'b'), call('missing', {}, 'c')];
    await engine([tool('t')], { observers: { onStage: ({ callId, stage }) => events.push(`${callId}:${stage}`) } }).run(calls);
    expect(events.slice(0, 3)).toEqual(['a:parse', 'b:parse', 'c:parse']);
    // A call that failed parsing goes straight to its result.
    expect(events.filter((event) => event.startsWith('c:'))).toEqual(['c:parse', 'c:result']);
  });

  it('a denied call stops at the gate and still reaches the result stage', async () => {
    const events: string[] = [];
    await engine([tool('t')], { policy: { default: 'deny' }, observers: { onStage: ({ stage }) => events.push(stage) } }).run([call('t')]);
    expect(events).toEqual(['parse', 'permission', 'result']);
  });
});
