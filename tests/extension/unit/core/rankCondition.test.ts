import * as assert from 'node:assert/strict';
import { bindCondition, readCondition } from '../../../../extension/src/core/rankCondition';

describe('core/rankCondition', () => {
    it('reads a binding and the condition besides it', () => {
        assert.deepEqual(readCondition(undefined), {});
        assert.deepEqual(readCondition('  '), {});
        assert.deepEqual(readCondition('ranks 1,3'), { spec: '1,3' });
        assert.deepEqual(readCondition('  ranks 0-3,8 and step > 10 '), { spec: '0-3,8', rest: 'step > 10' });
        assert.deepEqual(readCondition('ranks local0 and x and y'), { spec: 'local0', rest: 'x and y' });
        assert.deepEqual(readCondition('step > 10'), { rest: 'step > 10' });
        // Python that merely starts with the word is no binding.
        assert.deepEqual(readCondition('ranks > 3'), { rest: 'ranks > 3' });
        assert.deepEqual(readCondition('ranks == [1]'), { rest: 'ranks == [1]' });
    });

    it('binds, keeps the old condition, replaces an old binding, and unbinds', () => {
        assert.equal(bindCondition(undefined, '1,3'), 'ranks 1,3');
        assert.equal(bindCondition('', ' 0-3, 8 '), 'ranks 0-3,8');
        assert.equal(bindCondition('loss != loss', '2'), 'ranks 2 and loss != loss');
        assert.equal(bindCondition('ranks 1 and loss != loss', '0-3'), 'ranks 0-3 and loss != loss');
        assert.equal(bindCondition('ranks 1', 'all'), 'ranks all');
        assert.equal(bindCondition('ranks 1 and a or b', ''), 'a or b');
        assert.equal(bindCondition('ranks 1', ''), undefined);
        assert.equal(bindCondition(undefined, ''), undefined);
        assert.equal(bindCondition('x > 1', ''), 'x > 1');
        // Bound twice: still one binding.
        assert.equal(bindCondition(bindCondition('x', '1'), '2'), 'ranks 2 and x');
    });
});

describe('core/rankCondition against the gates', () => {
    // Written by scripts/gen_wire.py: each condition with what supervise/bound_breaks.py
    // reads from it (spec null: not bound).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const cases = require('../fixtures/rank-conditions.json') as { condition: string; spec: string | null; rest: string | null }[];

    it('reads every condition as the gates do', () => {
        assert.ok(cases.length > 20);
        for (const c of cases) {
            const got = readCondition(c.condition);
            if (c.spec === null) {
                assert.equal(got.spec, undefined, `${JSON.stringify(c.condition)} is not bound for the gates`);
            } else {
                assert.equal(got.spec, c.spec, JSON.stringify(c.condition));
                assert.equal(got.rest ?? null, c.rest, JSON.stringify(c.condition));
            }
        }
    });

    it('rebinds a condition the gates read as bound, keeping one binding', () => {
        assert.equal(bindCondition('rank 2', '0'), 'ranks 0');
        assert.equal(bindCondition('rank 2 and loss > 4', '0,1'), 'ranks 0,1 and loss > 4');
        assert.equal(bindCondition('ranks 1, 3 and x', '2'), 'ranks 2 and x');
    });
});
