import * as assert from 'node:assert/strict';
import { choiceName, formatChoice } from '../../../../extension/src/core/rankChoice';

describe('core/rankChoice', () => {
    it('remembers a choice as one string (the server reads it back)', () => {
        assert.equal(formatChoice({ spec: '', arm: true }), 'arm');
        assert.equal(formatChoice({ spec: '1', arm: true }), '1+arm');
        assert.equal(formatChoice({ spec: ' 1,3 ', arm: false }), '1,3');
        assert.equal(formatChoice({ spec: 'local0', arm: true }), 'local0+arm');
    });

    it('names the session after the ranks and the arming', () => {
        assert.equal(choiceName('train.py', { spec: '1', arm: false }), 'train.py · ranks 1');
        assert.equal(choiceName('train.py', { spec: '1', arm: true }), 'train.py · ranks 1 · armed');
        assert.equal(choiceName('train.py', { spec: '', arm: true }), 'train.py · armed');
    });
});
