import * as assert from 'node:assert/strict';
import { compareFrame, culpritRank, DiagnoseError, readDiagnose, representatives } from '../../../../extension/src/core/diagnose';
import { renderDiagnose } from '../../../../extension/src/core/diagnoseHtml';
import { l10n } from '../debug/fakes';
import { NONCE } from '../fixtures';

const JOB = '/work/proj/hang_job.py';
const C10D = '/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py';

// What `rankdebug diagnose JOB --json` printed for a 4-rank gloo job where rank 3 skipped an
// all_reduce and then waited in a barrier of group 1 (tests/jobs/scripts/hang_job.py, SCENARIO=skip);
// frames shortened, the `rank` lines left out but one.
const SKIP = [
    {
        event: 'class', ranks: [0, 1, 2], state: 'waiting', collective: { op: 'all_reduce', seq: 6, group: '0' },
        where: { file: JOB, line: 46, function: 'train_step' },
        frames: [{ file: C10D, line: 3252, function: 'all_reduce' }, { file: JOB, line: 46, function: 'train_step' }, { file: JOB, line: 103, function: 'skip' }],
    },
    {
        event: 'class', ranks: [3], state: 'waiting', collective: { op: 'barrier', seq: 1, group: '1' },
        where: { file: JOB, line: 104, function: 'skip' },
        frames: [{ file: C10D, line: 5356, function: 'barrier' }, { file: JOB, line: 104, function: 'skip' }],
    },
    { event: 'rank', rank: 0, pid: 8719, host: 'vm', state: 'waiting', collective: { op: 'all_reduce', seq: 6, group: '0' } },
    { event: 'collectives', group: '0', desc: 'default_pg', positions: [{ ranks: [0, 1, 2], op: 'all_reduce', seq: 6, context: null }, { ranks: [3], op: null, seq: 5, context: null }] },
    { event: 'collectives', group: '1', desc: 'sync', positions: [{ ranks: [0, 1, 2], op: null, seq: 0, context: null }, { ranks: [3], op: 'barrier', seq: 1, context: null }] },
    {
        event: 'culprit', ranks: [3],
        why: 'rank 3 never entered all_reduce #6 of group 0 (default_pg), which ranks 0-2 wait in at hang_job.py:46 (train_step): the two groups wait on each other',
        where: { file: JOB, line: 104, function: 'skip' },
    },
    { event: 'done', seconds: 2.158, ranks_read: 4, ranks_unread: [] },
];

describe('core/diagnose', () => {
    it('reads the classes, the culprit, the collectives and done of a job that hangs', () => {
        const view = readDiagnose(SKIP);
        assert.deepEqual(view.classes.map((c) => [c.ranks, c.state, c.culprit, c.representative]), [
            [[0, 1, 2], 'waiting', false, 0],
            [[3], 'waiting', true, 3],
        ]);
        assert.deepEqual(view.classes[1].collective, { op: 'barrier', seq: 1, group: '1' });
        assert.equal(view.classes[0].frames.length, 3);
        assert.equal(view.findings.length, 1);
        assert.equal(view.healthy, null);
        assert.deepEqual(view.groups, [
            { group: '0', desc: 'default_pg', cells: ['all_reduce #6', '#5'], differs: true },
            { group: '1', desc: 'sync', cells: ['#0', 'barrier #1'], differs: true },
        ]);
        assert.equal(view.ranksRead, 4);
        assert.equal(view.seconds, 2.158);
        assert.equal(culpritRank(view), 3);
        assert.deepEqual(representatives(view), [{ rank: 0, others: 2, cls: 0 }, { rank: 3, others: 0, cls: 1 }]);
        assert.equal(compareFrame(view), 'skip');
    });

    it('builds the collectives table from the classes when no collectives line came', () => {
        const view = readDiagnose(SKIP.filter((l) => l.event !== 'collectives'));
        assert.deepEqual(view.groups, [
            { group: '0', desc: null, cells: ['all_reduce #6', null], differs: false },
            { group: '1', desc: null, cells: [null, 'barrier #1'], differs: false },
        ]);
    });

    it('reads a healthy job and the ranks it could not read', () => {
        const view = readDiagnose([
            { event: 'class', ranks: [0, 1, 2, 3], state: 'running', collective: null, where: { file: JOB, line: 60, function: 'train' }, frames: [] },
            { event: 'healthy', why: 'every rank made progress: ranks 0-3 moved between reads' },
            { event: 'done', seconds: 1.5, ranks_read: 3, ranks_unread: [{ rank: 3, reason: 'py-spy: Permission denied' }, { rank: 'x', reason: 7 }] },
        ]);
        assert.equal(view.healthy, 'every rank made progress: ranks 0-3 moved between reads');
        assert.equal(culpritRank(view), null);
        assert.equal(view.classes[0].culprit, false);
        assert.deepEqual(view.unread, [{ rank: 3, reason: 'py-spy: Permission denied' }, { rank: null, reason: '' }]);
        assert.equal(compareFrame(view), undefined);
    });

    it('takes fields of the wrong type as missing, and keeps only integer ranks', () => {
        const view = readDiagnose([
            { event: 'class', ranks: [2, 'a', 2, -1, 1.5, 5], state: 'dancing', collective: { op: 7 }, where: 'here', frames: [null, { file: 3 }, { file: '<string>', line: 1, function: 'f' }] },
            { event: 'culprit', ranks: 'all', why: null, where: null },
            { event: 'done' },
        ]);
        assert.deepEqual(view.classes[0].ranks, [2, 5]);
        assert.equal(view.classes[0].state, 'unknown');
        assert.equal(view.classes[0].collective, null);
        assert.equal(view.classes[0].where, null);
        assert.deepEqual(view.classes[0].frames, [{ file: '<string>', line: 1, function: 'f' }]);
        assert.deepEqual(view.findings, [{ ranks: [], why: '', where: null }]);
        assert.equal(culpritRank(view), null);
        assert.equal(view.ranksRead, 0);
    });

    it('throws the error envelope and a run cut short, never a half model', () => {
        assert.throws(() => readDiagnose([{ error: { message: "no job 'nosuch' (see `rankdebug jobs`)", line: null } }]), (e: unknown) => e instanceof DiagnoseError && e.message === "no job 'nosuch' (see `rankdebug jobs`)");
        assert.throws(() => readDiagnose(SKIP.slice(0, 2)), DiagnoseError);
        assert.throws(() => readDiagnose([]), /done/);
    });
});

