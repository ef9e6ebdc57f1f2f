import * as assert from 'node:assert/strict';
import { readAttachLines } from '../../../../extension/src/core/attachLines';

// The lines `rankdebug attach JOB 0-2 --json` prints when rank 1 cannot be attached
// (pyserver/rankdebug/protocol/attach.py), with the fields the extension does not read.
const ANSWER = [
    { event: 'listening', rank: 0, host: '127.0.0.1', port: 41001, pid: 101, job: 'J', via: 'ptrace' },
    { event: 'failed', rank: 1, pid: null, job: 'J', message: 'rank 1 does not run' },
    { event: 'listening', rank: 2, host: '127.0.0.1', port: 41003, pid: 103, job: 'J', node: 'node1' },
    { event: 'done', job: 'J', attached: [0, 2], failed: [1], seconds: 1.2 },
];

describe('readAttachLines', () => {
    it('reads where each rank listens and why one failed', () => {
        assert.deepEqual(readAttachLines(ANSWER), {
            listening: [{ rank: 0, host: '127.0.0.1', port: 41001 }, { rank: 2, host: '127.0.0.1', port: 41003 }],
            failed: [{ rank: 1, message: 'rank 1 does not run' }],
        });
    });

    it('skips a listening line it cannot connect to, and says a failure it cannot place', () => {
        const got = readAttachLines([
            { event: 'listening', rank: null, host: '127.0.0.1', port: 5678, pid: 7, job: null },
            { event: 'listening', rank: 3, host: '127.0.0.1', port: '5678' },
            { event: 'failed', message: 42 },
            { event: 'error', message: 'no job J' },
        ]);
        assert.deepEqual(got, { listening: [], failed: [{ rank: null, message: '' }] });
    });
});
