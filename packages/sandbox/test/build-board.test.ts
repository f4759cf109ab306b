// The pool's balancer steers a task away from a worker that is building ahead (it would wait
// for the step), and never refuses a task while any worker is idle.
import { describe, expect, it } from 'vitest';
import { BuildBoard, BuildMarker, preferNotBuilding } from '../src/host/build-board.js';

const idle = (id: number) => ({ id, currentUsage: 0 });
const busy = (id: number) => ({ id, currentUsage: 1 });

describe('build board and balancer', () => {
  it('prefers an idle worker that is not building, in Piscina order otherwise', () => {
    const board = new BuildBoard();
    const pick = preferNotBuilding(board, () => true);
    expect(pick(undefined, [idle(1), idle(2)])?.id).toBe(1);
    new BuildMarker(board.buffer, 1).building(true);
    expect(pick(undefined, [idle(1), idle(2)])?.id).toBe(2);
    expect(pick(undefined, [busy(2), idle(1)])?.id).toBe(1); // building, but the only idle one
    new BuildMarker(board.buffer, 1).building(false);
    expect(pick(undefined, [idle(1), idle(2)])?.id).toBe(1);
    expect(pick(undefined, [busy(1), busy(2)])).toBeNull();
  });

  it('leaves a task that should stay put (a warm-realm call) on the first idle worker', () => {
    const board = new BuildBoard();
    new BuildMarker(board.buffer, 1).building(true);
    const pick = preferNotBuilding(board, (task: { fresh: boolean }) => task.fresh);
    expect(pick({ fresh: false }, [idle(1), idle(2)])?.id).toBe(1);
    expect(pick({ fresh: true }, [idle(1), idle(2)])?.id).toBe(2);
  });

  it('two threads sharing a slot: either may read as not building, neither as building when it is not', () => {
    const board = new BuildBoard();
    new BuildMarker(board.buffer, 3).building(true);
    expect(board.isBuilding(3)).toBe(true);
    expect(board.isBuilding(3 + 64)).toBe(false);
    new BuildMarker(board.buffer, 3 + 64).building(false);
    expect(board.isBuilding(3)).toBe(false);
  });
});
