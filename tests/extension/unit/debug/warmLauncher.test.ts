import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launchEnv, WarmLauncher } from '../../../../extension/src/debug/warmLauncher';

const ROOT = process.cwd();
const PYTHON = fs.existsSync(path.join(ROOT, '.venv/bin/python')) ? path.join(ROOT, '.venv/bin/python') : 'python3';
const PREFIX = [PYTHON, '-m', 'rankdebug'];

/** stdout and the exit code of a process, once it has ended. */
function outcome(proc: ChildProcess): Promise<{ out: string; err: string; code: number | null }> {
    let out = '';
    let err = '';
    proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise((resolve) => proc.on('close', (code) => resolve({ out, err, code })));
}

describe('debug/warmLauncher', function () {
    this.timeout(120000);

    it('runs the launch in the process started ahead: its pid, its pipes, the env and folder of the launch', async () => {
        const warm = new WarmLauncher();
        warm.prepare(PREFIX, ROOT);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warm-'));
        const argv = [...PREFIX, 'launch', '--json', '--ranks', '0', '--no-wait', '--', PYTHON, '-c', 'import os; print("WARM", os.environ["WARM_TEST"], os.getcwd())'];
        const proc = warm.take(argv, launchEnv(PYTHON, { WARM_TEST: 'yes' }), dir);
        assert.ok(proc?.pid, 'the launcher started ahead runs it');
        assert.equal(warm.take(argv, {}, dir), undefined, 'taken once');
        const { out, err, code } = await outcome(proc);
        assert.equal(code, 0, err);
        const events = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { event?: string; pid?: number; code?: number });
        assert.equal(events[0].event, 'job');
        assert.equal(events[0].pid, proc.pid, "the job's supervisor is the process started ahead");
        assert.deepEqual(events.at(-1), { event: 'exited', code: 0 });
        assert.ok(err.includes(`WARM yes ${fs.realpathSync(dir)}`), err);
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it('lets a launch of another interpreter, or one that sets how Python starts, start its own', async () => {
        const warm = new WarmLauncher();
        warm.prepare(PREFIX, ROOT);
        const first = (warm as unknown as { ready: { proc: ChildProcess } }).ready.proc;
        const ended = outcome(first);
        assert.equal(warm.take(['/other/python', '-m', 'rankdebug', 'launch', '--', 'x'], {}, ROOT), undefined);
        await ended; // the one started ahead is ended, not left behind
        warm.prepare(PREFIX, ROOT);
        assert.equal(warm.take([...PREFIX, 'launch', '--', 'x'], { PYTHONHOME: '/elsewhere' }, ROOT), undefined);
        warm.prepare(PREFIX, ROOT);
        const last = (warm as unknown as { ready: { proc: ChildProcess } }).ready.proc;
        const gone = outcome(last);
        warm.discard();
        await gone; // ended, not left behind
    });
});
