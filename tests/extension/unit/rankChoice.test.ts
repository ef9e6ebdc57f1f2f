import * as assert from 'node:assert/strict';
import { choiceName, debugPlanRanks, formatChoice, isSpecText, parseChoice } from '../../../extension/src/core/rankChoice';

describe('core/rankChoice', () => {
    it('remembers a choice as one string and reads it back', () => {
        for (const c of [
            { spec: '1', arm: false },
            { spec: '0-3,8', arm: false },
            { spec: '', arm: true },
            { spec: '1,3', arm: true },
            { spec: 'local0', arm: true },
            { spec: 'all', arm: false },
        ]) {
            assert.deepEqual(parseChoice(formatChoice(c)), c, formatChoice(c));
        }
        assert.equal(formatChoice({ spec: '', arm: true }), 'arm');
        assert.equal(formatChoice({ spec: '1', arm: true }), '1+arm');
        assert.equal(formatChoice({ spec: '1', arm: false }), '1');
    });

    it('reads memories from before arming as not armed', () => {
        assert.deepEqual(parseChoice('1,3'), { spec: '1,3', arm: false });
        assert.deepEqual(parseChoice('local0'), { spec: 'local0', arm: false });
        assert.equal(parseChoice(undefined), undefined);
    });

    it('reads what a user types', () => {
        assert.deepEqual(parseChoice('arm'), { spec: '', arm: true });
        assert.deepEqual(parseChoice('  --arm '), { spec: '', arm: true });
        assert.deepEqual(parseChoice('1 arm'), { spec: '1', arm: true });
        assert.deepEqual(parseChoice('arm 0-3'), { spec: '0-3', arm: true });
        assert.deepEqual(parseChoice('1, 3'), { spec: '1,3', arm: false });
        assert.deepEqual(parseChoice('1,3,'), { spec: '1,3', arm: false });
        assert.deepEqual(parseChoice('ARM'), { spec: '', arm: true });
        assert.deepEqual(parseChoice('0 - 3 arm'), { spec: '0-3', arm: true });
    });

    it('refuses text that names nothing or is not a spec', () => {
        for (const bad of ['', '   ', 'x', '1-', 'alll', 'arm x', '1;3', 'rank 1', '0 3', '1 2 arm']) assert.equal(parseChoice(bad), undefined, bad);
        assert.ok(isSpecText('0, 1-3 ,all,local2'));
        assert.ok(!isSpecText(''));
        assert.ok(!isSpecText('1,,2'));
    });

    it('names the session after the ranks and the arming', () => {
        assert.equal(choiceName('torchrun train.py', { spec: '1', arm: false }), 'torchrun train.py · ranks 1');
        assert.equal(choiceName('torchrun train.py', { spec: '1', arm: true }), 'torchrun train.py · ranks 1 · armed');
        assert.equal(choiceName('torchrun train.py', { spec: '', arm: true }), 'torchrun train.py · armed');
    });

    it('asks debugPlan for rank 0 by default, for no rank when only armed', () => {
        assert.deepEqual(debugPlanRanks(undefined, false), { ranks: '0' });
        assert.deepEqual(debugPlanRanks('1,3', false), { ranks: '1,3' });
        assert.deepEqual(debugPlanRanks(undefined, true), { ranks: '', arm: true });
        assert.deepEqual(debugPlanRanks('1', true), { ranks: '1', arm: true });
    });
});
