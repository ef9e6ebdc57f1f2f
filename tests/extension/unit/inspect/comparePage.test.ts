import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { CliOptions, CliRun } from '../../../../extension/src/common/cli';
import { ComparePage, type CompareDeps, type Request } from '../../../../extension/src/inspect/comparePage';
import type { CompareHost } from '../../../../extension/src/inspect/host';
import { FakeAttachHost } from '../jobs/fakes';
import { FakePanel } from './fakes';

class FakeCompareHost extends FakeAttachHost implements CompareHost {
    readonly panels: { title: string; column: vscode.ViewColumn; panel: FakePanel }[] = [];
    readonly warnings: string[] = [];
    showWarning(message: string): void {
        this.warnings.push(message);
    }
    createComparePanel(title: string, column: vscode.ViewColumn): vscode.WebviewPanel {
        const panel = new FakePanel();
        this.panels.push({ title, column, panel });
        return panel as unknown as vscode.WebviewPanel;
    }
}

/** `rankdebug eval J1 all loss --json`: ranks 0, 1, 3 agree, rank 2 does not. */
const LOSS = [
    ...[0, 1, 2, 3].map((rank) => ({ event: 'result', job: 'J1', rank, pid: 10 + rank, expr: 'loss', text: rank === 2 ? '2.5' : '2.25', type: 'float' })),
    { event: 'compare', groups: [{ ranks: [0, 1, 3], text: '2.25' }, { ranks: [2], text: '2.5' }] },
];

const REQUEST: Request = { job: 'J1', expr: 'loss', from: 1, fn: 'train_step', t0: Date.now() };

function compare(request: Request = REQUEST): { host: FakeCompareHost; page: ComparePage; panel: FakePanel; made: number[][]; gone: () => number } {
    const host = new FakeCompareHost();
    const made: number[][] = [];
    let disposed = 0;
    const deps: CompareDeps = {
        python: () => Promise.resolve('/venv/bin/python'),
        makeGroupOf: (_job, ranks) => Promise.resolve(void made.push([...ranks])),
        dimsOf: () => Promise.resolve(['dp', 'tp']),
    };
    const page = new ComparePage(host, request, deps, 2 as vscode.ViewColumn, () => (disposed += 1));
    return { host, page, panel: host.panels[0].panel, made, gone: () => disposed };
}

describe('inspect/comparePage', () => {
    it('evaluates the expression in every rank, in the frame of the function chosen, and shows the groups', async () => {
        const { host, page, panel } = compare();
        host.cli.set('eval J1 all loss', LOSS);
        await page.run();
        assert.equal(host.panels[0].title, 'Compare: loss');
        assert.deepEqual(host.cliCalls[0].args, ['eval', 'J1', 'all', 'loss', '--json', '--timeout', '10', '--function', 'train_step']);
        assert.match(panel.html[0], /Evaluating loss in every rank…/);
        assert.match(panel.webview.html, /2\.25/);
        assert.match(panel.webview.html, /2\.5/);
        assert.match(host.logged[0], /^compare "loss" in J1 \(function train_step\): 4 ranks, 2 groups, odd 2; panel shown \d+ ms/);
    });

    it('asks these ranks where they are now, and cuts a long expression in the title', async () => {
        const long = `model.layers[0].${'x'.repeat(80)}`;
        const { host, page } = compare({ job: 'J1', expr: long, t0: 0, ranks: '0,3', now: true });
        host.cli.set(`eval J1 0,3 ${long}`, LOSS);
        await page.run();
        assert.deepEqual(host.cliCalls[0].args.slice(4), ['--json', '--timeout', '10', '--now']);
        assert.equal(host.panels[0].title, `Compare: ${long.slice(0, 59)}…`);
    });

    it('says why it cannot compare', async () => {
        const { host, page, panel } = compare();
        host.cli.set('eval J1 all loss', new Error('J1 has no rank with a handler'));
        await page.run();
        assert.match(panel.webview.html, /Cannot compare loss: J1 has no rank with a handler/);
        assert.deepEqual(host.logged, ['warn: compare "loss" in J1: J1 has no rank with a handler']);
    });

    it('shows the newest run: an older one still under way is cancelled and its answer dropped', async () => {
        const { host, page, panel } = compare();
        const signals: AbortSignal[] = [];
        const answers: ((lines: Record<string, unknown>[]) => void)[] = [];
        host.runCli = (_python: string, args: string[], options: CliOptions): Promise<CliRun> => {
            host.cliCalls.push({ args, options });
            if (options.signal) signals.push(options.signal);
            return new Promise((resolve) => answers.push((lines) => resolve({ answer: lines[0], lines, code: 0, ms: 5 })));
        };
        const first = page.run();
        await new Promise((r) => setTimeout(r, 5));
        const second = page.run({ ...REQUEST, t0: Date.now() });
        await new Promise((r) => setTimeout(r, 5));
        assert.equal(signals[0].aborted, true);
        answers[1](LOSS);
        await second;
        const shown = panel.webview.html;
        answers[0]([{ event: 'compare', groups: [{ ranks: [0, 1, 2, 3], text: '9.75' }] }]);
        await first;
        assert.equal(panel.webview.html, shown, 'the older answer is not shown');
    });

    it('takes a tolerance from the page, and refuses one that is no number of 0 or more', async () => {
        const { host, page, panel } = compare();
        host.cli.set('eval J1 all loss', LOSS);
        await page.run();
        panel.messages.fire({ type: 'tolerance', value: '-1' });
        await new Promise((r) => setTimeout(r, 5));
        assert.deepEqual(host.warnings, ['A tolerance is a number of 0 or more, such as 1e-3; "-1" is not.']);
        assert.equal(host.cliCalls.length, 1);
        await panel.post({ type: 'tolerance', value: '1e-3' });
        assert.deepEqual(host.cliCalls[1].args.slice(-2), ['--tolerance', '0.001']);
        await panel.post({ type: 'tolerance', value: '' });
        assert.ok(!host.cliCalls[2].args.includes('--tolerance'), 'empty: exact again');
    });

    it("compares within one of the job's dimensions, refreshes, and makes a group of a group's ranks", async () => {
        const { host, page, panel, made } = compare();
        host.cli.set('eval J1 all loss', LOSS);
        await page.run();
        await panel.post({ type: 'per', value: 'tp' });
        assert.deepEqual(host.cliCalls[1].args.slice(-2), ['--per', 'tp']);
        await panel.post({ type: 'per', value: 'pp' });
        assert.equal(host.cliCalls.length, 2, 'not a dimension of the job');
        await panel.post({ type: 'refresh' });
        assert.deepEqual(host.cliCalls[2].args.slice(-2), ['--per', 'tp']);
        await panel.post({ type: 'per', value: '' });
        assert.ok(!host.cliCalls[3].args.includes('--per'));
        await panel.post({ type: 'makeGroup', group: 1 });
        await panel.post({ type: 'makeGroup', group: 5 });
        assert.deepEqual(made, [[2]]);
    });

    it('cancels its run and tells its owner when the panel is closed', async () => {
        const { host, page, gone } = compare();
        let signal: AbortSignal | undefined;
        host.runCli = (_python: string, _args: string[], options: CliOptions): Promise<CliRun> => {
            signal = options.signal;
            return new Promise(() => undefined);
        };
        void page.run();
        await new Promise((r) => setTimeout(r, 5));
        page.dispose();
        assert.equal(signal?.aborted, true);
        assert.equal(gone(), 1);
    });
});