describe('core/diagnoseHtml', () => {
    const state = { title: 'Why is torchrun · 1 stuck?', meta: 'read in 2.16 s' };

    it('marks the culprit class, links each place by index and offers the buttons', () => {
        const html = renderDiagnose(readDiagnose(SKIP), state, l10n, NONCE);
        // the culprit's class (rank 3), not the waiting majority
        assert.match(html, /<details class="class culprit" data-class="1" open>/);
        assert.match(html, /<details class="class" data-class="0">/);
        assert.match(html, /<span class="badge culprit">culprit<\/span>/);
        // the finding's place opens by index, never by path
        assert.match(html, /rank 3 never entered all_reduce #6[^<]*<a href="#" class="place" data-post="open" data-finding="0" title="\/work\/proj\/hang_job.py:104">hang_job.py:104 \(skip\)<\/a>/);
        assert.match(html, /data-cls="0" data-frame="2"[^>]*>hang_job.py:103 \(skip\)</);
        assert.match(html, /waiting in barrier #1/);
        // the collectives table: a row per group, a column per class
        assert.match(html, /<tr class="differs"><td>0 \(default_pg\)<\/td><td>all_reduce #6<\/td><td>#5<\/td><\/tr>/);
        assert.match(html, /<th class="culprit">rank 3<\/th>/);
        assert.match(html, /Debug culprit \(rank 3\)/);
        assert.match(html, /Debug one per class \(2\)/);
        assert.match(html, /data-post="compare"/);
        assert.match(html, /4 ranks read in 2\.16 s/);
        assert.doesNotMatch(html, /\/venv\/lib[^"]*"[^>]*data-post/);
    });

    it("names a group torch left without a description by its number alone, and counts only classes of several ranks", () => {
        const lines = SKIP.map((l) => (l.event === 'collectives' && l.group === '1' ? { ...l, desc: 'undefined' } : l));
        const html = renderDiagnose(readDiagnose(lines), state, l10n, NONCE);
        assert.match(html, /<tr class="differs"><td>1<\/td><td>#0<\/td><td>barrier #1<\/td><\/tr>/);
        assert.match(html, /<span class="badge">3 ranks<\/span>/);
        assert.doesNotMatch(html, /1 ranks/);
    });

    it('escapes file names, functions and why sentences', () => {
        const evil = '/tmp/<img src=x onerror=alert(1)>/"q".py';
        const html = renderDiagnose(
            readDiagnose([
                { event: 'class', ranks: [0], state: 'stuck', collective: null, where: { file: evil, line: 3, function: '<script>f</script>' }, frames: [{ file: evil, line: 3, function: "it's" }] },
                { event: 'culprit', ranks: [0], why: 'rank 0 spins in <b>load</b> & "waits"', where: { file: evil, line: 3, function: 'f' } },
                { event: 'done', seconds: 0.5, ranks_read: 1, ranks_unread: [{ rank: 1, reason: '<i>gone</i>' }] },
            ]),
            { title: '<title>', meta: '' },
            l10n,
            NONCE,
        );
        const body = html.slice(html.indexOf('<body'));
        assert.doesNotMatch(body, /<img|<script>f|<b>load|<i>gone|<title>/);
        assert.match(body, /rank 0 spins in &lt;b&gt;load&lt;\/b&gt; &amp; &quot;waits&quot;/);
        assert.match(body, /title="\/tmp\/&lt;img src=x onerror=alert\(1\)&gt;\/&quot;q&quot;.py:3"/);
        assert.match(body, /&lt;i&gt;gone&lt;\/i&gt;/);
        assert.match(body, /it&#39;s/);
    });

    it('shows the healthy sentence and no debug buttons for a healthy job', () => {
        const html = renderDiagnose(
            readDiagnose([
                { event: 'class', ranks: [0, 1], state: 'running', collective: null, where: { file: JOB, line: 60, function: 'train' }, frames: [] },
                { event: 'healthy', why: 'every rank made progress' },
                { event: 'done', seconds: 1, ranks_read: 2, ranks_unread: [] },
            ]),
            state,
            l10n,
            NONCE,
        );
        assert.match(html, /<ul class="verdict healthy" id="verdict"><li>every rank made progress<\/li><\/ul>/);
        assert.doesNotMatch(html, /debugCulprit|culprit<\/span>|data-post="compare"/);
        assert.match(html, /No collective state was read\./);
    });

    it('does not link a place that is no file on disk', () => {
        const html = renderDiagnose(
            readDiagnose([
                { event: 'class', ranks: [0], state: 'stuck', collective: null, where: { file: '<string>', line: 1, function: 'f' }, frames: [] },
                { event: 'culprit', ranks: [0], why: 'stuck', where: { file: 'rel/x.py', line: null, function: 'g' } },
                { event: 'done', seconds: 1, ranks_read: 1, ranks_unread: [] },
            ]),
            state,
            l10n,
            NONCE,
        );
        assert.doesNotMatch(html, /data-post="open"/);
        assert.match(html, /<span class="muted">x.py \(g\)<\/span>/);
    });
});
