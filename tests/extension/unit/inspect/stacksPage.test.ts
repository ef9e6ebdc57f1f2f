import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { ClassRep } from '../../../../extension/src/core/stacks';
import type { StacksHost } from '../../../../extension/src/inspect/host';
import { StacksPage } from '../../../../extension/src/inspect/stacksPage';
import { FakeAttachHost, job, rank } from '../jobs/fakes';
import { FakePanel } from './fakes';

class FakeStacksHost extends FakeAttachHost implements StacksHost {
    readonly panels: { title: string; panel: FakePanel }[] = [];
    readonly warnings: string[] = [];
    readonly opened: string[] = [];
    readonly windowProgress: string[] = [];
    showWarning(message: string): void {
        this.warnings.push(message);
    }
    withWindowProgress<R>(title: string, task: () => Promise<R>): Thenable<R> {
        this.windowProgress.push(title);
        return task();
    }
    createPanel(title: string): vscode.WebviewPanel {
        const p = new FakePanel();
        this.panels.push({ title, panel: p });
        return p as unknown as vscode.WebviewPanel;
    }
    showFile(file: string, line: number): Thenable<unknown> {
        this.opened.push(`${file}:${line}`);
        return Promise.resolve();
    }
}

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-stacks-'));
const TRAIN = path.join(DIR, 'train.py');
fs.writeFileSync(TRAIN, 'print(1)\n');
const frame = (name: string, file: string, line: number): Record<string, unknown> => ({ name, file, line, library: false, short: `${path.basename(file)}:${line}` });

/** `rankdebug stacks J1 --json`: ranks 0-2 in all_reduce, rank 3 (odd) in its loader; the tree main → step → two branches. */
const ANSWER = {
    job: 'J1',
    time: 1795361102,
    seconds: 0.03,
    ranks: [0, 1, 2, 3].map((r) => ({ rank: r, pid: 1000 + r, host: 'gpu-a', error: null, collective: r < 3 ? 'all_reduce' : null, seconds: 0.01, threads: [] })),
    groups: [
        { thread: 'MainThread', main: true, ranks: [0, 1, 2], pids: [1000, 1001, 1002], label: 'ranks 0-2', summary: 'all_reduce ← main', collective: 'all_reduce', active: false, odd: false, frames: [frame('all_reduce', '/elsewhere/c10d.py', 2501), frame('main', TRAIN, 30)] },
        { thread: 'MainThread', main: true, ranks: [3], pids: [1003], label: 'rank 3', summary: 'load ← main', collective: null, active: true, odd: true, frames: [frame('load', TRAIN, 12), frame('main', TRAIN, 31)] },
    ],
    odd: [3],
    tree: [
        {
            ...frame('main', TRAIN, 30),
            count: 4,
            ranks: [0, 1, 2, 3],
            children: [
                { ...frame('all_reduce', '/elsewhere/c10d.py', 2501), count: 3, ranks: [2, 0, 1, 1], children: [] },
                { ...frame('load', TRAIN, 12), count: 1, ranks: [3], children: [] },
            ],
        },
    ],
};

function page(): { host: FakeStacksHost; p: StacksPage; panel: FakePanel; made: number[][]; opened: { reps: ClassRep[]; why: string }[]; gone: () => number } {
    const host = new FakeStacksHost();
    const made: number[][] = [];
    const opened: { reps: ClassRep[]; why: string }[] = [];
    let disposed = 0;
    const deps = {
        python: () => Promise.resolve('/venv/bin/python'),
        groups: { makeGroupOf: (_job: string, ranks: readonly number[]) => Promise.resolve(void made.push([...ranks])) },
        sessions: { open: (_job: string, reps: ClassRep[], why: string) => Promise.resolve(void opened.push({ reps, why })) },
    };
    const p = new StacksPage(host, job([rank(0), rank(1), rank(2), rank(3)]), deps as never, () => (disposed += 1));
    return { host, p, panel: host.panels[0].panel, made, opened, gone: () => disposed };
}

