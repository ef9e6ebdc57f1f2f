import * as assert from 'node:assert/strict';
import { debounce } from '../../../../extension/src/core/debounce';
import { CHECK_RANKS, RankChecker, choiceSpec, type CheckRanksArgs, type CheckRanksReply, type Execute } from '../../../../extension/src/core/rankCheck';
import { presets } from '../../../../extension/src/core/ranks';

/** A stand-in for the server: answers from a table, records what it was asked. */
function fakeServer(answers: Record<string, CheckRanksReply | Error>): { execute: Execute; calls: { command: string; arg: CheckRanksArgs }[] } {
    const calls: { command: string; arg: CheckRanksArgs }[] = [];
    const execute = (<T>(command: string, arg: unknown): Promise<T> => {
        calls.push({ command, arg: arg as CheckRanksArgs });
        const answer = answers[(arg as CheckRanksArgs).spec];
        if (answer === undefined) return Promise.reject(new Error(`unexpected ${(arg as CheckRanksArgs).spec}`));
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
    }) as Execute;
    return { execute, calls };
}

const job = { ranks: [{ rank: 0, node_rank: 0, local_rank: 0 }, { rank: 1 }], worldSize: 2 };

describe('core/rankCheck', () => {
    it("asks rankdebug.checkRanks with the plan's ranks, once per text", async () => {
        const { execute, calls } = fakeServer({ '1': { rankSpec: '1', ranks: [1], arm: false } });
        const checker = new RankChecker(execute, job, true);
        assert.deepEqual(await checker.check(' 1 '), { rankSpec: '1', ranks: [1], arm: false });
        await checker.check('1');
        assert.equal(calls.length, 1);
        assert.equal(calls[0].command, CHECK_RANKS);
        assert.deepEqual(calls[0].arg, {
            spec: '1',
            allowArm: true,
            ranks: [{ rank: 0, node_rank: 0, local_rank: 0 }, { rank: 1, node_rank: null, local_rank: null }],
            worldSize: 2,
        });
        await checker.check('1', false);
        assert.equal(calls.length, 2);
        assert.equal(calls[1].arg.allowArm, false);
    });

    it("gives the server's message for a text that is no choice, and nothing when the server fails", async () => {
        const { execute, calls } = fakeServer({ '5': { error: { message: '--ranks: rank 5 is outside the job (world size 2)' } }, x: new Error('server stopped') });
        const checker = new RankChecker(execute, job, false);
        assert.equal(await checker.problem('5'), '--ranks: rank 5 is outside the job (world size 2)');
        assert.equal(await checker.problem('x'), undefined);
        // A failed request is not cached: the next check asks again.
        assert.equal(await checker.problem('x'), undefined);
        assert.equal(calls.filter((c) => c.arg.spec === 'x').length, 2);
    });

    it('shows a checked choice compactly, with preset names, else as the server wrote it', async () => {
        const { execute } = fakeServer({
            '0-3': { rankSpec: '0,1,2,3', ranks: [0, 1, 2, 3], arm: false },
            'arm': { rankSpec: '', ranks: [], arm: true },
            'all+arm': { rankSpec: '0,1,2,3', ranks: [0, 1, 2, 3], arm: true },
        });
        const checker = new RankChecker(execute, job, true);
        assert.deepEqual(await checker.choice('0-3'), { spec: '0-3', arm: false, ranks: [0, 1, 2, 3] });
        assert.deepEqual(await checker.choice('arm'), { spec: '', arm: true, ranks: [] });
        const choices = presets({ all: [0, 1, 2, 3] }, 1);
        assert.deepEqual(await checker.choice('all+arm', choices), { spec: 'all', arm: true, ranks: [0, 1, 2, 3] });
        assert.equal(choiceSpec({ rankSpec: 'local0', ranks: null, arm: false }), 'local0');
    });

    it('debounces: only the last of quick calls reaches the check', async () => {
        const seen: string[] = [];
        const check = debounce(async (v: string) => {
            seen.push(v);
            return `checked ${v}`;
        }, 20, undefined);
        const results = await Promise.all([check('0'), check('0-'), check('0-3')]);
        assert.deepEqual(results, [undefined, undefined, 'checked 0-3']);
        assert.deepEqual(seen, ['0-3']);
        assert.equal(await check('1'), 'checked 1');
        assert.deepEqual(seen, ['0-3', '1']);
    });
});
