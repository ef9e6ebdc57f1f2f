import * as assert from 'node:assert/strict';
import type { JobNode } from '../../../../extension/src/jobs/jobsView';
import type { EvalHost } from '../../../../extension/src/inspect/host';
import { EvalInRank } from '../../../../extension/src/inspect/evalInRank';
import { Memento, tick } from '../launch/fakes';
import { FakeAttachHost, job, rank } from '../jobs/fakes';

/** The eval host: an output channel that records its lines and whether it was shown. */
class FakeEvalHost extends FakeAttachHost implements EvalHost {
    readonly channels: { name: string; lines: string[]; shown: number }[] = [];
    outputChannel(name: string): { appendLine(line: string): void; show(): void; dispose(): void } {
        const channel = { name, lines: [] as string[], shown: 0 };
        this.channels.push(channel);
        return { appendLine: (line) => channel.lines.push(line), show: () => (channel.shown += 1), dispose: () => undefined };
    }
}

const J = job([rank(0), rank(1)]);
const rankNode = (r: number): JobNode => ({ kind: 'rank', job: J, rank: J.ranks[r] });

/** Evaluates `expr` typed into the pick of rank `r`. */
async function evaluate(host: FakeEvalHost, ev: EvalInRank, r: number, expr: string): Promise<void> {
    const done = ev.evaluate(rankNode(r));
    host.pick.type(expr);
    await host.pick.enter();
    await done;
    await tick();
}

describe('inspect/evalInRank', () => {
    it("runs rankdebug eval in the rank and writes its answer to the Eval channel, shown", async () => {
        const host = new FakeEvalHost();
        const memento = new Memento();
        const ev = new EvalInRank(host, memento.asMemento, () => Promise.resolve('/venv/bin/python'));
        host.cli.set('eval J1 1 rank * 10 + 7', [{ event: 'result', rank: 1, pid: 1001, expr: 'rank * 10 + 7', text: '17', type: 'int' }]);
        await evaluate(host, ev, 1, 'rank * 10 + 7');
        assert.deepEqual(host.cliCalls[0].args, ['eval', 'J1', '1', 'rank * 10 + 7', '--json', '--timeout', '10']);
        assert.deepEqual(host.progress, ['[Evaluating in rank 1…]']);
        assert.deepEqual(host.channels, [{ name: 'Rank Debugger: Eval', lines: ['rank 1 › rank * 10 + 7 = 17'], shown: 1 }]);
        assert.equal(host.pick.title, 'Evaluate in rank 1 of J1');
        host.cli.set('eval J1 0 x', [{ event: 'result', rank: 0, expr: 'x', text: '1' }]);
        await evaluate(host, ev, 0, 'x');
        assert.equal(host.channels.length, 1, 'one channel, kept');
        assert.deepEqual(
            host.pick.items.map((i) => i.label),
            ['x', 'rank * 10 + 7'],
            'what is typed, then the recent expression',
        );
    });

    it("says the rank's error, or a missing answer, and nothing when cancelled", async () => {
        const host = new FakeEvalHost();
        const ev = new EvalInRank(host, new Memento().asMemento, () => Promise.resolve('python'));
        host.cli.set('eval J1 1 nope', [{ event: 'error', rank: 1, message: "NameError: name 'nope' is not defined" }]);
        await evaluate(host, ev, 1, 'nope');
        host.cli.set('eval J1 1 y', [{ event: 'compare' }]);
        await evaluate(host, ev, 1, 'y');
        host.cli.set('eval J1 1 z', new Error('cancelled'));
        await evaluate(host, ev, 1, 'z');
        assert.deepEqual(host.errors, ["Cannot evaluate in rank 1: NameError: name 'nope' is not defined", 'Cannot evaluate in rank 1: rankdebug eval gave no result']);
        assert.deepEqual(host.channels, []);
    });

    it('asks for a rank of Training Jobs, and runs nothing when no expression is given', async () => {
        const host = new FakeEvalHost();
        const ev = new EvalInRank(host, new Memento().asMemento, () => Promise.resolve('python'));
        await ev.evaluate({ kind: 'job', job: J });
        assert.deepEqual(host.infos, ['Right-click a rank of an armed job in Training Jobs to evaluate in it.']);
        const done = ev.evaluate(rankNode(0));
        host.pick.escape();
        await done;
        assert.deepEqual(host.cliCalls, []);
    });
});
