import * as assert from 'node:assert/strict';
import { ranksLabel, toStacksView } from '../../../../extension/src/core/stacks';
import { escapeHtml, renderMessage, renderStacks, type StacksLabels } from '../../../../extension/src/core/stacksHtml';
import { NONCE, STACKS_LABELS } from '../fixtures';

const C10D = '/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py';

// The shape of `rankdebug stacks JOB --json`: ranks 0-2 wait in all_reduce, rank 3 is in its
// data loader (the odd one out), rank 4 could not be read.
const ANSWER = {
    job: '4242@node0',
    time: 1795361102.33,
    seconds: 0.031,
    ranks: [
        { rank: 0, pid: 10, host: 'node0', error: null, collective: 'all_reduce', seconds: 0.01, threads: [] },
        { rank: 1, pid: 11, host: 'node0', error: null, collective: 'all_reduce', seconds: 0.01, threads: [] },
        { rank: 2, pid: 12, host: 'node0', error: null, collective: 'all_reduce', seconds: 0.01, threads: [] },
        { rank: 3, pid: 13, host: 'node0', error: null, collective: null, seconds: 0.01, threads: [] },
        { rank: 4, pid: 14, host: 'node0', error: 'py-spy: Permission denied (ptrace)', collective: null, seconds: 0.01, threads: [] },
    ],
    groups: [
        { thread: 'pin_memory', main: false, ranks: [0], pids: [10], label: 'rank 0', summary: '_worker', collective: null, active: false, odd: false, frames: [{ name: '_worker', file: '/usr/lib/python3.11/threading.py', line: 320, library: true, short: 'threading.py:320' }] },
        {
            thread: 'MainThread', main: true, ranks: [0, 1, 2], pids: [10, 11, 12], label: 'ranks 0-2', summary: 'all_reduce ← train_step ← main', collective: 'all_reduce', active: false, odd: false,
            frames: [
                { name: 'all_reduce', file: C10D, line: 2501, library: true, short: 'torch/distributed/distributed_c10d.py:2501' },
                { name: 'train_step', file: '/home/me/proj/train.py', line: 30, library: false, short: 'proj/train.py:30' },
                { name: 'main', file: '/home/me/proj/train.py', line: 42, library: false, short: 'proj/train.py:42' },
            ],
        },
        { thread: 'MainThread', main: true, ranks: [3], pids: [13], label: 'rank 3', summary: '__next__ ← train_step ← main', collective: null, active: true, odd: true, frames: [{ name: '<img src=x onerror=alert(1)>', file: '/home/me/proj/"evil".py', line: 7 }, { name: 'f', file: '<string>', line: 1 }] },
    ],
    odd: [3],
};

const LABELS: StacksLabels = { ...STACKS_LABELS, title: 'Stacks: torchrun · 4242@node0', meta: '4 of 5 ranks read' };

describe('core/stacks', () => {
    const view = toStacksView(ANSWER);

    it('makes one column per group, main threads first, frames innermost first', () => {
        assert.deepEqual(view.columns.map((c) => c.label), ['ranks 0-2', 'rank 3', 'rank 0']);
        const [main, odd, other] = view.columns;
        assert.equal(main.collective, 'all_reduce');
        assert.equal(main.summary, 'all_reduce ← train_step ← main');
        assert.deepEqual(main.frames.map((f) => f.name), ['all_reduce', 'train_step', 'main']);
        assert.equal(odd.odd, true);
        assert.equal(other.main, false);
        assert.equal(view.read, 4);
        assert.equal(view.total, 5);
        assert.deepEqual(view.errors, [{ label: 'rank 4', pid: 14, message: 'py-spy: Permission denied (ptrace)' }]);
    });

    it('takes library frames and short places from the CLI', () => {
        const [lib, user] = view.columns[0].frames;
        assert.equal(lib.library, true);
        assert.equal(lib.short, 'torch/distributed/distributed_c10d.py:2501');
        assert.equal(user.library, false);
        assert.equal(user.short, 'proj/train.py:30');
        assert.equal(user.openable, true);
        assert.equal(view.columns[1].frames[1].openable, false);
        // an answer without them: the full place, shown as the user's code
        const bare = view.columns[1].frames[1];
        assert.equal(bare.short, '<string>:1');
        assert.equal(bare.library, false);
    });

    it('labels ranks like the CLI', () => {
        assert.equal(ranksLabel([0, 1, 2, 4], [1, 2, 3, 4]), 'ranks 0-2,4');
        assert.equal(ranksLabel([3], [9]), 'rank 3');
        assert.equal(ranksLabel([null], [123]), 'pid 123');
        assert.equal(toStacksView({}).columns.length, 0);
    });
});

describe('core/stacksHtml', () => {
    const html = renderStacks(toStacksView(ANSWER), LABELS, NONCE);

    it('escapes every text that comes from the ranks', () => {
        assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
        assert.ok(!html.includes('<img'));
        assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
        assert.ok(!html.includes('"evil"'));
        assert.ok(!renderMessage('t', 'r', '<script>alert(1)</script>', NONCE).includes('<script>alert'));
    });

    it('loads nothing: a strict CSP, one nonce for the style and the script', () => {
        assert.match(html, /content="default-src 'none'; style-src 'nonce-abcdefghijklmnopqrstuv=='; script-src 'nonce-abcdefghijklmnopqrstuv==';"/);
        assert.equal((html.match(/<script/g) ?? []).length, 1);
        assert.ok(html.includes(`<script nonce="${NONCE}">`));
        assert.ok(!/https?:/.test(html));
        assert.throws(() => renderStacks(toStacksView(ANSWER), LABELS, 'short'));
    });

    it('shows the columns side by side with their headers, the odd one out and the errors', () => {
        assert.ok(html.includes('<div class="column odd">'));
        assert.ok(html.includes('waiting in all_reduce'));
        assert.ok(html.includes('odd one out'));
        assert.ok(html.includes('thread pin_memory'));
        assert.ok(html.includes('rank 4 (pid 14): py-spy: Permission denied (ptrace)'));
        // Frames are clicked by index; the page never carries a path to open.
        assert.ok(html.includes('data-column="0" data-frame="1"'));
        assert.ok(html.includes('class="frame library"'));
        assert.ok(html.includes('class="frame user"'));
        assert.ok(html.indexOf('ranks 0-2') < html.indexOf('rank 3'));
    });
});