describe('inspect/stacksPage', () => {
    after(() => fs.rmSync(DIR, { recursive: true, force: true }));

    it("reads the job's stacks and renders them, saying so while it reads", async () => {
        const { host, p, panel } = page();
        host.settingsNow = { ...host.settingsNow, hosts: ['node1'] };
        host.cli.set('stacks J1', [ANSWER]);
        await p.load();
        assert.equal(host.panels[0].title, 'Stacks: torchrun · J1');
        assert.deepEqual(host.cliCalls[0].args, ['stacks', 'J1', '--json', '--hosts', 'node1']);
        assert.deepEqual(host.windowProgress, ['Reading stacks']);
        const [reading, shown] = panel.html;
        assert.match(reading, /Reading the stack of every rank…/);
        assert.match(shown, /ranks 0-2/);
        assert.match(shown, /4 of 4 ranks read in 0\.03 s/);
        assert.match(host.logged[0], /^stacks of J1: 2 groups, 4\/4 ranks read, \d+ ms$/);
    });

    it('says why the stacks cannot be read, and reads them again on refresh, one read at a time', async () => {
        const { host, p, panel } = page();
        host.cli.set('stacks J1', new Error('no rank of J1 could be read'));
        await p.load();
        assert.match(panel.html.at(-1) ?? '', /Cannot read the stacks: no rank of J1 could be read/);
        assert.deepEqual(host.logged, ['warn: stacks of J1: no rank of J1 could be read']);
        host.cli.set('stacks J1', [ANSWER]);
        const a = p.load();
        const b = p.load();
        await Promise.all([a, b]);
        assert.equal(host.cliCalls.length, 2, 'a load while one runs joins it');
        await panel.post({ type: 'refresh' });
        assert.equal(host.cliCalls.length, 3);
        assert.match(panel.html.at(-1) ?? '', /ranks 0-2/);
    });

    it("opens a frame's file beside the panel from this side's model, and says when the file is not here", async () => {
        const { host, p, panel } = page();
        host.cli.set('stacks J1', [ANSWER]);
        await p.load();
        await panel.post({ type: 'open', column: 0, frame: 1 });
        assert.deepEqual(host.opened, [`${TRAIN}:29`]);
        await panel.post({ type: 'open', column: 0, frame: 0 });
        assert.deepEqual(host.warnings, ['/elsewhere/c10d.py is not on this machine.']);
        await panel.post({ type: 'open', column: 7, frame: 0 });
        await panel.post({ type: 'open', column: '0', frame: 1 });
        await panel.post({ type: 'openNode', node: 2 });
        assert.deepEqual(host.opened, [`${TRAIN}:29`, `${TRAIN}:11`]);
    });

    it("makes a group of a tree node's ranks, and debugs one rank per class or a node's class", async () => {
        const { host, p, panel, made, opened } = page();
        host.cli.set('stacks J1', [ANSWER]);
        await p.load();
        await panel.post({ type: 'group', node: 1 });
        assert.deepEqual(made, [[0, 1, 2]]);
        await panel.post({ type: 'debugClasses' });
        assert.deepEqual(opened[0], { reps: [{ rank: 3, others: 0, odd: true }, { rank: 0, others: 2, odd: false }], why: 'stacks: debug one rank per class' });
        await panel.post({ type: 'debugNode', node: 0 });
        assert.deepEqual(opened[1], { reps: [{ rank: 3, others: 3, odd: true }], why: 'stacks: debug the class of ranks 0-3' });
        await panel.post({ type: 'group', node: 'x' });
        await panel.post({ type: 'group', node: 99 });
        assert.equal(made.length, 1);
    });

    it('tells its owner when the panel is closed', () => {
        const { p, gone } = page();
        p.dispose();
        assert.equal(gone(), 1);
    });
});
