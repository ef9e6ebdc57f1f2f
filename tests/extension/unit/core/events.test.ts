import * as assert from 'node:assert/strict';
import { LineSplitter, parseEvent, rankLabel } from '../../../../extension/src/core/events';

describe('core/events', () => {
    it('reads the launch contract lines', () => {
        assert.deepEqual(parseEvent('{"event": "listening", "rank": 1, "host": "127.0.0.1", "port": 29731, "pid": 1234, "job": "J"}'), {
            event: 'listening', rank: 1, host: '127.0.0.1', port: 29731, pid: 1234, job: 'J',
        });
        assert.deepEqual(parseEvent('{"event":"exited","code":3}'), { event: 'exited', code: 3 });
        assert.equal(parseEvent('{"event": "job", "job": "20261122-1-2", "pid": 9}')?.event, 'job');
        assert.equal(parseEvent('{"event": "attached", "rank": 0}')?.event, 'attached');
    });

    it('reads a Ray actor rank\'s role, the label of its session', () => {
        assert.deepEqual(parseEvent('{"event": "role", "rank": 2, "role": "actor/rollout/ref", "job": "J"}'), {
            event: 'role', rank: 2, role: 'actor/rollout/ref', job: 'J',
        });
        assert.equal(parseEvent('{"event": "role", "rank": 2, "role": ""}'), undefined);
        assert.equal(parseEvent('{"event": "role", "rank": 2}'), undefined);
        assert.equal(rankLabel(2, 'critic'), 'rank 2 · critic');
        assert.equal(rankLabel(2), 'rank 2');
    });

    it('turns error objects into error events', () => {
        assert.deepEqual(parseEvent('{"error": {"message": "bad line", "line": 3, "column": 1}}'), { event: 'error', message: 'bad line' });
    });

    it('ignores anything else', () => {
        assert.equal(parseEvent('step 10 loss 0.3'), undefined);
        assert.equal(parseEvent('{not json'), undefined);
        assert.equal(parseEvent('{"event": "listening", "rank": "1"}'), undefined);
        assert.equal(parseEvent('{"event": "other"}'), undefined);
        assert.equal(parseEvent('[1,2]'), undefined);
    });

    it('defaults a missing host to loopback and a missing code to 1', () => {
        const ev = parseEvent('{"event": "listening", "rank": 0, "port": 5}');
        assert.equal(ev?.event === 'listening' && ev.host, '127.0.0.1');
        assert.deepEqual(parseEvent('{"event": "exited"}'), { event: 'exited', code: 1 });
    });

    it('reads the ranks\' events of a job debugged together', () => {
        assert.deepEqual(parseEvent('{"event": "job", "job": "J", "dir": "/run/user/1/rankdebug/J", "pid": 9}'), { event: 'job', job: 'J', dir: '/run/user/1/rankdebug/J', pid: 9 });
        assert.deepEqual(parseEvent('{"event": "stopped", "rank": 1, "reason": "breakpoint", "file": "/w/model.py", "line": 88, "function": "forward", "job": "J"}'), {
            event: 'stopped', rank: 1, reason: 'breakpoint', file: '/w/model.py', line: 88, function: 'forward', job: 'J',
        });
        assert.deepEqual(parseEvent('{"event": "stopped", "rank": 2, "reason": "pause", "file": null, "line": null, "function": null}'), {
            event: 'stopped', rank: 2, reason: 'pause', file: null, line: null, function: null,
        });
        assert.deepEqual(parseEvent('{"event": "continued", "rank": 1, "job": "J"}'), { event: 'continued', rank: 1, job: 'J' });
        assert.deepEqual(parseEvent('{"event": "arrived", "command": "step", "ranks": [0, 1, "x"], "job": "J"}'), { event: 'arrived', command: 'step', ranks: [0, 1], job: 'J' });
        assert.deepEqual(parseEvent('{"event": "blocked", "rank": 2, "in": "all_reduce", "job": "J"}'), { event: 'blocked', rank: 2, in: 'all_reduce', job: 'J' });
        assert.deepEqual(parseEvent('{"event": "raised", "rank": 3, "pid": 7, "exception": "ValueError", "message": "m", "file": "/w/a.py", "line": 4, "function": "f", "job": "J"}'), {
            event: 'raised', rank: 3, pid: 7, exception: 'ValueError', message: 'm', file: '/w/a.py', line: 4, function: 'f', job: 'J',
        });
        // The job's end only (protocol/launch.py): a field it does not declare is not read.
        assert.deepEqual(parseEvent('{"event": "exited", "rank": 3, "code": 1}'), { event: 'exited', code: 1 });
        // Which collective: its number and group where the rank could say (optional fields).
        assert.deepEqual(parseEvent('{"event": "blocked", "rank": 2, "in": "all_reduce", "seq": 6, "group": "0", "file": "/t/c10d.py", "line": 9}'), {
            event: 'blocked', rank: 2, in: 'all_reduce', seq: 6, group: '0',
        });
        assert.deepEqual(parseEvent('{"event": "blocked", "rank": 2, "in": "all_reduce", "seq": "6", "group": 0}'), { event: 'blocked', rank: 2, in: 'all_reduce' }, 'ill-typed: left out');
        assert.deepEqual(parseEvent('{"event": "stopped", "rank": 1, "reason": "pause", "file": "/w/t.py", "line": 27, "function": "<module>", "waiting": "all_reduce", "seq": 3, "group": "0"}'), {
            event: 'stopped', rank: 1, reason: 'pause', file: '/w/t.py', line: 27, function: '<module>', waiting: 'all_reduce', seq: 3, group: '0',
        });
        assert.deepEqual(parseEvent('{"event": "stopped", "rank": 1, "reason": "step", "file": null, "line": null, "function": null, "seq": 3}'), {
            event: 'stopped', rank: 1, reason: 'step', file: null, line: null, function: null,
        }, 'a number without a collective: none');
        assert.equal(parseEvent('{"event": "stopped", "rank": "1"}'), undefined);
        assert.equal(parseEvent('{"event": "blocked"}'), undefined);
    });

    it('splits a stream into lines across chunks', () => {
        const s = new LineSplitter();
        assert.deepEqual(s.push('{"a":'), []);
        assert.deepEqual(s.push('1}\r\n{"b"'), ['{"a":1}']);
        assert.deepEqual(s.push(':2}\nx\n'), ['{"b":2}', 'x']);
        assert.deepEqual(s.push('tail'), []);
        assert.deepEqual(s.flush(), ['tail']);
        assert.deepEqual(s.flush(), []);
    });
});
