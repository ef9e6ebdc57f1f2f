import * as assert from 'node:assert/strict';
import { bindCondition, readCondition } from '../../../extension/src/core/rankCondition';

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
