import * as assert from 'node:assert/strict';
import { isRowArg, lineArg, rowsOf, sessionIdOf } from '../../../../extension/src/core/commandArgs';
import { parseEvent, type LaunchEvent } from '../../../../extension/src/core/events';
import { GroupProgress, who } from '../../../../extension/src/core/groupProgress';
import { GroupStore } from '../../../../extension/src/core/groupStore';
import { l10n } from '../debug/fakes';

const ev = (o: Record<string, unknown>): LaunchEvent => {
    const e = parseEvent(JSON.stringify(o));
    assert.ok(e);
    return e;
};

describe('core/groupProgress', () => {
    it('reports a continue or pause at once', () => {
        const p = new GroupProgress('continue', [0, 1, 2, 3]);
        assert.equal(p.done, true);
        assert.equal(p.text(l10n), 'ranks 0-3 continued');
        assert.equal(new GroupProgress('pause', [2]).text(l10n), 'rank 2 paused');
        assert.equal(new GroupProgress('over', []).text(l10n), 'no chosen rank to act on');
    });

    it('follows a group step: arrivals, a rank waiting in a collective, then all arrived', () => {
        const p = new GroupProgress('over', [0, 1, 2, 3]);
        assert.equal(p.done, false);
        assert.equal(p.text(l10n), '0 of 4 stopped: ranks 0-3 still running');
        assert.equal(p.apply(ev({ event: 'stopped', rank: 0, reason: 'step', file: null, line: null, function: null })), true);
        assert.equal(p.text(l10n), '1 of 4 stopped: rank 0 stepped over; ranks 1-3 still running');
        p.apply(ev({ event: 'stopped', rank: 1, reason: 'step' }));
        p.apply(ev({ event: 'stopped', rank: 3, reason: 'step' }));
        assert.equal(p.apply(ev({ event: 'stopped', rank: 7, reason: 'step' })), false, 'a rank outside the group');
        assert.equal(p.apply(ev({ event: 'blocked', rank: 2, in: 'all_reduce' })), true);
        assert.equal(p.text(l10n), '3 of 4 stopped: ranks 0,1,3 stepped over; rank 2 waiting in all_reduce');
        assert.equal(p.apply(ev({ event: 'stopped', rank: 1, reason: 'step' })), false, 'a rank counts once');
        assert.equal(p.apply(ev({ event: 'arrived', command: 'step', ranks: [0, 1, 2, 3] })), true);
        assert.equal(p.done, true);
        assert.equal(p.text(l10n), 'ranks 0-3 stepped over');
        assert.equal(p.apply(ev({ event: 'stopped', rank: 0, reason: 'step' })), false, 'nothing after the end');
    });

    it('says the ranks a step could not move: they wait in a collective (held), before and after the others arrive', () => {
        const p = new GroupProgress('over', [0, 2], '', new Map([[1, 'all_reduce'], [3, 'barrier']]));
        assert.equal(p.asked, 4, 'the ranks moved and the ranks held');
        assert.equal(p.text(l10n), '0 of 4 stopped: rank 1 waiting in all_reduce; rank 3 waiting in barrier; ranks 0,2 still running');
        assert.equal(p.apply(ev({ event: 'blocked', rank: 1, in: 'all_reduce' })), false, 'held: not a rank the step moves');
        p.apply(ev({ event: 'stopped', rank: 0, reason: 'step' }));
        assert.equal(p.text(l10n), '1 of 4 stopped: rank 0 stepped over; rank 1 waiting in all_reduce; rank 3 waiting in barrier; rank 2 still running');
        p.apply(ev({ event: 'arrived', command: 'step', ranks: [0, 2] }));
        assert.equal(p.done, true);
        assert.equal(p.text(l10n), '2 of 4 stopped: ranks 0,2 stepped over; rank 1 waiting in all_reduce; rank 3 waiting in barrier');
    });

    it('counts the ranks stopped against the ranks asked only while that is news', () => {
        // Continue and pause are over at once: no count.
        assert.equal(new GroupProgress('continue', [0, 1]).text(l10n), 'ranks 0,1 continued');
        // One rank: the count still says it has not stopped yet.
        const one = new GroupProgress('out', [5]);
        assert.equal(one.text(l10n), '0 of 1 stopped: rank 5 still running');
        one.apply(ev({ event: 'stopped', rank: 5, reason: 'step' }));
        assert.equal(one.text(l10n), '1 of 1 stopped: rank 5 stepped out', 'stopped, the arrived event not yet in');
        one.apply(ev({ event: 'arrived', command: 'step', ranks: [5] }));
        assert.equal(one.text(l10n), 'rank 5 stepped out', 'all arrived: the count is no news');
        // A rank held and also in the reply is asked once.
        assert.equal(new GroupProgress('in', [0, 1], '', new Map([[1, 'all_reduce']])).asked, 2);
        // Localised as one message, the numbers and the rest as its arguments.
        const seen: Array<[string, unknown[]]> = [];
        const spy = { t: (m: string, ...a: Array<string | number | boolean>): string => (seen.push([m, a]), l10n.t(m, ...a)) };
        new GroupProgress('over', [0, 1, 2]).text(spy);
        assert.deepEqual(seen.at(-1), ['{0} of {1} stopped: {2}', [0, 3, 'ranks 0-2 still running']]);
    });

    it('says run-to with its line, and ranks waiting in different collectives', () => {
        const p = new GroupProgress('run-to', [0, 1, 2, 3, 4], 'train.py:30');
        p.apply(ev({ event: 'blocked', rank: 1, in: 'all_reduce' }));
        p.apply(ev({ event: 'blocked', rank: 4, in: 'barrier' }));
        p.apply(ev({ event: 'blocked', rank: 3, in: 'all_reduce' }));
        p.apply(ev({ event: 'stopped', rank: 0, reason: 'step' }));
        assert.equal(p.text(l10n), '1 of 5 stopped: rank 0 at train.py:30; ranks 1,3 waiting in all_reduce; rank 4 waiting in barrier; rank 2 still running');
        p.apply(ev({ event: 'arrived', command: 'run-to', ranks: [0, 1, 2, 3, 4] }));
        assert.equal(p.text(l10n), 'ranks 0-4 at train.py:30');
        assert.equal(who([5]), 'rank 5');
    });
});

