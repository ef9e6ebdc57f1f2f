/**
 * RankLink against a real job: `rankdebug launch --json` over stdlib-only ranks
 * (tests/launch/scripts/many_ranks.py), each chosen rank's gate in front of real debugpy. Ranks
 * whose only client is a link (no VS Code session) stop together and take group commands; a
 * rank whose client went (a session ended) is linked again and still pauses with the rest.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { controlSocket, sendControl } from '../../../../extension/src/core/control';
import { LineSplitter } from '../../../../extension/src/core/events';
import { endRankSession } from '../../../../extension/src/debug/linkSession';
import { RankLink } from '../../../../extension/src/debug/rankLink';
import { l10n, until } from './fakes';

const ROOT = process.cwd();
const PYTHON = fs.existsSync(path.join(ROOT, '.venv/bin/python')) ? path.join(ROOT, '.venv/bin/python') : 'python3';
const SCRIPT = path.join(ROOT, 'tests/launch/scripts/many_ranks.py');
const NPROC = 3;

type Ev = Record<string, unknown>;

describe('debug/rankLink with a real job', function () {
    this.timeout(180000);
    let proc: ChildProcess | undefined;
    const links: RankLink[] = [];
    let tmp = '';
    after(async () => {
        await Promise.all(links.map((l) => l.close()));
        proc?.kill('SIGTERM');
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it('stops ranks with no session together, continues and pauses them, and links a rank again after its client went', async () => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rankdebug-link-'));
        const launcher = path.join(tmp, 'many-ranks');
        fs.writeFileSync(launcher, `#!/bin/sh\nexec ${PYTHON} ${SCRIPT} launch "$@"\n`, { mode: 0o700 });
        const events: Ev[] = [];
        const splitter = new LineSplitter();
        proc = spawn(PYTHON, ['-m', 'rankdebug', 'launch', '--json', '--ranks', 'all', '--', launcher, '--nproc', String(NPROC), '--per-node', String(NPROC), '--odd', '1'], {
            cwd: tmp,
            env: { ...process.env, PYTHONPATH: path.join(ROOT, 'pyserver') },
            stdio: ['ignore', 'pipe', 'ignore'],
        });
        proc.stdout?.setEncoding('utf8');
        proc.stdout?.on('data', (chunk: string) => {
            for (const line of splitter.push(chunk)) {
                try {
                    events.push(JSON.parse(line) as Ev);
                } catch {
                    // the job's own output
                }
            }
        });
        const find = (event: string, rank?: number, after = 0): Ev | undefined => events.slice(after).find((e) => e.event === event && (rank === undefined || e.rank === rank));
        await until(() => find('job') !== undefined && [0, 1, 2].every((r) => find('listening', r)), 'the ranks to listen', 90000);
        const dir = String(find('job')?.dir);
        // A line only rank 1 (--odd 1) runs: load_batch's body.
        const text = fs.readFileSync(SCRIPT, 'utf8').split('\n');
        const line = text.findIndex((l) => l.startsWith('def load_batch')) + 2;
        const breakpoints = [{ path: SCRIPT, breakpoints: [{ line }] }];
        for (const rank of [0, 1, 2]) {
            const ep = find('listening', rank) as { host: string; port: number };
            const link = new RankLink(rank, ep.host, ep.port);
            links[rank] = link;
            await link.open({ type: 'rankdebug', request: 'attach', name: `rank ${rank}`, justMyCode: true }, breakpoints);
        }

        // Rank 1 hits the breakpoint; ranks 0 and 2, with no session, are paused with it.
        await until(() => [0, 1, 2].every((r) => find('stopped', r)), 'every rank stopped together', 90000);
        assert.equal(find('stopped', 1)?.reason, 'breakpoint');
        assert.equal(find('stopped', 1)?.line, line);
        for (const r of [0, 2]) {
            assert.equal(find('stopped', r)?.reason, 'pause');
            assert.equal(find('stopped', r)?.file, SCRIPT, `rank ${r} is shown paused in the script: ${JSON.stringify(events.filter((e) => e.rank === r))}`);
        }
        await until(() => links.every((l) => l.stopped !== undefined), 'each link to know its rank stopped');

        // Continue All reaches every rank (the supervisor goes through each link).
        let mark = events.length;
        const cont = await sendControl(controlSocket(dir), { command: 'continue' }, l10n, 20000);
        assert.deepEqual(cont.ranks, [0, 1, 2]);
        await until(() => [0, 1, 2].every((r) => find('continued', r, mark)), 'every rank continued', 30000);

        // Rank 2's session is ended by the cap (endRankSession: `disconnect`, never stopDebugging,
        // which would end the job): the gate closes the connection itself, which is what ends a
        // VS Code session; then a new link takes the rank: it still pauses together.
        const old = links[2];
        const asSession = {
            configuration: { type: 'rankdebug', request: 'attach', name: 'rank 2', __rank: { rank: 2 } },
            customRequest: async (command: string, args?: Record<string, unknown>) => (await old.request(command, args)).body,
        };
        await endRankSession(asSession);
        await until(() => old.closed, 'the gate to close the ended session', 10000);
        const ep2 = find('listening', 2) as { host: string; port: number };
        links[2] = new RankLink(2, ep2.host, ep2.port);
        await links[2].open({ type: 'rankdebug', request: 'attach', name: 'rank 2', justMyCode: true }, []);
        mark = events.length;
        const pause = await sendControl(controlSocket(dir), { command: 'pause', ranks: [0, 2] }, l10n, 20000);
        assert.deepEqual(pause.ranks, [0, 2]);
        await until(() => [0, 2].every((r) => find('stopped', r, mark)), 'ranks 0 and 2 paused', 60000);
        assert.equal(find('stopped', 2, mark)?.file, SCRIPT);
    });
});
