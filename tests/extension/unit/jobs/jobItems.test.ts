import * as assert from 'node:assert/strict';
import type { LaunchEvent } from '../../../../extension/src/core/events';
import type { GroupTreeNode } from '../../../../extension/src/core/jobTree';
import { LiveRanks } from '../../../../extension/src/core/liveRanks';
import { groupItem, jobItem, newestFirst, rankItem } from '../../../../extension/src/jobs/jobItems';
import type { TrackedJob } from '../../../../extension/src/jobs/jobState';
import { l10n } from '../debug/fakes';
import { job, rank } from './fakes';

const J = job([rank(0), rank(1)], { armed: false, startTime: null });

describe('jobs/jobItems', () => {
    it('words a job row: ranks, where it was found, armed, the command in the tooltip, the menus it takes', () => {
        assert.deepEqual(jobItem({ kind: 'job', job: J }, undefined, l10n), {
            id: 'job:J1',
            label: 'torchrun · J1',
            state: 'expanded',
            description: '2 ranks · rankdebug',
            tooltip: { command: 'torchrun train.py', text: '\ncwd: /w\nlauncher pid: 999\n' },
            contextValue: 'rankdebug.job registry',
            icon: 'server-process',
        });
        const found = job([rank(0)], { source: 'scan', dir: null, armed: true, worldSize: 8, startTime: null });
        const item = jobItem({ kind: 'job', job: found, tracked: { terminal: {} } as TrackedJob }, 3, l10n);
        assert.equal(item.description, '8 ranks · 3 shown · found running · armed');
        assert.equal(item.contextValue, 'rankdebug.job scan terminal armed');
        assert.equal(item.icon, 'zap');
    });

    it('words a range row, collapsed, with the group commands where the job takes them', () => {
        const group = { kind: 'group', id: 'node:gpu-a', label: 'ranks 0-127', description: '128 running' } as unknown as GroupTreeNode;
        const item = groupItem({ kind: 'group', job: J, group });
        assert.deepEqual(item, {
            id: 'group:J1:node:gpu-a',
            label: 'ranks 0-127',
            state: 'collapsed',
            description: '128 running',
            tooltip: 'ranks 0-127\n128 running',
            contextValue: 'rankdebug.ranks control',
            icon: 'server',
        });
        const byDim = groupItem({ kind: 'group', job: job([], { dir: null }), group: { ...group, id: 'dim:tp:0' } as GroupTreeNode });
        assert.equal(byDim.contextValue, 'rankdebug.ranks');
        assert.equal(byDim.icon, 'layers');
    });

    it('words a rank row: coordinates, pid, state, use, port; attachable in the tooltip and the menus', () => {
        const r = rank(1, { coords: { dp: 0, tp: 1 }, cpu: 45.4, rss: 302 * 1024 * 1024, gpu: [{ index: 1, memoryMib: 900 }], port: 5679, state: 'listening', armed: false });
        const item = rankItem({ kind: 'rank', job: J, rank: r }, undefined, l10n);
        assert.equal(item.id, 'rank:J1:1');
        assert.equal(item.label, 'rank 1');
        assert.equal(item.state, 'none');
        assert.equal(item.description, 'dp 0 · tp 1 · pid 1001 · waiting for debugger · 45% · 302 MiB · GPU 1 · 127.0.0.1:5679');
        assert.equal(item.tooltip, 'rank 1 (local 1) · pid 1001 · gpu-a\ndp 0 · tp 1\nwaiting for debugger · 127.0.0.1:5679\nAttach starts a debugger in this rank; only this rank pauses.');
        assert.equal(item.contextValue, 'rankdebug.rank attachable control');
        const attached = rankItem({ kind: 'rank', job: J, rank: r }, 'attached', l10n);
        assert.doesNotMatch(attached.tooltip as string, /Attach starts/);
        assert.equal(attached.contextValue, 'rankdebug.rank control');
    });

    it('says where a paused or raised rank is, and leaves out the use of an exited one', () => {
        const live = new LiveRanks();
        live.apply({ event: 'stopped', rank: 0, reason: 'breakpoint', file: '/w/train.py', line: 30, function: 'main' } as LaunchEvent);
        live.apply({ event: 'raised', rank: 1, exception: 'ValueError', message: 'bad shape', file: '/w/model.py', line: 88, function: 'forward' } as LaunchEvent);
        const tracked = { live } as unknown as TrackedJob;
        const paused = rankItem({ kind: 'rank', job: J, rank: rank(0, { armed: false }), tracked }, 'paused', l10n);
        assert.match(paused.tooltip as string, /\n\/w\/train\.py:30 \(main\)$/);
        assert.equal(paused.icon, 'debug-pause');
        const raised = rankItem({ kind: 'rank', job: J, rank: rank(1, { armed: false }), tracked }, undefined, l10n);
        assert.match(raised.tooltip as string, /\nraised ValueError at model\.py:88\nValueError: bad shape\n\/w\/model\.py:88 \(forward\)\nThe rank is held alive: Attach opens it at this frame\.\nAttach starts/);
        assert.equal(raised.icon, 'error');
        const exited = rankItem({ kind: 'rank', job: J, rank: rank(0, { state: 'exited', cpu: 3, rss: 1024 * 1024 }) }, undefined, l10n);
        assert.equal(exited.description, 'pid 1000 · exited · armed');
        assert.equal(exited.contextValue, 'rankdebug.rank exited control');
    });

    it('lists the newest job first, a job whose start is unknown last', () => {
        const jobs = [job([], { id: 'old', startTime: 10 }), job([], { id: 'unknown', startTime: null }), job([], { id: 'new', startTime: 20 })];
        assert.deepEqual(
            newestFirst(jobs).map((j) => j.id),
            ['new', 'old', 'unknown'],
        );
    });
});
