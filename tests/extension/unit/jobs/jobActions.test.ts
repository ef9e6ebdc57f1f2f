import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import type * as vscode from 'vscode';
import type { JobInfo } from '../../../../extension/src/core/jobList';
import type { JobActionsHost } from '../../../../extension/src/jobs/host';
import { pickJob, stopJob } from '../../../../extension/src/jobs/jobActions';
import type { TrackedJob } from '../../../../extension/src/jobs/jobState';
import { FakeRoomHost, job, rank } from './fakes';

class FakeActionsHost extends FakeRoomHost implements JobActionsHost {
    readonly quickPicks: { title?: string; items: { label: string; description?: string; detail?: string }[] }[] = [];
    choose: (labels: string[]) => string | undefined = () => undefined;
    readonly confirms: { message: string; detail: string }[] = [];
    answer: string | undefined;
    readonly stopped: string[] = [];

    showQuickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined> {
        this.quickPicks.push({ title: options.title, items: items.map((i) => ({ label: i.label, description: i.description, detail: i.detail })) });
        const label = this.choose(items.map((i) => i.label));
        return Promise.resolve(items.find((i) => i.label === label));
    }
    confirm(message: string, detail: string, button: string): Thenable<string | undefined> {
        this.confirms.push({ message, detail });
        return Promise.resolve(this.answer === 'yes' ? button : undefined);
    }
    stopDebugging(session: vscode.DebugSession): Thenable<void> {
        this.stopped.push(session.id);
        return Promise.resolve();
    }
}

/** A real process standing for a job's launcher; resolves with the signal that ended it. */
function launcher(): { proc: ChildProcess; ended: Promise<NodeJS.Signals | null> } {
    const proc = spawn('sleep', ['30'], { stdio: 'ignore' });
    return { proc, ended: new Promise((resolve) => proc.on('exit', (_code, signal) => resolve(signal))) };
}

const noState = { byJobId: (): TrackedJob | undefined => undefined };

describe('jobs/jobActions', () => {
    it('takes the only job, says when none runs, and asks among several', async () => {
        const host = new FakeActionsHost();
        const a = job([rank(0), rank(1)], { id: 'A', cwd: '/runs/a' });
        const b = job([rank(0)], { id: 'B', dir: null, source: 'scan' });
        assert.equal(await pickJob(host, [a], 'Which?'), a);
        assert.equal(await pickJob(host, [b], 'Which?', (j) => Boolean(j.dir)), undefined);
        assert.deepEqual(host.infos, ['No training job is running.']);
        host.choose = (labels) => labels[1];
        assert.equal(await pickJob(host, [a, b], 'Attach to which job?'), b);
        assert.deepEqual(host.quickPicks[0], {
            title: 'Attach to which job?',
            items: [
                { label: 'torchrun · A', description: '2 ranks · /runs/a', detail: 'torchrun train.py' },
                { label: 'torchrun · B', description: '1 ranks · /w', detail: 'torchrun train.py' },
            ],
        });
    });

    it("ends this window's session over a job it launched, then sends its supervisor SIGTERM", async () => {
        const host = new FakeActionsHost();
        const { proc, ended } = launcher();
        const j = job([rank(0)], { launcherPid: proc.pid ?? null });
        const state = { byJobId: (id: string) => (id === 'J1' ? ({ parent: { id: 'parent-J1' } } as TrackedJob) : undefined) };
        assert.equal(await stopJob(host, state, j), true);
        assert.deepEqual(host.stopped, ['parent-J1']);
        assert.equal(await ended, 'SIGTERM');
        assert.deepEqual(host.confirms, [], 'a job Rank Debugger started is stopped without asking');
        assert.deepEqual(host.logged, [`stop J1: SIGTERM to ${proc.pid}`]);
    });

    it('asks before it stops a job it did not start, and stops nothing when told no', async () => {
        const host = new FakeActionsHost();
        const { proc, ended } = launcher();
        const found: JobInfo = job([rank(0)], { id: 'P9', source: 'scan', dir: null, launcherPid: proc.pid ?? null, command: ['torchrun', '--nproc_per_node', '2', 'train.py'] });
        assert.equal(await stopJob(host, noState, found), false);
        assert.deepEqual(host.confirms, [{ message: `Stop torchrun · P9? Rank Debugger did not start it: its launcher (pid ${proc.pid}) gets SIGTERM.`, detail: 'torchrun --nproc_per_node 2 train.py' }]);
        assert.equal(proc.exitCode, null);
        assert.equal(proc.signalCode, null);
        host.answer = 'yes';
        assert.equal(await stopJob(host, noState, found), true);
        assert.equal(await ended, 'SIGTERM');
    });

    it('says when a job found running has no launcher to stop, and logs a launcher already gone', async () => {
        const host = new FakeActionsHost();
        assert.equal(await stopJob(host, noState, job([rank(0)], { id: 'P1', source: 'scan', launcherPid: null })), false);
        assert.deepEqual(host.infos, ['Job P1 has no launcher process to stop.']);
        const { proc, ended } = launcher();
        proc.kill('SIGKILL');
        await ended;
        assert.equal(await stopJob(host, noState, job([rank(0)], { launcherPid: proc.pid ?? null })), true);
        assert.match(host.logged[0], /^stop J1: Error: kill ESRCH/);
    });
});