describe('core/groupStore', () => {
    it('keeps named groups per job and the one the group commands use', () => {
        const g = new GroupStore();
        assert.equal(g.active('J'), undefined);
        assert.deepEqual(g.set('J', 'stragglers', [5, 2, 2]), { name: 'stragglers', ranks: [2, 5] });
        assert.deepEqual(g.active('J'), { name: 'stragglers', ranks: [2, 5] });
        g.set('J', 'first', [0, 1]);
        assert.deepEqual(g.list('J').map((x) => x.name), ['stragglers', 'first']);
        g.use('J', 'stragglers');
        assert.equal(g.active('J')?.name, 'stragglers');
        g.use('J', 'no such group');
        assert.equal(g.active('J'), undefined);
        assert.deepEqual(g.list('K'), []);
        g.forget('J');
        assert.deepEqual(g.list('J'), []);
    });
});

describe('core/commandArgs', () => {
    const job = { id: 'J' };
    const a = { kind: 'rank', job, rank: { rank: 1 } };
    const b = { kind: 'group', job, ranks: [4, 5] };
    const c = { kind: 'rank', job, rank: { rank: 9 } };

    it('takes the view\'s multi-selection when the clicked row is in it, else the clicked row', () => {
        assert.equal(isRowArg(a), true);
        assert.equal(isRowArg({ kind: 'rank' }), false);
        assert.equal(isRowArg('session-1'), false);
        assert.deepEqual(rowsOf([a, [a, b]]), [a, b]);
        assert.deepEqual(rowsOf([c, [a, b]]), [c]);
        assert.deepEqual(rowsOf([a]), [a]);
        assert.deepEqual(rowsOf([]), []);
    });

    it('finds the session of a Call Stack item', () => {
        const known = (id: string): boolean => id === 'session-7';
        // A session row: its id, then {sessionId}; a thread row: the thread id, then {sessionId, threadId}.
        assert.equal(sessionIdOf(['session-7', { sessionId: 'session-7' }], known), 'session-7');
        assert.equal(sessionIdOf([3, { sessionId: 'session-7', threadId: 3 }], known), 'session-7');
        assert.equal(sessionIdOf(['session-7'], known), 'session-7');
        assert.equal(sessionIdOf(['file:///w/train.py'], known), undefined);
        assert.equal(sessionIdOf([], known), undefined);
    });

    it('reads the line-number menu\'s argument', () => {
        assert.deepEqual(lineArg([{ lineNumber: 30, uri: 'u' }]), { lineNumber: 30, uri: 'u' });
        assert.equal(lineArg([{ lineNumber: 30 }]), undefined);
        assert.equal(lineArg(['x']), undefined);
    });
});
