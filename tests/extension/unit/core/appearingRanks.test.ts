import * as assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { checkJob, resolveChoice, startedItems, startedRanks, toAttach } from '../../../../extension/src/core/appearingRanks';
import { readJobs } from '../../../../extension/src/core/jobList';
import { RankChecker, type Execute } from '../../../../extension/src/core/rankCheck';
import { choiceName } from '../../../../extension/src/core/rankChoice';
import { l10n } from '../debug/fakes';

const ROOT = path.resolve(__dirname, '../../..');

/** The language server's own `rankdebug.checkRanks` (rankdebug.lsp.commands.check_ranks), in a real Python. */
class RealCheck {
    private readonly proc: ChildProcessWithoutNullStreams;
    private readonly waiting: ((line: string) => void)[] = [];

    constructor() {
        const code = [
            'import asyncio, json, sys',
            'from rankdebug.lsp.commands import check_ranks',
            'for line in sys.stdin:',
            '    print(json.dumps(asyncio.run(check_ranks(None, json.loads(line)))), flush=True)',
        ].join('\n');
        this.proc = spawn(path.join(ROOT, '.venv/bin/python'), ['-c', code], { cwd: ROOT });
        readline.createInterface({ input: this.proc.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    }

    readonly execute: Execute = <T>(_command: string, arg: unknown): Promise<T> =>
        new Promise<T>((resolve) => {
            this.waiting.push((line) => resolve(JSON.parse(line) as T));
            this.proc.stdin.write(`${JSON.stringify(arg)}\n`);
        });

    close(): void {
        this.proc.stdin.end();
    }
}

const rank = (r: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    pid: 4000 + r, rank: r, local_rank: r % 2, world_size: 4, host: r < 2 ? 'vm-a' : 'vm-b', port: null, address: null, state: 'running', armed: true, coords: null, ...extra,
});

/** An armed job as `rankdebug jobs JOB --json` answers while its ranks start (3 of 4 so far, rank 2 listed twice, rank 3 not yet). */
function job(ranks: Record<string, unknown>[], world: number | null = 4): ReturnType<typeof readJobs>['jobs'][number] {
    const answer = { host: 'vm-a', jobs: [{ id: 'J', source: 'registry', host: 'vm-a', launcher: 'python', launcher_pid: 1, command: ['bash', 'run.sh'], cwd: '/w', start_time: 1, world_size: world, armed: true, ranks }] };
    return readJobs(answer).jobs[0];
}

describe('core/appearingRanks', function () {
    this.timeout(30000);
    let check: RealCheck;
    before(() => {
        check = new RealCheck();
    });
    after(() => check.close());
    const server = (text: string) => (j: Parameters<typeof checkJob>[0] extends never ? never : ReturnType<typeof checkJob>) => new RankChecker(check.execute, j, false).check(text);

    it('lists each started rank once, with its node (hosts in order, the job host first), local rank and pid', () => {
        const started = startedRanks(job([rank(2), rank(0), rank(1), rank(2, { pid: 9999 }), rank(5, { state: 'exited' })]));
        assert.deepEqual(started.map((r) => [r.rank, r.node, r.local, r.pid]), [[0, 0, 0, 4000], [1, 0, 1, 4001], [2, 1, 0, 4002]]);
        const items = startedItems(started, 4, l10n);
        assert.deepEqual(items.map((i) => i.label), ['node 0 · vm-a · 0,1', 'rank 0 · node 0', 'rank 1 · node 0', 'node 1 · vm-b · 2', 'rank 2 · node 1']);
        assert.equal(items[4].description, 'local 0 · pid 4002');
        // One host: one separator that counts what has started.
        const one = startedRanks(job([rank(0, { host: 'vm-a' }), rank(1)]));
        assert.deepEqual(startedItems(one, 4, l10n).map((i) => i.label), ['Started: 0,1 of 4', 'rank 0 · node 0', 'rank 1 · node 0']);
        assert.equal(startedItems(one, null, l10n)[0].label, 'Started: 0,1');
    });

    it("shows each rank's coordinates once it says them, and reads selectors through them only when ranks 0..N-1 all have", () => {
        const mesh = [rank(0, { coords: { dp: 0, tp: 0 } }), rank(1, { coords: { dp: 0, tp: 1 } }), rank(2, { coords: { dp: 1, tp: 0 } })];
        const started = startedRanks(job(mesh));
        assert.equal(startedItems(started, 4, l10n)[4].label, 'rank 2 · node 1 · dp 1 · tp 0');
        assert.deepEqual(checkJob(started, 4).coords?.dims, { dp: 2, tp: 2 });
        assert.equal(checkJob(startedRanks(job([mesh[0], rank(1), mesh[2]])), 4).coords, null);
        assert.equal(checkJob(startedRanks(job([mesh[0], mesh[2]])), 4).coords, null);
    });

    it('reads a typed choice with the real server: numbers stand for ranks not started yet, the rest for those started', async () => {
        const started = startedRanks(job([rank(0, { coords: { dp: 0, tp: 0 } }), rank(1, { coords: { dp: 0, tp: 1 } }), rank(2, { coords: { dp: 1, tp: 0 } })]));
        assert.deepEqual(await resolveChoice('1,3', started, 4, server('1,3')), { ranks: [1, 3] });
        assert.deepEqual(await resolveChoice('all', started, 4, server('all')), { ranks: [0, 1, 2, 3] });
        // The world size not known: `all` is every rank started so far (asked again as more start).
        assert.deepEqual(await resolveChoice('all', started, null, server('all')), { ranks: [0, 1, 2] });
        assert.deepEqual(await resolveChoice('local1', started, 4, server('local1')), { ranks: [1] });
        assert.deepEqual(await resolveChoice('tp=0', started, 4, server('tp=0')), { ranks: [0, 2] });
        const outside = await resolveChoice('7', started, 4, server('7'));
        assert.ok('error' in outside && outside.error.includes('rank 7 is outside the job'), JSON.stringify(outside));
        const bad = await resolveChoice('1-', started, 4, server('1-'));
        assert.ok('error' in bad && bad.error.length > 0, JSON.stringify(bad));
        assert.deepEqual(await resolveChoice('  ', started, 4, server('')), { error: '' });
    });

    it('attaches the started ranks a choice names that no session has and none was sent', () => {
        const started = startedRanks(job([rank(0), rank(1), rank(2)]));
        assert.deepEqual(toAttach(started, [1, 3, 2], new Set([2])).map((r) => r.rank), [1]);
        assert.equal(toAttach(started, [1], new Set())[0].info.pid, 4001);
    });

    it('names the session of a job whose ranks are chosen as they start', () => {
        assert.equal(choiceName('run.sh', { spec: '', arm: true, live: true }), 'run.sh · ranks as they start');
    });
});
